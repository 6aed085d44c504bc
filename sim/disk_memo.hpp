#pragma once
//! Answers computed once and kept on disk: one JSON file per question in the cache directory
//! ($CTWIN_CACHE_DIR, else $XDG_CACHE_HOME/ctwin, else ~/.cache/ctwin), holding the question's whole
//! signature text, so a hash collision or a changed model never reads a wrong answer. A cache that
//! cannot be read or written only costs time.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ctwin {

std::string default_cache_directory();
std::uint64_t fnv1a64(const std::string& text);

class DiskMemo {
 public:
  //! `directory` empty: nothing is read or written. Files are named PREFIX-HASH.json.
  DiskMemo(std::string directory, std::string prefix) : directory_(std::move(directory)), prefix_(std::move(prefix)) {}
  std::optional<nlohmann::json> read(const std::string& signature) const;
  void write(const std::string& signature, const nlohmann::json& answer) const;

 private:
  std::string path(const std::string& signature) const;
  std::string directory_, prefix_;
};

}  // namespace ctwin
