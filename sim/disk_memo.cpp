#include "sim/disk_memo.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.hpp"

namespace ctwin {

std::string default_cache_directory() {
  if (const char* d = std::getenv("CTWIN_CACHE_DIR")) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/ctwin";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/ctwin";
  return "";
}

std::uint64_t fnv1a64(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string DiskMemo::path(const std::string& signature) const {
  char name[48];
  std::snprintf(name, sizeof name, "-%016llx.json", static_cast<unsigned long long>(fnv1a64(signature)));
  return directory_ + "/" + prefix_ + name;
}

std::optional<nlohmann::json> DiskMemo::read(const std::string& signature) const {
  if (directory_.empty()) return std::nullopt;
  std::ifstream in(path(signature));
  if (!in) return std::nullopt;
  try {
    nlohmann::json j;
    in >> j;
    if (j.at("signature") == signature) return j.at("answer");
  } catch (const std::exception&) {
    // unreadable or stale: computed again and overwritten
  }
  return std::nullopt;
}

void DiskMemo::write(const std::string& signature, const nlohmann::json& answer) const {
  if (directory_.empty()) return;
  std::error_code ignored;
  std::filesystem::create_directories(directory_, ignored);
  try {
    write_file_atomically(path(signature), nlohmann::json{{"signature", signature}, {"answer", answer}}.dump(1) + "\n");
  } catch (const std::exception&) {
    // a cache that cannot be written only costs time
  }
}

}  // namespace ctwin
