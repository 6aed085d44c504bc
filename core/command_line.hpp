#pragma once
//! What every command line of ctwin shares (the simulator's `ctwin` and the node's `ctwin-live`):
//! output paths checked before any work, positive durations, and errors mapped to exit codes.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace ctwin::cli {

using ctwin::kExitBadInput;
using ctwin::kExitCannotRun;
using ctwin::kExitFailure;

//! Output paths are checked before the run, so a typo costs nothing and nothing is half-written.
inline bool check_output_path(const std::string& flag, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return true;
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir)) {
    std::cerr << "ctwin: " << flag << " " << path << ": directory " << dir.string() << " does not exist\n";
    return false;
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    std::cerr << "ctwin: " << flag << " " << path << ": directory " << dir.string() << " is not writable\n";
    return false;
  }
  if (fs::is_directory(path)) {
    std::cerr << "ctwin: " << flag << " " << path << ": is a directory\n";
    return false;
  }
  return true;
}

//! "HOST:PORT" with an explicit host (a service binds to what it is told, never to every
//! interface by default): false, having said why, when it is not one. An IPv6 address goes in
//! brackets ("[::1]:9401"); `host` is then the address alone, as getaddrinfo takes it.
inline bool parse_host_port(const std::string& text, const char* flag, std::string& host, int& port) {
  const auto colon = text.rfind(':');
  char* end = nullptr;
  const long p = colon == std::string::npos ? -1 : std::strtol(text.c_str() + colon + 1, &end, 10);
  if (colon == 0 || colon == std::string::npos || p < 0 || p > 65535 || !end || *end || end == text.c_str() + colon + 1) {
    std::cerr << "ctwin: " << flag << " " << text << ": expected HOST:PORT (an explicit address, e.g. 10.0.0.1:29400)\n";
    return false;
  }
  host = text.substr(0, colon);
  port = static_cast<int>(p);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find_first_of(":[]") != std::string::npos) {
    std::cerr << "ctwin: " << flag << " " << text << ": an IPv6 address goes in brackets, e.g. [::1]:29400\n";
    return false;
  }
  if (host == "0.0.0.0" || host == "::")
    std::cerr << "ctwin: warning: " << flag << " " << text << " listens on every interface: anyone who can reach this host can connect\n";
  return true;
}

//! HOST:PORT as written, an IPv6 address back in its brackets (for URLs and civetweb's ports).
inline std::string host_port_text(const std::string& host, int port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

//! A positive duration option ("30s", "2min"): false, having said why, when it is not one.
inline bool parse_positive_seconds(const std::optional<std::string>& text, const char* flag, double& out) {
  if (!text) return true;
  std::string why;
  const auto v = parse_duration_s(*text, why);
  if (!v || *v <= 0) {
    std::cerr << "ctwin: " << flag << " " << *text << ": " << (why.empty() ? "must be positive" : why) << "\n";
    return false;
  }
  out = *v;
  return true;
}

//! A size option ("64MiB", at least 4 bytes): false, having said why, when it is not one.
inline bool parse_size(const std::optional<std::string>& text, const char* flag, std::size_t& out) {
  if (!text) return true;
  std::string why;
  const auto v = parse_bytes(*text, why);
  if (!v || *v < 4) {
    std::cerr << "ctwin: " << flag << " " << *text << ": " << (why.empty() ? "too small" : why) << "\n";
    return false;
  }
  out = static_cast<std::size_t>(*v);
  return true;
}

//! Runs a command: bad input (a scenario, a trace) is exit 2 with its problems, no usable GPU
//! exit 3, any other error exit 1.
template <class Body>
int run_reporting_errors(Body&& body) {
  try {
    return body();
  } catch (const BadInput& e) {
    std::cerr << (e.names_its_file() ? "" : "ctwin: ") << e.what() << "\n";
    return kExitBadInput;
  } catch (const CannotRunHere& e) {
    std::cerr << "ctwin: cannot run here: " << e.what() << "\n";
    return kExitCannotRun;
  } catch (const std::exception& e) {
    std::cerr << "ctwin: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace ctwin::cli
