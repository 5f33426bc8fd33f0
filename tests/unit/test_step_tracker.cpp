// M-step inference (MODELS.md section 1, format/step_tracker.hpp) on hand-made event sequences of
// one rank. Times are ticks; every expected value is worked out in the comments. Unless a test
// says otherwise, each step satisfies end - begin == compute + mpi (no ToolFlush time), and
// consecutive steps touch (begin of s+1 == end of s): check_steps() asserts both.
#include <catch2/catch.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "format/rank_steps.hpp"
#include "format/step_tracker.hpp"
#include "model/trace/synthetic.hpp"

using namespace mstep;

namespace {

const std::vector<std::int32_t> kWorld4{0, 1, 2, 3};

Event ev(Op op, std::uint64_t enter, std::uint64_t exit, std::int32_t peer = kNoPeer,
         std::uint64_t send_bytes = 0, std::uint64_t recv_bytes = 0, std::uint8_t flags = 0) {
  Event e;
  e.op = op;
  e.t_enter = enter;
  e.t_exit = exit;
  e.peer = peer;
  e.send_bytes = send_bytes;
  e.recv_bytes = recv_bytes;
  e.flags = flags;
  return e;
}

// A later record of the same call (same times), e.g. Sendrecv's receive half.
Event more(const Event& call, std::int32_t peer, std::uint64_t send_bytes,
           std::uint64_t recv_bytes, std::uint8_t flags) {
  Event e = call;
  e.peer = peer;
  e.send_bytes = send_bytes;
  e.recv_bytes = recv_bytes;
  e.flags = static_cast<std::uint8_t>(flags | kContinuation);
  return e;
}

std::vector<StepRecord> run(std::int32_t self, const std::vector<Event>& events, std::uint64_t end,
                            std::span<const std::int32_t> members = kWorld4) {
  StepTracker t(self, 4, 0);
  for (const Event& e : events) t.feed(e, members);
  t.finish(end);
  return {t.closed().begin(), t.closed().end()};
}

void check_steps(const std::vector<StepRecord>& steps, std::uint64_t tool_ticks = 0) {
  std::uint64_t tool_seen = 0;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    INFO("step " << k + 1);
    CHECK(steps[k].index == k + 1);
    CHECK(steps[k].end >= steps[k].begin);
    tool_seen += (steps[k].end - steps[k].begin) - (steps[k].compute + steps[k].mpi);
    if (k > 0) CHECK(steps[k].begin == steps[k - 1].end);
  }
  CHECK(tool_seen == tool_ticks);
}

struct Expect {
  std::uint64_t begin, end, compute, mpi, bytes_in, bytes_out;
  std::uint32_t msgs_in, msgs_out;
  std::vector<std::int32_t> partners;
};

void check(const StepRecord& s, const Expect& x) {
  INFO("step " << s.index);
  CHECK(s.begin == x.begin);
  CHECK(s.end == x.end);
  CHECK(s.compute == x.compute);
  CHECK(s.mpi == x.mpi);
  CHECK(s.bytes_in == x.bytes_in);
  CHECK(s.bytes_out == x.bytes_out);
  CHECK(s.msgs_in == x.msgs_in);
  CHECK(s.msgs_out == x.msgs_out);
  CHECK(s.partners == x.partners);
}

// Gamma of an exchange step with partner p: {i, p}, sorted.
std::vector<std::int32_t> pair(std::int32_t i, std::int32_t p) {
  return i < p ? std::vector<std::int32_t>{i, p} : std::vector<std::int32_t>{p, i};
}

}  // namespace

TEST_CASE("FFT exchange: Send then Recv with i XOR 2^(s-1)", "[step_tracker]") {
  for (std::int32_t i = 0; i < 4; ++i) {
    INFO("rank " << i);
    const std::int32_t p1 = i ^ 1, p2 = i ^ 2;
    const auto steps = run(i,
                           {ev(Op::Init, 0, 10),
                            ev(Op::Send, 110, 120, p1, 1024),   // after 100 of computation
                            ev(Op::Recv, 120, 150, p1, 0, 1024),
                            ev(Op::Send, 200, 210, p2, 1024),   // send after a receive: step 1
                            ev(Op::Recv, 210, 260, p2, 0, 1024),  // closes at 150
                            ev(Op::Finalize, 300, 310)},
                           310);
    // Step 1 [0,150]: w = 100 (10..110), MPI = Init 10 + Send 10 + Recv 30 = 50.
    // Step 2 [150,260]: w = 50 (150..200), MPI = 10 + 50 = 60.
    // Step 3 [260,310]: the final computation 40 and Finalize 10 (finish() splits it off the
    // exchange step, like the paper's last compute-only step).
    REQUIRE(steps.size() == 3);
    check(steps[0], {0, 150, 100, 50, 1024, 1024, 1, 1, pair(i, p1)});
    check(steps[1], {150, 260, 50, 60, 1024, 1024, 1, 1, pair(i, p2)});
    check(steps[2], {260, 310, 40, 10, 0, 0, 0, 0, {i}});
    check_steps(steps);
  }
}

TEST_CASE("One-sided and MPI-IO calls count as computation, not MPI, and move no step", "[step_tracker]") {
  const auto steps = run(0,
                         {ev(Op::Init, 0, 10),
                          ev(Op::Put, 30, 60, 1, 8),              // bytes of its origin buffer
                          ev(Op::File_write_at, 70, 100, kNoPeer, 64),
                          ev(Op::Send, 110, 120, 1, 1024),
                          ev(Op::Recv, 120, 150, 1, 0, 1024),
                          ev(Op::Win_fence, 160, 200),
                          ev(Op::Send, 210, 220, 1, 1024),      // send after a receive: step 1 closes at 150
                          ev(Op::Recv, 220, 260, 1, 0, 1024),
                          ev(Op::Finalize, 300, 310)},
                         310);
  // Step 1 [0,150]: w = gaps 20 + 10 + 10 and the Put's 30 and the write's 30 = 100; MPI = Init 10
  // + Send 10 + Recv 30 = 50; neither the Put's 8 B nor the file's 64 B is a message.
  // Step 2 [150,260]: w = 10 + the fence's 40 + 10 = 60; MPI = 10 + 40 = 50.
  // Step 3 [260,310]: the final computation 40 and Finalize 10.
  REQUIRE(steps.size() == 3);
  check(steps[0], {0, 150, 100, 50, 1024, 1024, 1, 1, pair(0, 1)});
  check(steps[1], {150, 260, 60, 50, 1024, 1024, 1, 1, pair(0, 1)});
  check(steps[2], {260, 310, 40, 10, 0, 0, 0, 0, {0}});
  check_steps(steps);
  CHECK(is_one_sided(Op::Put));
  CHECK(is_one_sided(Op::Win_test));
  CHECK_FALSE(is_one_sided(Op::File_open));
  CHECK(is_file_io(Op::File_open));
  CHECK(is_file_io(Op::File_iwrite_at_all));
  CHECK_FALSE(is_unmodelled(Op::Exscan_init));
  CHECK_FALSE(is_unmodelled(Op::Send));
}

TEST_CASE("FFT exchange with Sendrecv", "[step_tracker]") {
  for (std::int32_t i = 0; i < 4; ++i) {
    INFO("rank " << i);
    const std::int32_t p1 = i ^ 1, p2 = i ^ 2;
    const Event x1 = ev(Op::Sendrecv, 110, 150, p1, 1024);
    const Event x2 = ev(Op::Sendrecv, 200, 260, p2, 1024);
    const auto steps = run(i,
                           {ev(Op::Init, 0, 10), x1, more(x1, p1, 0, 1024, kRecvHalf), x2,
                            more(x2, p2, 0, 1024, kRecvHalf), ev(Op::Finalize, 300, 310)},
                           310);
    // Same boundaries as with Send + Recv: the send half starts at t_enter, the receive half
    // completes at t_exit, and the continuation adds no time. Step 1: w 100, MPI 10 + 40.
    // Step 2 [150,260]: w 50, MPI 60. Step 3: w 40, Finalize 10.
    REQUIRE(steps.size() == 3);
    check(steps[0], {0, 150, 100, 50, 1024, 1024, 1, 1, pair(i, p1)});
    check(steps[1], {150, 260, 50, 60, 1024, 1024, 1, 1, pair(i, p2)});
    check(steps[2], {260, 310, 40, 10, 0, 0, 0, 0, {i}});
    check_steps(steps);
  }
}

TEST_CASE("Pipeline 0 -> 1 -> 2 -> 3, two items", "[step_tracker]") {
  SECTION("rank 0 only sends: one step") {
    const auto steps = run(0,
                           {ev(Op::Init, 0, 10), ev(Op::Send, 50, 60, 1, 100),
                            ev(Op::Send, 100, 110, 1, 100), ev(Op::Finalize, 150, 160)},
                           160);
    // No receive ever closes a step: w = 40 * 3, MPI = 10 * 4.
    REQUIRE(steps.size() == 1);
    check(steps[0], {0, 160, 120, 40, 0, 200, 0, 2, {0}});
    check_steps(steps);
  }
  SECTION("rank 1 in the middle: receive, compute, send") {
    const auto steps = run(1,
                           {ev(Op::Init, 0, 10), ev(Op::Recv, 10, 70, 0, 0, 100),
                            ev(Op::Send, 90, 100, 2, 100), ev(Op::Recv, 100, 120, 0, 0, 100),
                            ev(Op::Send, 150, 160, 2, 100), ev(Op::Finalize, 200, 210)},
                           210);
    // Step 1 [0,70]: Init 10 + Recv 60, no computation; closed by the Send at 90.
    // Step 2 [70,120]: w 20 (70..90), MPI Send 10 + Recv 20; closed by the Send at 150.
    // Step 3 [120,210]: w 30 + 40, MPI Send 10 + Finalize 10; no receive, closed by finish().
    REQUIRE(steps.size() == 3);
    check(steps[0], {0, 70, 0, 70, 100, 0, 1, 0, {0, 1}});
    check(steps[1], {70, 120, 20, 30, 100, 100, 1, 1, {0, 1}});
    check(steps[2], {120, 210, 70, 20, 0, 100, 0, 1, {1}});
    check_steps(steps);
  }
  SECTION("rank 3 at the end only receives") {
    const auto steps = run(3,
                           {ev(Op::Init, 0, 10), ev(Op::Recv, 10, 130, 2, 0, 100),
                            ev(Op::Recv, 180, 200, 2, 0, 100), ev(Op::Finalize, 250, 260)},
                           260);
    // No send: both receives fall in step 1, which finish() closes at the last receive (200).
    // Step 1 [0,200]: w 50 (130..180), MPI 10 + 120 + 20. Step 2 [200,260]: w 50, Finalize 10.
    REQUIRE(steps.size() == 2);
    check(steps[0], {0, 200, 50, 150, 200, 0, 2, 0, {2, 3}});
    check(steps[1], {200, 260, 50, 10, 0, 0, 0, 0, {3}});
    check_steps(steps);
  }
}

TEST_CASE("Irecv, Isend, Waitall completing a send and a receive", "[step_tracker]") {
  StepTracker t(0, 2, 0);
  const std::vector<std::int32_t> world{0, 1};
  Event irecv = ev(Op::Irecv, 20, 22, 1);
  irecv.request = 1;
  Event isend = ev(Op::Isend, 25, 27, 1, 512);
  isend.request = 2;
  Event wait_send = ev(Op::Waitall, 40, 90);  // first record: the send request, no receive
  wait_send.request = 2;
  Event wait_recv = more(wait_send, 1, 0, 512, kRecvHalf);  // the receive completes at 90
  wait_recv.request = 1;
  for (const Event& e : {ev(Op::Init, 0, 10), irecv, isend, wait_send, wait_recv}) t.feed(e, world);
  CHECK(t.closed().empty());
  CHECK(t.current_index() == 1);
  // The next iteration's Isend (a send side after the receive) closes step 1 at 90.
  t.feed(ev(Op::Isend, 120, 121, 1, 512), world);
  REQUIRE(t.closed().size() == 1);
  CHECK(t.current_index() == 2);
  t.feed(ev(Op::Wait, 121, 130), world);  // its send request: no receive
  t.feed(ev(Op::Finalize, 140, 150), world);
  t.finish(150);
  const std::vector<StepRecord> steps(t.closed().begin(), t.closed().end());
  // Step 1 [0,90]: w = 10 (10..20) + 3 (22..25) + 13 (27..40) = 26;
  //   MPI = Init 10 + Irecv 2 + Isend 2 + Waitall 50 (once for both records) = 64.
  // Step 2 [90,150]: w = 30 (90..120) + 10 (130..140) = 40; MPI = 1 + 9 + 10 = 20.
  REQUIRE(steps.size() == 2);
  check(steps[0], {0, 90, 26, 64, 512, 512, 1, 1, {0, 1}});
  check(steps[1], {90, 150, 40, 20, 0, 512, 0, 1, {0}});
  check_steps(steps);
}

TEST_CASE("Collectives on MPI_COMM_WORLD", "[step_tracker]") {
  SECTION("Bcast root: send side only") {
    const auto steps = run(0,
                           {ev(Op::Init, 0, 10), ev(Op::Bcast, 30, 50, 0, 300, 0, kRoot),
                            ev(Op::Finalize, 80, 90)},
                           90);
    // Step 1 [0,50] ends with the Bcast: w 20, MPI 10 + 20, one message out of 300 bytes.
    // Step 2 [50,90]: w 30, Finalize 10.
    REQUIRE(steps.size() == 2);
    check(steps[0], {0, 50, 20, 30, 0, 300, 0, 1, {0}});
    check(steps[1], {50, 90, 30, 10, 0, 0, 0, 0, {0}});
    check_steps(steps);
  }
  SECTION("Bcast non-root: receives from the root") {
    const auto steps = run(2,
                           {ev(Op::Init, 0, 10), ev(Op::Bcast, 30, 60, 0, 0, 100),
                            ev(Op::Finalize, 80, 90)},
                           90);
    REQUIRE(steps.size() == 2);
    check(steps[0], {0, 60, 20, 40, 100, 0, 1, 0, {0, 2}});
    check(steps[1], {60, 90, 20, 10, 0, 0, 0, 0, {2}});
    check_steps(steps);
  }
  SECTION("Reduce root: receives from every member") {
    StepTracker t(1, 4, 0);
    t.feed(ev(Op::Init, 0, 10), kWorld4);
    t.feed(ev(Op::Reduce, 20, 70, 1, 0, 300, kRoot), kWorld4);
    REQUIRE(t.closed().size() == 1);
    // [0,70]: w 10, MPI 10 + 50; three messages in (0, 2, 3: not itself), Gamma = all four.
    check(t.closed()[0], {0, 70, 10, 60, 300, 0, 3, 0, {0, 1, 2, 3}});
    t.finish(70);  // nothing happened after the Reduce: no step
    CHECK(t.closed().size() == 1);
    CHECK(t.current_index() == 2);
  }
  SECTION("Reduce non-root: send side only") {
    const auto steps = run(3, {ev(Op::Init, 0, 10), ev(Op::Reduce, 20, 30, 1, 100)}, 30);
    REQUIRE(steps.size() == 1);
    check(steps[0], {0, 30, 10, 20, 0, 100, 0, 1, {3}});
  }
  SECTION("Allreduce after a point-to-point receive") {
    const auto steps = run(2,
                           {ev(Op::Init, 0, 10), ev(Op::Recv, 10, 40, 1, 0, 8),
                            ev(Op::Allreduce, 60, 100, kNoPeer, 24, 24)},
                           100);
    // The Allreduce's send side (at 60) closes step 1 at the receive (40); the computation
    // 40..60 and the Allreduce go to step 2, which the Allreduce closes at 100.
    // Step 1 [0,40]: MPI 10 + 30, Gamma {1, 2}. Step 2 [40,100]: w 20, MPI 40, one message out,
    // one in from each of 0, 1, 3, Gamma = the whole communicator.
    REQUIRE(steps.size() == 2);
    check(steps[0], {0, 40, 0, 40, 8, 0, 1, 0, {1, 2}});
    check(steps[1], {40, 100, 20, 40, 24, 24, 3, 1, {0, 1, 2, 3}});
    check_steps(steps);
  }
  SECTION("Bcast non-root after a receive, then a Barrier") {
    // A non-root Bcast has no send side, so the receive before it stays in its step, which the
    // Bcast then closes. The Barrier's send side finds no receive in the new step: no extra close.
    const auto steps = run(0,
                           {ev(Op::Recv, 0, 10, 3, 0, 4), ev(Op::Bcast, 10, 20, 3, 0, 4),
                            ev(Op::Barrier, 25, 35)},
                           35);
    // Step 1 [0,20]: Recv from 3 and the Bcast from root 3 (one partner, two messages).
    // Step 2 [20,35]: w 5, Barrier 10: one (empty) message out, three in.
    REQUIRE(steps.size() == 2);
    check(steps[0], {0, 20, 0, 20, 8, 0, 2, 0, {0, 3}});
    check(steps[1], {20, 35, 5, 10, 0, 0, 3, 1, {0, 1, 2, 3}});
    check_steps(steps);
  }
}

TEST_CASE("Collectives on a split communicator name world ranks", "[step_tracker]") {
  const std::vector<std::int32_t> odd{1, 3};  // comm ranks 0, 1 are world ranks 1, 3
  SECTION("Allreduce") {
    const auto steps = run(3, {ev(Op::Allreduce, 10, 30, kNoPeer, 8, 8)}, 30, odd);
    // [0,30]: w 10, MPI 20; one message in (from world rank 1), Gamma {1, 3}.
    REQUIRE(steps.size() == 1);
    check(steps[0], {0, 30, 10, 20, 8, 8, 1, 1, {1, 3}});
  }
  SECTION("Bcast from comm rank 0 = world rank 1") {
    const auto steps = run(3, {ev(Op::Bcast, 10, 30, 1, 0, 8)}, 30, odd);
    REQUIRE(steps.size() == 1);
    check(steps[0], {0, 30, 10, 20, 8, 0, 1, 0, {1, 3}});
  }
  SECTION("Gather root world rank 1") {
    const auto steps = run(1, {ev(Op::Gather, 10, 30, 1, 0, 8, kRoot)}, 30, odd);
    REQUIRE(steps.size() == 1);
    check(steps[0], {0, 30, 10, 20, 8, 0, 1, 0, {1, 3}});
  }
}

TEST_CASE("Work after the last receive goes to the next step", "[step_tracker]") {
  StepTracker t(0, 2, 0);
  const std::vector<std::int32_t> world{0, 1};
  Event isend = ev(Op::Isend, 10, 12, 1, 64);
  isend.request = 1;
  Event wait = ev(Op::Wait, 80, 90);  // completes the send request: not a receive
  wait.request = 1;
  for (const Event& e :
       {ev(Op::Init, 0, 10), isend, ev(Op::Recv, 12, 50, 1, 0, 64), wait,
        ev(Op::Iprobe, 95, 96, kNoPeer, 0, 0, kIncomplete), ev(Op::ToolFlush, 100, 104),
        ev(Op::Send, 110, 120, 1, 64), ev(Op::Recv, 120, 140, 1, 0, 64)})
    t.feed(e, world);
  t.finish(140);
  const std::vector<StepRecord> steps(t.closed().begin(), t.closed().end());
  // Step 1 [0,50]: no computation (calls back to back), MPI = 10 + 2 + 38 = 50.
  // Step 2 [50,140]: w = 30 (50..80) + 5 (90..95) + 4 (96..100) + 6 (104..110) = 45, the flush's
  //   4 ticks are neither w nor MPI; MPI = Wait 10 + Iprobe 1 + Send 10 + Recv 20 = 41.
  //   45 + 41 + 4 = 90 = 140 - 50. finish(140) at the last receive adds no step.
  REQUIRE(steps.size() == 2);
  check(steps[0], {0, 50, 0, 50, 64, 64, 1, 1, {0, 1}});
  check(steps[1], {50, 140, 45, 41, 64, 64, 1, 1, {0, 1}});
  check_steps(steps, 4);
}

TEST_CASE("MPI_PROC_NULL partners and incomplete tests", "[step_tracker]") {
  const Event sr = ev(Op::Sendrecv, 50, 60, kNoPeer);  // send half to MPI_PROC_NULL
  const auto steps =
      run(0,
          {ev(Op::Init, 0, 10), ev(Op::Recv, 10, 11, kNoPeer), ev(Op::Send, 11, 12, kNoPeer),
           ev(Op::Recv, 12, 30, 1, 0, 8),
           ev(Op::Send, 40, 41, kNoPeer),  // after a receive, but to nobody: no new step
           // kIncomplete wins over everything else in the record.
           ev(Op::Test, 41, 42, 2, 0, 99, kRecvHalf | kIncomplete), sr,
           more(sr, 1, 0, 8, kRecvHalf), ev(Op::Finalize, 70, 80)},
          80);
  // Step 1 [0,60]: w = 10 (30..40) + 8 (42..50) = 18; MPI = 10+1+1+18+1+1+10 = 42; two
  // receives from 1. finish() splits off step 2 [60,80]: w 10, Finalize 10.
  REQUIRE(steps.size() == 2);
  check(steps[0], {0, 60, 18, 42, 16, 0, 2, 0, {0, 1}});
  check(steps[1], {60, 80, 10, 10, 0, 0, 0, 0, {0}});
  check_steps(steps);
}

TEST_CASE("finish() drops an empty open step", "[step_tracker]") {
  SECTION("no record at all") {
    StepTracker t(0, 4, 100);
    t.finish(100);
    CHECK(t.closed().empty());
    CHECK(t.current_index() == 1);
  }
  SECTION("right after a collective closed a step") {
    StepTracker t(2, 4, 0);
    t.feed(ev(Op::Barrier, 5, 20), kWorld4);
    REQUIRE(t.closed().size() == 1);
    t.clear_closed();
    t.finish(20);
    CHECK(t.closed().empty());
    CHECK(t.current_index() == 2);
  }
  SECTION("computation alone is a step") {
    StepTracker t(2, 4, 0);
    t.feed(ev(Op::Barrier, 5, 20), kWorld4);
    t.clear_closed();
    t.finish(50);  // 30 ticks of computation after the Barrier, no MPI call
    REQUIRE(t.closed().size() == 1);
    check(t.closed()[0], {20, 50, 30, 0, 0, 0, 0, 0, {2}});
  }
}

TEST_CASE("clear_closed() keeps indices running", "[step_tracker]") {
  StepTracker t(1, 4, 0);
  for (std::uint64_t k = 0; k < 5; ++k) {
    t.feed(ev(Op::Allreduce, 100 * k + 10, 100 * k + 20, kNoPeer, 8, 8), kWorld4);
    REQUIRE(t.closed().size() == 1);
    const StepRecord& s = t.closed()[0];
    CHECK(s.index == k + 1);
    // Each step begins where the previous Allreduce ended (100k - 80; 0 for the first) and
    // computes until this one starts (100k + 10).
    const std::uint64_t begin = k == 0 ? 0 : 100 * k - 80;
    check(s, {begin, 100 * k + 20, 100 * k + 10 - begin, 10, 8, 8, 3, 1, {0, 1, 2, 3}});
    t.clear_closed();
  }
  CHECK(t.current_index() == 6);
}

TEST_CASE("Messages to itself and rooted collectives without a root", "[step_tracker]") {
  SECTION("a point-to-point message to itself counts; Gamma holds the rank once") {
    const auto steps = run(2, {ev(Op::Send, 0, 5, 2, 16), ev(Op::Recv, 5, 9, 2, 0, 16)}, 9);
    REQUIRE(steps.size() == 1);
    check(steps[0], {0, 9, 0, 9, 16, 16, 1, 1, {2}});
  }
  SECTION("intercommunicator root group member with root MPI_PROC_NULL: no transfer") {
    // Reduce with root kNoPeer and no kRoot: neither side, but the collective still ends the step.
    const auto steps = run(1, {ev(Op::Reduce, 10, 12, kNoPeer)}, 12);
    REQUIRE(steps.size() == 1);
    check(steps[0], {0, 12, 10, 2, 0, 0, 0, 0, {1}});
  }
}

TEST_CASE("A collective of a large world: every member a partner, in rank order", "[step_tracker]") {
  // Rank 1000 of 3000 receives from 2999 down to 2900, then takes part in a Barrier of all 3000,
  // then receives from 5, then MPI_Finalize. The first step has 64 partners or more: its set is
  // read from the membership bits in rank order instead of sorted; the barrier's step names the
  // world (communicator 0) instead of listing it; the others are sorted as before.
  std::vector<std::int32_t> world(3000);
  for (std::int32_t r = 0; r < 3000; ++r) world[static_cast<std::size_t>(r)] = r;
  StepTracker t(1000, 3000, 0);
  t.feed(ev(Op::Init, 0, 10), world);
  std::uint64_t now = 20;
  for (std::int32_t from = 2999; from >= 2900; --from, now += 10) t.feed(ev(Op::Recv, now, now + 5, from, 0, 8), world);
  t.feed(ev(Op::Barrier, now, now + 5), world);
  t.feed(ev(Op::Recv, now + 10, now + 15, 5, 0, 8), world);
  t.feed(ev(Op::Finalize, now + 20, now + 25), world);
  t.finish(now + 25);
  const std::vector<StepRecord> steps(t.closed().begin(), t.closed().end());
  REQUIRE(steps.size() == 4);  // and MPI_Finalize's own step
  std::vector<std::int32_t> first{1000};
  for (std::int32_t r = 2900; r < 3000; ++r) first.push_back(r);
  CHECK(steps[0].partners == first);
  CHECK(steps[0].whole_comm == kNoWholeComm);
  CHECK(steps[1].partners == std::vector<std::int32_t>{1000});
  CHECK(steps[1].whole_comm == 0);
  CHECK(steps[1].msgs_in == 2999);  // one from every member but itself
  const std::vector<CommDef> comms{{0, false, MemberList::identity(3000)}};
  CHECK(step_partners(steps[1], comms) == world);  // 1000 once
  CHECK(step_partners(steps[0], comms) == first);
  CHECK(steps[2].partners == std::vector<std::int32_t>{5, 1000});
  CHECK(steps[2].whole_comm == kNoWholeComm);
  CHECK(steps[3].partners == std::vector<std::int32_t>{1000});
  check_steps(steps);
}

TEST_CASE("Large communicators are named, small ones and the shared id listed", "[step_tracker]") {
  // Rank 7 of 200. Members 0..n-1 unless said otherwise; one collective each, then Finalize.
  const auto members = [](std::int32_t from, std::int32_t n) {
    std::vector<std::int32_t> m(static_cast<std::size_t>(n));
    for (std::int32_t i = 0; i < n; ++i) m[static_cast<std::size_t>(i)] = from + i;
    return m;
  };
  const auto one = [](const Event& e, std::span<const std::int32_t> m, bool inter = false) {
    StepTracker t(7, 200, 0);
    t.feed(ev(Op::Init, 0, 10), {});
    t.feed(e, m, inter);
    t.feed(ev(Op::Finalize, 40, 50), {});
    t.finish(50);
    return std::vector<StepRecord>(t.closed().begin(), t.closed().end());
  };
  Event allreduce = ev(Op::Allreduce, 20, 30, kNoPeer, 8, 8);
  allreduce.comm = 3;
  SECTION("63 members: listed, as before version 3") {
    const auto m = members(0, 63);
    const auto steps = one(allreduce, m);
    REQUIRE(steps.size() == 2);
    CHECK(steps[0].partners == m);
    CHECK(steps[0].whole_comm == kNoWholeComm);
    CHECK(steps[0].msgs_in == 62);
  }
  SECTION("64 members: named by the communicator's id; messages in 63 (all but itself)") {
    const auto m = members(0, 64);
    const auto steps = one(allreduce, m);
    REQUIRE(steps.size() == 2);
    CHECK(steps[0].partners == std::vector<std::int32_t>{7});
    CHECK(steps[0].whole_comm == 3);
    CHECK(steps[0].msgs_in == 63);
    CHECK(step_partners(steps[0], std::vector<CommDef>{{3, false, m}}) == m);
  }
  SECTION("an intercommunicator's remote group of 64 (ranks 100-163): 64 messages in, itself added") {
    const auto m = members(100, 64);
    const auto steps = one(allreduce, m, true);
    REQUIRE(steps.size() == 2);
    CHECK(steps[0].whole_comm == 3);
    CHECK(steps[0].msgs_in == 64);
    std::vector<std::int32_t> all{7};
    all.insert(all.end(), m.begin(), m.end());
    CHECK(step_partners(steps[0], std::vector<CommDef>{{3, true, m}}) == all);
  }
  SECTION("the shared id 0xffff names several communicators: its members are listed") {
    allreduce.comm = kSharedCommId;
    const auto m = members(0, 100);
    const auto steps = one(allreduce, m);
    REQUIRE(steps.size() == 2);
    CHECK(steps[0].partners == m);
    CHECK(steps[0].whole_comm == kNoWholeComm);
  }
  SECTION("a root that gathers from 100 hears them all; a non-root of a Bcast hears only the root") {
    Event gather = ev(Op::Gather, 20, 30, 7, 8, 800, kRoot);
    gather.comm = 2;
    const auto m = members(0, 100);
    auto steps = one(gather, m);
    CHECK(steps[0].whole_comm == 2);
    CHECK(steps[0].msgs_in == 99);
    Event bcast = ev(Op::Bcast, 20, 30, 0, 0, 8);
    bcast.comm = 2;
    steps = one(bcast, m);
    CHECK(steps[0].partners == std::vector<std::int32_t>{0, 7});
    CHECK(steps[0].whole_comm == kNoWholeComm);
  }
  SECTION("point-to-point partners and a named communicator in one step; the next names none") {
    StepTracker t(7, 200, 0);
    const auto m = members(50, 100);  // ranks 50-149, not including 7: an intercommunicator's
    t.feed(ev(Op::Init, 0, 10), {});
    t.feed(ev(Op::Recv, 12, 14, 199, 0, 8), {});
    // The root of a Gather over an intercommunicator: it sends nothing, so the step of the Recv
    // goes on, and it hears the whole remote group.
    Event gather = ev(Op::Gather, 20, 30, 7, 0, 800, kRoot);
    gather.comm = 5;
    t.feed(gather, m, true);
    t.feed(ev(Op::Recv, 32, 34, 3, 0, 8), {});
    t.feed(ev(Op::Finalize, 40, 50), {});
    t.finish(50);
    const std::vector<StepRecord> steps(t.closed().begin(), t.closed().end());
    REQUIRE(steps.size() == 3);
    CHECK(steps[0].partners == std::vector<std::int32_t>{7, 199});
    CHECK(steps[0].whole_comm == 5);
    CHECK(steps[0].msgs_in == 101);  // the Recv and the 100 members
    std::vector<std::int32_t> all{7};
    all.insert(all.end(), m.begin(), m.end());
    all.push_back(199);
    CHECK(step_partners(steps[0], std::vector<CommDef>{{5, true, m}}) == all);
    CHECK(steps[1].partners == std::vector<std::int32_t>{3, 7});
    CHECK(steps[1].whole_comm == kNoWholeComm);
    // Without the definition the step's own list is all there is.
    CHECK(step_partners(steps[0], {}) == steps[0].partners);
    check_steps(steps);
  }
}

TEST_CASE("Partners found again across the switch from a list to membership bits", "[step_tracker]") {
  // Rank 5000 of 6000 receives from 40, 39, ..., 21 (20 partners and itself: past the 16 a step
  // looks up along its list) with each of 25..30 and 40 twice, then sends (closing the step), then
  // receives from 3 twice and 40.
  StepTracker t(5000, 6000, 0);
  std::uint64_t now = 10;
  t.feed(ev(Op::Init, 0, 10), {});
  for (std::int32_t from = 40; from > 20; --from, now += 10) {
    t.feed(ev(Op::Recv, now, now + 5, from, 0, 8), {});
    if ((from >= 25 && from <= 30) || from == 40) t.feed(ev(Op::Recv, now + 5, now + 6, from, 0, 8), {});
  }
  t.feed(ev(Op::Recv, now, now + 5, 40, 0, 8), {});
  t.feed(ev(Op::Send, now + 10, now + 15, 1, 8), {});
  for (const std::int32_t from : {3, 3, 40}) {
    now += 20;
    t.feed(ev(Op::Recv, now, now + 5, from, 0, 8), {});
  }
  t.feed(ev(Op::Finalize, now + 20, now + 25), {});
  t.finish(now + 25);
  const std::vector<StepRecord> steps(t.closed().begin(), t.closed().end());
  REQUIRE(steps.size() == 3);
  std::vector<std::int32_t> first;
  for (std::int32_t r = 21; r <= 40; ++r) first.push_back(r);
  first.push_back(5000);
  CHECK(steps[0].partners == first);
  CHECK(steps[0].msgs_in == 20 + 7 + 1);  // every message counts, duplicates of a partner too
  CHECK(steps[1].partners == std::vector<std::int32_t>{3, 40, 5000});
  CHECK(steps[1].msgs_in == 3);
  CHECK(steps[2].partners == std::vector<std::int32_t>{5000});
  check_steps(steps);
}

// Trace format 4 keeps only the recorder's decision (StepMarker); the reader checks the marks with
// the marker and derives the steps with the tracker, so the two must close at the same records.
TEST_CASE("the recorder's StepMarker closes a step exactly where StepTracker does", "[steps][marks]") {
  const auto agree = [](const RankTrace& t) {
    StepMarker marker;
    RankStepDeriver deriver(t.header.rank, t.header.world_size, t.comms);
    std::size_t closing = 0;
    for (std::size_t i = 0; i < t.events.size(); ++i) {
      const bool closes = deriver.feed(t.events[i]) > 0;
      INFO("rank " << t.header.rank << ", record " << i << " (" << mpi_name(t.events[i].op) << ")");
      REQUIRE(marker.closes(t.events[i]) == closes);
      closing += closes;
      deriver.clear_closed();
    }
    return closing;
  };
  for (const char* name : {"ring", "pingpong", "random", "alltoall", "halo2d", "halo3d", "bcast", "allreduce"}) {
    INFO(name);
    std::size_t closing = 0;
    for (const RankTrace& t : model::synthetic_trace(6, *model::pattern_from_name(name), 6 * 400, 7)) closing += agree(t);
    CHECK(closing > 0);
  }
  // Records the patterns do not have: a Test that found nothing, MPI_PROC_NULL peers, a completed
  // send, Sendrecv's halves, a Start of a receive, a rooted collective whose root is elsewhere or
  // MPI_PROC_NULL, a tool flush, each after a receive and after a send.
  RankTrace t;
  t.header.rank = 1;
  t.header.world_size = 4;
  t.comms = {{0, false, {0, 1, 2, 3}}};
  std::uint64_t at = 0;
  const auto add = [&](Op op, std::int32_t peer, std::uint8_t flags = 0) {
    t.events.push_back(ev(op, at, at + 5, peer, 8, 8, flags));
    at += 10;
  };
  const std::vector<std::pair<Op, std::pair<std::int32_t, std::uint8_t>>> odd = {
      {Op::Test, {2, kIncomplete | kRecvHalf}}, {Op::Send, {kNoPeer, 0}}, {Op::Wait, {2, 0}},
      {Op::Sendrecv, {2, kRecvHalf}},           {Op::Sendrecv, {3, 0}},   {Op::Start, {2, kRecvHalf}},
      {Op::Start, {2, 0}},                       {Op::Bcast, {0, 0}},      {Op::Bcast, {kNoPeer, 0}},
      {Op::Reduce, {1, kRoot}},                  {Op::ToolFlush, {kNoPeer, 0}}, {Op::Recv, {kNoPeer, 0}},
      {Op::Iprobe, {2, kIncomplete}},            {Op::Barrier, {kNoPeer, 0}}};
  for (const auto& [op, pf] : odd) {
    add(Op::Recv, 3);
    add(op, pf.first, pf.second);
    add(Op::Send, 0);
    add(op, pf.first, pf.second);
  }
  CHECK(agree(t) > 0);
}
