#include "live/health/kernel_log_tail.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

#include "core/kernel_log.hpp"
#include "models/kernel_journal.hpp"
#include "live/health/nvml_monitor.hpp"

namespace ctwin::live {

namespace {
//! The kernel's printk lines are at most 1 KiB; anything much longer is not one.
constexpr std::size_t kLongestLine = 64 * 1024;
}  // namespace

KernelLogTail::KernelLogTail(std::string path, std::vector<std::string> bus_ids)
    : path_(std::move(path)), bus_ids_(std::move(bus_ids)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error(path_ + ": cannot open the kernel log");
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) offset_ = static_cast<std::uint64_t>(st.st_size);
}

KernelLogTail::~KernelLogTail() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<HealthEvent> KernelLogTail::poll() {
  struct stat st {};
  const bool regular = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && static_cast<std::uint64_t>(st.st_size) < offset_) {
    offset_ = 0;
    partial_.clear();
  }
  char buffer[65536];
  for (;;) {
    const ssize_t n = regular ? ::pread(fd_, buffer, sizeof buffer, static_cast<off_t>(offset_)) : ::read(fd_, buffer, sizeof buffer);
    if (n <= 0) break;
    offset_ += static_cast<std::uint64_t>(n);
    partial_.append(buffer, static_cast<std::size_t>(n));
  }
  const auto last_newline = partial_.rfind('\n');
  if (last_newline == std::string::npos) {
    if (partial_.size() > kLongestLine) partial_.clear();  // no kernel line is this long: not a log
    return {};
  }
  std::istringstream lines(partial_.substr(0, last_newline + 1));
  partial_.erase(0, last_newline + 1);

  const auto now = std::chrono::steady_clock::now();
  std::vector<HealthEvent> out;
  // The log's own timestamps are the host's clock; the supervisor's clock is the run's. A line
  // counts when it is a kernel message (its prefix has a timestamp) reporting a well-formed Xid.
  KernelLineClock clock("", 1970);
  for (std::string line; std::getline(lines, line);) {
    XidReport x;
    std::string why;
    // One line the parser cannot take must not stop supervision: it is skipped.
    try {
      if (line.size() > kLongestLine) continue;
      std::optional<JournalEntry> entry;
      std::string_view text = line;
      if (is_journal_json(line)) {  // `journalctl -k -f -o json` into the file: the message is a field
        if (!(entry = journal_json_entry(line, why)) || !entry->from_kernel) continue;
        text = entry->message;
      } else if (!clock.stamp(line)) {
        continue;
      }
      if (parse_xid_line(text, x, why) == XidLine::Xid)
        out.push_back({now, Symptom::Xid, gpu_of_bus_id(bus_ids_, x.pci), x.xid, 0, "pci=" + x.pci, "kernel-log"});
    } catch (const std::exception&) {
    }
  }
  return out;
}

}  // namespace ctwin::live
