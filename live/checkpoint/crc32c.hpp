#pragma once
//! CRC-32C (Castagnoli), the checksum of checkpoint shards: SSE4.2's crc32 instruction where the
//! CPU has it (several GB/s), else a table. Same value as iSCSI's and ext4's.

#include <cstddef>
#include <cstdint>

namespace ctwin::flash {

//! Continues `crc` (start with 0) over `bytes`.
std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t bytes);

}  // namespace ctwin::flash
