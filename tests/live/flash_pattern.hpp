#pragma once
//! The content a test writer puts in its buffers at each step: every 8-byte word depends on the
//! step, the buffer and its position, so a restored buffer proves which step it holds, whole.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ctwin::test {

inline std::uint64_t pattern_word(std::int64_t step, std::size_t buffer, std::size_t word) {
  std::uint64_t x = static_cast<std::uint64_t>(step) * 0x9e3779b97f4a7c15ull ^ (buffer << 48) ^ word;
  x ^= x >> 31;
  return x * 0xbf58476d1ce4e5b9ull;
}

inline void fill_pattern(std::vector<unsigned char>& bytes, std::int64_t step, std::size_t buffer) {
  const std::size_t words = bytes.size() / 8;
  auto* w = reinterpret_cast<std::uint64_t*>(bytes.data());
  for (std::size_t i = 0; i < words; ++i) w[i] = pattern_word(step, buffer, i);
  for (std::size_t i = words * 8; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(step + i);
}

inline bool holds_pattern(const std::vector<unsigned char>& bytes, std::int64_t step, std::size_t buffer) {
  std::vector<unsigned char> want(bytes.size());
  fill_pattern(want, step, buffer);
  return std::memcmp(want.data(), bytes.data(), bytes.size()) == 0;
}

//! The buffers of the crash tests: odd sizes, so that offsets and tails are exercised.
inline std::vector<std::size_t> crash_test_sizes() { return {3u << 20, (1u << 20) + 3, 4097}; }

}  // namespace ctwin::test
