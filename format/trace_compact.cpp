#include "format/trace_compact.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <zstd.h>

#include "format/byte_io.hpp"
#include "format/trace_file.hpp"
#include "format/trace_format.hpp"
#include "format/zstd_stored.hpp"

namespace mstep {
namespace {

using byte_io::get_u32;
using byte_io::pread_all;
using byte_io::pread_upto;
using byte_io::put_u32;
using byte_io::write_all;

constexpr std::size_t kFileHeadFixed = 12;  // magic, version, body size

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// One frame of the file as the walk finds it.
struct FrameAt {
  std::uint64_t offset = 0;  // of its 20-byte header
  std::uint32_t raw = 0, csize = 0;
  bool stored = false;
};

// Walks the whole frames after the file header while `visit` returns true; stops at the first thing
// that is not one (a partial or damaged frame, or the end, or a read error: the copy of what is
// left then fails), whose offset it returns in `tail`.
template <class Visit>
void walk_frames(int fd, std::uint64_t size, std::uint64_t first, std::uint64_t& tail, Visit&& visit) {
  std::uint64_t at = first;
  std::uint8_t head[kFrameHeaderSize + kStoredFramePrefix];
  for (;;) {
    if (size - at < kFrameHeaderSize) break;
    const std::int64_t got = pread_upto(fd, at, head, sizeof head);
    if (got < static_cast<std::int64_t>(kFrameHeaderSize) || get_u32(head) != kFrameMagic) break;
    FrameAt f;
    f.offset = at;
    f.raw = get_u32(head + 12);
    f.csize = get_u32(head + 16);
    if (f.raw > kMaxFramePayload || f.csize > ZSTD_compressBound(kMaxFramePayload) ||
        size - at - kFrameHeaderSize < f.csize)
      break;
    // The full check (block by block) comes when the frame is read; this only picks candidates.
    f.stored = f.csize == stored_frame_bound(f.raw) &&
               starts_stored_frame(std::span<const std::uint8_t>(head + kFrameHeaderSize,
                                                                 static_cast<std::size_t>(got) - kFrameHeaderSize));
    at += kFrameHeaderSize + f.csize;
    if (!visit(f)) break;
  }
  tail = at;
}

}  // namespace

CompressOutcome compress_stored_frames(const std::string& path, int zstd_level) {
  CompressOutcome out;
  Fd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.fd < 0) throw TraceError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(in.fd, &st) != 0) throw TraceError(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  out.bytes_before = out.bytes_after = size;
  std::uint8_t fixed[kFileHeadFixed];
  if (!pread_all(in.fd, 0, fixed, sizeof fixed)) return out;  // no header: nothing to do
  const std::uint64_t first = kFileHeadFixed + (fixed[10] | (fixed[11] << 8));
  if (first > size) return out;

  // Is there anything to do? Up to the first stored frame (a recorder that stores does so from
  // its first frame on).
  std::uint64_t tail = 0;
  bool any_stored = false;
  walk_frames(in.fd, size, first, tail, [&](const FrameAt& f) { return !(any_stored = f.stored); });
  if (!any_stored) return out;

  const std::string tmp = path + ".compressing";
  Fd dst(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777));
  if (dst.fd < 0) throw TraceError(fmt::format("{}: cannot create: {}", tmp, std::strerror(errno)));
  auto fail = [&](const std::string& what) {
    ::unlink(tmp.c_str());
    throw TraceError(fmt::format("{}: {}", tmp, what));
  };
  std::unique_ptr<ZSTD_CCtx, std::size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (!cctx) fail("zstd context unavailable");
  // The settings of TraceFileWriter, so that the frame comes out as it would have then.
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, zstd_level);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);

  std::vector<std::uint8_t> frame, payload, packed;
  std::uint64_t written = 0;
  auto copy = [&](std::uint64_t from, std::uint64_t n) {
    frame.resize(std::min<std::uint64_t>(n, 1 << 20));
    while (n > 0) {
      const std::size_t chunk = std::min<std::uint64_t>(n, frame.size());
      if (!pread_all(in.fd, from, frame.data(), chunk)) fail(fmt::format("cannot read {}", path));
      if (!write_all(dst.fd, frame.data(), chunk)) fail(fmt::format("cannot write: {}", std::strerror(errno)));
      from += chunk;
      n -= chunk;
      written += chunk;
    }
  };
  copy(0, first);
  walk_frames(in.fd, size, first, tail, [&](const FrameAt& f) {
    const std::size_t whole = kFrameHeaderSize + f.csize;
    if (!f.stored) return copy(f.offset, whole), true;
    frame.resize(whole);
    if (!pread_all(in.fd, f.offset, frame.data(), whole)) fail(fmt::format("cannot read {}", path));
    const std::span<const std::uint8_t> zframe(frame.data() + kFrameHeaderSize, f.csize);
    payload.resize(f.raw);
    // A frame that only looks stored, or whose checksum fails, is copied as it is: the reader
    // reports it where it would have.
    if (!is_stored_frame(zframe)) return copy(f.offset, whole), true;
    const std::size_t got = ZSTD_decompress(payload.data(), payload.size(), zframe.data(), zframe.size());
    if (ZSTD_isError(got) || got != f.raw) return copy(f.offset, whole), true;
    packed.resize(kFrameHeaderSize + ZSTD_compressBound(f.raw));
    const std::size_t csize = ZSTD_compress2(cctx.get(), packed.data() + kFrameHeaderSize,
                                             packed.size() - kFrameHeaderSize, payload.data(), payload.size());
    if (ZSTD_isError(csize)) fail(fmt::format("zstd: {}", ZSTD_getErrorName(csize)));
    std::memcpy(packed.data(), frame.data(), kFrameHeaderSize);
    put_u32(packed.data() + 16, static_cast<std::uint32_t>(csize));
    if (!write_all(dst.fd, packed.data(), kFrameHeaderSize + csize))
      fail(fmt::format("cannot write: {}", std::strerror(errno)));
    written += kFrameHeaderSize + csize;
    ++out.frames;
    return true;
  });
  copy(tail, size - tail);
  const int fd = dst.fd;
  dst.fd = -1;
  if (::close(fd) != 0) fail(fmt::format("cannot write: {}", std::strerror(errno)));
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(fmt::format("cannot rename over {}: {}", path, std::strerror(errno)));
  out.bytes_after = written;
  return out;
}

}  // namespace mstep
