// Rank trace files on disk: a FileHeader, then frames. A frame is a 20-byte frame header and one
// zstd frame (with zstd's content checksum) holding one payload of format/codec.hpp.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "format/codec.hpp"
#include "format/trace_format.hpp"

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace mstep {
namespace detail {
struct SharedFile;  // format/trace_file.cpp
}

inline constexpr std::size_t kFrameHeaderSize = 20;
// Larger frames are refused by the reader: a corrupted size must not allocate gigabytes.
inline constexpr std::uint32_t kMaxFramePayload = 256u << 20;

class TraceFileWriter {
 public:
  // Creates (truncates) `path` and writes the header. Throws TraceError naming the file.
  // `append`: the rank's stream goes after what the file already holds (a pack file of many ranks,
  // share/trace-format.md), instead of replacing it.
  TraceFileWriter(std::string path, const FileHeader& header, int zstd_level = 1, bool append = false);
  ~TraceFileWriter();
  TraceFileWriter(const TraceFileWriter&) = delete;
  TraceFileWriter& operator=(const TraceFileWriter&) = delete;

  // Compresses `payload` and appends it as one frame with a single write(2), so that a process
  // killed at any moment leaves whole frames followed by at most one partial one. Thread-safe.
  // Returns false (and keeps going) if the write failed.
  bool write_frame(FrameKind kind, std::uint16_t thread, std::uint32_t count,
                   std::span<const std::uint8_t> payload);
  // For signal handlers: the same, but gives up instead of waiting for another thread's frame.
  bool try_write_frame(FrameKind kind, std::uint16_t thread, std::uint32_t count,
                       std::span<const std::uint8_t> payload);
  const std::string& path() const { return path_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  // From now on, frames keep their payload uncompressed in a stored zstd frame
  // (format/zstd_stored.hpp), for compressing after the run (format/trace_compact.hpp).
  void store_uncompressed(bool on) { stored_ = on; }
  // Allocates and touches what compressing a payload of up to `payload_bytes` needs (the output
  // buffer, zstd's tables), writing nothing: the recorder calls it inside MPI_Init so that the
  // page faults of the first frame (milliseconds on some VMs) do not land in the application.
  void prepare(std::size_t payload_bytes);

 private:
  bool write_locked(FrameKind kind, std::uint16_t thread, std::uint32_t count,
                    std::span<const std::uint8_t> payload);
  std::string path_;
  int fd_ = -1;
  int level_;
  bool stored_ = false;
  std::mutex mutex_;
  std::unique_ptr<ZSTD_CCtx_s, std::size_t (*)(ZSTD_CCtx_s*)> cctx_;
  std::vector<std::uint8_t> out_;
  std::uint64_t bytes_written_ = 0;
};

// How a rank file ended.
enum class TraceEnd {
  Complete,    // an End frame: the rank reached MPI_Finalize
  Unfinished,  // whole frames, no End frame: the application stopped before MPI_Finalize
  Truncated,   // the last frame is cut short (killed while writing)
  Corrupt,     // a frame in the middle is damaged; nothing after it is read
};
const char* trace_end_name(TraceEnd e);

// Bytes that resize without being zeroed first: a frame's payload is decompressed over them at
// once, and zeroing it before was 2% of a replay reading its ranks' files.
template <class T>
struct UninitAllocator : std::allocator<T> {
  using value_type = T;
  UninitAllocator() noexcept = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using FrameBytes = std::vector<std::uint8_t, UninitAllocator<std::uint8_t>>;

struct Frame {
  FrameKind kind{};
  std::uint16_t thread = 0;
  std::uint32_t count = 0;
  std::size_t index = 0;      // 0-based frame number in the file
  std::uint64_t offset = 0;   // byte offset of its frame header
  FrameBytes payload;
};

class TraceFileReader {
 public:
  // Throws TraceError ("PATH: reason") when the file cannot be opened or its header is not one of
  // this version's: nothing of it can be read then. `path` is a rank file, or one rank's stream
  // inside a pack file, named by pack_locator ("DIR/ranks-000000.msp@OFFSET+LENGTH").
  explicit TraceFileReader(std::string path);
  ~TraceFileReader();
  TraceFileReader(const TraceFileReader&) = delete;
  TraceFileReader& operator=(const TraceFileReader&) = delete;

  const FileHeader& header() const { return header_; }
  const std::string& path() const { return path_; }
  std::uint64_t file_bytes() const { return file_bytes_; }

  // The next whole, checksummed frame. False at the end, or at the first damaged frame: then
  // end_state() says which, and problem() says what and where in one line.
  bool next(Frame& frame);
  TraceEnd end_state() const { return end_; }
  // From now on, Events (Steps) frames come back with their header fields and an empty payload,
  // their bytes skipped unread (a scan for the small frames; their checksums are not checked then).
  void skip_event_payloads(bool skip) { skip_events_ = skip; }
  void skip_step_payloads(bool skip) { skip_steps_ = skip; }
  // Steps frames are decompressed to check them (a damaged one ends the file as usual) but their
  // payload is not kept: `payload` is empty, and no buffer grows to the largest Steps frame.
  void check_step_payloads_only(bool check) { check_steps_ = check; }
  const std::string& problem() const { return problem_; }
  // Closes the file until the next call of next(), which opens it again where it was: a reader
  // kept for every rank of a large run must not hold a descriptor each. A rank inside a pack file
  // keeps the pack's descriptor, which the readers of all its ranks share (while few packs are open).
  void close_file();
  // The kind byte of the next frame's header, without moving past it; nullopt at the end, after a
  // failure, or when fewer than a header's bytes are left (next() then says what is wrong).
  std::optional<std::uint8_t> peek_kind();

 private:
  // An open descriptor, closed with its owner (read with pread: no position to seek, no stdio
  // buffer refilled after every seek).
  class Descriptor {
   public:
    Descriptor() = default;
    explicit Descriptor(int fd) : fd_(fd) {}
    ~Descriptor() { reset(); }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    void reset(int fd = -1);

   private:
    int fd_ = -1;
  };
  // A pack file's descriptor is one for all the readers of its ranks (detail::SharedFile): a pack
  // of 4096 ranks was opened and closed twice a rank, 262 000 system calls at 65 536 ranks.
  int fd() const;
  bool is_open() const { return static_cast<bool>(own_fd_) || shared_ != nullptr; }
  bool read_at(std::uint64_t at, std::uint8_t* data, std::size_t size) const;
  bool open_again();
  bool fail(TraceEnd end, std::string what);
  // Hands out the frame whose header is `h` and moves past it.
  bool accept(Frame& frame, std::uint8_t kind, const std::uint8_t* h, std::uint32_t count, std::uint32_t csize);
  std::string path_;  // as given: what messages name
  bool packed_ = false;  // path_ is a pack locator: the file to open is path_ up to its '@'
  std::uint64_t base_ = 0;  // where this rank's stream starts in it
  Descriptor own_fd_;                         // a rank file's
  std::shared_ptr<const detail::SharedFile> shared_;  // a pack file's
  std::uint64_t serial_;  // this reader's name in read_at's block cache
  std::uint64_t source_;  // the name of its file there: serial_, or the pack file's (shared by its ranks)
  FileHeader header_;
  std::uint64_t file_bytes_ = 0;
  std::uint64_t pos_ = 0;
  std::size_t frames_ = 0;
  bool saw_end_ = false;
  bool stopped_ = false;
  bool skip_events_ = false, skip_steps_ = false, check_steps_ = false;
  TraceEnd end_ = TraceEnd::Unfinished;
  std::string problem_;
  std::uint8_t ahead_[kFrameHeaderSize] = {};  // the header peek_kind() read, at ahead_at_
  std::uint64_t ahead_at_ = std::uint64_t(-1);
};

// Keeps a pack file's descriptor open while the handle lives: readers made one after the other for
// its ranks (each read and dropped, as a trace directory's metadata is) then share it instead of
// opening and closing the file each. Null when the file cannot be opened (the readers say why).
std::shared_ptr<const void> keep_pack_open(const std::string& pack_file);

// For a loop that reads a trace's ranks one after the other: hold(name) before reading each keeps
// the pack file of the rank named open (the one before it let go), so that a packed trace costs an
// open a pack, not one a rank. Nothing for a rank file.
class PackHolder {
 public:
  void hold(const std::string& rank_name);

 private:
  std::string file_;
  std::shared_ptr<const void> open_;
};

// One rank's stream inside a pack file (share/trace-format.md): "PACK@OFFSET+LENGTH". Every
// reader of a rank file takes such a name where it takes a path.
std::string pack_locator(const std::string& pack_file, std::uint64_t offset, std::uint64_t length);
// The parts of a pack locator; false for a plain path (one that does not end in ".msp@N+N").
bool parse_pack_locator(const std::string& name, std::string& file, std::uint64_t& offset, std::uint64_t& length);

}  // namespace mstep
