# Every dependency comes from Debian 12 packages (scripts/setup.sh installs them).
find_package(PkgConfig REQUIRED)
# Debian ships simgrid.pc but no CMake package for SimGrid.
pkg_check_modules(SIMGRID REQUIRED IMPORTED_TARGET simgrid>=3.32)
find_package(Boost 1.74 REQUIRED)            # Graph, Math and Random are header-only
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
find_package(MPI COMPONENTS CXX QUIET)     # optional: `mpirun -np N ctwin sweep ...`
