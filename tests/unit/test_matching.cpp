// Send/receive matching and the common timeline, on hand-made traces.
#include <catch2/catch.hpp>

#include "model/trace/matching.hpp"
#include "model/trace/timeline.hpp"

using namespace mstep;

namespace {

Event ev(Op op, std::int32_t peer, std::int32_t tag, std::uint64_t t, std::uint64_t bytes = 8) {
  Event e;
  e.op = op;
  e.peer = peer;
  e.tag = tag;
  e.t_enter = t;
  e.t_exit = t + 1;
  if (op_role(op) == Role::Send || op_role(op) == Role::Isend || op_role(op) == Role::SendRecv) e.send_bytes = bytes;
  if (op_role(op) == Role::Recv) e.recv_bytes = bytes;
  return e;
}

// A communicator creator's record: `comm` the parent, `peer` the new communicator's id.
Event creator(Op op, std::uint16_t parent, std::int32_t made) {
  Event e;
  e.op = op;
  e.comm = parent;
  e.peer = made;
  return e;
}

Event on(Event e, std::uint16_t comm) {
  e.comm = comm;
  return e;
}

RankTrace rank(int r, int n, std::vector<Event> events) {
  RankTrace t;
  t.header.rank = r;
  t.header.world_size = n;
  t.header.ticks_per_second = 1e9;
  t.events = std::move(events);
  std::vector<std::int32_t> world(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) world[static_cast<std::size_t>(i)] = i;
  t.comms.push_back({0, false, world});
  return t;
}

}  // namespace

TEST_CASE("receives match sends per channel in posting order, whatever order they complete in", "[matching]") {
  // Rank 0 sends tag 5 twice (events 0, 1), then tag 6 (event 2).
  RankTrace r0 = rank(0, 2, {ev(Op::Send, 1, 5, 10, 100), ev(Op::Send, 1, 5, 20, 200), ev(Op::Send, 1, 6, 30, 300)});
  // Rank 1 posts Irecv A (request 1) then Irecv B (request 2) for tag 5, receives tag 6 first
  // with a blocking Recv, and completes B before A: A still gets the first message.
  Event irecv_a = ev(Op::Irecv, 0, 5, 1);
  irecv_a.request = 1;
  Event irecv_b = ev(Op::Irecv, 0, 5, 2);
  irecv_b.request = 2;
  Event wait_b = ev(Op::Wait, 0, 5, 40);
  wait_b.request = 2;
  wait_b.flags = kRecvHalf;
  wait_b.recv_bytes = 200;
  Event wait_a = ev(Op::Wait, 0, 5, 50);
  wait_a.request = 1;
  wait_a.flags = kRecvHalf;
  wait_a.recv_bytes = 100;
  RankTrace r1 = rank(1, 2, {irecv_a, irecv_b, ev(Op::Recv, 0, 6, 35, 300), wait_b, wait_a});
  const Matching m = match_messages(std::vector<const RankTrace*>{&r0, &r1});
  REQUIRE(m.messages.size() == 3);
  CHECK(m.unmatched.empty());
  // Sorted by sender's event: send 0 -> Irecv A (event 0) completed by wait_a (event 4).
  CHECK(m.messages[0].send_event == 0);
  CHECK(m.messages[0].post_event == 0);
  CHECK(m.messages[0].recv_event == 4);
  CHECK(m.messages[0].bytes == 100);
  CHECK(m.messages[1].send_event == 1);
  CHECK(m.messages[1].post_event == 1);
  CHECK(m.messages[1].recv_event == 3);
  CHECK(m.messages[2].send_event == 2);
  CHECK(m.messages[2].recv_event == 2);
  CHECK(m.messages[2].tag == 6);
}

TEST_CASE("Sendrecv halves match, and a send never received is reported in one line", "[matching]") {
  Event sr0 = ev(Op::Sendrecv, 1, 0, 10);
  Event sr0r = sr0;
  sr0r.flags = kContinuation | kRecvHalf;
  sr0r.send_bytes = 0;
  sr0r.recv_bytes = 8;
  Event sr1 = ev(Op::Sendrecv, 0, 0, 10);
  Event sr1r = sr1;
  sr1r.flags = kContinuation | kRecvHalf;
  sr1r.send_bytes = 0;
  sr1r.recv_bytes = 8;
  RankTrace r0 = rank(0, 2, {sr0, sr0r, ev(Op::Send, 1, 9, 20, 64)});
  RankTrace r1 = rank(1, 2, {sr1, sr1r});
  const Matching m = match_messages(std::vector<const RankTrace*>{&r0, &r1});
  REQUIRE(m.messages.size() == 2);
  CHECK(m.messages[0].src == 0);
  CHECK(m.messages[0].send_event == 0);
  CHECK(m.messages[0].recv_event == 1);
  CHECK(m.messages[1].src == 1);
  CHECK(m.messages[1].recv_event == 1);
  REQUIRE(m.unmatched.size() == 1);
  CHECK(m.unmatched[0].what == "rank 0 event 2: MPI_Send to 1 tag 9 of 64 bytes was never received");
}

TEST_CASE("communicators are identified across ranks by members and creation order", "[matching]") {
  // Rank 0 created {0,1} twice (local ids 1, 2); rank 1 also made a {1} communicator first, so
  // its ids for the same two are 2 and 3.
  RankTrace r0 = rank(0, 2, {});
  r0.comms.push_back({1, false, {0, 1}});
  r0.comms.push_back({2, false, {0, 1}});
  RankTrace r1 = rank(1, 2, {});
  r1.comms.push_back({1, false, {1}});
  r1.comms.push_back({2, false, {0, 1}});
  r1.comms.push_back({3, false, {0, 1}});
  const auto ids = global_comm_ids(std::vector<const RankTrace*>{&r0, &r1});
  CHECK(ids[0][0] == 0);
  CHECK(ids[1][0] == 0);
  CHECK(ids[0][1] == ids[1][2]);
  CHECK(ids[0][2] == ids[1][3]);
  CHECK(ids[0][1] != ids[0][2]);
  CHECK(ids[1][1] != ids[0][1]);
  // A send on the second {0,1} communicator matches only a receive on it.
  Event s = ev(Op::Send, 1, 0, 10);
  s.comm = 2;
  Event rv = ev(Op::Recv, 0, 0, 10);
  rv.comm = 3;
  r0.events = {s};
  r1.events = {rv};
  const Matching m = match_messages(std::vector<const RankTrace*>{&r0, &r1});
  CHECK(m.messages.size() == 1);
  CHECK(m.unmatched.empty());
  r1.events[0].comm = 2;
  CHECK(match_messages(std::vector<const RankTrace*>{&r0, &r1}).unmatched.size() == 2);
}

TEST_CASE("an intercommunicator pairs its two groups, and messages over it match", "[matching][inter]") {
  // Groups {0,1} and {2,3} (Comm_split of world, local id 1) joined by Intercomm_create (local id
  // 2), whose definition lists the OTHER group on each side. World rank 0 sends to remote rank 1,
  // world rank 3, which receives from world rank 0.
  const bool records = GENERATE(true, false);
  INFO((records ? "with the creator records" : "without creator records (registered on first use)"));
  std::vector<RankTrace> t;
  for (int r = 0; r < 4; ++r) {
    const std::vector<std::int32_t> mine = r < 2 ? std::vector<std::int32_t>{0, 1} : std::vector<std::int32_t>{2, 3};
    const std::vector<std::int32_t> other = r < 2 ? std::vector<std::int32_t>{2, 3} : std::vector<std::int32_t>{0, 1};
    std::vector<Event> events;
    if (records) events = {creator(Op::Comm_split, 0, 1), creator(Op::Intercomm_create, 1, 2)};
    if (r == 0) events.push_back(on(ev(Op::Send, 3, 7, 10, 24), 2));
    if (r == 3) events.push_back(on(ev(Op::Recv, 0, 7, 20, 24), 2));
    t.push_back(rank(r, 4, std::move(events)));
    t.back().comms.push_back({1, false, mine});
    t.back().comms.push_back({2, true, other});
  }
  const std::vector<const RankTrace*> ptrs{&t[0], &t[1], &t[2], &t[3]};
  const auto ids = global_comm_ids(ptrs);
  for (int r = 1; r < 4; ++r) CHECK(ids[r][2] == ids[0][2]);
  CHECK(ids[0][1] == ids[1][1]);
  CHECK(ids[2][1] == ids[3][1]);
  CHECK(ids[0][1] != ids[2][1]);
  for (int r = 0; r < 4; ++r) CHECK(ids[r][1] != ids[0][2]);

  const Matching m = match_messages(ptrs);
  CHECK(m.unmatched.empty());
  REQUIRE(m.messages.size() == 1);
  CHECK(m.messages[0].src == 0);
  CHECK(m.messages[0].dst == 3);
  CHECK(m.messages[0].send_event == (records ? 2u : 0u));
  CHECK(m.messages[0].recv_event == (records ? 2u : 0u));
  CHECK(m.messages[0].bytes == 24);
  CHECK(m.messages[0].tag == 7);
  CHECK(m.messages[0].comm == ids[0][2]);

  // The same receive on rank 3's own group communicator is another channel.
  t[3].events.back().comm = 1;
  CHECK(match_messages(ptrs).unmatched.size() == 2);
}

TEST_CASE("at 2 ranks an intercommunicator never shares an id with a split communicator", "[matching][inter]") {
  // comms.c at 2 ranks: Comm_split(world, w%2) -> {w} (id 1), Intercomm_create -> remote {1-w}
  // (id 2). Rank 1's intercommunicator lists {0}, as rank 0's split communicator does.
  const bool records = GENERATE(true, false);
  INFO((records ? "with the creator records" : "without creator records"));
  std::vector<RankTrace> t;
  for (int r = 0; r < 2; ++r) {
    std::vector<Event> events;
    if (records) events = {creator(Op::Comm_split, 0, 1), creator(Op::Intercomm_create, 1, 2)};
    t.push_back(rank(r, 2, std::move(events)));
    t.back().comms.push_back({1, false, {r}});
    t.back().comms.push_back({2, true, {1 - r}});
  }
  // A message each way over the intercommunicator.
  t[0].events.push_back(on(ev(Op::Send, 1, 3, 10), 2));
  t[0].events.push_back(on(ev(Op::Recv, 1, 4, 30), 2));
  t[1].events.push_back(on(ev(Op::Recv, 0, 3, 20), 2));
  t[1].events.push_back(on(ev(Op::Send, 0, 4, 25), 2));
  const std::vector<const RankTrace*> ptrs{&t[0], &t[1]};
  const auto ids = global_comm_ids(ptrs);
  CHECK(ids[0][2] == ids[1][2]);
  CHECK(ids[0][1] != ids[1][1]);
  CHECK(ids[1][2] != ids[0][1]);
  CHECK(ids[0][2] != ids[1][1]);
  const Matching m = match_messages(ptrs);
  CHECK(m.unmatched.empty());
  CHECK(m.messages.size() == 2);
}

TEST_CASE("two groups joined to one third group are told apart", "[matching][inter]") {
  // Ranks 0 and 1 (each a group of its own) each make an intercommunicator with rank 2, which so
  // has two (ids 2 and 3), then rank 0 and rank 2 duplicate theirs (id 3 on rank 0, 4 on rank 2).
  // Ranks 0 and 1 both list remote group {2}: only the local groups tell them apart.
  const bool records = GENERATE(true, false);
  INFO((records ? "with the creator records" : "without creator records"));
  std::vector<RankTrace> t;
  for (int r = 0; r < 3; ++r) {
    t.push_back(rank(r, 3, {}));
    t.back().comms.push_back({1, false, {r}});
  }
  t[0].comms.push_back({2, true, {2}});
  t[0].comms.push_back({3, true, {2}});
  t[1].comms.push_back({2, true, {2}});
  t[2].comms.push_back({2, true, {0}});
  t[2].comms.push_back({3, true, {1}});
  t[2].comms.push_back({4, true, {0}});
  if (records) {
    for (auto& r : t) r.events = {creator(Op::Comm_split, 0, 1), creator(Op::Intercomm_create, 1, 2)};
    t[2].events.push_back(creator(Op::Intercomm_create, 1, 3));
    t[0].events.push_back(creator(Op::Comm_dup, 2, 3));
    t[2].events.push_back(creator(Op::Comm_dup, 2, 4));
  }
  const auto ids = global_comm_ids(std::vector<const RankTrace*>{&t[0], &t[1], &t[2]});
  CHECK(ids[0][2] == ids[2][2]);
  CHECK(ids[1][2] == ids[2][3]);
  CHECK(ids[0][3] == ids[2][4]);
  CHECK(ids[0][2] != ids[1][2]);
  CHECK(ids[0][2] != ids[0][3]);
}

TEST_CASE("an intercommunicator whose local group cannot be told matches nothing", "[matching][inter]") {
  // No creator records, and rank 0's local group could be {0} or {0,1}: rank 2 has an
  // intercommunicator with each, and rank 0 one with remote group {2} for each. Rank 0's two get
  // ids of their own rather than a guess that might pair a message with the wrong communicator.
  std::vector<RankTrace> t;
  for (int r = 0; r < 3; ++r) t.push_back(rank(r, 3, {}));
  t[0].comms.push_back({1, true, {2}});
  t[0].comms.push_back({2, true, {2}});
  t[1].comms.push_back({1, true, {2}});
  t[2].comms.push_back({1, true, {0}});
  t[2].comms.push_back({2, true, {0, 1}});
  t[0].events.push_back(on(ev(Op::Send, 2, 0, 10), 2));
  t[2].events.push_back(on(ev(Op::Recv, 0, 0, 20), 2));
  const std::vector<const RankTrace*> ptrs{&t[0], &t[1], &t[2]};
  const auto ids = global_comm_ids(ptrs);
  CHECK(ids[0][1] != ids[0][2]);
  for (int r = 1; r < 3; ++r)
    for (std::size_t id = 1; id < ids[r].size(); ++id) {
      CHECK(ids[r][id] != ids[0][1]);
      CHECK(ids[r][id] != ids[0][2]);
    }
  // Rank 1's and rank 2's {0,1}-{2} intercommunicator is consistent on both sides: it pairs.
  CHECK(ids[1][1] == ids[2][2]);
  CHECK(match_messages(ptrs).unmatched.size() == 2);
}

TEST_CASE("the timeline applies each rank's tick rate, offset and drift", "[timeline]") {
  RankTrace a = rank(0, 2, {ev(Op::Init, -1, 0, 1000)});
  a.clocks = {{ClockSync::AtInit, 1000, 5'000, 0, 0}, {ClockSync::AtFinalize, 101'000, 50'005'000, 0, 0}};
  RankTrace b = rank(1, 2, {ev(Op::Init, -1, 0, 0)});
  // Rank 1 ticks twice per ns; its clock is 2000 ns behind rank 0 at Init and 3000 ns at
  // Finalize, 50 ms later: a drift of 1000 ns per 50e6 ns.
  b.clocks = {{ClockSync::AtInit, 0, 1'000'000, 2000, 10}, {ClockSync::AtFinalize, 100'000'000, 51'000'000, 3000, 10}};
  // Rank 0: 100000 ticks over 50e6 ns = 500 ns per tick.
  const Timeline tl({&a, &b});
  CHECK(tl.clock(0).ns_per_tick == Approx(500.0));
  CHECK(tl.clock(1).ns_per_tick == Approx(0.5));
  CHECK(tl.clock(1).drift == Approx(1000.0 / 50e6));
  // Zero is the earliest first event on rank 0's clock: rank 0's at 5000 ns; rank 1's at
  // 1'000'000 + 2000 = 1'002'000 ns.
  CHECK(tl.seconds(0, 1000) == Approx(0.0));
  CHECK(tl.seconds(1, 0) == Approx((1'002'000.0 - 5000.0) * 1e-9));
  // Halfway through rank 1's run (local 26'000'000 ns): offset 2500 ns.
  CHECK(tl.seconds(1, 50'000'000) == Approx((26'000'000.0 + 2500.0 - 5000.0) * 1e-9));
  CHECK(tl.duration(1, 2000) == Approx(1e-6));
}

TEST_CASE("the timeline applies only a drift it measured and a clock can have", "[timeline]") {
  RankTrace a = rank(0, 2, {ev(Op::Init, -1, 0, 1000)});
  a.clocks = {{ClockSync::AtInit, 0, 0, 0, 0}, {ClockSync::AtFinalize, 700'000, 700'000, 0, 0}};
  auto drift_of = [&](std::int64_t offset_change, std::int64_t rtt) {
    RankTrace b = rank(1, 2, {ev(Op::Init, -1, 0, 0)});
    b.clocks = {{ClockSync::AtInit, 0, 0, 1000, rtt}, {ClockSync::AtFinalize, 700'000, 700'000, 1000 + offset_change, rtt}};
    return Timeline({&a, &b}).clock(1).drift;
  };
  // 0.7 ms apart: 100 ns of change with 10 ns round trips is 143 ppm, applied.
  CHECK(drift_of(100, 10) == Approx(100.0 / 700'000));
  // The same change within the samples' uncertainty (round trips of 300 ns): not measured.
  CHECK(drift_of(100, 300) == 0);
  // 100 us over 0.7 ms (a sample delayed by preemption): 14%, no clock drifts so; not applied.
  CHECK(drift_of(100'000, 10) == 0);
}
