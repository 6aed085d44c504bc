#pragma once
//! Outputs are written to a temporary file in the same directory, flushed, then renamed over the
//! target: a reader sees the old file or the new one, never half of one.

#include <string>

namespace ctwin {

//! Throws std::runtime_error naming the path on failure; the target is left as it was.
//! An existing target that is not a regular file (/dev/null, /dev/stdout, a FIFO) is written in place.
//! "-" is the standard output.
void write_file_atomically(const std::string& path, const std::string& content);

//! The same, written piece by piece (a million trials' rows are never held whole): the target
//! appears at commit(); a writer destroyed uncommitted removes its temporary file. The standard
//! output ("-") is held in memory until commit, so a failed run prints none of it.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  void write(const std::string& text);
  void commit();

 private:
  std::string path_, temp_;  //!< temp_ empty: written in place (standard output, a device)
  int fd_ = -1;
  bool committed_ = false, to_stdout_ = false;
  std::string held_;  //!< the standard output's text, until commit
};

}  // namespace ctwin
