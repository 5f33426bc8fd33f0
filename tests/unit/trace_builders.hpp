// Hand-made records and rank traces for the unit tests of waits, step alignment and send points
// (1 tick = 1 ns, every rank on rank 0's clock).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "format/rank_trace.hpp"
#include "format/rank_steps.hpp"

namespace mstep::test {

inline Event ev(Op op, std::int32_t peer, std::uint64_t enter, std::uint64_t exit, std::uint64_t bytes = 8) {
  Event e;
  e.op = op;
  e.peer = peer;
  e.tag = 0;
  e.t_enter = enter;
  e.t_exit = exit;
  const Role r = op_role(op);
  if (r == Role::Send || r == Role::Isend) e.send_bytes = bytes;
  if (r == Role::Recv) e.recv_bytes = bytes;
  return e;
}

inline RankTrace rank(int r, int n, std::vector<Event> events) {
  RankTrace t;
  t.header.rank = r;
  t.header.world_size = n;
  t.header.ticks_per_second = 1e9;
  t.events = std::move(events);
  std::vector<std::int32_t> world;
  for (int i = 0; i < n; ++i) world.push_back(i);
  t.comms.push_back({0, false, world});
  return t;
}

// A rank file in trace format 3, as write_rank_trace wrote one before version 4: the M-steps that
// each Events frame closes in a Steps frame before it, the records unmarked. For the tests of what
// the reader still reads.
inline void write_v3_trace(const std::string& path, const RankTrace& t, std::size_t frame_events = 65536) {
  FileHeader header = t.header;
  header.version = 3;
  TraceFileWriter w(path, header, 1);
  std::vector<std::uint8_t> payload;
  const auto write = [&](FrameKind kind, std::size_t count) {
    if (!w.write_frame(kind, 0, static_cast<std::uint32_t>(count), payload)) throw TraceError(path + ": cannot write");
    payload.clear();
  };
  encode_comms(t.comms, payload);
  write(FrameKind::Comms, t.comms.size());
  RankStepDeriver steps(t.header.rank, t.header.world_size, t.comms);
  const std::span<const Event> events(t.events);
  for (std::size_t at = 0; at < events.size(); at += frame_events) {
    const auto chunk = events.subspan(at, std::min(frame_events, events.size() - at));
    for (const Event& e : chunk) steps.feed(e);
    if (at + chunk.size() == events.size()) steps.finish(chunk.back().t_exit);
    if (!steps.closed().empty()) {
      encode_steps(steps.closed(), payload);
      write(FrameKind::Steps, steps.closed().size());
      steps.clear_closed();
    }
    encode_events(chunk, payload);
    write(FrameKind::Events, chunk.size());
  }
  write(FrameKind::End, 0);
}

}  // namespace mstep::test

