// Hand-made records and rank traces for the unit tests of waits, step alignment and send points
// (1 tick = 1 ns, every rank on rank 0's clock).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "format/rank_trace.hpp"

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

}  // namespace mstep::test
