#include "format/trace_file.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "format/byte_io.hpp"
#include "format/checked_frames.hpp"
#include "format/zstd_stored.hpp"

namespace mstep {
namespace {

using byte_io::get_u32;
using byte_io::put_u32;
using byte_io::pread_all;
using byte_io::pread_upto;
using byte_io::write_all;

// The last block read on this thread, and whose (TraceFileReader::read_at): a frame header, its
// payload and the frames after it mostly lie in one block, so that a small rank file costs one
// read, not two a frame.
// `owner` names the file (TraceFileReader::source_) and `at` is an offset in it: the ranks of a
// pack file, read one after the other, find their streams in the block the rank before them read.
struct Block {
  std::uint64_t owner = 0, at = 0;
  bool to_end = false;  // the file ended inside it (a block a reader's constructor read)
  std::vector<std::uint8_t> bytes;
};
constexpr std::size_t kBlock = std::size_t{64} << 10;
thread_local Block block;

// Names each reader for the block cache of read_at: a reader made where a destroyed one was
// must not take the other's bytes for its own.
std::atomic<std::uint64_t> next_serial{1};

// Pack files with a descriptor open, shared by their readers. The open ones are few (a pack holds
// thousands of ranks); past kMaxSharedFiles, readers close theirs between frames as rank files do.
constexpr std::size_t kMaxSharedFiles = 256;
std::atomic<std::size_t> shared_files_open{0};

}  // namespace

namespace detail {
struct SharedFile {
  SharedFile(int descriptor, std::uint64_t name) : fd(descriptor), serial(name) { ++shared_files_open; }
  ~SharedFile() {
    ::close(fd);
    --shared_files_open;
  }
  SharedFile(const SharedFile&) = delete;
  SharedFile& operator=(const SharedFile&) = delete;
  int fd;
  std::uint64_t serial;
};
}  // namespace detail

namespace {

using detail::SharedFile;

// The pack files some reader holds open, by name: a reader of another rank of the same pack takes
// the same descriptor. Entries whose readers are all gone are swept as the table grows.
std::shared_ptr<const SharedFile> open_shared(const std::string& file) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::weak_ptr<const SharedFile>> files;
  std::lock_guard lock(mutex);
  auto& entry = files[file];
  if (auto held = entry.lock()) return held;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    files.erase(file);
    return nullptr;
  }
  auto opened = std::make_shared<const SharedFile>(fd, next_serial++);
  entry = opened;
  if (files.size() > 2 * kMaxSharedFiles) std::erase_if(files, [](const auto& f) { return f.second.expired(); });
  return opened;
}

}  // namespace

std::shared_ptr<const void> keep_pack_open(const std::string& pack_file) { return open_shared(pack_file); }

void PackHolder::hold(const std::string& rank_name) {
  std::string file;
  std::uint64_t offset = 0, length = 0;
  if (!parse_pack_locator(rank_name, file, offset, length)) return;
  if (open_ && file == file_) return;
  open_ = keep_pack_open(file);
  file_ = std::move(file);
}

const char* trace_end_name(TraceEnd e) {
  switch (e) {
    case TraceEnd::Complete: return "complete";
    case TraceEnd::Unfinished: return "unfinished (no MPI_Finalize)";
    case TraceEnd::Truncated: return "truncated";
    case TraceEnd::Corrupt: return "corrupt";
  }
  return "?";
}

TraceFileWriter::TraceFileWriter(std::string path, const FileHeader& header, int zstd_level, bool append)
    : path_(std::move(path)), level_(zstd_level), cctx_(ZSTD_createCCtx(), ZSTD_freeCCtx) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd_ < 0) throw TraceError(fmt::format("{}: cannot create: {}", path_, std::strerror(errno)));
  if (!cctx_) throw TraceError(fmt::format("{}: zstd context unavailable", path_));
  ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_compressionLevel, level_);
  ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_checksumFlag, 1);
  std::vector<std::uint8_t> head;
  encode_file_header(header, head);
  if (!write_all(fd_, head.data(), head.size()))
    throw TraceError(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
  bytes_written_ = head.size();
}

TraceFileWriter::~TraceFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TraceFileWriter::prepare(std::size_t payload_bytes) {
  std::lock_guard lock(mutex_);
  out_.assign(kFrameHeaderSize + std::max(ZSTD_compressBound(payload_bytes), stored_frame_bound(payload_bytes)), 0);
  if (stored_) return;
  const std::vector<std::uint8_t> dummy(payload_bytes, 0);
  ZSTD_compress2(cctx_.get(), out_.data() + kFrameHeaderSize, out_.size() - kFrameHeaderSize, dummy.data(), dummy.size());
}

bool TraceFileWriter::write_frame(FrameKind kind, std::uint16_t thread, std::uint32_t count,
                                  std::span<const std::uint8_t> payload) {
  std::lock_guard lock(mutex_);
  return write_locked(kind, thread, count, payload);
}

bool TraceFileWriter::try_write_frame(FrameKind kind, std::uint16_t thread, std::uint32_t count,
                                      std::span<const std::uint8_t> payload) {
  std::unique_lock lock(mutex_, std::try_to_lock);
  return lock.owns_lock() && write_locked(kind, thread, count, payload);
}

bool TraceFileWriter::write_locked(FrameKind kind, std::uint16_t thread, std::uint32_t count,
                                   std::span<const std::uint8_t> payload) {
  // Grown, never shrunk: shrinking for a small definitions frame and growing back for the next
  // events frame zero-filled the whole bound on every flush.
  const std::size_t bound = stored_ ? stored_frame_bound(payload.size()) : ZSTD_compressBound(payload.size());
  if (out_.size() < kFrameHeaderSize + bound) out_.resize(kFrameHeaderSize + bound);
  std::size_t csize = 0;
  if (stored_) {
    csize = write_stored_frame(payload, out_.data() + kFrameHeaderSize);
  } else {
    csize = ZSTD_compress2(cctx_.get(), out_.data() + kFrameHeaderSize, bound, payload.data(), payload.size());
    if (ZSTD_isError(csize)) return false;
  }
  std::uint8_t* h = out_.data();
  put_u32(h, kFrameMagic);
  h[4] = static_cast<std::uint8_t>(kind);
  h[5] = 0;
  h[6] = static_cast<std::uint8_t>(thread);
  h[7] = static_cast<std::uint8_t>(thread >> 8);
  put_u32(h + 8, count);
  put_u32(h + 12, static_cast<std::uint32_t>(payload.size()));
  put_u32(h + 16, static_cast<std::uint32_t>(csize));
  const std::size_t total = kFrameHeaderSize + csize;
  if (!write_all(fd_, out_.data(), total)) return false;
  bytes_written_ += total;
  return true;
}

void TraceFileReader::Descriptor::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

std::string pack_locator(const std::string& pack_file, std::uint64_t offset, std::uint64_t length) {
  return fmt::format("{}@{}+{}", pack_file, offset, length);
}

bool parse_pack_locator(const std::string& name, std::string& file, std::uint64_t& offset, std::uint64_t& length) {
  const auto at = name.rfind('@');
  if (at == std::string::npos || at < 4 || name.compare(at - 4, 4, ".msp") != 0) return false;
  const auto plus = name.find('+', at);
  if (plus == std::string::npos) return false;
  auto number = [&](std::size_t from, std::size_t to, std::uint64_t& v) {
    if (from >= to || to - from > 19) return false;
    v = 0;
    for (std::size_t i = from; i < to; ++i) {
      if (name[i] < '0' || name[i] > '9') return false;
      v = v * 10 + static_cast<std::uint64_t>(name[i] - '0');
    }
    return true;
  };
  if (!number(at + 1, plus, offset) || !number(plus + 1, name.size(), length)) return false;
  file = name.substr(0, at);
  return true;
}

namespace {

std::string file_of(const std::string& path, std::uint64_t& base, std::uint64_t& length) {
  std::string file;
  if (parse_pack_locator(path, file, base, length)) return file;
  base = 0;
  length = std::numeric_limits<std::uint64_t>::max();
  return path;
}

// The compressed bytes of the frame being read, needed only inside next(): one buffer a thread
// serves every reader on it. A buffer a reader, with a reader kept for every rank of a run, held
// each rank's largest compressed frame (10 MB of a 65 536-rank report's 334; a recorder's frame a
// rank in a long run).
FrameBytes& compressed_scratch() {
  thread_local FrameBytes bytes;
  return bytes;
}

}  // namespace

TraceFileReader::TraceFileReader(std::string path) : path_(std::move(path)), serial_(next_serial++) {
  std::uint64_t length = 0;
  const std::string file = file_of(path_, base_, length);
  packed_ = length != std::numeric_limits<std::uint64_t>::max();
  if (!(packed_ ? (shared_ = open_shared(file)) != nullptr : open_again()))
    throw TraceError(fmt::format("{}: cannot open: {}", path_, std::strerror(errno)));
  source_ = shared_ ? shared_->serial : serial_;
  // The first block is read now: where the stream ends inside it (a small rank file; a rank of a
  // pack), its size is known without asking the file system (at 16 384 ranks a report opens
  // 80 000 rank streams, and a system call costs microseconds). A rank of a pack read after the
  // rank before it usually finds its stream in the block that rank read.
  const auto in_block = [&] {
    if (block.owner != source_ || base_ < block.at || base_ > block.at + block.bytes.size()) return false;
    const std::uint64_t have = block.at + block.bytes.size() - base_;
    return block.to_end || have >= std::min<std::uint64_t>(length, kBlock);
  };
  if (!in_block()) {
    block.owner = 0;
    block.bytes.resize(kBlock);
    const std::int64_t got = pread_upto(fd(), base_, block.bytes.data(), kBlock);
    if (got >= 0) {
      block.bytes.resize(static_cast<std::size_t>(got));
      block.owner = source_, block.at = base_, block.to_end = static_cast<std::uint64_t>(got) < kBlock;
    }
  }
  if (block.owner == source_) {
    const std::uint64_t have = block.at + block.bytes.size() - base_;
    // A stream inside a pack file ends at its length, or where the file ends if that is sooner
    // (a cut pack file: the rank's stream is cut short, as a killed rank's file is).
    if (have >= length || block.to_end) file_bytes_ = std::min(have, length);
    else if (struct stat st {}; ::fstat(fd(), &st) == 0) {
      const auto size = static_cast<std::uint64_t>(st.st_size);
      file_bytes_ = size > base_ ? std::min(size - base_, length) : 0;
    }
  }
  // The header is small and bounded: read at most 256 bytes of it.
  std::vector<std::uint8_t> head(std::min<std::uint64_t>(file_bytes_, 256));
  if (!read_at(0, head.data(), head.size())) throw TraceError(fmt::format("{}: cannot read its header", path_));
  try {
    ByteReader r(head);
    header_ = decode_file_header(r);
    pos_ = r.pos();
  } catch (const TraceError& e) {
    throw TraceError(fmt::format("{}: {}", path_, e.what()));
  }
}

int TraceFileReader::fd() const { return shared_ ? shared_->fd : own_fd_.get(); }

// `at` is an offset in the rank's stream, which starts at base_ in the file.
bool TraceFileReader::read_at(std::uint64_t at, std::uint8_t* data, std::size_t size) const {
  const std::uint64_t from = base_ + at;
  const auto cached = [&] {
    return block.owner == source_ && from >= block.at && from + size <= block.at + block.bytes.size() &&
           at + size <= file_bytes_;
  };
  if (!cached() && size < kBlock && at < file_bytes_) {
    block.owner = 0;
    block.bytes.resize(std::min<std::uint64_t>(kBlock, file_bytes_ - at));
    if (pread_all(fd(), from, block.bytes.data(), block.bytes.size()))
      block.owner = source_, block.at = from, block.to_end = false;
  }
  if (cached()) {
    std::memcpy(data, block.bytes.data() + (from - block.at), size);
    return true;
  }
  return at + size <= file_bytes_ && pread_all(fd(), from, data, size);
}

bool TraceFileReader::open_again() {
  if (packed_) {
    std::uint64_t base = 0, length = 0;
    shared_ = open_shared(file_of(path_, base, length));
    if (shared_) source_ = shared_->serial;
    return shared_ != nullptr;
  }
  own_fd_.reset(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  return static_cast<bool>(own_fd_);
}

void TraceFileReader::close_file() {
  own_fd_.reset();
  if (shared_files_open > kMaxSharedFiles) shared_.reset();
}

std::optional<std::uint8_t> TraceFileReader::peek_kind() {
  if (stopped_ || file_bytes_ - pos_ < kFrameHeaderSize) return std::nullopt;
  if (ahead_at_ != pos_) {
    if ((!is_open() && !open_again()) || !read_at(pos_, ahead_, kFrameHeaderSize)) return std::nullopt;
    ahead_at_ = pos_;
  }
  return ahead_[4];
}

TraceFileReader::~TraceFileReader() = default;

bool TraceFileReader::fail(TraceEnd end, std::string what) {
  stopped_ = true;
  end_ = end;
  problem_ = fmt::format("{}: frame {} at byte {}: {}", path_, frames_, pos_, what);
  return false;
}

bool TraceFileReader::next(Frame& frame) {
  if (stopped_) return false;
  if (!is_open() && !open_again())
    return fail(TraceEnd::Truncated, fmt::format("cannot open it again: {}", std::strerror(errno)));
  if (pos_ == file_bytes_) {
    stopped_ = true;
    end_ = saw_end_ ? TraceEnd::Complete : TraceEnd::Unfinished;
    return false;
  }
  std::uint8_t h[kFrameHeaderSize];
  if (file_bytes_ - pos_ < kFrameHeaderSize) {
    return fail(TraceEnd::Truncated, fmt::format("cut short: {} bytes of a frame header",
                                                 file_bytes_ - pos_));
  }
  if (ahead_at_ == pos_) std::memcpy(h, ahead_, sizeof h);
  else if (!read_at(pos_, h, sizeof h)) return fail(TraceEnd::Truncated, "read failed");
  const std::uint64_t body = pos_ + kFrameHeaderSize;
  FrameBytes& compressed = compressed_scratch();
  if (get_u32(h) != kFrameMagic) return fail(TraceEnd::Corrupt, "bad frame magic");
  if (h[5] != 0) return fail(TraceEnd::Corrupt, fmt::format("frame header's reserved byte is {}, not 0", h[5]));
  const auto kind = h[4];
  const std::uint32_t count = get_u32(h + 8), raw = get_u32(h + 12), csize = get_u32(h + 16);
  if (raw > kMaxFramePayload || csize > ZSTD_compressBound(kMaxFramePayload))
    return fail(TraceEnd::Corrupt, fmt::format("implausible frame size {} / {}", raw, csize));
  if (file_bytes_ - pos_ - kFrameHeaderSize < csize) {
    return fail(TraceEnd::Truncated,
                fmt::format("cut short: {} of {} bytes", file_bytes_ - pos_ - kFrameHeaderSize, csize));
  }
  if ((skip_events_ && kind == static_cast<std::uint8_t>(FrameKind::Events)) ||
      (skip_steps_ && kind == static_cast<std::uint8_t>(FrameKind::Steps))) {
    frame.payload.clear();  // its bytes are never read
  } else if (check_steps_ && kind == static_cast<std::uint8_t>(FrameKind::Steps)) {
    compressed.resize(csize);
    if (!read_at(body, compressed.data(), csize)) return fail(TraceEnd::Truncated, "read failed");
    if (frame_known_whole(compressed, raw)) {
      frame.payload.clear();
      return accept(frame, kind, h, count, csize);
    }
    // Decompressed through a small window and dropped: zstd still checks the content checksum.
    thread_local const std::unique_ptr<ZSTD_DCtx_s, std::size_t (*)(ZSTD_DCtx_s*)> sctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
    thread_local std::vector<std::uint8_t> window(std::size_t{1} << 17);
    if (raw <= window.size()) {
      // A frame that fits the window in one piece (every rank's, in a run of many small ranks):
      // one call, as for Events frames. The streaming API costs more to start than a small
      // frame costs to decompress.
      const std::size_t got = ZSTD_decompressDCtx(sctx.get(), window.data(), window.size(), compressed.data(), csize);
      if (ZSTD_isError(got) && ZSTD_getErrorCode(got) != ZSTD_error_dstSize_tooSmall)
        return fail(TraceEnd::Corrupt, fmt::format("zstd: {}", ZSTD_getErrorName(got)));
      if (ZSTD_isError(got) || got != raw) return fail(TraceEnd::Corrupt, "decompressed size differs from its header");
      note_frame_whole(compressed, raw);
      frame.payload.clear();
      return accept(frame, kind, h, count, csize);
    }
    ZSTD_DCtx_reset(sctx.get(), ZSTD_reset_session_only);
    ZSTD_inBuffer in{compressed.data(), csize, 0};
    std::size_t produced = 0, left = 1;
    while (left != 0) {
      ZSTD_outBuffer out{window.data(), window.size(), 0};
      left = ZSTD_decompressStream(sctx.get(), &out, &in);
      if (ZSTD_isError(left)) return fail(TraceEnd::Corrupt, fmt::format("zstd: {}", ZSTD_getErrorName(left)));
      produced += out.pos;
      if (produced > raw) return fail(TraceEnd::Corrupt, "decompressed size differs from its header");
      if (left != 0 && in.pos == in.size && out.pos < out.size) return fail(TraceEnd::Corrupt, "zstd: frame cut short");
    }
    if (produced != raw) return fail(TraceEnd::Corrupt, "decompressed size differs from its header");
    note_frame_whole(compressed, raw);
    frame.payload.clear();
  } else {
    compressed.resize(csize);
    if (!read_at(body, compressed.data(), csize)) return fail(TraceEnd::Truncated, "read failed");
    frame.payload.resize(raw);
    // One decompression context per thread, shared by its readers: a reader per rank kept open
    // (the streaming replay) must not cost zstd's ~100 KiB each.
    thread_local const std::unique_ptr<ZSTD_DCtx_s, std::size_t (*)(ZSTD_DCtx_s*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
    const std::size_t got = ZSTD_decompressDCtx(dctx.get(), frame.payload.data(), raw,
                                                compressed.data(), csize);
    if (ZSTD_isError(got)) return fail(TraceEnd::Corrupt, fmt::format("zstd: {}", ZSTD_getErrorName(got)));
    if (got != raw) return fail(TraceEnd::Corrupt, "decompressed size differs from its header");
  }
  return accept(frame, kind, h, count, csize);
}

bool TraceFileReader::accept(Frame& frame, std::uint8_t kind, const std::uint8_t* h, std::uint32_t count,
                             std::uint32_t csize) {
  frame.kind = static_cast<FrameKind>(kind);
  frame.thread = static_cast<std::uint16_t>(h[6] | h[7] << 8);
  frame.count = count;
  frame.index = frames_;
  frame.offset = pos_;
  if (frame.kind == FrameKind::End) saw_end_ = true;
  ++frames_;
  pos_ += kFrameHeaderSize + csize;
  return true;
}

}  // namespace mstep
