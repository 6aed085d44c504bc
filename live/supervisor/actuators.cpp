#include "live/supervisor/actuators.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace ctwin::live {

std::string shell_word(const std::string& value) {
  // As Python's shlex.quote: a value of safe characters stays as it is (readable in the log),
  // anything else becomes one single-quoted word, so `h;touch X;#` is a host name, not commands.
  const bool safe = !value.empty() && value.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                              "0123456789@%+=:,./_-") == std::string::npos;
  if (safe) return value;
  std::string out = "'";
  for (const char c : value) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string fill_command(const std::string& pattern, int node, const std::string& host, int gpu) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    auto placeholder = [&](const char* name) { return pattern.compare(i, std::char_traits<char>::length(name), name) == 0; };
    if (placeholder("{node}")) out += shell_word(std::to_string(node)), i += 5;
    else if (placeholder("{host}")) out += shell_word(host), i += 5;
    else if (placeholder("{gpu}")) out += gpu >= 0 ? shell_word(std::to_string(gpu)) : std::string("all"), i += 4;
    else out += pattern[i];
  }
  return out;
}

ActuatorResult actuate(const std::string& pattern, const ActuatorCommands& config, int node, const std::string& host, int gpu) {
  ActuatorResult r;
  if (pattern.empty()) {
    r.note = "not configured";
    return r;
  }
  r.command = fill_command(pattern, node, host, gpu);
  if (!config.execute) {
    r.note = "dry-run";
    return r;
  }
  const pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", r.command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  r.ran = child > 0;
  if (!r.ran) {
    r.note = "fork failed";
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(config.timeout_s);
  int status = 0;
  for (;;) {
    if (::waitpid(child, &status, WNOHANG) == child) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-child, SIGKILL);
      ::waitpid(child, &status, 0);
      r.note = "timed out";
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.note = "exit " + std::to_string(r.exit_code);
  return r;
}

}  // namespace ctwin::live
