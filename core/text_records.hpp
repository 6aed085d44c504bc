#pragma once
//! Line-oriented text records (traces, event logs): what a reader reports besides its records (how
//! many lines it read, which it skipped on purpose, which it could not parse, by line number), CSV
//! fields, and timestamps. A malformed line is never fatal unless nothing in the file parses.

#include <fstream>
#include <istream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.hpp"

namespace ctwin {

struct ReadProblem {
  int line = 0;
  std::string reason;
};

struct ReadReport {
  std::string file;
  std::string kind;   //!< "kernel-log", "sacct", "event-log", "incident-table"
  int lines = 0;      //!< non-empty lines, header included
  int parsed = 0;     //!< records read
  int skipped = 0;    //!< lines that are not records of this kind (other kernel messages, job steps)
  std::vector<ReadProblem> malformed;
  void problem(int line, std::string reason) { malformed.push_back({line, std::move(reason)}); }
  //! Throws TraceUnreadable when the file had lines to parse and none parsed.
  void require_some() const;
};

//! A file with nothing readable in it: bad input (exit 2).
class TraceUnreadable : public BadInput {
 public:
  explicit TraceUnreadable(const std::string& message) : BadInput(message) {}
};

//! Opens a trace for streaming; throws TraceUnreadable when it cannot.
std::ifstream open_trace(const std::string& path);
//! The first line that is neither empty nor a '#' comment: what a trace's kind is told by.
std::string first_line(const std::string& path);

//! Whether `text` is well-formed UTF-8 (what reports, JSON and terminals can carry).
bool valid_utf8(std::string_view text);

//! Reads a header-first text format: `header(number, line)` sees the first non-empty line and
//! returns false to stop (a wrong header); `row(number, line)` each later one. Counts the lines,
//! strips a trailing CR, skips empty lines and, if asked, lines starting with '#'.
template <class Header, class Row>
void read_lines(std::istream& in, ReadReport& report, Header&& header, Row&& row, bool comments = false) {
  std::string text;
  int number = 0;
  bool seen_header = false;
  while (std::getline(in, text)) {
    ++number;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty() || (comments && text[0] == '#')) continue;
    ++report.lines;
    if (!valid_utf8(text)) {  // it would reach reports and JSON, which carry UTF-8 only
      report.problem(number, "not UTF-8 text");
      if (!seen_header) return;
      continue;
    }
    if (!seen_header) {
      seen_header = true;
      if (!header(number, text)) return;
      continue;
    }
    row(number, text);
  }
}

//! One CSV line into fields: quoted fields may hold commas and doubled quotes.
std::vector<std::string> split_csv(std::string_view line);
//! Column index of each wanted header name, -1 where missing.
std::vector<int> columns_of(const std::vector<std::string>& header, const std::vector<std::string>& wanted);
//! A reason when `header` cannot be read by name: a column named twice. Empty when it can.
std::string header_problem(const std::vector<std::string>& header);
//! A CSV header line read by name: each wanted column's index (columns_of) into `at`, or false with
//! the reason said at `number` (a column named twice, or one of `required`, indices into `wanted`,
//! missing: "the header needs " + `needs`).
bool read_csv_header(ReadReport& report, int number, const std::string& text, const std::vector<std::string>& wanted,
                     const std::vector<int>& required, const std::string& needs, std::vector<int>& at);
//! `text`, whole, as a finite number (no NaN, no Inf, nothing after it).
bool finite_number(const std::string& text, double& out);

//! The field in wanted column `which` (see columns_of), or "" where the column or the field is missing.
inline std::string field_at(const std::vector<std::string>& fields, const std::vector<int>& at, int which) {
  const int i = at[static_cast<std::size_t>(which)];
  return i >= 0 && static_cast<std::size_t>(i) < fields.size() ? fields[static_cast<std::size_t>(i)] : "";
}

//! Seconds since 1970-01-01 UTC of a civil date and time.
double epoch_seconds(int year, int month, int day, int hour, int minute, double second);
//! "2024-03-21T13:34:34[.frac][Z|+hh:mm|+hhmm]" (or a space for the T); false if it does not parse.
bool parse_iso_time(std::string_view text, double& seconds, std::size_t* used = nullptr);

}  // namespace ctwin
