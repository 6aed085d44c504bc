#pragma once
//! Outputs are written to a temporary file in the same directory, flushed, then renamed over the
//! target: a reader sees the old file or the new one, never half of one.

#include <string>

namespace ctwin {

//! Throws std::runtime_error naming the path on failure; the target is left as it was.
//! An existing target that is not a regular file (/dev/null, /dev/stdout, a FIFO) is written in place.
//! "-" is the standard output.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace ctwin
