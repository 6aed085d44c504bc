#pragma once
//! Kernel logs as journald exports them, `journalctl -k -o json`: one JSON object per line, every
//! value a string, MESSAGE a string or, where it is not UTF-8, an array of its bytes:
//!   {"__REALTIME_TIMESTAMP":"1711020874123456","_HOSTNAME":"gpu-101","_TRANSPORT":"kernel",
//!    "MESSAGE":"NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", ...}
//! The other exports (`-o short`, `-o short-iso`) are text lines core/kernel_log.hpp reads. In
//! models, not core, because it parses JSON (nlohmann/json); calibration reads whole logs with it,
//! the live agent a log as it grows.

#include <optional>
#include <string>
#include <string_view>

#include "core/kernel_log.hpp"

namespace ctwin {

struct JournalEntry {
  KernelStamp stamp;    //!< __REALTIME_TIMESTAMP (microseconds since 1970, UTC) and _HOSTNAME ("" when absent)
  std::string message;  //!< MESSAGE, as text
  //! _TRANSPORT is "kernel": journald sets it (a trusted field, no client can), so `logger "NVRM:
  //! Xid ..."` from a user, which `journalctl -o json` without -k exports too, is not an Xid.
  bool from_kernel = false;
};

//! Whether `line` is meant as a journal JSON entry (it opens an object): such a line is read by
//! journal_json_entry or reported malformed, never as text.
inline bool is_journal_json(std::string_view line) {
  const auto first = line.find_first_not_of(" \t");
  return first != std::string_view::npos && line[first] == '{';
}

//! The entry, or nullopt with `why`: not JSON, no or an implausible __REALTIME_TIMESTAMP, no MESSAGE,
//! a MESSAGE that is not UTF-8.
std::optional<JournalEntry> journal_json_entry(std::string_view line, std::string& why);

}  // namespace ctwin
