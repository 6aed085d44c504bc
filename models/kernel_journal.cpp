#include "models/kernel_journal.hpp"

#include <charconv>

#include <nlohmann/json.hpp>

#include "core/text_records.hpp"

namespace ctwin {

namespace {

//! Microseconds since 1970 up to the year 2200: anything larger is no clock a fleet keeps.
constexpr std::uint64_t kLatestRealtime_us = 7'258'118'400'000'000ull;

}  // namespace

std::optional<JournalEntry> journal_json_entry(std::string_view line, std::string& why) {
  const auto entry = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
  if (entry.is_discarded() || !entry.is_object()) {
    why = "a line that opens a JSON object is not one (journalctl -o json writes one entry per line)";
    return std::nullopt;
  }
  JournalEntry out;
  const auto realtime = entry.find("__REALTIME_TIMESTAMP");
  std::uint64_t us = 0;
  if (realtime == entry.end() || !realtime->is_string()) {
    why = "a journal entry without __REALTIME_TIMESTAMP";
    return std::nullopt;
  }
  const auto& text = realtime->get_ref<const std::string&>();
  if (const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), us);
      error != std::errc() || end != text.data() + text.size() || us == 0 || us > kLatestRealtime_us) {
    why = "a journal entry whose __REALTIME_TIMESTAMP is not microseconds since 1970: \"" + text.substr(0, 40) + "\"";
    return std::nullopt;
  }
  out.stamp.time_s = static_cast<double>(us / 1'000'000) + static_cast<double>(us % 1'000'000) * 1e-6;
  if (const auto host = entry.find("_HOSTNAME"); host != entry.end() && host->is_string() && valid_utf8(host->get_ref<const std::string&>()))
    out.stamp.host = host->get<std::string>();
  if (const auto transport = entry.find("_TRANSPORT"); transport != entry.end() && transport->is_string())
    out.from_kernel = transport->get_ref<const std::string&>() == "kernel";
  const auto message = entry.find("MESSAGE");
  if (message == entry.end()) {
    why = "a journal entry without MESSAGE";
    return std::nullopt;
  }
  if (message->is_string()) {
    out.message = message->get<std::string>();
  } else if (message->is_array()) {  // journald's form for a message that is not UTF-8: its bytes
    for (const auto& byte : *message) {
      if (!byte.is_number_unsigned() || byte.get<unsigned>() > 255) {
        why = "a journal entry whose MESSAGE array holds something other than bytes";
        return std::nullopt;
      }
      out.message.push_back(static_cast<char>(byte.get<unsigned>()));
    }
  } else {
    why = "a journal entry whose MESSAGE is neither text nor bytes";
    return std::nullopt;
  }
  if (!valid_utf8(out.message)) {
    why = "a journal entry whose MESSAGE is not UTF-8 text";
    return std::nullopt;
  }
  return out;
}

}  // namespace ctwin
