// The event-driven replay (model/replay/replay.hpp) on hand-made traces, with every expected value
// worked out by hand from MODELS.md section 3 in the comments. Clock ticks are nanoseconds and
// every rank's clock is rank 0's, so a record's times are its times on the common timeline.
// Times in the comments are microseconds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <filesystem>
#include <tuple>

#include "model/cost/collectives.hpp"
#include "model/trace/matching.hpp"
#include "model/replay/replay.hpp"
#include "model/replay/replay_collectives.hpp"
#include "model/trace/synthetic.hpp"
#include "model/trace/timeline.hpp"

using namespace mstep;
using namespace mstep::model;

#include "replay_fixtures.hpp"

using namespace mstep::replay_fixtures;

namespace {

// Two ranks, 100 B each way. Rank 0: Init exit at 1, computes 10, Send; Recv; computes 5;
// Finalize. Rank 1: Recv posted at 1; computes 3; Send back; computes 2; Finalize.
Run pingpong() {
  return Run({make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Send, 11, 12, 1, 100), recv(Op::Recv, 12, 40, 1, 100),
                               ev(Op::Finalize, 45, 46)}),
              make_rank(1, 2, {ev(Op::Init, 0, 1), recv(Op::Recv, 1, 20, 0, 100), send(Op::Send, 23, 24, 0, 100),
                               ev(Op::Finalize, 26, 27)})});
}

// Rank 0 of two: n (1 or 2) Isends of 100 B to rank 1, requests 1 and 2, entered at 3 and 4, then
// one Waitall of them at 6 and Finalize at 8. Replayed under machine(), the Isends start at 3 and
// 5.5 (returning at 5 and 7.5): their data arrive at 3 + T1 + T2 = 3 + 2 + 5.1 = 10.1 and 12.6.
RankTrace isends_then_waitall(int n) {
  std::vector<Event> events{ev(Op::Init, 0, 1)};
  for (int k = 0; k < n; ++k) events.push_back(send(Op::Isend, 3 + k, 3.5 + k, 1, 100, static_cast<std::uint32_t>(k + 1)));
  for (int k = 0; k < n; ++k) {
    Event w = ev(Op::Waitall, 6, 7);
    w.request = static_cast<std::uint32_t>(k + 1);
    if (k > 0) w.flags |= kContinuation;
    events.push_back(w);
  }
  events.push_back(ev(Op::Finalize, 8, 9));
  return make_rank(0, 2, std::move(events));
}

}  // namespace

TEST_CASE("eager ping-pong: chains of T1 + T2 + T3", "[replay]") {
  const Run run = pingpong();
  REQUIRE(run.matching.messages.size() == 2);
  REQUIRE(run.matching.unmatched.empty());
  const ReplayResult r = run.loggps(machine());
  // k = 100 < s: T1 = o = 2, T2 = L + 100 Gs = 5.1, T3 = o = 2; T1 + T2 + T3 = 9.1.
  // Rank 0: Send at 1 + 10 = 11, returns at 13. Rank 1: Recv posted at 1, data at 11 + 2 + 5.1 =
  // 18.1, returns at 20.1 (receiver wait 18.1 - 1 = 17.1); computes 3, sends at 23.1 (returns
  // 25.1); computes 2: Finalize at 27.1. Rank 0: Recv posted at 13, data at 23.1 + 7.1 = 30.2,
  // returns at 32.2 (wait 30.2 - 13 = 17.2); computes 5: Finalize at 37.2 = 1 + 10 + 9.1 + 3 +
  // 9.1 + 5. Zero is the earliest Init exit, 1.
  CHECK(r.finish_s[0] == Approx(36.2 * us));
  CHECK(r.finish_s[1] == Approx(26.1 * us));
  CHECK(r.predicted_s == Approx(36.2 * us));
  // Recorded: Finalize entries at 45 and 26.
  CHECK(r.actual_finish_s[0] == Approx(44 * us));
  CHECK(r.actual_finish_s[1] == Approx(25 * us));
  CHECK(r.actual_s == Approx(44 * us));
  // Messages sorted by sender: [0] is 0 -> 1, [1] is 1 -> 0.
  CHECK(r.receiver_wait_s[0] == Approx(17.1 * us));
  CHECK(r.receiver_wait_s[1] == Approx(17.2 * us));
  CHECK(r.sender_wait_s[0] == 0);
  CHECK(r.model_deadlocks == 0);
  CHECK(r.recorded_calls == 0);
  CHECK(r.records == 6);
}

TEST_CASE("rendezvous send to a late receiver waits (tr - ts) - (o + L)", "[replay]") {
  // Rank 0 sends 20000 B (>= S) at 2; rank 1 computes 30 first and posts its Recv at 31.
  const Run run({make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Send, 2, 50, 1, 20000), ev(Op::Finalize, 50, 51)}),
                 make_rank(1, 2, {ev(Op::Init, 0, 1), recv(Op::Recv, 31, 52, 0, 20000), ev(Op::Finalize, 53, 54)})});
  const ReplayResult gps = run.loggps(machine());
  // Sender wait = (31 - 2) - (2 + 5) = 22. Send: T4 = max(7, 29) + 2 = 31, T5 = 9, T1 = 2: returns
  // at 2 + 42 = 44. Data: T2 = 5 + 1000 * 0.001 + 19000 * 0.0005 = 15.5, so at 59.5; Recv returns
  // at 61.5 (receiver wait max(0, 7 - 29) = 0); Finalize 1 later.
  CHECK(gps.sender_wait_s[0] == Approx(22 * us));
  CHECK(LogGPS{machine()}.sender_wait(20000, 2 * us, 31 * us) == Approx(22 * us));
  CHECK(gps.receiver_wait_s[0] == 0);
  CHECK(gps.finish_s[0] == Approx(43 * us));
  CHECK(gps.finish_s[1] == Approx(61.5 * us));

  // LogGP (S infinite): the send is eager and returns after T1 = 2, at 4; the data is there at
  // 2 + 2 + 15.5 = 19.5 < 31, so the Recv returns at 31 + T3 = 33.
  const ReplayResult gp = run.loggps(as_loggp(machine()));
  CHECK(gp.sender_wait_s[0] == 0);
  CHECK(gp.finish_s[0] == Approx(3 * us));
  CHECK(gp.finish_s[1] == Approx(33 * us));
  CHECK(gp.predicted_s != Approx(gps.predicted_s));
  // The report runs LogGP only where LogGPS charged a message of S bytes or more.
  CHECK(gps.reached_S);
  CHECK_FALSE(gp.reached_S);
}

TEST_CASE("LogGP equals LogGPS when every message is below S", "[replay]") {
  const Run run = pingpong();
  const ReplayResult gps = run.loggps(machine());
  const ReplayResult gp = run.loggps(as_loggp(machine()));
  REQUIRE(gp.finish_s.size() == gps.finish_s.size());
  for (std::size_t i = 0; i < gp.finish_s.size(); ++i) CHECK(gp.finish_s[i] == gps.finish_s[i]);
  CHECK(gp.receiver_wait_s == gps.receiver_wait_s);
  CHECK_FALSE(gps.reached_S);  // so the report takes LogGPS's answer for LogGP's
}

TEST_CASE("the rendezvous watch says whether a LogGPS replay reached S, and is let go on every path", "[replay]") {
  // S = 10000 B: 9999 stays eager, 10000 is the first rendezvous size.
  for (const std::uint64_t bytes : {std::uint64_t{9999}, std::uint64_t{10000}}) {
    CAPTURE(bytes);
    const Run run({make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Send, 2, 50, 1, bytes), ev(Op::Finalize, 50, 51)}),
                   make_rank(1, 2, {ev(Op::Init, 0, 1), recv(Op::Recv, 31, 52, 0, bytes), ev(Op::Finalize, 53, 54)})});
    RendezvousWatch watch;
    ReplayInput in = run.input();
    in.rendezvous_watch = &watch;
    const ReplayResult gps = replay_loggps(in, machine());
    CHECK(gps.reached_S == (bytes == 10000));
    CHECK(watch.wait() == (bytes == 10000));
    if (!gps.reached_S) {
      const ReplayResult gp = run.loggps(as_loggp(machine()));
      CHECK(gp.predicted_s == gps.predicted_s);
    }
  }
  // Told once, kept: a second answer does not change the first.
  RendezvousWatch told;
  told.reached();
  told.finished(false);
  CHECK(told.wait());
  RendezvousWatch ended;
  ended.finished(false);
  ended.reached();
  CHECK_FALSE(ended.wait());
}

TEST_CASE("a late sender makes the receiver wait", "[replay]") {
  // Rank 1 posts at 1; rank 0 computes 20 and sends 100 B at 21. Receiver wait =
  // T1 + T2 - (tr - ts) = 2 + 5.1 - (1 - 21) = 27.1; Recv returns at 28.1 + 2 = 30.1.
  const Run run({make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Send, 21, 22, 1, 100), ev(Op::Finalize, 22, 23)}),
                 make_rank(1, 2, {ev(Op::Init, 0, 1), recv(Op::Recv, 1, 30, 0, 100), ev(Op::Finalize, 30, 31)})});
  const ReplayResult r = run.loggps(machine());
  CHECK(r.receiver_wait_s[0] == Approx(27.1 * us));
  CHECK(LogGPS{machine()}.receiver_wait(100, 21 * us, 1 * us) == Approx(27.1 * us));
  CHECK(r.finish_s[1] == Approx(29.1 * us));
  CHECK(r.finish_s[0] == Approx(22 * us));  // Send at 21 + T1 = 23, Finalize at once
}

TEST_CASE("Isend / Irecv / Wait", "[replay]") {
  // Rank 0: Isend (request 1) at 3, computes 10, Wait, computes 1, Finalize.
  // Rank 1: Irecv (request 1) at 1, computes 4, Wait, computes 1, Finalize.
  auto traces = [](std::uint64_t bytes) {
    return std::vector<RankTrace>{
        make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Isend, 3, 3.5, 1, bytes, 1), ev(Op::Wait, 13.5, 14),
                         ev(Op::Finalize, 15, 16)}),
        make_rank(1, 2, {ev(Op::Init, 0, 1), irecv(1, 1.2, 0, 1), recv(Op::Wait, 5.2, 9, 0, bytes, 1),
                         ev(Op::Finalize, 10, 11)})};
  };
  SECTION("eager, 100 B") {
    auto t = traces(100);
    t[0].events[2].request = 1;
    const Run run(std::move(t));
    REQUIRE(run.matching.messages.size() == 1);
    const ReplayResult r = run.loggps(machine());
    // Rank 0: Isend at 3 returns at 3 + T1 = 5; Wait at 15 returns at once; Finalize at 16.
    // Rank 1: Irecv at 1 costs nothing; Wait at 1 + 4 = 5; data at 3 + 2 + 5.1 = 10.1, so the
    // Wait returns at 12.1 (wait 5.1); Finalize at 13.1.
    CHECK(r.finish_s[0] == Approx(15 * us));
    CHECK(r.finish_s[1] == Approx(12.1 * us));
    CHECK(r.receiver_wait_s[0] == Approx(5.1 * us));
  }
  SECTION("rendezvous, 20000 B: the Wait of the Isend absorbs the handshake") {
    auto t = traces(20000);
    t[0].events[2].request = 1;
    const Run run(std::move(t));
    const ReplayResult r = run.loggps(machine());
    // Posted at 1 before the send at 3: T4 = max(7, -2) + 2 = 9, T5 = 9, T1 = 2: the sender is
    // done at 3 + 20 = 23, so its Wait (entered at 15) returns at 23 and Finalize is at 24. No
    // sender wait: max(0, 1 - max(15, 3 + 7)) = 0. Data at 23 + T2 = 38.5; rank 1's Wait (at 5)
    // returns at 40.5, Finalize at 41.5; its wait is the request-to-send's: max(0, 3 + 7 - 5) = 5.
    CHECK(r.finish_s[0] == Approx(23 * us));
    CHECK(r.finish_s[1] == Approx(40.5 * us));
    CHECK(r.sender_wait_s[0] == 0);
    CHECK(r.receiver_wait_s[0] == Approx(5 * us));
  }
}

TEST_CASE("a Wait whose message arrived while its rank computed still pays T3", "[replay]") {
  // MPICH progresses only inside MPI calls, so the receive overhead is paid in the Wait even when
  // the data arrived long before it (measured: tests/bench/sendrecv_early.c, on both transports).
  // Rank 0: isends_then_waitall (data at 10.1 and 12.6). Rank 1: Irecv (request 1) at 1, and
  // (request 2) at 1.5, computes 20, Wait(all), computes 1, Finalize.
  const RankTrace sender = isends_then_waitall(2);
  SECTION("one Wait: T3 from its entry") {
    Event w = recv(Op::Wait, 21.7, 22, 0, 100, 1);
    const Run run({isends_then_waitall(1), make_rank(1, 2, {ev(Op::Init, 0, 1), irecv(1, 1.2, 0, 1), w, ev(Op::Finalize, 23, 24)})});
    REQUIRE(run.matching.messages.size() == 1);
    const ReplayResult r = run.loggps(machine());
    // Irecv at 1 costs nothing; the Wait at 1 + 20.5 = 21.5 returns at 21.5 + T3 = 23.5
    // (before this rule: at 21.5); Finalize 1 later at 24.5, that is 23.5 after the first Init.
    CHECK(r.finish_s[1] == Approx(23.5 * us));
    CHECK(r.receiver_wait_s[0] == 0);
  }
  SECTION("a Waitall of two: one T3 after the other") {
    Event a = recv(Op::Waitall, 21.7, 22, 0, 100, 1), b = recv(Op::Waitall, 21.7, 22, 0, 100, 2);
    b.flags |= kContinuation;
    const Run run({sender, make_rank(1, 2, {ev(Op::Init, 0, 1), irecv(1, 1.2, 0, 1), irecv(1.5, 1.7, 0, 2), a, b,
                                            ev(Op::Finalize, 23, 24)})});
    REQUIRE(run.matching.messages.size() == 2);
    const ReplayResult r = run.loggps(machine());
    // Irecvs at 1 and 1.3 (the 0.3 between them); the Waitall at 1.3 + 20 = 21.3 pays
    // 2 T3 = 4: returns at 25.3, Finalize at 26.3, 25.3 after the first Init.
    CHECK(r.finish_s[1] == Approx(25.3 * us));
  }
  SECTION("a Waitall whose messages arrive during it: each T3 as its message arrives") {
    // Rank 1 computes only 2 before its Waitall: entered at 1.3 + 2 = 3.3, before both messages.
    // Its requests listed last one first: the one arriving at 12.6 is received by 14.6, the one
    // at 10.1 by 12.1, each T3 when its data is there (not one after the other in list order,
    // which would give 16.6); Finalize at 15.6, 14.6 after the first Init.
    Event a = recv(Op::Waitall, 3.7, 22, 0, 100, 1), b = recv(Op::Waitall, 3.7, 22, 0, 100, 2);
    a.flags |= kContinuation;
    const Run run({sender, make_rank(1, 2, {ev(Op::Init, 0, 1), irecv(1, 1.2, 0, 1), irecv(1.5, 1.7, 0, 2), b, a,
                                            ev(Op::Finalize, 23, 24)})});
    const ReplayResult r = run.loggps(machine());
    CHECK(r.finish_s[1] == Approx(14.6 * us));
  }
}

TEST_CASE("a Sendrecv's receive comes after its send on the one CPU", "[replay]") {
  // Rank 0 sends 100 B at 1 (returns at 3; data at 1 + 2 + 5.1 = 8.1), then receives rank 1's
  // message (Recv entered at 3 + 0.5 = 3.5). Rank 1 calls MPI_Sendrecv (send to 0, receive from 0)
  // at 1 + `late`.
  auto run_with = [](double late) {
    Event out = send(Op::Sendrecv, 1 + late, 11 + late, 0, 100), in = recv(Op::Sendrecv, 1 + late, 11 + late, 0, 100);
    in.flags = kContinuation | kRecvHalf;
    return Run({make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Send, 1, 1.5, 1, 100), recv(Op::Recv, 2, 40, 1, 100),
                                 ev(Op::Finalize, 41, 42)}),
                make_rank(1, 2, {ev(Op::Init, 0, 1), out, in, ev(Op::Finalize, 12 + late, 13 + late)})});
  };
  SECTION("its message already there: T1 then T3") {
    // Sendrecv at 20: its send takes T1 to 22, then the receive T3 to 24 (measured on shared
    // memory: 180 ns against a Send's 100 and a Recv's 110 of a message already there). Finalize
    // 1 later at 25, 24 after the first Init. Rank 0: data at 20 + 7.1 = 27.1, Recv returns at
    // 29.1, Finalize at 30.1.
    const Run run = run_with(19);
    REQUIRE(run.matching.messages.size() == 2);
    const ReplayResult r = run.loggps(machine());
    CHECK(r.finish_s[1] == Approx(24 * us));
    CHECK(r.finish_s[0] == Approx(29.1 * us));
  }
  SECTION("its message arriving later: T3 from the arrival, as before") {
    // Sendrecv at 2: its send is done at 4, the data comes at 8.1: returns at 10.1, Finalize at
    // 11.1. Rank 0: data at 2 + 7.1 = 9.1, returns at 11.1, Finalize at 12.1.
    const ReplayResult r = run_with(1).loggps(machine());
    CHECK(r.finish_s[1] == Approx(10.1 * us));
    CHECK(r.finish_s[0] == Approx(11.1 * us));
  }
}

TEST_CASE("a message nobody receives: its eager send costs T1, however the trace is read", "[replay]") {
  // Rank 0 sends two 100 B messages (Isend at 3 and 4, a Waitall of both at 6); rank 1 receives
  // only the first (Irecv at 1, Wait at 21.7). An eager send needs nothing of its receiver, so the
  // second costs T1 = 2 whether the replay read the whole trace first (and so knew it unmatched)
  // or a few records at a time (the fixture checks both): the Isends return at 5 and 7.5, the
  // Waitall, entered at 7.5 + 1.5 = 9, returns at once; Finalize 1 later, 9 after the first Init.
  const Run run({isends_then_waitall(2),
                 make_rank(1, 2, {ev(Op::Init, 0, 1), irecv(1, 1.2, 0, 1), recv(Op::Wait, 21.7, 22, 0, 100, 1),
                                  ev(Op::Finalize, 23, 24)})});
  const ReplayResult r = run.loggps(machine());
  CHECK(r.finish_s[0] == Approx(9 * us));
  CHECK(r.finish_s[1] == Approx(23.5 * us));  // the Wait of the first pays T3 from 21.5
  CHECK(r.recorded_calls == 0);
  CHECK(r.model_deadlocks == 0);
}

TEST_CASE("a receive nobody sends to keeps its recorded time, however the trace is read", "[replay]") {
  // Rank 1's second Recv (tag 1) has no sender: it keeps its recorded 4 us. Rank 0 sends one
  // message at 3 (returns at 5); rank 1 receives it at 1 (data at 10.1, returns at 12.1),
  // computes 1, the unmatched Recv from 13.1 to 17.1, Finalize 1 later, 17.1 after the first Init.
  Event lost = recv(Op::Recv, 13, 17, 0, 100);
  lost.tag = 1;
  const Run run({make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Send, 3, 3.5, 1, 100), ev(Op::Finalize, 8, 9)}),
                 make_rank(1, 2, {ev(Op::Init, 0, 1), recv(Op::Recv, 1, 12, 0, 100), lost, ev(Op::Finalize, 18, 19)})});
  const ReplayResult r = run.loggps(machine());
  CHECK(r.finish_s[1] == Approx(17.1 * us));
  CHECK(r.recorded_calls == 1);
  CHECK(r.model_deadlocks == 0);
}

TEST_CASE("a delivered rendezvous waits for its receiver to be back inside MPI", "[replay][progress]") {
  // Rank 0: Isend of 20000 B (request 1) at 3, computes 10, Wait, computes 1, Finalize.
  // Rank 1: Irecv at 1, computes 29 (outside MPI), Wait at 30, computes 1, Finalize.
  const Run run(std::vector<RankTrace>{
      make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Isend, 3, 3.5, 1, 20000, 1), [] { Event w = ev(Op::Wait, 13.5, 14); w.request = 1; return w; }(),
                       ev(Op::Finalize, 15, 16)}),
      make_rank(1, 2, {ev(Op::Init, 0, 1), irecv(1, 1.2, 0, 1), recv(Op::Wait, 30.2, 35, 0, 20000, 1),
                       ev(Op::Finalize, 36, 37)})});
  LogGPSParams p = machine();
  p.rendezvous_model = RendezvousModel::Delivered;
  const ReplayResult r = run.loggps(p);
  // The request-to-send arrives at 3 + o + L = 10, after the Irecv returned (at 1): rank 1 answers
  // at its next call, the Wait at 30. T4 = max(7, 30 - 3) + 2 = 29, T5 = 9, T1 = o = 2,
  // T2 = L + k Gl = 5 + 10 = 15: the data is there, and the send done, at 3 + 55 = 58; rank 1's
  // Wait returns at 58 + T3 = 60. (finish_s: MPI_Finalize's entry, 1 later, less the zero, 1.)
  // The sender waits 30 - max(15, 10) = 15 for the answer.
  CHECK(r.finish_s[0] == Approx(58 * us));
  CHECK(r.finish_s[1] == Approx(60 * us));
  CHECK(r.sender_wait_s[0] == Approx(15 * us));
  CHECK(r.receiver_wait_s[0] == 0);
  // MODELS.md's formulas (the paper): the receiver answers at its post, the send is done at
  // 3 + T4 (9) + T5 (9) + T1 (2) = 23, and the data is there at 23 + T2 (15.5) = 38.5.
  const ReplayResult paper = run.loggps(machine());
  CHECK(paper.finish_s[0] == Approx(23 * us));
  CHECK(paper.finish_s[1] == Approx(40.5 * us));  // the Wait at 30 returns at 38.5 + T3 = 40.5
}

TEST_CASE("a pushing rendezvous (TCP) waits for its sender to be back inside MPI", "[replay][progress]") {
  // Rank 0: Isend of 20000 B at 3, computes 35, Wait (entered at 5 + 35 = 40 in the replay).
  // Rank 1: Irecv at 1, computes 4, Wait at 5 (inside MPI from then on).
  Event w = ev(Op::Wait, 38.5, 39);
  w.request = 1;
  const Run run(std::vector<RankTrace>{
      make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Isend, 3, 3.5, 1, 20000, 1), w, ev(Op::Finalize, 40, 41)}),
      make_rank(1, 2, {ev(Op::Init, 0, 1), irecv(1, 1.2, 0, 1), recv(Op::Wait, 5.2, 45, 0, 20000, 1),
                       ev(Op::Finalize, 46, 47)})});
  LogGPSParams p = machine();
  p.rendezvous_model = RendezvousModel::Delivered;
  // Not pushing (shared memory): answered at 10 (rank 1 is in its Wait), T4 = 9, T5 = 9, T1 = 2,
  // T2 = 15: data and send done at 3 + 35 = 38; rank 0's Wait (at 40) returns at once, Finalize at
  // 41 (finish 40); rank 1's Wait returns at 38 + T3 = 40 (finish 40).
  const ReplayResult pulled = run.loggps(p);
  CHECK(pulled.finish_s[0] == Approx(40 * us));
  CHECK(pulled.finish_s[1] == Approx(40 * us));
  // Pushing: the clear-to-send is back at 3 + 9 + 9 = 21 while rank 0 computes; the data leaves
  // at its Wait, 40, 19 later: there at 38 + 19 = 57, which is when rank 0's Wait returns (finish
  // 57); rank 1's at 59 (finish 59).
  p.rendezvous_push = true;
  const ReplayResult pushed = run.loggps(p);
  CHECK(pushed.finish_s[0] == Approx(57 * us));
  CHECK(pushed.finish_s[1] == Approx(59 * us));
  CHECK(pushed.model_deadlocks == 0);
}

TEST_CASE("a 4-rank barrier is a dissemination of ceil(log2 4) = 2 rounds of o + L + o", "[replay]") {
  LogGPSParams p;  // o = 2, L = 5, g = 1, no per-byte costs: a round is T1 + T2 + T3 = 9
  p.o = 2 * us;
  p.L = 5 * us;
  p.g = 1 * us;
  SECTION("everybody on time") {
    std::vector<RankTrace> t;
    for (int r = 0; r < 4; ++r)
      t.push_back(make_rank(r, 4, {ev(Op::Init, 0, 1), ev(Op::Barrier, 2, 9), ev(Op::Finalize, 9, 10)}));
    const Run run(std::move(t));
    const ReplayResult res = run.loggps(p);
    // Enter at 2; round 1 ends at 2 + 9 = 11, round 2 at 20 = Finalize: 19 after zero = 1 + 2 * 9.
    for (int r = 0; r < 4; ++r) CHECK(res.finish_s[static_cast<std::size_t>(r)] == Approx(19 * us));
    LogPBarrierParams b{5 * us, 2 * us, 2 * us, 1 * us};
    CHECK(dissemination_barrier(b, 4) == Approx(18 * us));
    REQUIRE(res.collective_algorithms.size() == 1);
    CHECK(res.collective_algorithms[0] == "MPI_Barrier: dissemination (MPICH default for 4 ranks; 1 call)");
    REQUIRE(res.collective_waits.size() == 4);
    for (const auto& w : res.collective_waits) CHECK(w.wait_s == 0);
  }
  SECTION("rank 3 arrives 9 late") {
    std::vector<RankTrace> t;
    for (int r = 0; r < 4; ++r) {
      const double at = r == 3 ? 11 : 2;
      t.push_back(make_rank(r, 4, {ev(Op::Init, 0, 1), ev(Op::Barrier, at, 30), ev(Op::Finalize, 30, 31)}));
    }
    const Run run(std::move(t));
    const ReplayResult res = run.loggps(p);
    // Round 1 (r sends to r+1, receives from r-1): rank 0 gets rank 3's message (sent at 11) at
    // 11 + 7 + 2 = 20; ranks 1 and 2 end at 11; rank 3 sends at 11 (busy to 13) and has rank 2's
    // since 2 + 7 = 9, so ends at 13.
    // Round 2 (r sends to r+2): rank 0 starts at 20, gets rank 2's (sent at 11) at 18, ends 22;
    // rank 1 starts at 11, gets rank 3's (sent at 13) at 20, ends 22; rank 2 starts at 11, gets
    // rank 0's (sent at 20) at 27, ends 29; rank 3 starts at 13, gets rank 1's (sent at 11) at
    // 18, ends 20. Finalize follows at once; zero is 1.
    CHECK(res.finish_s[0] == Approx(21 * us));
    CHECK(res.finish_s[1] == Approx(21 * us));
    CHECK(res.finish_s[2] == Approx(28 * us));
    CHECK(res.finish_s[3] == Approx(19 * us));
    REQUIRE(res.collective_waits.size() == 4);
    CHECK(res.collective_waits[0].wait_s == Approx(9 * us));  // waited for rank 3: 11 - 2
    CHECK(res.collective_waits[3].wait_s == 0);
    CHECK(res.collective_waits[3].event == 1);
  }
}

TEST_CASE("a 4-rank Bcast of 8 bytes is MPICH's binomial tree", "[replay]") {
  LogGPSParams p;
  p.o = 2 * us;
  p.L = 5 * us;
  p.g = 1 * us;
  std::vector<RankTrace> t;
  for (int r = 0; r < 4; ++r) {
    Event b = ev(Op::Bcast, 2, 9, 0);
    if (r == 0) b.flags = kRoot, b.send_bytes = 24;
    else b.recv_bytes = 8;
    t.push_back(make_rank(r, 4, {ev(Op::Init, 0, 1), b, ev(Op::Finalize, 9, 10)}));
  }
  const Run run(std::move(t));
  const ReplayResult res = run.loggps(p);
  // All enter at 2. Root sends to 2 at 2 (busy to 4), then to 1 at 4 (busy to 6): done at 6.
  // Rank 2 has it at 2 + 7 + 2 = 11, sends to 3 at 11, done at 13. Rank 1 at 4 + 9 = 13.
  // Rank 3 at 11 + 9 = 20.
  CHECK(res.finish_s[0] == Approx(5 * us));
  CHECK(res.finish_s[1] == Approx(12 * us));
  CHECK(res.finish_s[2] == Approx(12 * us));
  CHECK(res.finish_s[3] == Approx(19 * us));
  REQUIRE(res.collective_algorithms.size() == 1);
  CHECK(res.collective_algorithms[0] == "MPI_Bcast: binomial tree (MPICH default for 4 ranks, 8 bytes; 1 call)");
}

TEST_CASE("MPICH 4.0 default algorithms by communicator and message size", "[replay]") {
  CHECK(choose_collective(Op::Barrier, 64, 0, 0).algo == CollAlgo::BarrierDissemination);
  CHECK(choose_collective(Op::Bcast, 4, 0, 1 << 20).algo == CollAlgo::BcastBinomial);  // < 8 ranks
  CHECK(choose_collective(Op::Bcast, 16, 0, 12288).algo == CollAlgo::BcastBinomial);
  CHECK(choose_collective(Op::Bcast, 16, 0, 12289).algo == CollAlgo::BcastScatterRecDblAllgather);
  CHECK(choose_collective(Op::Bcast, 16, 0, 524289).algo == CollAlgo::BcastScatterRingAllgather);
  CHECK(choose_collective(Op::Bcast, 12, 0, 65536).algo == CollAlgo::BcastScatterRingAllgather);
  CHECK(choose_collective(Op::Allreduce, 4, 0, 8).algo == CollAlgo::AllreduceRecDbl);
  CHECK(choose_collective(Op::Allreduce, 4, 0, 16).algo == CollAlgo::AllreduceRecDbl);  // 2 doubles < 4
  CHECK(choose_collective(Op::Allreduce, 4, 0, 4096).algo == CollAlgo::AllreduceRabenseifner);
  CHECK(choose_collective(Op::Reduce, 4, 0, 2048).algo == CollAlgo::ReduceBinomial);
  CHECK(choose_collective(Op::Reduce, 4, 0, 4096).algo == CollAlgo::ReduceScatterGather);
  CHECK(choose_collective(Op::Allgather, 8, 0, 1024).algo == CollAlgo::AllgatherRecDbl);
  CHECK(choose_collective(Op::Allgather, 6, 0, 1024).algo == CollAlgo::AllgatherBruck);
  CHECK(choose_collective(Op::Allgather, 6, 0, 65536).algo == CollAlgo::AllgatherRing);
  CHECK(choose_collective(Op::Alltoall, 16, 0, 256).algo == CollAlgo::AlltoallBruck);
  CHECK(choose_collective(Op::Alltoall, 4, 0, 256).algo == CollAlgo::AlltoallScattered);
  CHECK(choose_collective(Op::Alltoall, 16, 0, 65536).algo == CollAlgo::AlltoallPairwise);
  CHECK(choose_collective(Op::Gather, 5, 2, 8).algo == CollAlgo::GatherBinomial);
  CHECK(choose_collective(Op::Scatterv, 5, 2, 8).algo == CollAlgo::ScattervLinear);
  CHECK(choose_collective(Op::Reduce_scatter_block, 8, 0, 8).algo == CollAlgo::ReduceScatterRecHalving);
  CHECK(choose_collective(Op::Barrier, 1, 0, 0).algo == CollAlgo::Nothing);
  CHECK(choose_collective(Op::Scan, 5, 0, 1 << 20).algo == CollAlgo::ScanRecDbl);
  CHECK(choose_collective(Op::Exscan, 5, 0, 8).algo == CollAlgo::ExscanRecDbl);
  CHECK(choose_collective(Op::Iscan, 2, 0, 8).algo == CollAlgo::ScanRecDbl);
  CHECK(choose_collective(Op::Scan, 1, 0, 8).algo == CollAlgo::Nothing);
}

TEST_CASE("MPI_Scan and MPI_Exscan: MPICH's recursive doubling, and Scan's node total and flag", "[replay]") {
  LogGPSParams p;  // o = 2, L = 5, g = 1, no per-byte costs: a message is T1 + T2 + T3 = 9
  p.o = 2 * us;
  p.L = 5 * us;
  p.g = 1 * us;
  // Rank i of n records m (n-1-i) sent and m i received (share/trace-format.md).
  auto run = [&](Op op, int n) {
    std::vector<RankTrace> t;
    for (int r = 0; r < n; ++r) {
      Event e = ev(op, 2, 40);
      e.send_bytes = 16 * static_cast<std::uint64_t>(n - 1 - r);
      e.recv_bytes = 16 * static_cast<std::uint64_t>(r);
      t.push_back(make_rank(r, n, {ev(Op::Init, 0, 1), e, ev(Op::Finalize, 40, 41)}));
    }
    return Run(std::move(t)).loggps(p);
  };
  SECTION("Exscan on 3 ranks") {
    const ReplayResult res = run(Op::Exscan, 3);
    // Round 0 (mask 1): 0 and 1 exchange from 2: each sends 2-4, has the other's at 4 + 5 = 9,
    // receives 9-11. Rank 2 has no partner (3 > 2). Round 1 (mask 2): 2 and 0 exchange; rank 2
    // sends at 2-4, which reaches rank 0 at 9; rank 0 sends at 11-13, and its receive, whose
    // message is there, ends at 11 + 2 (a step's receive overheads run from the step's start, as
    // for every collective here); rank 2 has rank 0's at 13 + 5 = 18, receives 18-20. Zero is 1.
    CHECK(res.finish_s[0] == Approx(12 * us));
    CHECK(res.finish_s[1] == Approx(10 * us));
    CHECK(res.finish_s[2] == Approx(19 * us));
    REQUIRE(res.collective_algorithms.size() == 1);
    CHECK(res.collective_algorithms[0] == "MPI_Exscan: recursive doubling (MPICH default for 3 ranks, 16 bytes; 1 call)");
  }
  SECTION("Scan on 2 ranks") {
    const ReplayResult res = run(Op::Scan, 2);
    // The exchange 2-11 on both; rank 1 sends its result to rank 0 at 11-13, which receives it at
    // 18-20 and sends the flag at 20-22; rank 1 has it at 27, receives 27-29.
    CHECK(res.finish_s[0] == Approx(21 * us));
    CHECK(res.finish_s[1] == Approx(28 * us));
    REQUIRE(res.collective_algorithms.size() == 1);
    CHECK(res.collective_algorithms[0] ==
          "MPI_Scan: recursive doubling, the node's total to rank 0, a flag broadcast (MPICH default for 2 ranks, "
          "16 bytes; 1 call)");
    CHECK(res.notes.end() == std::find_if(res.notes.begin(), res.notes.end(), [](const std::string& n) {
            return n.find("recorded duration") != std::string::npos;
          }));
  }
}

TEST_CASE("MSTEP_ALLTOALL: the blocking MPI_Alltoall charged as libmstep's substitute ran it", "[replay]") {
  const CollectiveSubstitutes pt2pt = substitutes_from_names("", "", "", "pt2pt");
  // MPICH's choice, as a substitute (no calibrated residual), for the blocking call only.
  CHECK(choose_collective(Op::Alltoall, 16, 0, 256, pt2pt).algo == CollAlgo::AlltoallBruck);
  CHECK(choose_collective(Op::Alltoall, 16, 0, 256, pt2pt).substitute);
  CHECK(choose_collective(Op::Alltoall, 4, 0, 256, pt2pt).algo == CollAlgo::AlltoallScattered);
  CHECK(choose_collective(Op::Alltoall, 16, 0, 65536, pt2pt).algo == CollAlgo::AlltoallPairwise);
  CHECK_FALSE(choose_collective(Op::Ialltoall, 4, 0, 256, pt2pt).substitute);
  // MPI_Alltoallv too, by its one algorithm, under any setting but mpi.
  CHECK(choose_collective(Op::Alltoallv, 4, 0, 256, pt2pt).substitute);
  CHECK(choose_collective(Op::Alltoallv, 4, 0, 256, pt2pt).algo == CollAlgo::AlltoallScattered);
  CHECK_FALSE(choose_collective(Op::Ialltoallv, 4, 0, 256, pt2pt).substitute);
  CHECK_FALSE(choose_collective(Op::Alltoallv, 4, 0, 256).substitute);
  // The one asked for, whatever MPICH would choose.
  const CollectiveSubstitutes pairwise = substitutes_from_names("", "", "", "pairwise");
  CHECK(choose_collective(Op::Alltoall, 16, 0, 8, pairwise).algo == CollAlgo::AlltoallPairwise);
  CHECK(choose_collective(Op::Alltoall, 16, 0, 8, substitutes_from_names("", "", "", "bruck")).algo ==
        CollAlgo::AlltoallBruck);
  CHECK(choose_collective(Op::Alltoall, 2, 0, 1 << 20, substitutes_from_names("", "", "", "scattered")).algo ==
        CollAlgo::AlltoallScattered);
  // mpi (or an unknown name): MPICH's own, not a substitute.
  CHECK_FALSE(choose_collective(Op::Alltoall, 4, 0, 256, substitutes_from_names("", "", "", "mpi")).substitute);
  CHECK_FALSE(substitutes_from_names("", "", "", "ring").any());
}

TEST_CASE("MSTEP_GATHER and MSTEP_SCATTER: the blocking calls charged as libmstep's substitutes", "[replay]") {
  // MPICH's one algorithm for each, as a substitute (no calibrated residual); the nonblocking calls
  // and the other family stay MPICH's.
  const CollectiveSubstitutes gather = substitutes_from_names("", "", "", "", "pt2pt", "");
  const CollectiveSubstitutes scatter = substitutes_from_names("", "", "", "", "", "pt2pt");
  CHECK(gather.any());
  for (const Op op : {Op::Gather, Op::Gatherv}) {
    CHECK(choose_collective(op, 5, 2, 8, gather).substitute);
    CHECK_FALSE(choose_collective(op, 5, 2, 8, scatter).substitute);
  }
  for (const Op op : {Op::Scatter, Op::Scatterv}) {
    CHECK(choose_collective(op, 5, 2, 8, scatter).substitute);
    CHECK_FALSE(choose_collective(op, 5, 2, 8, gather).substitute);
  }
  CHECK(choose_collective(Op::Gather, 5, 2, 8, gather).algo == CollAlgo::GatherBinomial);
  CHECK(choose_collective(Op::Scatterv, 5, 2, 8, scatter).algo == CollAlgo::ScattervLinear);
  CHECK_FALSE(choose_collective(Op::Igather, 5, 2, 8, gather).substitute);
  CHECK_FALSE(choose_collective(Op::Iscatterv, 5, 2, 8, scatter).substitute);
  CHECK_FALSE(substitutes_from_names("", "", "", "", "binomial", "mpi").any());
}

TEST_CASE("MSTEP_ALLGATHER: the blocking MPI_Allgather(v) charged as libmstep's substitute ran it", "[replay]") {
  const auto subs = [](const char* algo) { return substitutes_from_names("", "", "", "", "", "", algo); };
  // pt2pt: MPICH's choice, as a substitute: recursive doubling on 2^k ranks below 512 KiB in all,
  // Bruck on others below 80 KiB, else the ring.
  CHECK(choose_collective(Op::Allgather, 4, 0, 8, subs("pt2pt")).algo == CollAlgo::AllgatherRecDbl);
  CHECK(choose_collective(Op::Allgather, 4, 0, 8, subs("pt2pt")).substitute);
  CHECK(choose_collective(Op::Allgather, 4, 0, 131072, subs("pt2pt")).algo == CollAlgo::AllgatherRing);
  CHECK(choose_collective(Op::Allgather, 3, 0, 8, subs("pt2pt")).algo == CollAlgo::AllgatherBruck);
  CHECK(choose_collective(Op::Allgather, 3, 0, 27307, subs("pt2pt")).algo == CollAlgo::AllgatherRing);
  // The one asked for; recursive doubling on 3 ranks runs Bruck.
  CHECK(choose_collective(Op::Allgather, 4, 0, 8, subs("ring")).algo == CollAlgo::AllgatherRing);
  CHECK(choose_collective(Op::Allgather, 4, 0, 1 << 20, subs("bruck")).algo == CollAlgo::AllgatherBruck);
  CHECK(choose_collective(Op::Allgather, 3, 0, 8, subs("recursive_doubling")).algo == CollAlgo::AllgatherBruck);
  // MPI_Allgatherv the same way.
  CHECK(choose_collective(Op::Allgatherv, 4, 0, 8, subs("pt2pt")).substitute);
  CHECK(choose_collective(Op::Allgatherv, 4, 0, 8, subs("pt2pt")).algo == CollAlgo::AllgatherRecDbl);
  CHECK(choose_collective(Op::Allgatherv, 3, 0, 27307, subs("pt2pt")).algo == CollAlgo::AllgatherRing);
  CHECK(choose_collective(Op::Allgatherv, 3, 0, 8, subs("recursive_doubling")).algo == CollAlgo::AllgatherBruck);
  // The nonblocking calls stay MPICH's; so does everything under mpi.
  CHECK_FALSE(choose_collective(Op::Iallgather, 4, 0, 8, subs("pt2pt")).substitute);
  CHECK_FALSE(choose_collective(Op::Iallgatherv, 4, 0, 8, subs("pt2pt")).substitute);
  CHECK_FALSE(choose_collective(Op::Allgather, 4, 0, 8, subs("mpi")).substitute);
  CHECK_FALSE(choose_collective(Op::Allgatherv, 4, 0, 8, subs("mpi")).substitute);
  CHECK_FALSE(subs("rd").any());
}

TEST_CASE("MSTEP_REDUCE: the blocking MPI_Reduce charged as libmstep's substitute ran it", "[replay]") {
  const auto subs = [](const char* algo) { return substitutes_from_names("", "", "", "", "", "", "", algo); };
  // pt2pt: MPICH's choice, as a substitute: binomial up to 2 KiB or below 2^k 8-byte elements.
  CHECK(choose_collective(Op::Reduce, 4, 3, 2048, subs("pt2pt")).algo == CollAlgo::ReduceBinomial);
  CHECK(choose_collective(Op::Reduce, 4, 3, 2048, subs("pt2pt")).substitute);
  CHECK(choose_collective(Op::Reduce, 4, 3, 2056, subs("pt2pt")).algo == CollAlgo::ReduceScatterGather);
  // The one asked for, Rabenseifner's only where the vector has 2^k 8-byte elements.
  CHECK(choose_collective(Op::Reduce, 4, 0, 8, subs("binomial")).algo == CollAlgo::ReduceBinomial);
  CHECK(choose_collective(Op::Reduce, 4, 0, 1 << 20, subs("binomial")).algo == CollAlgo::ReduceBinomial);
  CHECK(choose_collective(Op::Reduce, 4, 0, 32, subs("reduce_scatter_gather")).algo == CollAlgo::ReduceScatterGather);
  CHECK(choose_collective(Op::Reduce, 4, 0, 16, subs("reduce_scatter_gather")).algo == CollAlgo::ReduceBinomial);
  // The nonblocking call stays MPICH's; so does everything under mpi.
  CHECK_FALSE(choose_collective(Op::Ireduce, 4, 0, 8, subs("pt2pt")).substitute);
  CHECK_FALSE(choose_collective(Op::Reduce, 4, 0, 8, subs("mpi")).substitute);
  CHECK_FALSE(subs("rabenseifner").any());
}

TEST_CASE("Rabenseifner's MPI_Reduce to a folded root: the root takes newrank 0's place, as MPICH's", "[replay]") {
  // 3 ranks, root 1, 4 KiB: rank 1 (odd, folded) sends its vector to 0; 0 and 2 halve (2 KiB
  // each way); 0 hands its piece (2 KiB) to the root, which then receives 2's piece as newrank 0.
  const CollShape s = choose_collective(Op::Reduce, 3, 1, 4096);
  REQUIRE(s.algo == CollAlgo::ReduceScatterGather);
  std::vector<CollOp> ops(coll_max_ops(3));
  std::vector<std::uint32_t> steps(coll_max_ops(3));
  const auto program = [&](std::uint32_t me) {
    std::uint32_t nops = 0, nsteps = 0;
    coll_program(s, me, ops.data(), steps.data(), nops, nsteps);
    std::vector<std::tuple<bool, std::uint32_t, std::uint64_t>> out;  // send?, peer, bytes
    for (std::uint32_t i = 0; i < nops; ++i)
      out.emplace_back(ops[i].send != 0, std::uint32_t{ops[i].peer}, std::uint64_t{ops[i].bytes});
    return out;
  };
  using T = std::tuple<bool, std::uint32_t, std::uint64_t>;
  CHECK(program(0) == std::vector<T>{{false, 1, 4096}, {false, 2, 2048}, {true, 2, 2048}, {true, 1, 2048}});
  CHECK(program(1) == std::vector<T>{{true, 0, 4096}, {false, 0, 2048}, {false, 2, 2048}});
  CHECK(program(2) == std::vector<T>{{false, 0, 2048}, {true, 0, 2048}, {true, 1, 2048}});
}

TEST_CASE("MSTEP_REDUCE_SCATTER: MPI_Reduce_scatter(_block) charged as libmstep's substitute ran it", "[replay]") {
  const auto subs = [](const char* algo) { return substitutes_from_names("", "", "", "", "", "", "", "", algo); };
  // pt2pt: MPICH's choice, as a substitute: recursive halving below 512 KiB in all, else pairwise.
  for (const Op op : {Op::Reduce_scatter, Op::Reduce_scatter_block}) {
    CHECK(choose_collective(op, 4, 0, 8, subs("pt2pt")).algo == CollAlgo::ReduceScatterRecHalving);
    CHECK(choose_collective(op, 4, 0, 8, subs("pt2pt")).substitute);
    CHECK(choose_collective(op, 4, 0, 131072, subs("pt2pt")).algo == CollAlgo::ReduceScatterPairwise);
    CHECK(choose_collective(op, 3, 0, 131072, subs("pt2pt")).algo == CollAlgo::ReduceScatterRecHalving);
    // The one asked for, whatever the size.
    CHECK(choose_collective(op, 4, 0, 8, subs("pairwise")).algo == CollAlgo::ReduceScatterPairwise);
    CHECK(choose_collective(op, 4, 0, 1 << 20, subs("recursive_halving")).algo == CollAlgo::ReduceScatterRecHalving);
    CHECK(choose_collective(op, 4, 0, 1 << 20, subs("recursive_halving")).substitute);
    CHECK_FALSE(choose_collective(op, 4, 0, 8, subs("mpi")).substitute);
  }
  // The nonblocking calls stay MPICH's; so do the other collectives.
  CHECK_FALSE(choose_collective(Op::Ireduce_scatter, 4, 0, 8, subs("pt2pt")).substitute);
  CHECK_FALSE(choose_collective(Op::Ireduce_scatter_block, 4, 0, 8, subs("pt2pt")).substitute);
  CHECK_FALSE(choose_collective(Op::Reduce, 4, 0, 8, subs("pt2pt")).substitute);
  CHECK(subs("pairwise").any());
  CHECK_FALSE(subs("halving").any());
}

TEST_CASE("MPI_Allgatherv's ring sends a block over 32 KiB in chunks of 32 KiB, as MPICH's", "[replay]") {
  // 3 ranks, blocks of 80 000 bytes (240 000 in all: the ring): each block in 32 768, 32 768 and
  // 14 464 bytes, two blocks a member: 6 rounds of a Sendrecv to me + 1 from me - 1. MPI_Allgather's
  // ring sends each block whole.
  const auto program = [](const CollShape& s, std::uint32_t me) {
    std::vector<CollOp> ops(coll_max_ops(s));
    std::vector<std::uint32_t> steps(coll_max_ops(s));
    std::uint32_t nops = 0, nsteps = 0;
    coll_program(s, me, ops.data(), steps.data(), nops, nsteps);
    REQUIRE(nsteps * 2 == nops);
    std::vector<std::tuple<bool, std::uint32_t, std::uint64_t>> out;  // send?, peer, bytes
    for (std::uint32_t i = 0; i < nops; ++i)
      out.emplace_back(ops[i].send != 0, std::uint32_t{ops[i].peer}, std::uint64_t{ops[i].bytes});
    return out;
  };
  using T = std::tuple<bool, std::uint32_t, std::uint64_t>;
  const CollShape v = choose_collective(Op::Allgatherv, 3, 0, 80000);
  REQUIRE(v.algo == CollAlgo::AllgatherRing);
  CHECK(coll_rounds(v) == 6);
  std::vector<T> want;
  for (int block = 0; block < 2; ++block)
    for (std::uint64_t bytes : {32768u, 32768u, 14464u}) want.insert(want.end(), {{false, 0, bytes}, {true, 2, bytes}});
  CHECK(program(v, 1) == want);
  const CollShape whole = choose_collective(Op::Allgather, 3, 0, 80000);
  REQUIRE(whole.algo == CollAlgo::AllgatherRing);
  CHECK(coll_rounds(whole) == 2);
  CHECK(program(whole, 1) == std::vector<T>{{false, 0, 80000}, {true, 2, 80000}, {false, 0, 80000}, {true, 2, 80000}});
  // 32 KiB exactly is one message.
  CHECK(coll_rounds(choose_collective(Op::Allgatherv, 3, 0, 32768)) == 2);
}

TEST_CASE("every decomposed message has exactly one sender and one receiver", "[replay]") {
  // For each algorithm, size and root: the slots sent equal the slots received, with matching
  // partners and sizes, and no slot is used twice.
  const std::pair<Op, std::uint64_t> cases[] = {
      {Op::Barrier, 0},        {Op::Bcast, 8},         {Op::Bcast, 100000},  {Op::Bcast, 1000000},
      {Op::Reduce, 8},         {Op::Reduce, 100000},   {Op::Allreduce, 8},   {Op::Allreduce, 100000},
      {Op::Gather, 64},        {Op::Scatter, 64},      {Op::Gatherv, 64},    {Op::Scatterv, 64},
      {Op::Allgather, 64},     {Op::Allgather, 100000}, {Op::Allgatherv, 100000}, {Op::Alltoall, 64},  {Op::Alltoall, 1000},
      {Op::Alltoall, 100000},  {Op::Alltoallv, 64},    {Op::Reduce_scatter_block, 64},
      {Op::Reduce_scatter, 100000}, {Op::Scan, 64}, {Op::Exscan, 64}, {Op::Scan, 100000}};
  for (const auto& [op, m] : cases) {
    for (std::uint32_t n : {2u, 3u, 4u, 5u, 6u, 7u, 8u, 12u, 16u, 33u, 64u}) {
      for (std::uint32_t root : {0u, n / 2, n - 1}) {
        const CollShape s = choose_collective(op, n, root, m);
        INFO(mpi_name(op) << " " << coll_algo_name(s.algo) << " n=" << n << " root=" << root << " m=" << m);
        REQUIRE(s.algo != CollAlgo::Unsupported);
        struct End {
          std::uint32_t rank, peer;
          std::uint64_t bytes;
        };
        std::map<std::uint32_t, End> sent, got;
        std::vector<CollOp> ops(coll_max_ops(s));
        std::vector<std::uint32_t> steps(coll_max_ops(s));
        for (std::uint32_t me = 0; me < n; ++me) {
          std::uint32_t nops = 0, nsteps = 0;
          coll_program(s, me, ops.data(), steps.data(), nops, nsteps);
          REQUIRE(nops <= ops.size());
          for (std::uint32_t i = 0; i < nops; ++i) {
            REQUIRE(ops[i].slot < coll_rounds(s) * n);
            REQUIRE(ops[i].peer != me);
            auto& table = ops[i].send ? sent : got;
            REQUIRE(table.emplace(ops[i].slot, End{me, ops[i].peer, ops[i].bytes}).second);
          }
        }
        REQUIRE(sent.size() == got.size());
        for (const auto& [slot, a] : sent) {
          const auto it = got.find(slot);
          REQUIRE(it != got.end());
          CHECK(it->second.rank == a.peer);
          CHECK(it->second.peer == a.rank);
          CHECK(it->second.bytes == a.bytes);
        }
      }
    }
  }
}

TEST_CASE("a dissemination barrier's round, as the replay writes it when a member starts it", "[replay]") {
  // n = 5, member 3, round 2: 2^2 = 4 away, so it hears from (3 - 4) mod 5 = 4 and tells (3 + 4) mod 5 = 2;
  // slots are round * n + the sender's rank: 2 * 5 + 4 = 14 in, 2 * 5 + 3 = 13 out.
  CollOp ops[2];
  barrier_dissemination_step(5, 3, 2, ops);
  CHECK((ops[0].send == 0 && ops[0].peer == 4 && ops[0].slot == 14 && ops[0].bytes == 0));
  CHECK((ops[1].send == 1 && ops[1].peer == 2 && ops[1].slot == 13 && ops[1].bytes == 0));
  CHECK(barrier_dissemination_rounds(1) == 0);
  CHECK(barrier_dissemination_rounds(2) == 1);
  CHECK(barrier_dissemination_rounds(5) == 3);
  CHECK(barrier_dissemination_rounds(1u << 20) == 20);
  CHECK(barrier_dissemination_rounds((1u << 20) + 1) == 21);
  // The whole program of member 3 of 5 is those rounds, one step each.
  CollShape shape = choose_collective(Op::Barrier, 5, 0, 0, CollectiveSubstitutes{});
  REQUIRE(shape.algo == CollAlgo::BarrierDissemination);
  std::vector<CollOp> prog(coll_max_ops(5));
  std::vector<std::uint32_t> steps(coll_max_ops(5));
  std::uint32_t nops = 0, nsteps = 0;
  coll_program(shape, 3, prog.data(), steps.data(), nops, nsteps);
  REQUIRE(nsteps == 3);
  REQUIRE(nops == 6);
  for (std::uint32_t r = 0; r < 3; ++r) {
    barrier_dissemination_step(5, 3, r, ops);
    CHECK(steps[r] == 2 * r + 2);
    for (int i = 0; i < 2; ++i) {
      CHECK(prog[2 * r + i].slot == ops[i].slot);
      CHECK(prog[2 * r + i].peer == ops[i].peer);
      CHECK(prog[2 * r + i].send == ops[i].send);
    }
  }
}

TEST_CASE("a synthetic ring at zero network cost replays to its computation-only critical path", "[replay]") {
  const int n = 5;
  const std::vector<RankTrace> traces = synthetic_trace(n, Pattern::Ring, 2000, 7);
  const Run run(traces);
  REQUIRE(run.matching.unmatched.empty());
  const ReplayResult r = run.loggps(LogGPSParams{});  // L = o = g = G = 0, S infinite
  CHECK(r.model_deadlocks == 0);
  CHECK(r.recorded_calls == 0);
  // By hand: per iteration each rank enters Irecv after its gap, Isend after the next gap (the
  // Irecv took no time), the Waitall after the next; the Waitall ends when both the rank got
  // there and its left neighbour's Isend started. The Barrier ends for all at the last arrival.
  auto gap = [](const Event& a, const Event& b) { return static_cast<double>(b.t_enter - a.t_exit) * 1e-9; };
  std::vector<double> t(n), isend(n), wait(n);
  for (int q = 0; q < n; ++q) t[q] = static_cast<double>(traces[q].events[0].t_exit) * 1e-9;
  const std::size_t iterations = (traces[0].events.size() - 3) / 4;
  REQUIRE(iterations > 50);
  for (std::size_t it = 0; it < iterations; ++it) {
    for (int q = 0; q < n; ++q) {
      const auto& e = traces[q].events;
      const std::size_t k = 1 + 4 * it;
      const double enter_irecv = t[q] + gap(e[k - 1], e[k]);
      isend[q] = enter_irecv + gap(e[k], e[k + 1]);
      wait[q] = isend[q] + gap(e[k + 1], e[k + 2]);
    }
    for (int q = 0; q < n; ++q) t[q] = std::max(wait[q], isend[(q + n - 1) % n]);
  }
  double last = 0;
  std::vector<double> arrive(n);
  for (int q = 0; q < n; ++q) {
    const auto& e = traces[q].events;
    arrive[q] = t[q] + gap(e[e.size() - 3], e[e.size() - 2]);
    last = std::max(last, arrive[q]);
  }
  const double zero = 1e-3;  // the synthetic Init exit
  for (int q = 0; q < n; ++q) {
    const auto& e = traces[q].events;
    const double expected = last + gap(e[e.size() - 2], e[e.size() - 1]) - zero;
    CHECK(r.finish_s[static_cast<std::size_t>(q)] == Approx(expected).margin(1e-12));
  }
}

TEST_CASE("the linear baseline on a ping-pong", "[replay]") {
  const Run run = pingpong();
  // Below 10000 B: T(n) = 3 + n / (1000 B/us). 100 B: T = 3.1, the sender busy 0.1.
  TwoRegimeLinearModel lm{{3 * us, 1e9}, {10 * us, 2e9}, 10000};
  const ReplayResult r = run.linear(lm);
  // Rank 0 sends at 11 (done 11.1); rank 1 has it at 14.1, computes 3, sends at 17.1 (done 17.2),
  // computes 2: Finalize at 19.2. Rank 0 has the answer at 20.2, computes 5: Finalize at 25.2
  // = 1 + 10 + 3.1 + 3 + 3.1 + 5.
  CHECK(r.finish_s[0] == Approx(24.2 * us));
  CHECK(r.finish_s[1] == Approx(18.2 * us));
  CHECK(r.receiver_wait_s[1] == Approx(20.2 * us - 11.1 * us));
}

TEST_CASE("a rank without a trace: its partners keep their recorded durations", "[replay]") {
  const Run run({make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Send, 2, 5, 1, 8), ev(Op::Finalize, 6, 7)}),
                 make_rank(1, 2, {ev(Op::Init, 0, 1), ev(Op::Finalize, 2, 3)})},
                {1});
  const ReplayResult r = run.loggps(machine());
  // 1 + compute 1 + recorded Send 3 + compute 1 = Finalize at 6: 5 after zero, as recorded.
  CHECK(r.finish_s[0] == Approx(5 * us));
  CHECK(r.actual_finish_s[0] == Approx(5 * us));
  CHECK(r.recorded_calls == 1);
  CHECK(!r.notes.empty());
}

TEST_CASE("a cycle of synchronous sends the model deadlocks on is resolved", "[replay]") {
  // Both ranks Ssend 8 B to each other before receiving: MPI would deadlock, the recorded run
  // (say, with a buffering MPI) did not. The replay resolves one send as eager and goes on.
  const Run run({make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Ssend, 2, 3, 1, 8), recv(Op::Recv, 3, 4, 1, 8),
                                  ev(Op::Finalize, 4, 5)}),
                 make_rank(1, 2, {ev(Op::Init, 0, 1), send(Op::Ssend, 2, 3, 0, 8), recv(Op::Recv, 3, 4, 0, 8),
                                  ev(Op::Finalize, 4, 5)})});
  const ReplayResult r = run.loggps(machine());
  CHECK(r.model_deadlocks >= 1);
  CHECK(r.finish_s[0] > 0);
  CHECK(r.finish_s[1] > 0);
}

TEST_CASE("synthetic traces are valid and replay without deadlock", "[replay]") {
  for (Pattern pattern : {Pattern::Ring, Pattern::PingPong, Pattern::Random, Pattern::Alltoall}) {
    const std::vector<RankTrace> traces = synthetic_trace(8, pattern, 20000, 3);
    std::size_t events = 0;
    for (const auto& t : traces) {
      events += t.events.size();
      REQUIRE(t.events.front().op == Op::Init);
      REQUIRE(t.events.back().op == Op::Finalize);
      for (std::size_t i = 1; i < t.events.size(); ++i)
        if (!t.events[i].continuation()) REQUIRE(t.events[i].t_enter >= t.events[i - 1].t_exit);
    }
    CHECK(events <= 20000);
    CHECK(events > 19000);
    const Run run(traces);
    CHECK(run.matching.unmatched.empty());
    const ReplayResult r = run.loggps(machine());
    CHECK(r.model_deadlocks == 0);
    CHECK(r.recorded_calls == 0);
    CHECK(r.records == events - 8);
    CHECK(r.predicted_s > 0);
    CHECK(r.actual_s > 0);
    if (pattern == Pattern::Alltoall) {
      // 20000 / 8 = 2500 records a rank: Init, Barrier, Finalize and 2497 Alltoalls, 8 or 1024
      // bytes a block: MPICH's Bruck below 256 bytes on 8 ranks, the scattered exchange above.
      for (const auto& t : traces)
        CHECK(std::count_if(t.events.begin(), t.events.end(), [](const Event& e) { return e.op == Op::Alltoall; }) == 2497);
      for (const char* algo : {"MPI_Alltoall: Bruck (MPICH default for 8 ranks, 8 bytes; ",
                               "MPI_Alltoall: scattered Isend/Irecv (32 at a time) (MPICH default for 8 ranks, 1024 bytes; "}) {
        INFO(algo);
        CHECK(std::any_of(r.collective_algorithms.begin(), r.collective_algorithms.end(),
                          [&](const std::string& line) { return line.rfind(algo, 0) == 0; }));
      }
    }
    if (pattern == Pattern::Random) {
      const std::string allreduce = "MPI_Allreduce: recursive doubling (MPICH default for 8 ranks, 8 bytes; ";
      CHECK(std::any_of(r.collective_algorithms.begin(), r.collective_algorithms.end(),
                        [&](const std::string& line) { return line.rfind(allreduce, 0) == 0; }));
    }
  }
}

TEST_CASE("the tool's flushes are dropped, a Test or Iprobe that found nothing keeps its time", "[replay]") {
  Event probe = ev(Op::Iprobe, 12, 14, kAnySource);
  probe.flags = kIncomplete;
  const Run run({make_rank(0, 1, {ev(Op::Init, 0, 1), ev(Op::ToolFlush, 3, 8), probe, ev(Op::Finalize, 20, 21)})});
  const ReplayResult r = run.loggps(machine());
  // Computation 2 (1 to 3), the flush's 5 dropped, computation 4 (8 to 12), Iprobe as recorded
  // (2), computation 6 (14 to 20): Finalize at 1 + 2 + 4 + 2 + 6 = 15, 14 after zero; recorded 19.
  CHECK(r.finish_s[0] == Approx(14 * us));
  CHECK(r.actual_finish_s[0] == Approx(19 * us));
  CHECK(r.recorded_calls == 1);
}

TEST_CASE("collectives on split communicators are separate instances", "[replay]") {
  LogGPSParams p;
  p.o = 2 * us;
  p.L = 5 * us;
  p.g = 1 * us;
  // Ranks {0, 2} and {1, 3} each have a communicator with local id 1 and do a Barrier on it;
  // rank 3 arrives at 6, everybody else at 2. Dissemination on 2 ranks: one round.
  std::vector<RankTrace> t;
  for (int r = 0; r < 4; ++r) {
    Event b = ev(Op::Barrier, r == 3 ? 6 : 2, 30);
    b.comm = 1;
    t.push_back(make_rank(r, 4, {ev(Op::Init, 0, 1), b, ev(Op::Finalize, 30, 31)}));
    t.back().comms.push_back({1, false, r % 2 ? std::vector<std::int32_t>{1, 3} : std::vector<std::int32_t>{0, 2}});
  }
  const Run run(std::move(t));
  const ReplayResult res = run.loggps(p);
  // {0, 2}: both send at 2, have the other's at 2 + 7 + 2 = 11. {1, 3}: rank 1 has rank 3's
  // (sent at 6) at 15; rank 3 sends at 6 (busy to 8) and has rank 1's (sent at 2, there at 9)
  // at max(6, 9) + 2 = 11. Zero is 1.
  CHECK(res.finish_s[0] == Approx(10 * us));
  CHECK(res.finish_s[2] == Approx(10 * us));
  CHECK(res.finish_s[1] == Approx(14 * us));
  CHECK(res.finish_s[3] == Approx(10 * us));
  REQUIRE(res.collective_algorithms.size() == 1);
  CHECK(res.collective_algorithms[0] == "MPI_Barrier: dissemination (MPICH default for 2 ranks; 2 calls)");
  CHECK(res.collective_waits.size() == 4);
}

TEST_CASE("a collective on an intercommunicator keeps its recorded times", "[replay][inter]") {
  // Groups {0, 1} and {2, 3} joined by an intercommunicator (local id 1, listing the other group):
  // its members now share one global id, but the models have no algorithm for intercommunicator
  // collectives, so the Barrier keeps its recorded 28 us on every rank.
  std::vector<RankTrace> t;
  for (int r = 0; r < 4; ++r) {
    Event b = ev(Op::Barrier, 2, 30);
    b.comm = 1;
    t.push_back(make_rank(r, 4, {ev(Op::Init, 0, 1), b, ev(Op::Finalize, 30, 31)}));
    t.back().comms.push_back({1, true, r < 2 ? std::vector<std::int32_t>{2, 3} : std::vector<std::int32_t>{0, 1}});
  }
  const Run run(std::move(t));
  const auto ids = global_comm_ids(run.ptrs);
  for (int r = 1; r < 4; ++r) REQUIRE(ids[r][1] == ids[0][1]);
  const ReplayResult res = run.loggps(machine());
  CHECK(res.collective_algorithms.empty());
  CHECK(res.collective_waits.empty());
  for (int r = 0; r < 4; ++r) CHECK(res.finish_s[r] == Approx(29 * us));
  bool noted = false;
  for (const auto& n : res.notes) noted |= n.rfind("4 collective calls kept their recorded duration", 0) == 0;
  CHECK(noted);
}

TEST_CASE("a rank recorded by two threads is replayed in order of call entry", "[replay]") {
  // Thread 0's frame (Init, Comm_dup at 5-6, Finalize at 20) was written before thread 1's
  // (Comm_free at 10-12): in order of entry the computation is 4 + 4 + 8 and the calls keep their
  // recorded 1 and 2, so Finalize comes at 20, as recorded.
  RankTrace t = make_rank(0, 1, {ev(Op::Init, 0, 1), ev(Op::Comm_dup, 5, 6), ev(Op::Finalize, 20, 21),
                                 ev(Op::Comm_free, 10, 12)});
  t.event_thread = {0, 0, 0, 1};
  const Run run({t});
  const ReplayResult r = run.loggps(machine());
  CHECK(r.finish_s[0] == Approx(19 * us));
  CHECK(r.actual_finish_s[0] == Approx(19 * us));
  CHECK(r.recorded_calls == 2);
  CHECK(std::any_of(r.notes.begin(), r.notes.end(),
                    [](const std::string& n) { return n.find("several threads") != std::string::npos; }));
}

TEST_CASE("the cold start: a pair's first messages cost more on both sides", "[replay][cold]") {
  const Run run = pingpong();
  ColdStart cold;
  cold.messages = 1, cold.send = 3 * us, cold.recv = 4 * us, cold.from = 50, cold.to = 10000;
  // Both 100-B messages are their pair's first. Rank 0 sends at 11: returns at 11 + 2 + 3 = 16,
  // data at 11 + 2 + 3 + 5.1 = 21.1; rank 1's Recv returns at 21.1 + 2 + 4 = 27.1, it computes
  // 3 and sends at 30.1 (returns 35.1; computes 2: Finalize at 37.1); data at 40.2, rank 0's Recv
  // returns at 46.2, it computes 5: Finalize at 51.2. Minus zero (1): 50.2 and 36.1, against
  // 36.2 and 26.1 warm: 2 x (3 + 4) = 14 more on the critical path.
  const ReplayResult r = run.loggps(machine(), cold);
  CHECK(r.finish_s[0] == Approx(50.2 * us));
  CHECK(r.finish_s[1] == Approx(36.1 * us));
  CHECK(r.receiver_wait_s[0] == Approx(20.1 * us));  // data at 21.1, Recv posted at 1
  SECTION("only the first `messages` of a pair") {
    cold.messages = 0;
    CHECK(run.loggps(machine(), cold).finish_s[0] == Approx(36.2 * us));
  }
  SECTION("only sizes in [from, to)") {
    cold.from = 101;
    CHECK(run.loggps(machine(), cold).finish_s[0] == Approx(36.2 * us));
  }
  SECTION("LogGP sees the same machine") {
    CHECK(run.loggps(as_loggp(machine()), cold).finish_s[0] == Approx(50.2 * us));
  }
}

TEST_CASE("fresh buffers: a size its receiver has not received before arrives later", "[replay][cold]") {
  const Run run = pingpong();
  ColdStart cold;
  cold.fresh_per_byte = 0.01 * us, cold.fresh_from = 50;
  // Each 100-B message is the first of its size at its receiver: 1 us later each, on the
  // critical path twice: 36.2 + 2 and 26.1 + 1.
  const ReplayResult r = run.loggps(machine(), cold);
  CHECK(r.finish_s[0] == Approx(38.2 * us));
  CHECK(r.finish_s[1] == Approx(27.1 * us));
  cold.fresh_from = 101;  // below the range: as warm
  CHECK(run.loggps(machine(), cold).finish_s[0] == Approx(36.2 * us));
}

namespace {

// The machine charges as (rank, event, microseconds), sorted, for exact comparison.
std::vector<std::tuple<int, unsigned, double>> charges_us(const ReplayResult& r) {
  std::vector<std::tuple<int, unsigned, double>> out;
  for (const MachineCharge& c : r.machine_charges)
    out.emplace_back(c.rank, c.event, std::round(c.seconds / us * 1000) / 1000);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("the replay names the records it charged machine terms to", "[replay][cold]") {
  const Run run = pingpong();
  ColdStart cold;
  cold.messages = 1, cold.send = 3 * us, cold.recv = 4 * us, cold.from = 50, cold.to = 10000;
  using C = std::vector<std::tuple<int, unsigned, double>>;
  // Message 0 -> 1: rank 0's Send (event 1) pays 3, rank 1's Recv (event 1) pays 4; the answer:
  // rank 1's Send (event 2) 3, rank 0's Recv (event 2) 4.
  CHECK(charges_us(run.loggps(machine(), cold)) == C{{0, 1, 3.0}, {0, 2, 4.0}, {1, 1, 4.0}, {1, 2, 3.0}});
  // Fresh buffers go to the receiving record: 100 B x 0.01 us/B.
  ColdStart fresh;
  fresh.fresh_per_byte = 0.01 * us, fresh.fresh_from = 50;
  CHECK(charges_us(run.loggps(machine(), fresh)) == C{{0, 2, 1.0}, {1, 1, 1.0}});
  // No machine terms, no charges.
  CHECK(run.loggps(machine()).machine_charges.empty());

  SECTION("in a collective, to the collective record of the rank that paid") {
    std::vector<RankTrace> t;
    for (int r = 0; r < 2; ++r) {
      Event b = ev(Op::Bcast, 2, 9, 0);
      if (r == 0) b.flags = kRoot, b.send_bytes = 500;
      else b.recv_bytes = 500;
      t.push_back(make_rank(r, 2, {ev(Op::Init, 0, 1), b, ev(Op::Finalize, 9, 10)}));
    }
    const Run bcast(std::move(t));
    CHECK(charges_us(bcast.loggps(machine(), cold)) == C{{0, 1, 3.0}, {1, 1, 4.0}});
  }
}

TEST_CASE("the linear baseline pays the same machine terms", "[replay][cold]") {
  const Run run = pingpong();
  TwoRegimeLinearModel lm{{3 * us, 1e9}, {10 * us, 2e9}, 10000};
  ColdStart cold;
  cold.messages = 1, cold.send = 3 * us, cold.recv = 4 * us, cold.from = 50, cold.to = 10000;
  // As "the linear baseline on a ping-pong", with both messages cold: rank 0's Send is done at
  // 11 + 0.1 + 3 = 14.1, the data there at 11 + 3.1 + 3 = 17.1, rank 1's Recv done at 17.1 + 4
  // = 21.1; it computes 3, sends at 24.1 (done 27.2, computes 2: Finalize at 29.2); the data at
  // 24.1 + 3.1 + 3 = 30.2, rank 0's Recv done at 34.2, computes 5: Finalize at 39.2. Minus 1.
  const ReplayResult r = run.linear(lm, cold);
  CHECK(r.finish_s[0] == Approx(38.2 * us));
  CHECK(r.finish_s[1] == Approx(28.2 * us));
  CHECK(r.machine_charges.size() == 4);
}

TEST_CASE("replayed from its rank files a frame at a time, a trace gives the in-memory replay's times", "[replay][files]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "mstep-unit" / "replay-files";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<RankTrace> traces = synthetic_trace(8, Pattern::Random, 20000, 5);
  std::vector<std::string> files;
  std::vector<RankTrace> metas;
  for (const RankTrace& t : traces) {
    files.push_back((dir / rank_file_name(t.header.rank)).string());
    write_rank_trace(files.back(), t, 500);  // 5 Events frames a rank
  }
  for (std::size_t r = 0; r < traces.size(); ++r) {
    metas.push_back(read_rank_metadata(files[r]));
    // The first record only; the others counted, left on disk.
    CHECK(metas.back().events.size() == 1);
    CHECK(metas.back().events.size() + metas.back().events_on_disk == traces[r].events.size());
    CHECK(metas.back().clocks == traces[r].clocks);
    CHECK(metas.back().end == TraceEnd::Complete);
  }
  std::vector<const RankTrace*> meta_ptrs;
  for (const RankTrace& m : metas) meta_ptrs.push_back(&m);
  const Timeline timeline(meta_ptrs);
  const Matching none;
  const ReplayResult from_files = replay_loggps(ReplayInput{meta_ptrs, none, timeline, kReplayWindow, files}, machine());
  const Run run(traces);
  const ReplayResult in_memory = run.loggps(machine());
  CHECK(from_files.finish_s == in_memory.finish_s);
  CHECK(from_files.actual_finish_s == in_memory.actual_finish_s);
  CHECK(from_files.records == in_memory.records);
  CHECK(from_files.collective_algorithms == in_memory.collective_algorithms);
  CHECK(from_files.notes == in_memory.notes);
  fs::remove_all(dir);
}
