//! ctwin-live: the node-side binary. It runs the live commands (precheck, ckpt-bench, run) with
//! the policy library and links no simulator, no calibration and no CUDA (the CUDA backend is a
//! plugin loaded at run time), so it builds on a GPU machine that has only a compiler, CMake and
//! CUDA/NCCL (`cmake -S live`). `ctwin live ...` runs the same commands from the full build.
//! Exit codes: 0 fine, 1 problems found, 2 bad input, 3 cannot run here (docs/cli.md).

#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include "core/command_line.hpp"
#include "core/invariant.hpp"
#include "core/mpi/mpi_session.hpp"
#include "core/ranks.hpp"
#include "live/commands/live_commands.hpp"
#include "live/commands/parse_command_line.hpp"

int main(int argc, char** argv) {
  // Under mpirun the precheck's ranks are the MPI ranks.
  ctwin::MpiSession mpi(argc, argv);
  CLI::App app{"ctwin-live: live mode on real nodes: prechecks, flash checkpoints, supervision"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ctwin-live 0.1 (scenario schema 1)");
  ctwin::LiveCommands live(app, "");
  if (const auto code = ctwin::parse_command_line(app, argc, argv)) return *code;
  try {
    return live.dispatch().value_or(ctwin::kExitBadInput);
  } catch (const ctwin::InvariantBroken& e) {  // a bug: stop rather than go on from a wrong account
    std::fprintf(stderr, "ctwin-live: %s\n", e.what());
    return ctwin::kExitFailure;
  }
}
