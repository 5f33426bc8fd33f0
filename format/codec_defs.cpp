// The definition frames' codecs (format/codec.hpp): communicators, call sites and clock samples,
// written a few times a run, beside the event and step codecs of codec.cpp that run per record.
#include "format/codec.hpp"

#include <fmt/format.h>

namespace mstep {

void encode_comms(std::span<const CommDef> comms, std::vector<std::uint8_t>& out) {
  ByteWriter w(out);
  w.varint(comms.size());
  for (const CommDef& c : comms) {
    w.varint(c.id);
    // Bit 1: the members are 0..n-1, written as n alone (every rank's MPI_COMM_WORLD: a list per
    // rank would make a run's traces grow with the ranks squared).
    w.u8(static_cast<std::uint8_t>((c.inter ? 1 : 0) | (c.world_ranks.is_identity() ? 2 : 0)));
    w.varint(c.world_ranks.size());
    if (!c.world_ranks.is_identity())
      for (auto r : c.world_ranks) w.zigzag(r);
  }
}

void decode_comms(std::span<const std::uint8_t> payload, std::vector<CommDef>& out, std::uint64_t world_size) {
  ByteReader r(payload);
  const auto n = r.count(3);
  for (std::size_t i = 0; i < n; ++i) {
    CommDef c;
    c.id = static_cast<std::uint16_t>(r.varint());
    const std::uint8_t flags = r.u8();
    if (flags > 3) throw TraceError(fmt::format("communicator {} has flags {}", c.id, flags));
    c.inter = flags & 1;
    if (flags & 2) {
      const std::uint64_t size = r.varint();
      if (size == 0 || size > world_size)
        throw TraceError(fmt::format("communicator {} of {} members in a run of {} ranks", c.id, size, world_size));
      c.world_ranks = MemberList::identity(size);
    } else {
      const auto size = r.count(1);
      std::vector<std::int32_t> ranks;
      ranks.reserve(size);
      for (std::size_t k = 0; k < size; ++k) ranks.push_back(static_cast<std::int32_t>(r.zigzag()));
      c.world_ranks = std::move(ranks);
    }
    out.push_back(std::move(c));
  }
  if (!r.done()) throw TraceError("communicator frame has bytes left over");
}

void encode_callsites(std::span<const CallsiteDef> sites, std::vector<std::uint8_t>& out) {
  ByteWriter w(out);
  w.varint(sites.size());
  for (const CallsiteDef& s : sites) {
    w.varint(s.id);
    w.varint(s.frames.size());
    for (const auto& f : s.frames) {
      w.string(f.module);
      w.varint(f.offset);
    }
  }
}

void decode_callsites(std::span<const std::uint8_t> payload, std::vector<CallsiteDef>& out) {
  ByteReader r(payload);
  const auto n = r.count(2);
  for (std::size_t i = 0; i < n; ++i) {
    CallsiteDef s;
    s.id = static_cast<std::uint32_t>(r.varint());
    const auto nf = r.count(2);
    for (std::size_t k = 0; k < nf; ++k) {
      CallsiteFrame f;
      f.module = r.string();
      f.offset = r.varint();
      s.frames.push_back(std::move(f));
    }
    out.push_back(std::move(s));
  }
  if (!r.done()) throw TraceError("call-site frame has bytes left over");
}

void encode_clocks(std::span<const ClockSync> clocks, std::vector<std::uint8_t>& out) {
  ByteWriter w(out);
  w.varint(clocks.size());
  for (const ClockSync& c : clocks) {
    w.u8(c.when);
    w.varint(c.ticks);
    w.zigzag(c.ns);
    w.zigzag(c.offset_ns);
    w.zigzag(c.rtt_ns);
  }
}

void decode_clocks(std::span<const std::uint8_t> payload, std::vector<ClockSync>& out) {
  ByteReader r(payload);
  const auto n = r.count(5);
  for (std::size_t i = 0; i < n; ++i) {
    ClockSync c;
    c.when = r.u8();
    c.ticks = r.varint();
    c.ns = r.zigzag();
    c.offset_ns = r.zigzag();
    c.rtt_ns = r.zigzag();
    out.push_back(c);
  }
  if (!r.done()) throw TraceError("clock frame has bytes left over");
}

}  // namespace mstep
