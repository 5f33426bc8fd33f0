#include "format/codec.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

namespace mstep {
namespace {

// A value plus a decoded difference, wrapping as the encoder's differences do: a corrupted
// difference gives a wrong value (caught by the checks after it), never signed overflow.
std::int64_t plus(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

// Field-presence mask of one event: a field is written only when it differs from the previous
// event's (or, for byte counts and requests, when it is not zero). Repetitive traffic then costs
// little more than its two time deltas, before zstd sees it.
enum FieldBit : std::uint8_t {
  kPeerChanged = 1u << 0,
  kTagChanged = 1u << 1,
  kCommChanged = 1u << 2,
  kCallsiteChanged = 1u << 3,
  kHasSendBytes = 1u << 4,
  kHasRecvBytes = 1u << 5,
  kHasRequest = 1u << 6,
  kSameTimes = 1u << 7,
};

// Columns: [op, flags, mask] per event; the time deltas; the other fields. Grouping alike bytes
// lets zstd find the repetition of a steady exchange.
// The encoder runs on the recorder's flush path: it writes through raw pointers into columns
// (GrowingColumn) kept per thread and sized for the worst case of the frame.

}  // namespace

void encode_file_header(const FileHeader& h, std::vector<std::uint8_t>& out) {
  ByteWriter w(out);
  w.bytes({reinterpret_cast<const std::uint8_t*>(kFileMagic), sizeof kFileMagic});
  w.fixed(h.version, 2);
  constexpr std::uint16_t kBodySize = 4 + 4 + 4 + 1 + 8;
  w.fixed(kBodySize, 2);
  w.fixed(static_cast<std::uint32_t>(h.rank), 4);
  w.fixed(static_cast<std::uint32_t>(h.world_size), 4);
  w.fixed(h.pid, 4);
  w.u8(h.clock_kind);
  w.fixed(std::bit_cast<std::uint64_t>(h.ticks_per_second), 8);
}

FileHeader decode_file_header(ByteReader& in) {
  if (in.remaining() < sizeof kFileMagic + 4) throw TraceError("too short to be an mstep trace");
  auto magic = in.bytes(sizeof kFileMagic);
  if (std::memcmp(magic.data(), kFileMagic, sizeof kFileMagic) != 0)
    throw TraceError("not an mstep trace (bad magic)");
  FileHeader h;
  h.version = static_cast<std::uint16_t>(in.fixed(2));
  if (h.version < kOldestTraceVersion || h.version > kTraceVersion)
    throw TraceError(fmt::format("trace format version {}, this mstep reads versions {} to {}", h.version,
                                 kOldestTraceVersion, kTraceVersion));
  const auto body = static_cast<std::size_t>(in.fixed(2));
  if (body < 21 || body > in.remaining()) throw TraceError("file header truncated");
  const auto start = in.pos();
  h.rank = static_cast<std::int32_t>(in.fixed(4));
  h.world_size = static_cast<std::int32_t>(in.fixed(4));
  h.pid = static_cast<std::uint32_t>(in.fixed(4));
  h.clock_kind = in.u8();
  h.ticks_per_second = std::bit_cast<double>(in.fixed(8));
  in.bytes(body - (in.pos() - start));  // fields a later minor revision may add
  if (h.world_size <= 0 || h.rank < 0 || h.rank >= h.world_size)
    throw TraceError(fmt::format("file header has rank {} of {}", h.rank, h.world_size));
  if (h.clock_kind > 1) throw TraceError(fmt::format("file header has clock kind {}", h.clock_kind));
  // Clocks tick between 1 MHz and 100 GHz (CLOCK_MONOTONIC: 1 GHz exactly); a flipped bit in this
  // unchecksummed double would otherwise rescale every time of the rank.
  if (!(h.ticks_per_second >= 1e6 && h.ticks_per_second <= 1e11) ||
      (h.clock_kind == 1 && h.ticks_per_second != 1e9))
    throw TraceError(fmt::format("file header has {} clock ticks per second", h.ticks_per_second));
  return h;
}

void encode_events(std::span<const Event> events, std::vector<std::uint8_t>& out) {
  thread_local GrowingColumn head_column, times_column, fields_column;
  const std::size_t n = events.size();
  head_column.clear();
  times_column.clear();
  fields_column.clear();
  RawColumn head = head_column.reserve(3 * n);
  RawColumn times = times_column.reserve(2 * kMaxVarint * n);
  RawColumn fields = fields_column.reserve(7 * kMaxVarint * n);
  Event prev;  // delta state starts from zero in every frame
  prev.peer = kNoPeer;
  prev.tag = kNoTag;
  std::uint32_t prev_request = 0;
  for (const Event& e : events) {
    std::uint8_t mask = 0;
    if (e.peer != prev.peer) mask |= kPeerChanged;
    if (e.tag != prev.tag) mask |= kTagChanged;
    if (e.comm != prev.comm) mask |= kCommChanged;
    if (e.callsite != prev.callsite) mask |= kCallsiteChanged;
    if (e.send_bytes) mask |= kHasSendBytes;
    if (e.recv_bytes) mask |= kHasRecvBytes;
    if (e.request) mask |= kHasRequest;
    if (e.t_enter == prev.t_enter && e.t_exit == prev.t_exit) mask |= kSameTimes;
    head.u8(static_cast<std::uint8_t>(e.op));
    head.u8(e.flags);
    head.u8(mask);
    if (!(mask & kSameTimes)) {
      times.zigzag(static_cast<std::int64_t>(e.t_enter - prev.t_exit));
      times.zigzag(static_cast<std::int64_t>(e.t_exit - e.t_enter));
    }
    if (mask & kPeerChanged) fields.zigzag(std::int64_t{e.peer} - prev.peer);
    if (mask & kTagChanged) fields.zigzag(std::int64_t{e.tag} - prev.tag);
    if (mask & kCommChanged) fields.varint(e.comm);
    if (mask & kCallsiteChanged) fields.zigzag(std::int64_t{e.callsite} - prev.callsite);
    if (mask & kHasSendBytes) fields.varint(e.send_bytes);
    if (mask & kHasRecvBytes) fields.varint(e.recv_bytes);
    if (mask & kHasRequest) {
      fields.zigzag(std::int64_t{e.request} - prev_request);
      prev_request = e.request;
    }
    prev = e;
  }
  head_column.commit(head);
  times_column.commit(times);
  fields_column.commit(fields);
  ByteWriter w(out);
  w.varint(n);
  w.varint(head_column.size());
  w.varint(times_column.size());
  w.varint(fields_column.size());
  w.bytes(head_column.bytes());
  w.bytes(times_column.bytes());
  w.bytes(fields_column.bytes());
}

EventFrameDecoder::EventFrameDecoder(std::span<const std::uint8_t> payload, bool keep_step_marks)
    : flags_mask_(keep_step_marks ? std::uint8_t{0xff} : static_cast<std::uint8_t>(~kClosesStep)) {
  ByteReader r(payload);
  n_ = r.count(3);
  const auto head_size = r.varint(), times_size = r.varint(), fields_size = r.varint();
  if (head_size != n_ * 3 || head_size > r.remaining() || times_size > r.remaining() - head_size ||
      fields_size != r.remaining() - head_size - times_size)
    throw TraceError("event frame column sizes do not add up");
  head_ = ByteReader(r.bytes(head_size));
  times_ = ByteReader(r.bytes(times_size));
  fields_ = ByteReader(r.bytes(fields_size));
  prev_.peer = kNoPeer;
  prev_.tag = kNoTag;
}

namespace {

// One event of a frame, from the previous one. kChecked: every read checks its column's bounds;
// otherwise the caller has made sure that the columns hold the worst case of one event.
// `e` is a default Event, in its place in the output: a record built on the stack and copied there
// was written twice (3.6% of the decoder's instructions, callgrind of a NetPIPE report).
template <bool kChecked>
void decode_event(Event& e, ByteReader& head, ByteReader& times, ByteReader& fields, const Event& prev,
                  std::uint32_t& prev_request, std::size_t index, std::uint8_t flags_mask) {
  const auto u8 = [](ByteReader& r) { return kChecked ? r.u8() : r.u8_unchecked(); };
  const auto varint = [](ByteReader& r) { return kChecked ? r.varint() : r.varint_unchecked(); };
  const auto zigzag = [](ByteReader& r) { return kChecked ? r.zigzag() : r.zigzag_unchecked(); };
  const std::uint8_t op = u8(head);
  if (!op_valid(op)) [[unlikely]]
    throw TraceError(fmt::format("event {} has unknown operation code {}", index, op));
  e.op = static_cast<Op>(op);
  e.flags = u8(head) & flags_mask;
  const std::uint8_t mask = u8(head);
  if (mask & kSameTimes) {
    e.t_enter = prev.t_enter;
    e.t_exit = prev.t_exit;
  } else {
    e.t_enter = prev.t_exit + static_cast<std::uint64_t>(zigzag(times));
    e.t_exit = e.t_enter + static_cast<std::uint64_t>(zigzag(times));
  }
  e.peer = (mask & kPeerChanged) ? static_cast<std::int32_t>(plus(prev.peer, zigzag(fields))) : prev.peer;
  e.tag = (mask & kTagChanged) ? static_cast<std::int32_t>(plus(prev.tag, zigzag(fields))) : prev.tag;
  e.comm = (mask & kCommChanged) ? static_cast<std::uint16_t>(varint(fields)) : prev.comm;
  e.callsite = (mask & kCallsiteChanged) ? static_cast<std::uint32_t>(plus(prev.callsite, zigzag(fields)))
                                         : prev.callsite;
  if (mask & kHasSendBytes) e.send_bytes = varint(fields);
  if (mask & kHasRecvBytes) e.recv_bytes = varint(fields);
  if (mask & kHasRequest) {
    e.request = static_cast<std::uint32_t>(plus(prev_request, zigzag(fields)));
    prev_request = e.request;
  }
}

// The most one event takes of each column: 3 head bytes (the head column is exactly 3 a record,
// checked when the frame is opened), two time varints, seven field varints.
constexpr std::size_t kMaxTimeBytes = 2 * kMaxVarint, kMaxFieldBytes = 7 * kMaxVarint;

}  // namespace

void EventFrameDecoder::decode(std::vector<Event>& out, std::size_t limit) {
  const std::size_t take = std::min<std::size_t>(n_ - done_, limit);
  const std::size_t first = out.size();
  if (const auto need = first + take; out.capacity() < need)
    out.reserve(std::max(need, 2 * out.capacity()));  // geometric: frames are appended one by one
  // Each record decodes from the one before it where it lies (the capacity is reserved above, so
  // the vector does not move), not from a copy of it.
  const Event* prev = &prev_;
  std::uint32_t prev_request = prev_request_;
  for (std::size_t i = 0; i < take; ++i) {
    Event& e = out.emplace_back();
    try {
      if (times_.remaining() >= kMaxTimeBytes && fields_.remaining() >= kMaxFieldBytes)
        decode_event<false>(e, head_, times_, fields_, *prev, prev_request, done_ + i, flags_mask_);
      else
        decode_event<true>(e, head_, times_, fields_, *prev, prev_request, done_ + i, flags_mask_);
    } catch (...) {
      out.pop_back();  // a damaged record is not handed out
      throw;
    }
    prev = &e;
  }
  prev_ = *prev;
  prev_request_ = prev_request;
  done_ += take;
  if (done_ == n_ && (!times_.done() || !fields_.done())) throw TraceError("event frame has bytes left over");
}

void decode_events(std::span<const std::uint8_t> payload, std::vector<Event>& out, std::size_t limit,
                   bool keep_step_marks) {
  EventFrameDecoder d(payload, keep_step_marks);
  d.decode(out, limit);
}

void StepEncoder::add(const StepRecord& s) {
  RawColumn t = times_.reserve(5 * kMaxVarint);
  t.zigzag(static_cast<std::int64_t>(s.index) - last_index_);
  t.zigzag(static_cast<std::int64_t>(s.begin - last_end_));
  t.varint(s.end - s.begin);
  t.varint(s.compute);
  t.varint(s.mpi);
  times_.commit(t);
  RawColumn z = sizes_.reserve(4 * kMaxVarint);
  z.varint(s.bytes_in);
  z.varint(s.bytes_out);
  z.varint(s.msgs_in);
  z.varint(s.msgs_out);
  sizes_.commit(z);
  RawColumn p = partners_.reserve((s.partners.size() + 2) * kMaxVarint);
  p.varint(s.partners.size());
  std::int64_t prev = 0;
  for (auto r : s.partners) {
    p.zigzag(r - prev);
    prev = r;
  }
  p.varint(static_cast<std::uint64_t>(static_cast<std::int64_t>(s.whole_comm) + 1));  // version 3
  partners_.commit(p);
  last_index_ = s.index;
  last_end_ = s.end;
  ++count_;
}

void StepEncoder::finish(std::vector<std::uint8_t>& out) {
  ByteWriter w(out);
  w.varint(count_);
  w.varint(times_.size());
  w.varint(sizes_.size());
  w.varint(partners_.size());
  w.bytes(times_.bytes());
  w.bytes(sizes_.bytes());
  w.bytes(partners_.bytes());
  times_.clear();
  sizes_.clear();
  partners_.clear();
  count_ = 0;
  last_index_ = 0;
  last_end_ = 0;
}

void encode_steps(std::span<const StepRecord> steps, std::vector<std::uint8_t>& out) {
  StepEncoder e;
  for (const StepRecord& s : steps) e.add(s);
  e.finish(out);
}

void decode_steps(std::span<const std::uint8_t> payload, std::vector<StepRecord>& out, std::uint16_t version) {
  ByteReader r(payload);
  const auto n = r.count(10);
  const auto times_size = r.varint(), sizes_size = r.varint(), partners_size = r.varint();
  if (times_size > r.remaining() || sizes_size > r.remaining() - times_size ||
      partners_size != r.remaining() - times_size - sizes_size)
    throw TraceError("step frame column sizes do not add up");
  ByteReader t(r.bytes(times_size)), z(r.bytes(sizes_size)), p(r.bytes(partners_size));
  std::uint32_t last_index = 0;
  std::uint64_t last_end = 0;
  for (std::size_t i = 0; i < n; ++i) {
    StepRecord s;
    s.index = static_cast<std::uint32_t>(plus(last_index, t.zigzag()));
    s.begin = last_end + static_cast<std::uint64_t>(t.zigzag());
    s.end = s.begin + t.varint();
    s.compute = t.varint();
    s.mpi = t.varint();
    s.bytes_in = z.varint();
    s.bytes_out = z.varint();
    s.msgs_in = static_cast<std::uint32_t>(z.varint());
    s.msgs_out = static_cast<std::uint32_t>(z.varint());
    const auto np = p.count(1);
    s.partners.reserve(np);
    std::int64_t prev = 0;
    for (std::size_t k = 0; k < np; ++k) {
      prev = plus(prev, p.zigzag());
      s.partners.push_back(static_cast<std::int32_t>(prev));
    }
    if (version >= 3) {
      const auto whole = p.varint();
      // The shared last id is never named (its members are listed): anything from it on is damage.
      if (whole > std::uint64_t{kSharedCommId})
        throw TraceError(fmt::format("step {} names communicator {}; a step names ids below {}", s.index, whole - 1, kSharedCommId));
      s.whole_comm = static_cast<std::int32_t>(whole) - 1;
    }
    last_index = s.index;
    last_end = s.end;
    out.push_back(std::move(s));
  }
  if (!t.done() || !z.done() || !p.done()) throw TraceError("step frame has bytes left over");
}

}  // namespace mstep
