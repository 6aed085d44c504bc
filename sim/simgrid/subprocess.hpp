#pragma once
//! SimGrid allows one engine per process and never resets its clock, so every engine here lives
//! in a forked child: the caller stays SimGrid-free and can ask as many questions as it likes.

#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ctwin {

//! A forked child that is writing its answer to a pipe.
struct Child {
  int pid = -1;
  int fd = -1;
};

//! Forks; the child runs `body(fd)` writing its answer to fd, then _exits (status 1 if it threw).
//! `own_thread`: on a new thread of the child (a fresh malloc arena); false keeps the forking
//! thread, whose SimGrid engine (simulation_server.hpp) is bound to it.
Child start_child(const std::function<void(int fd)>& body, const char* what, bool own_thread = true);
//! Reads the child's whole answer and reaps it; throws if it failed (its exit status in the message).
std::string finish_child(const Child& child, const char* what);
inline std::string run_in_child(const std::function<void(int fd)>& body, const char* what, bool own_thread = true) {
  return finish_child(start_child(body, what, own_thread), what);
}

void write_all(int fd, const void* data, std::size_t size);
void write_all(int fd, const std::string& bytes);
std::string read_all(int fd);

//! Append-only binary encoding of plain values, for answers sent over pipes.
class ByteWriter {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  std::string bytes;
};

class ByteReader {
 public:
  explicit ByteReader(const std::string& bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    if (offset_ + sizeof(T) > bytes_.size()) throw std::runtime_error("truncated answer from a simulation process");
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  bool at_end() const { return offset_ == bytes_.size(); }

 private:
  const std::string& bytes_;
  std::size_t offset_ = 0;
};

}  // namespace ctwin
