#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

int main(int argc, char* argv[]) {
  // The step-time cache stays in memory: tests leave nothing in the user's cache directory.
  setenv("CTWIN_CACHE_DIR", "", 1);
  return Catch::Session().run(argc, argv);
}
