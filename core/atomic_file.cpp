#include "core/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdexcept>
#include <unistd.h>

#include <utility>

namespace ctwin {

namespace {

void write_fd(int fd, const std::string& path, const std::string& content) {
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  AtomicFileWriter out(path);
  out.write(content);
  out.commit();
}

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  if (path_ == "-") {  // held until commit: a run that fails prints none of it
    to_stdout_ = true;
    return;
  }
  // A device, FIFO or socket (/dev/null, /dev/stdout) is written in place: renaming a file over it
  // would replace the device itself.
  struct stat existing {};
  if (::stat(path_.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    fd_ = ::open(path_.c_str(), O_WRONLY);
    if (fd_ < 0) throw std::runtime_error(path_ + ": cannot open: " + std::strerror(errno));
    return;
  }
  temp_ = path_ + ".tmp.XXXXXX";
  fd_ = ::mkstemp(temp_.data());
  if (fd_ < 0) throw std::runtime_error(path_ + ": cannot create a temporary file beside it: " + std::strerror(errno));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void AtomicFileWriter::write(const std::string& text) {
  if (to_stdout_) held_ += text;
  else write_fd(fd_, path_, text);
}

void AtomicFileWriter::commit() {
  committed_ = true;
  if (to_stdout_) {
    std::cout.flush();  // whatever the program printed first stays first
    write_fd(STDOUT_FILENO, "stdout", held_);
    return;
  }
  if (temp_.empty()) {  // written in place
    ::close(fd_);
    return;
  }
  if (::fchmod(fd_, 0644) != 0 || ::fsync(fd_) != 0 || ::close(fd_) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temp_.c_str());
    throw std::runtime_error(path_ + ": cannot finish writing: " + why);
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temp_.c_str());
    throw std::runtime_error(path_ + ": cannot move the finished file into place: " + why);
  }
}

}  // namespace ctwin
