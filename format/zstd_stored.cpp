#include "format/zstd_stored.hpp"

#include <algorithm>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "format/byte_io.hpp"

namespace mstep {
namespace {

using byte_io::get_u32;
using byte_io::put_u32;

constexpr std::uint32_t kZstdMagic = 0xFD2FB528u;
// Frame header descriptor: a 4-byte content size (bits 7-6 = 2), not a single segment (the window
// descriptor follows, so a streaming decoder needs 128 KiB, not the whole content), the content
// checksum (bit 2), no dictionary.
constexpr std::uint8_t kDescriptor = 0x84;
// Window descriptor: exponent 7, mantissa 0, a 2^(10+7) = 128 KiB window, which is also the
// largest block.
constexpr std::uint8_t kWindow = 0x38;
constexpr std::size_t kBlockMax = 128 * 1024;
constexpr std::size_t kHeaderBytes = 4 + 1 + 1 + 4;
constexpr std::size_t kChecksumBytes = 4;

std::size_t block_count(std::size_t content_bytes) {
  return std::max<std::size_t>(1, (content_bytes + kBlockMax - 1) / kBlockMax);  // an empty one at least
}

}  // namespace

std::size_t stored_frame_bound(std::size_t content_bytes) {
  return kHeaderBytes + 3 * block_count(content_bytes) + content_bytes + kChecksumBytes;
}

std::size_t write_stored_frame(std::span<const std::uint8_t> content, std::uint8_t* out) {
  std::uint8_t* p = out;
  put_u32(p, kZstdMagic);
  p[4] = kDescriptor;
  p[5] = kWindow;
  put_u32(p + 6, static_cast<std::uint32_t>(content.size()));
  p += kHeaderBytes;
  const std::size_t blocks = block_count(content.size());
  std::size_t at = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t n = std::min(kBlockMax, content.size() - at);
    // Block header, 3 bytes little endian: last-block bit, type 0 (raw) in bits 1-2, size above.
    const std::uint32_t head = static_cast<std::uint32_t>(n << 3) | (b + 1 == blocks ? 1u : 0u);
    p[0] = static_cast<std::uint8_t>(head);
    p[1] = static_cast<std::uint8_t>(head >> 8);
    p[2] = static_cast<std::uint8_t>(head >> 16);
    if (n) std::memcpy(p + 3, content.data() + at, n);
    p += 3 + n;
    at += n;
  }
  // The content checksum: the low 32 bits of XXH64 with seed 0.
  put_u32(p, static_cast<std::uint32_t>(XXH64(content.data(), content.size(), 0)));
  p += kChecksumBytes;
  return static_cast<std::size_t>(p - out);
}

bool starts_stored_frame(std::span<const std::uint8_t> start) {
  return start.size() >= kStoredFramePrefix && get_u32(start.data()) == kZstdMagic && start[4] == kDescriptor &&
         start[5] == kWindow;
}

bool is_stored_frame(std::span<const std::uint8_t> frame) {
  if (frame.size() < kHeaderBytes + 3 + kChecksumBytes || !starts_stored_frame(frame)) return false;
  const std::uint8_t* p = frame.data();
  const std::size_t content = get_u32(p + 6);
  if (frame.size() != stored_frame_bound(content)) return false;
  std::size_t at = kHeaderBytes, seen = 0;
  const std::size_t blocks = block_count(content);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::uint32_t head = p[at] | (p[at + 1] << 8) | (static_cast<std::uint32_t>(p[at + 2]) << 16);
    const bool last = head & 1u;
    if (((head >> 1) & 3u) != 0 || last != (b + 1 == blocks)) return false;
    const std::size_t n = head >> 3;
    if (n > kBlockMax || seen + n > content) return false;
    at += 3 + n;
    seen += n;
  }
  return seen == content && at + kChecksumBytes == frame.size();
}

}  // namespace mstep
