# Every dependency comes from Debian 12 packages (scripts/setup.sh installs them).
find_package(PkgConfig REQUIRED)
# Debian ships simgrid.pc but no CMake package for SimGrid.
pkg_check_modules(SIMGRID REQUIRED IMPORTED_TARGET simgrid>=3.32)
include(${CMAKE_CURRENT_LIST_DIR}/HeaderDeps.cmake)
find_package(Threads REQUIRED)
find_package(MPI COMPONENTS CXX QUIET)     # optional: `mpirun -np N ctwin sweep ...`
