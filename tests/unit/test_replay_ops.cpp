// The replay and matching of the calls added for real codes' coverage: persistent requests'
// Start/Startall, matched probes (Mrecv, Imrecv), and nonblocking collectives. Expected values are
// worked out by hand from MODELS.md section 3 (times in microseconds, zero at Init's exit).
#include <catch2/catch.hpp>

#include "model/analysis/report.hpp"
#include "replay_fixtures.hpp"

using namespace mstep;
using namespace mstep::model;
using namespace mstep::replay_fixtures;

namespace {

// A persistent request's start: the send (to `peer`, `bytes`) or the receive (kRecvHalf, posted
// source `peer`) it starts.
Event start(Op op, double enter, double exit, std::int32_t peer, bool receive, std::uint64_t bytes, std::uint32_t request) {
  Event e = ev(op, enter, exit, peer);
  e.request = request;
  if (receive) e.flags = kRecvHalf;
  else e.send_bytes = bytes;
  return e;
}

// The completion of a nonblocking collective's request.
Event coll_done(Op op, double enter, double exit, std::uint32_t request) {
  Event e = ev(op, enter, exit);
  e.request = request;
  e.flags = kCollDone;
  return e;
}

bool has_note(const ReplayResult& r, std::string_view text) {
  return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("a persistent request's Start replays as the Isend or Irecv it starts", "[replay][ops]") {
  // As "Isend / Irecv / Wait" in test_replay.cpp, 100 B eager: rank 0 starts a send at 3,
  // computes 10, Waits; rank 1 starts a receive at 1, computes 4, Waits.
  auto traces = [](Op send_op, Op recv_op) {
    Event s = send_op == Op::Isend ? send(Op::Isend, 3, 3.5, 1, 100, 1) : start(send_op, 3, 3.5, 1, false, 100, 1);
    Event r = recv_op == Op::Irecv ? irecv(1, 1.2, 0, 1) : start(recv_op, 1, 1.2, 0, true, 0, 1);
    Event w = ev(Op::Wait, 13.5, 14);
    w.request = 1;
    return std::vector<RankTrace>{
        make_rank(0, 2, {ev(Op::Init, 0, 1), s, w, ev(Op::Finalize, 15, 16)}),
        make_rank(1, 2, {ev(Op::Init, 0, 1), r, recv(Op::Wait, 5.2, 9, 0, 100, 1), ev(Op::Finalize, 10, 11)})};
  };
  const Run isend(traces(Op::Isend, Op::Irecv));
  const Run started(traces(Op::Start, Op::Start));
  const Run startall(traces(Op::Startall, Op::Startall));
  REQUIRE(started.matching.messages.size() == 1);
  REQUIRE(startall.matching.messages.size() == 1);
  CHECK(started.matching.messages[0].post_event == 1);  // posted at its Start, as an Irecv
  const ReplayResult want = isend.loggps(machine());
  // Rank 0's Wait returns at once (15); rank 1's Wait returns at 3 + 2 + 5.1 + 2 = 12.1.
  CHECK(want.finish_s[0] == Approx(15 * us));
  CHECK(want.finish_s[1] == Approx(12.1 * us));
  for (const Run* run : {&started, &startall}) {
    const ReplayResult got = run->loggps(machine());
    CHECK(got.finish_s == want.finish_s);
    CHECK(got.receiver_wait_s == want.receiver_wait_s);
    CHECK(got.recorded_calls == 0);
  }
}

TEST_CASE("a started MPI_Ssend_init request is synchronous, as MPI_Issend is", "[replay][ops]") {
  // 100 B, eager for a standard send: as the test above. Synchronous, the send waits for the
  // receive posted at 1: it completes at max(3 + o + L = 10 (the request-to-send), 1) + the
  // handshake back (o + L + o = 9) + T1 (2): 21, so rank 0's Wait (entered at 15) returns at 21.
  auto traces = [](Event s) {
    Event w = ev(Op::Wait, 13.5, 14);
    w.request = 1;
    return std::vector<RankTrace>{
        make_rank(0, 2, {ev(Op::Init, 0, 1), s, w, ev(Op::Finalize, 15, 16)}),
        make_rank(1, 2, {ev(Op::Init, 0, 1), irecv(1, 1.2, 0, 1), recv(Op::Wait, 5.2, 9, 0, 100, 1), ev(Op::Finalize, 10, 11)})};
  };
  Event sync_start = start(Op::Start, 3, 3.5, 1, false, 100, 1);
  sync_start.flags |= kSyncMode;
  const ReplayResult issend = Run(traces(send(Op::Issend, 3, 3.5, 1, 100, 1))).loggps(machine());
  const ReplayResult started = Run(traces(sync_start)).loggps(machine());
  const ReplayResult standard = Run(traces(start(Op::Start, 3, 3.5, 1, false, 100, 1))).loggps(machine());
  CHECK(started.finish_s == issend.finish_s);
  CHECK(started.finish_s[0] > standard.finish_s[0]);  // the standard one is eager: its Wait returns at once
  CHECK(standard.finish_s[0] == Approx(15 * us));
}

TEST_CASE("Startall's records: one call, a send and a receive, both tied to their Waitall", "[replay][ops]") {
  // Both ranks: Startall(send 100 B to the other, receive from it) at 2, Waitall at 3.
  // Each send starts at 2 (busy to 4 = T1), arrives at 2 + 2 + 5.1 = 9.1, received by 11.1.
  auto rank_of = [](int r) {
    const int other = 1 - r;
    Event s = start(Op::Startall, 2, 2.5, other, false, 100, 1);
    Event v = start(Op::Startall, 2, 2.5, other, true, 0, 2);
    v.flags |= kContinuation;
    Event ws = ev(Op::Waitall, 3, 12);
    ws.request = 1;
    Event wr = recv(Op::Waitall, 3, 12, other, 100, 2);
    wr.flags |= kContinuation;
    return make_rank(r, 2, {ev(Op::Init, 0, 1), s, v, ws, wr, ev(Op::Finalize, 12, 13)});
  };
  const Run run({rank_of(0), rank_of(1)});
  REQUIRE(run.matching.messages.size() == 2);
  CHECK(run.matching.unmatched.empty());
  const ReplayResult r = run.loggps(machine());
  // Startall returns when its send is done: 2 + T1 = 4 (the receive posts at 2). Waitall at
  // 4 + 0.5 = 4.5: the send is done; the receive completes at 9.1 + 2 = 11.1. Finalize at 11.1.
  CHECK(r.finish_s[0] == Approx(10.1 * us));
  CHECK(r.finish_s[1] == Approx(10.1 * us));
  CHECK(r.recorded_calls == 0);
}

TEST_CASE("matched probes: Mrecv is a receive, Imrecv a posted receive its Wait completes", "[matching][ops]") {
  // Rank 0 sends 100 B twice (tags 0); rank 1 Mprobes and Mrecvs the first, Imrecvs the second.
  Event mrecv = recv(Op::Mrecv, 2, 3, 0, 100);
  Event imrecv = ev(Op::Imrecv, 4, 4.5, kAnySource);
  imrecv.request = 7;
  const Run run({make_rank(0, 2, {ev(Op::Init, 0, 1), send(Op::Send, 1, 1.5, 1, 100), send(Op::Send, 1.5, 2, 1, 100),
                                  ev(Op::Finalize, 20, 21)}),
                 make_rank(1, 2, {ev(Op::Init, 0, 1), ev(Op::Mprobe, 1, 2, 0), mrecv, imrecv,
                                  recv(Op::Wait, 5, 6, 0, 100, 7), ev(Op::Finalize, 20, 21)})});
  REQUIRE(run.matching.messages.size() == 2);
  CHECK(run.matching.messages[0].recv_event == 2);
  CHECK(run.matching.messages[1].post_event == 3);  // the Imrecv
  CHECK(run.matching.messages[1].recv_event == 4);  // its Wait
  CHECK(run.matching.unmatched.empty());
}

TEST_CASE("a nonblocking collective is charged as its blocking version at its start", "[replay][ops]") {
  LogGPSParams p;  // o = 2, L = 5, g = 1, no per-byte costs: a dissemination round is 9
  p.o = 2 * us;
  p.L = 5 * us;
  p.g = 1 * us;
  SECTION("Ibarrier on 4 ranks: the barrier from its start, its Wait costs nothing") {
    std::vector<RankTrace> t;
    for (int r = 0; r < 4; ++r) {
      Event ib = ev(Op::Ibarrier, 2, 2.5);
      ib.request = 1;
      t.push_back(make_rank(r, 4, {ev(Op::Init, 0, 1), ib, coll_done(Op::Wait, 5, 9, 1), ev(Op::Finalize, 9, 10)}));
    }
    const Run run(std::move(t));
    const ReplayResult res = run.loggps(p);
    // The report's per-function column: each rank's Ibarrier charged 2 to 20, its Wait nothing.
    std::array<FunctionTime, kOpCount> per_function{};
    FunctionTimes observer(per_function);
    ReplayInput observed = run.input();
    observed.observer = &observer;
    (void)replay_loggps(observed, p);
    observer.finish();
    CHECK(per_function[static_cast<std::size_t>(Op::Ibarrier)].loggps_s == Approx(4 * 18 * us));
    CHECK(per_function[static_cast<std::size_t>(Op::Wait)].loggps_s == Approx(0).margin(1e-15));
    CHECK(per_function[static_cast<std::size_t>(Op::Finalize)].loggps_s == Approx(0).margin(1e-15));
    // The barrier runs from 2: two rounds, done at 20. The 2.5 of computation between the
    // Ibarrier's exit and the Wait's entry follow: the Wait at 22.5 returns at once, and so
    // MPI_Finalize is at 22.5, 21.5 after zero. (Blocking, the same program would be the same.)
    for (int r = 0; r < 4; ++r) CHECK(res.finish_s[static_cast<std::size_t>(r)] == Approx(21.5 * us));
    REQUIRE(res.collective_algorithms.size() == 1);
    CHECK(res.collective_algorithms[0] ==
          "MPI_Ibarrier: dissemination (MPICH default of the blocking version for 4 ranks; 1 call)");
    CHECK(res.recorded_calls == 0);
    CHECK(has_note(res, "4 nonblocking collective calls were charged as their blocking versions"));
  }
  SECTION("Iscan on 2 ranks: MPI_Scan's algorithm from its start, its Wait costs nothing") {
    std::vector<RankTrace> t;
    for (int r = 0; r < 2; ++r) {
      Event is = ev(Op::Iscan, 2, 2.5);
      is.request = 3;
      is.send_bytes = r == 0 ? 8 : 0;
      is.recv_bytes = r == 1 ? 8 : 0;
      t.push_back(make_rank(r, 2, {ev(Op::Init, 0, 1), is, coll_done(Op::Wait, 5, 9, 3), ev(Op::Finalize, 9, 10)}));
    }
    const Run run(std::move(t));
    const ReplayResult res = run.loggps(p);
    // From 2: the exchange to 11 on both; rank 1 sends its result at 11-13, rank 0 receives it at
    // 18-20 and sends the flag at 20-22, rank 1 receives it at 27-29. Then the 2.5 of computation
    // before each Wait, which returns at once: rank 0 at 24.5, rank 1 at 31.5; zero is 1.
    CHECK(res.finish_s[0] == Approx(23.5 * us));
    CHECK(res.finish_s[1] == Approx(30.5 * us));
    CHECK(res.recorded_calls == 0);
    CHECK(has_note(res, "2 nonblocking collective calls were charged as their blocking versions"));
    CHECK(!has_note(res, "kept their recorded duration"));
  }
}
