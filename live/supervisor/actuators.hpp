#pragma once
//! What the supervisor does to the world beyond its trainer: commands the operator configures
//! (drain a node in Slurm, cordon it in Kubernetes, reset a GPU, reboot), with {node}, {host} and
//! {gpu} filled in. Dry-run by default: the command is logged, not run (docs/architecture.md, live safety).
//!   --evict-cmd 'scontrol update nodename={host} state=drain reason=ctwin'
//!   --evict-cmd 'kubectl cordon {host}'

#include <string>

namespace ctwin::live {

struct ActuatorCommands {
  std::string evict, reset_gpu, reboot;
  bool execute = false;     //!< false: dry-run
  double timeout_s = 120;   //!< a command still running then is killed, and counts as failed
};

struct ActuatorResult {
  std::string command;      //!< as filled in; empty when none is configured
  bool ran = false;
  int exit_code = -1;
  std::string note;         //!< "dry-run", "not configured", "exit 0", "timed out"
};

//! `value` as one word of /bin/sh: unchanged when made of safe characters, else single-quoted.
std::string shell_word(const std::string& value);
//! Fills `{node}`, `{host}` and `{gpu}` in `pattern`, each as one shell word (shell_word): the
//! pattern must not quote them itself.
std::string fill_command(const std::string& pattern, int node, const std::string& host, int gpu);
//! Runs `pattern` filled in with /bin/sh -c, or only says it would.
ActuatorResult actuate(const std::string& pattern, const ActuatorCommands& config, int node, const std::string& host, int gpu);

}  // namespace ctwin::live
