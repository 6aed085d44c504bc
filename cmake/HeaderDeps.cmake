# The header-only libraries of the floors the node side builds (core, models, policies, live):
# nlohmann/json, Boost (Random, Math, Graph), Eigen and CLI11. From Debian's packages, or on a
# machine without them (a bare GPU machine) from a bundle of just the headers ctwin includes:
# CTWIN_DEPS_DIR, made by scripts/bundle_live_deps.sh.
set(CTWIN_DEPS_DIR "" CACHE PATH "a header bundle (scripts/bundle_live_deps.sh); empty: the system's packages")
if(CTWIN_DEPS_DIR)
  if(NOT EXISTS "${CTWIN_DEPS_DIR}/include/nlohmann/json.hpp")
    message(FATAL_ERROR "CTWIN_DEPS_DIR=${CTWIN_DEPS_DIR} holds no header bundle (make one with scripts/bundle_live_deps.sh)")
  endif()
  foreach(target nlohmann_json::nlohmann_json Boost::boost Eigen3::Eigen CLI11::CLI11)
    add_library(${target} INTERFACE IMPORTED)
    set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${CTWIN_DEPS_DIR}/include")
  endforeach()
  message(STATUS "Header-only dependencies from ${CTWIN_DEPS_DIR}")
else()
  find_package(Boost 1.74 REQUIRED)            # Graph, Math and Random are header-only
  find_package(Eigen3 3.4 REQUIRED NO_MODULE)
  find_package(nlohmann_json 3.10 REQUIRED)
  find_package(CLI11 REQUIRED)
endif()
