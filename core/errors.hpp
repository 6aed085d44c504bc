#pragma once
//! The errors every command maps to an exit code (docs/cli.md): bad input is 2, a machine that
//! cannot run the command (live mode without a usable GPU) is 3, anything else that fails is 1.

#include <stdexcept>
#include <string>

namespace ctwin {

inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitCannotRun = 3;

//! Input that cannot be used: a scenario, trace or option. Exit 2, nothing written.
class BadInput : public std::runtime_error {
 public:
  //! `names_its_file`: the message already starts with the file it is about (a scenario's
  //! `FILE: /pointer: reason` lines), so it is printed as it is, without the program's name.
  explicit BadInput(const std::string& message, bool names_its_file = false)
      : std::runtime_error(message), names_its_file_(names_its_file) {}
  bool names_its_file() const { return names_its_file_; }

 private:
  bool names_its_file_;
};

//! What this machine lacks to run the command: a GPU, a driver, the CUDA plugin. Exit 3.
class CannotRunHere : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ctwin
