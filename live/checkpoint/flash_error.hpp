#pragma once
//! Errors of the flash checkpoint engine, typed so that callers (the C API, the CLI) can say which
//! resource ran out. The previous checkpoint is intact whenever one is thrown.

#include <stdexcept>
#include <string>

namespace ctwin::flash {

enum class ErrorKind {
  Usage = 1,       //!< a bad call: no buffers, an unknown name, a step that goes backwards
  SharedMemory = 2,//!< /dev/shm too small or unusable
  Persist = 3,     //!< the disk is full or a write failed
  Device = 4,      //!< a GPU copy failed, or the CUDA plugin is missing
};

class FlashError : public std::runtime_error {
 public:
  FlashError(ErrorKind kind, const std::string& what, int error_number = 0) : std::runtime_error(what), kind_(kind), errno_(error_number) {}
  ErrorKind kind() const { return kind_; }
  //! The system's error number behind it (0: none): ENOSPC, EDQUOT or EFBIG is a disk out of room.
  int error_number() const { return errno_; }
  bool out_of_space() const;

 private:
  ErrorKind kind_;
  int errno_ = 0;
};

//! "path: what: strerror(errno)".
std::string system_error_text(const std::string& path, const std::string& what, int error_number);

}  // namespace ctwin::flash
