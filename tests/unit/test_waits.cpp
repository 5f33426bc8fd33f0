// Measured waits and step alignment on hand-made two- and three-rank traces (1 tick = 1 ns).
#include <catch2/catch.hpp>

#include "tests/unit/trace_builders.hpp"

#include "model/trace/step_alignment.hpp"
#include "model/analysis/waits.hpp"

using namespace mstep;
using namespace mstep::model;

namespace {

using test::ev;
using test::rank;

const WaitSite* find(const std::vector<WaitSite>& w, WaitKind kind, int r) {
  for (const auto& s : w)
    if (s.kind == kind && s.rank == r) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("a receive posted before its send waits for the sender", "[waits]") {
  // Rank 0 computes until 1000 ns, then sends 8 bytes; rank 1 is in MPI_Recv from 400 to 1100.
  RankTrace r0 = rank(0, 2, {ev(Op::Init, -1, 0, 10), ev(Op::Send, 1, 1000, 1020), ev(Op::Finalize, -1, 1200, 1201)});
  RankTrace r1 = rank(1, 2, {ev(Op::Init, -1, 0, 10), ev(Op::Recv, 0, 400, 1100), ev(Op::Finalize, -1, 1200, 1201)});
  const std::vector<const RankTrace*> ranks{&r0, &r1};
  const Timeline tl(ranks);
  const Matching m = match_messages(ranks);
  LogGPSParams p;
  p.L = 50e-9, p.o = 10e-9, p.S = 16384;
  WaitOptions opt;
  opt.loggps = p;
  const auto waits = measure_waits(ranks, m, tl, opt);
  const WaitSite* late = find(waits, WaitKind::LateSender, 1);
  REQUIRE(late);
  // Waited from its entry (400) until the send started (1000): 600 ns.
  CHECK(late->wait_s == Approx(600e-9));
  CHECK(late->count == 1);
  // LogGPS, k < S: max{T1 + T2 - (tr - ts), 0} with T1 = o = 10, T2 = L = 50, tr - ts = -600.
  CHECK(late->predicted_wait_s == Approx(660e-9));
  CHECK_FALSE(find(waits, WaitKind::LateReceiver, 0));  // 8 bytes: eager
}

TEST_CASE("a rendezvous send waits for a late receiver", "[waits]") {
  // 64 KiB from rank 0 at 100 ns; rank 1 posts its receive at 900 ns; the send returns at 1500.
  RankTrace r0 = rank(0, 2, {ev(Op::Init, -1, 0, 10), ev(Op::Send, 1, 100, 1500, 65536)});
  RankTrace r1 = rank(1, 2, {ev(Op::Init, -1, 0, 10), ev(Op::Recv, 0, 900, 1600, 65536)});
  const std::vector<const RankTrace*> ranks{&r0, &r1};
  const Timeline tl(ranks);
  LogGPSParams p;
  p.L = 50e-9, p.o = 10e-9, p.S = 16384;
  WaitOptions opt;
  opt.loggps = p;
  opt.rendezvous_bytes = 16384;
  const auto waits = measure_waits(ranks, match_messages(ranks), tl, opt);
  const WaitSite* late = find(waits, WaitKind::LateReceiver, 0);
  REQUIRE(late);
  CHECK(late->wait_s == Approx(800e-9));
  // LogGPS: max{0, (tr - ts) - (o + L)} = 800 - 60 = 740 ns.
  CHECK(late->predicted_wait_s == Approx(740e-9));
  // The receive was posted after the send began: no late sender.
  CHECK_FALSE(find(waits, WaitKind::LateSender, 1));
}

TEST_CASE("a collective waits for the last member to arrive", "[waits]") {
  RankTrace r0 = rank(0, 2, {ev(Op::Init, -1, 0, 10), ev(Op::Barrier, -1, 100, 500)});
  RankTrace r1 = rank(1, 2, {ev(Op::Init, -1, 0, 10), ev(Op::Barrier, -1, 450, 510)});
  const std::vector<const RankTrace*> ranks{&r0, &r1};
  const Timeline tl(ranks);
  const auto waits = measure_waits(ranks, match_messages(ranks), tl, WaitOptions{});
  const WaitSite* w = find(waits, WaitKind::Collective, 0);
  REQUIRE(w);
  CHECK(w->wait_s == Approx(350e-9));  // arrived at 100, the last at 450
  CHECK(std::isnan(w->predicted_wait_s));  // no parameters
  CHECK_FALSE(find(waits, WaitKind::Collective, 1));  // the last to arrive waits for nobody
}

TEST_CASE("steps are aligned by the sender's step, and MPM follows the critical path", "[alignment]") {
  // A pipeline 0 -> 1 -> 2; each rank computes 100 ns before it sends. Rank 0: Init, compute,
  // Send. Rank 1: Recv from 0, compute, Send to 2. Rank 2: Recv from 1, compute, Finalize.
  RankTrace r0 = rank(0, 3, {ev(Op::Init, -1, 0, 10), ev(Op::Send, 1, 110, 120), ev(Op::Finalize, -1, 120, 121)});
  RankTrace r1 = rank(1, 3, {ev(Op::Init, -1, 0, 10), ev(Op::Recv, 0, 10, 130), ev(Op::Send, 2, 230, 240),
                             ev(Op::Finalize, -1, 240, 241)});
  RankTrace r2 = rank(2, 3, {ev(Op::Init, -1, 0, 10), ev(Op::Recv, 1, 10, 250), ev(Op::Finalize, -1, 350, 351)});
  const std::vector<const RankTrace*> ranks{&r0, &r1, &r2};
  const Timeline tl(ranks);
  const AlignedSteps a = align_steps(ranks, match_messages(ranks), tl);
  // Rank 1's step 1 ends with its receive; its send opens step 2. Rank 2's first step holds the
  // receive, its computation after it a second step.
  REQUIRE(a.input[1].size() == 2);
  REQUIRE(a.input[2].size() == 2);
  REQUIRE(a.input[1][0].incoming.size() == 1);
  CHECK(a.input[1][0].incoming[0] == Partner{0, 0});  // rank 0 sent in its step 1
  REQUIRE(a.input[2][0].incoming.size() == 1);
  CHECK(a.input[2][0].incoming[0] == Partner{1, 1});  // rank 1 sent in its step 2
  CHECK(a.actual_s == Approx(340e-9));                // rank 2's Finalize at 350, zero at 10
  // With g = L = 0 MPM is the computation on the critical path: rank 0's 100 ns (110 - 10),
  // rank 1's 100 ns before its send, rank 2's 100 ns after its receive = 300 ns.
  BspParams p;
  const auto pred = mpm(a.input, p);
  CHECK(pred.psi == Approx(300e-9));
}
