// Little-endian words in byte buffers, and whole reads and writes at a descriptor: what the trace
// files' writer and reader, the stored zstd frames and their compression after the run share.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <unistd.h>

namespace mstep::byte_io {

inline void put_u32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

inline std::uint32_t get_u32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}

// Writes all of `data`, again after an interrupted or short write; false on an error (errno set).
inline bool write_all(int fd, const std::uint8_t* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads exactly `size` bytes at `at`; false on an error or where the file ends first.
inline bool pread_all(int fd, std::uint64_t at, std::uint8_t* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::pread(fd, data, size, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    at += static_cast<std::uint64_t>(n);
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads up to `size` bytes at `at`: fewer only where the file ends (-1 on an error). A regular
// file's read comes back short only at its end, so a short one is not asked again (that would be
// a second system call a rank file, to be told 0).
inline std::int64_t pread_upto(int fd, std::uint64_t at, std::uint8_t* data, std::size_t size) {
  for (;;) {
    const ssize_t n = ::pread(fd, data, size, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
}

}  // namespace mstep::byte_io
