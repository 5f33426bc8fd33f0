// Byte-level encoding of trace records: varints, zigzag, and the record codecs of every frame kind.
// Every frame payload is self-contained: delta state starts from zero at each frame, so one frame
// decodes without any other (a crash loses at most the frame being written).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "format/trace_format.hpp"

namespace mstep {

// A malformed payload or file. The message says what and where.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void varint(std::uint64_t v) {
    std::uint8_t b[10];
    std::size_t n = 0;
    while (v >= 0x80) {
      b[n++] = static_cast<std::uint8_t>(v | 0x80);
      v >>= 7;
    }
    b[n++] = static_cast<std::uint8_t>(v);
    out_.insert(out_.end(), b, b + n);  // one capacity check, not one per byte
  }
  void zigzag(std::int64_t v) {
    varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  void fixed(std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void bytes(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void string(std::string_view s) {
    varint(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }

 private:
  std::vector<std::uint8_t>& out_;
};

// Unchecked writes through a raw pointer, for the recorder's flush path (a capacity check per byte
// made varint writing the costliest function of a traced ping-pong): the caller has room for the
// worst case, kMaxVarint bytes a varint.
constexpr std::size_t kMaxVarint = 10;
struct RawColumn {
  std::uint8_t* p;
  void u8(std::uint8_t v) { *p++ = v; }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      *p++ = static_cast<std::uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<std::uint8_t>(v);
  }
  void zigzag(std::int64_t v) {
    varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
};

// A byte column that grows by doubling: reserve() room for a record's worst case, write it through
// the RawColumn, commit() what was written.
class GrowingColumn {
 public:
  RawColumn reserve(std::size_t max_bytes) {
    if (buf_.size() - used_ < max_bytes) [[unlikely]] grow(max_bytes);
    return RawColumn{buf_.data() + used_};
  }
  void commit(const RawColumn& c) { used_ = static_cast<std::size_t>(c.p - buf_.data()); }
  std::size_t size() const { return used_; }
  std::span<const std::uint8_t> bytes() const { return {buf_.data(), used_}; }
  void clear() { used_ = 0; }

 private:
  [[gnu::noinline]] void grow(std::size_t max_bytes) { buf_.resize(std::max(buf_.size() * 2, used_ + max_bytes)); }
  std::vector<std::uint8_t> buf_;
  std::size_t used_ = 0;
};

// Bounds-checked reader: running past the end throws TraceError, never reads out of bounds.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> in) : in_(in) {}
  bool done() const { return pos_ == in_.size(); }
  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return in_.size() - pos_; }
  std::uint8_t u8() {
    need(1);
    return in_[pos_++];
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = u8();
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw TraceError("varint longer than 10 bytes");
  }
  std::int64_t zigzag() { return unzigzag(varint()); }
  // Without the bounds check per byte, for a decoder that has checked that `remaining()` holds the
  // worst case (kMaxVarint bytes a varint, 1 a u8): the checked reads cost a third of an event
  // frame's decoding.
  std::uint8_t u8_unchecked() { return in_[pos_++]; }
  std::uint64_t varint_unchecked() {
    const std::uint8_t* p = in_.data() + pos_;
    if (p[0] < 0x80) {
      ++pos_;
      return p[0];
    }
    if (p[1] < 0x80) {
      pos_ += 2;
      return (p[0] & 0x7fu) | (std::uint64_t{p[1]} << 7);
    }
    if constexpr (std::endian::native != std::endian::little) return varint();
    // Eight bytes at once, without a branch a byte: the first byte without its high bit ends the
    // varint; the 7-bit groups are then gathered in three steps (pairs into 14 bits, 28, 56).
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    const std::uint64_t stops = ~w & 0x8080808080808080ull;
    if (stops == 0) [[unlikely]] return varint();  // 9 or 10 bytes
    pos_ += static_cast<std::size_t>(std::countr_zero(stops) / 8 + 1);
    w &= (stops ^ (stops - 1)) & 0x7f7f7f7f7f7f7f7full;  // the bytes up to the last one
    w = (w & 0x007f007f007f007full) | ((w & 0x7f007f007f007f00ull) >> 1);
    w = (w & 0x00003fff00003fffull) | ((w & 0x3fff00003fff0000ull) >> 2);
    return (w & 0x000000000fffffffull) | ((w & 0x0fffffff00000000ull) >> 4);
  }
  std::int64_t zigzag_unchecked() { return unzigzag(varint_unchecked()); }
  static std::int64_t unzigzag(std::uint64_t v) { return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1)); }
  std::uint64_t fixed(int bytes) {
    need(static_cast<std::size_t>(bytes));
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(in_[pos_++]) << (8 * i);
    return v;
  }
  std::span<const std::uint8_t> bytes(std::size_t n) {
    need(n);
    auto s = in_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::string string() {
    const auto n = varint();
    if (n > remaining()) throw TraceError("string runs past the end of its frame");
    auto s = bytes(static_cast<std::size_t>(n));
    return std::string(s.begin(), s.end());
  }
  // A count about to size a container: reject counts the remaining bytes cannot hold, so a
  // corrupted count cannot make the reader allocate gigabytes.
  std::size_t count(std::size_t min_bytes_each) {
    const auto n = varint();
    if (min_bytes_each > 0 && n > remaining() / min_bytes_each)
      throw TraceError("record count larger than its frame");
    return static_cast<std::size_t>(n);
  }

 private:
  void need(std::size_t n) const {
    if (n > in_.size() - pos_) throw TraceError("record runs past the end of its frame");
  }
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
};

// File header: magic, version, then the FileHeader fields. Sizes in trace-format.md.
void encode_file_header(const FileHeader& h, std::vector<std::uint8_t>& out);
// Throws TraceError for a wrong magic or an unsupported version.
FileHeader decode_file_header(ByteReader& in);

// Frame payload codecs (before compression). decode_* append to `out`.
void encode_events(std::span<const Event> events, std::vector<std::uint8_t>& out);
// `limit`: decode only the first `limit` records (the rest of the frame is not checked then).
// The decoders take kClosesStep off every record (the marks are the file's business: the records are
// handed out as the application made them) unless `keep_step_marks` (read_rank_trace, which checks
// them).
void decode_events(std::span<const std::uint8_t> payload, std::vector<Event>& out,
                   std::size_t limit = static_cast<std::size_t>(-1), bool keep_step_marks = false);
// An Events frame's payload decoded a part at a time (the payload must outlive the decoder): a
// reader of many ranks holds a few thousand records of each, not whole frames.
class EventFrameDecoder {
 public:
  // Checks the column sizes.
  explicit EventFrameDecoder(std::span<const std::uint8_t> payload, bool keep_step_marks = false);
  std::size_t size() const { return n_; }        // records in the frame
  std::size_t left() const { return n_ - done_; }
  // Appends the next `limit` records (or all that are left) to `out`.
  void decode(std::vector<Event>& out, std::size_t limit = static_cast<std::size_t>(-1));

 private:
  ByteReader head_{std::span<const std::uint8_t>{}}, times_{std::span<const std::uint8_t>{}},
      fields_{std::span<const std::uint8_t>{}};
  std::size_t n_ = 0, done_ = 0;
  Event prev_;
  std::uint32_t prev_request_ = 0;
  std::uint8_t flags_mask_;
};
// Steps frames (trace format 3 and older; version 4 marks records instead): three columns (times;
// sizes; partners), each value a difference where one helps: the index is one more than the last,
// a step begins where the last ended. No writer of this version writes them; the tests write
// version 3 files with it, to check what the reader still reads.
class StepEncoder {
 public:
  void add(const StepRecord& s);
  std::size_t size() const { return count_; }
  // Writes the payload of one Steps frame and starts over (delta state too).
  void finish(std::vector<std::uint8_t>& out);

 private:
  GrowingColumn times_, sizes_, partners_;
  std::size_t count_ = 0;
  std::uint32_t last_index_ = 0;
  std::uint64_t last_end_ = 0;
};
void encode_steps(std::span<const StepRecord> steps, std::vector<std::uint8_t>& out);
// Writes the current version (kTraceVersion); reads the frames of `version` (the file header's).
void decode_steps(std::span<const std::uint8_t> payload, std::vector<StepRecord>& out,
                  std::uint16_t version = kTraceVersion);
void encode_comms(std::span<const CommDef> comms, std::vector<std::uint8_t>& out);
// `world_size`: the run's (file header); no communicator has more members.
void decode_comms(std::span<const std::uint8_t> payload, std::vector<CommDef>& out, std::uint64_t world_size);
void encode_callsites(std::span<const CallsiteDef> sites, std::vector<std::uint8_t>& out);
void decode_callsites(std::span<const std::uint8_t> payload, std::vector<CallsiteDef>& out);
void encode_clocks(std::span<const ClockSync> clocks, std::vector<std::uint8_t>& out);
void decode_clocks(std::span<const std::uint8_t> payload, std::vector<ClockSync>& out);

}  // namespace mstep
