// Hand-made traces for the replay's unit tests (test_replay.cpp, test_replay_ops.cpp). Clock ticks
// are nanoseconds and every rank's clock is rank 0's; times in arguments are microseconds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "model/replay/replay.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::replay_fixtures {

using namespace mstep::model;

inline constexpr double us = 1e-6;

// L = 5, o = 2, g = 1; no per-byte overhead; Gs = 0.001 us/B below s = 1000 B, Gl = 0.0005
// us/B beyond; rendezvous from S = 10000 B.
inline LogGPSParams machine() {
  LogGPSParams p;
  p.L = 5 * us;
  p.o = 2 * us;
  p.g = 1 * us;
  p.Gs = 0.001 * us;
  p.Gl = 0.0005 * us;
  p.s = 1000;
  p.S = 10000;
  return p;
}

inline Event ev(Op op, double enter_us, double exit_us, std::int32_t peer = kNoPeer) {
  Event e;
  e.op = op;
  e.t_enter = static_cast<std::uint64_t>(enter_us * 1000 + 0.5);
  e.t_exit = static_cast<std::uint64_t>(exit_us * 1000 + 0.5);
  e.peer = peer;
  e.tag = 0;
  return e;
}
inline Event send(Op op, double enter, double exit, std::int32_t to, std::uint64_t bytes, std::uint32_t request = 0) {
  Event e = ev(op, enter, exit, to);
  e.send_bytes = bytes;
  e.request = request;
  return e;
}
inline Event recv(Op op, double enter, double exit, std::int32_t from, std::uint64_t bytes, std::uint32_t request = 0) {
  Event e = ev(op, enter, exit, from);
  e.recv_bytes = bytes;
  e.request = request;
  if (op_role(op) == Role::Complete) e.flags = kRecvHalf;
  return e;
}
inline Event irecv(double enter, double exit, std::int32_t from, std::uint32_t request) {
  Event e = ev(Op::Irecv, enter, exit, from);
  e.request = request;
  return e;
}

inline RankTrace make_rank(int r, int n, std::vector<Event> events) {
  RankTrace t;
  t.header.rank = r;
  t.header.world_size = n;
  t.header.clock_kind = 1;
  t.header.ticks_per_second = 1e9;
  std::vector<std::int32_t> world(static_cast<std::size_t>(n));
  std::iota(world.begin(), world.end(), 0);
  t.comms.push_back({0, false, world});
  t.events = std::move(events);
  t.event_thread.assign(t.events.size(), 0);
  t.clocks.push_back(ClockSync{ClockSync::AtInit, 0, 0, 0, 0});
  return t;
}

// A run in memory: its traces (null where missing), matching and timeline.
struct Run {
  std::vector<RankTrace> traces;
  std::vector<const RankTrace*> ptrs;
  Matching matching;
  Timeline timeline;

  explicit Run(std::vector<RankTrace> t, std::set<int> missing = {})
      : traces(std::move(t)), ptrs(pointers(traces, missing)), matching(match_messages(ptrs)), timeline(ptrs) {}
  static std::vector<const RankTrace*> pointers(const std::vector<RankTrace>& t, const std::set<int>& missing) {
    std::vector<const RankTrace*> p;
    for (std::size_t i = 0; i < t.size(); ++i) p.push_back(missing.count(static_cast<int>(i)) ? nullptr : &t[i]);
    return p;
  }
  ReplayInput input(std::uint32_t window = 0) const { return ReplayInput{ptrs, matching, timeline, window}; }
  // Every replay runs twice more with the records read a few at a time (ReplayInput::window),
  // which must change nothing but the per-message waits it does not keep.
  ReplayResult loggps(const LogGPSParams& p, const ColdStart& cold = {}) const {
    return both_ways([&](std::uint32_t w) { return replay_loggps(input(w), p, cold); });
  }
  ReplayResult linear(const TwoRegimeLinearModel& lm, const ColdStart& cold = {}) const {
    return both_ways([&](std::uint32_t w) { return replay_linear(input(w), lm, cold); });
  }
  template <class F>
  static ReplayResult both_ways(F replay) {
    const ReplayResult whole = replay(0);
    auto charges = [](std::vector<MachineCharge> c) {
      std::vector<std::tuple<std::int32_t, std::uint32_t, double>> t;
      for (const auto& x : c) t.emplace_back(x.rank, x.event, x.seconds);
      std::sort(t.begin(), t.end());
      return t;
    };
    auto waits = [](const std::vector<CollectiveWait>& c) {
      std::vector<std::tuple<std::int32_t, std::uint32_t, float>> t;
      for (const auto& x : c) t.emplace_back(x.rank, x.event, x.wait_s);
      return t;
    };
    for (const std::uint32_t w : {1u, 2u, 5u}) {
      INFO("records read " << w << " at a time");
      const ReplayResult part = replay(w);
      CHECK(part.finish_s == whole.finish_s);
      CHECK(part.actual_finish_s == whole.actual_finish_s);
      CHECK(part.records == whole.records);
      CHECK(part.recorded_calls == whole.recorded_calls);
      CHECK(part.model_deadlocks == whole.model_deadlocks);
      CHECK(part.collective_algorithms == whole.collective_algorithms);
      CHECK(part.notes == whole.notes);
      CHECK(waits(part.collective_waits) == waits(whole.collective_waits));
      CHECK(charges(part.machine_charges) == charges(whole.machine_charges));
    }
    return whole;
  }
};

}  // namespace mstep::replay_fixtures
