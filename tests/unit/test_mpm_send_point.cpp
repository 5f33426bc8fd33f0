// Send points from recorded traces (1 tick = 1 ns): step alignment gives every partner the
// computation of its sender's step before the message left (Partner::w_send) and every step its
// first send's (StepRecord::w_send), and MPM uses them (model/cost/bspwb.hpp).
#include <catch2/catch.hpp>

#include "tests/unit/trace_builders.hpp"

#include "model/cost/bspwb.hpp"
#include "model/trace/step_alignment.hpp"

using namespace mstep;
using namespace mstep::model;

namespace {

using test::ev;
using test::rank;

AlignedSteps align(const std::vector<const RankTrace*>& ranks) {
  return align_steps(ranks, match_messages(ranks), Timeline(ranks));
}

}  // namespace

TEST_CASE("send points: each message leaves after the computation before its send", "[alignment][send-point]") {
  // Rank 0: computes 100, sends to 1, computes 40, sends to 2, computes 30, sends to 1 again,
  // computes 20, receives from 1. Rank 1 receives both messages, computes 15 and answers. Rank 2
  // receives and computes 50.
  RankTrace r0 = rank(0, 3, {ev(Op::Init, -1, 0, 10), ev(Op::Send, 1, 110, 120), ev(Op::Send, 2, 160, 170),
                             ev(Op::Send, 1, 200, 210), ev(Op::Recv, 1, 230, 300), ev(Op::Finalize, -1, 300, 301)});
  RankTrace r1 = rank(1, 3, {ev(Op::Init, -1, 0, 10), ev(Op::Recv, 0, 10, 130), ev(Op::Recv, 0, 130, 215),
                             ev(Op::Send, 0, 230, 240), ev(Op::Finalize, -1, 240, 241)});
  RankTrace r2 = rank(2, 3, {ev(Op::Init, -1, 0, 10), ev(Op::Recv, 0, 10, 175), ev(Op::Finalize, -1, 225, 226)});
  const AlignedSteps a = align({&r0, &r1, &r2});
  REQUIRE(a.input[0].size() == 2);
  REQUIRE(a.input[1].size() == 2);
  REQUIRE(a.input[2].size() == 2);

  // Rank 0's step 1: w = 100 + 40 + 30 + 20 = 190 ns, first send after 100.
  CHECK(a.input[0][0].w == Approx(190e-9));
  CHECK(a.input[0][0].w_send == Approx(100e-9));
  // Rank 1's step 1 holds both receives from rank 0's step 1: the later send point, 170 ns.
  REQUIRE(a.input[1][0].incoming.size() == 1);
  CHECK(a.input[1][0].incoming[0] == Partner{0, 0});
  CHECK(a.input[1][0].incoming[0].w_send == Approx(170e-9));
  // Rank 2's message left after 100 + 40 = 140 ns.
  REQUIRE(a.input[2][0].incoming.size() == 1);
  CHECK(a.input[2][0].incoming[0] == Partner{0, 0});
  CHECK(a.input[2][0].incoming[0].w_send == Approx(140e-9));
  // Rank 1's answer opens its step 2 after 15 ns of computation, which is all of that step's.
  CHECK(a.input[1][1].w == Approx(15e-9));
  CHECK(a.input[1][1].w_send == Approx(15e-9));
  REQUIRE(a.input[0][0].incoming.size() == 1);
  CHECK(a.input[0][0].incoming[0] == Partner{1, 1});
  CHECK(a.input[0][0].incoming[0].w_send == Approx(15e-9));
  // A step that sends nothing: w_send is all of w.
  CHECK(a.input[2][1].w == Approx(50e-9));
  CHECK(a.input[2][1].w_send == Approx(50e-9));

  // MPM with g = L = 0 (computation only):
  //   Phi(1,1) = max(0, 0 + 170) = 170;  Phi(1,2) = max(0, 0 + 140) = 140
  //   Phi(1,0) = max(0 + 190, Phi(1,1) + 15 = 185) = 190
  //   Phi(2,0) = 190;  Phi(2,1) = 170 + 15 = 185;  Phi(2,2) = 140 + 50 = 190;  Psi = 190 ns.
  // Charging whole steps: Phi(1,1) = Phi(1,2) = 190, Phi(1,0) = max(190, 190 + 15) = 205,
  // Phi(2,2) = 190 + 50 = 240 = Psi.
  const MpmPrediction m = mpm(a.input, BspParams{});
  CHECK_THAT(m.phi[0], Catch::Matchers::Approx(std::vector<double>{190e-9, 190e-9}));
  CHECK_THAT(m.phi[1], Catch::Matchers::Approx(std::vector<double>{170e-9, 185e-9}));
  CHECK_THAT(m.phi[2], Catch::Matchers::Approx(std::vector<double>{140e-9, 190e-9}));
  CHECK(m.psi == Approx(190e-9));
  std::vector<RankSteps> whole = a.input;
  for (RankSteps& r : whole)
    for (model::StepRecord& s : r) {
      s.w_send = -1;
      for (Partner& p : s.incoming) p.w_send = -1;
    }
  CHECK(mpm(whole, BspParams{}).psi == Approx(240e-9));
}

TEST_CASE("send points: a collective sends after all of its step's computation", "[alignment][send-point]") {
  // Rank 0 computes 10, sends to 1, computes 30 and enters a barrier. Rank 1 receives, computes
  // 15 and enters the barrier. Rank 1 hears rank 0's step 1 twice: the message left after 10 ns,
  // the barrier after 40.
  RankTrace r0 = rank(0, 2, {ev(Op::Init, -1, 0, 10), ev(Op::Send, 1, 20, 30), ev(Op::Barrier, -1, 60, 100),
                             ev(Op::Finalize, -1, 100, 101)});
  RankTrace r1 = rank(1, 2, {ev(Op::Init, -1, 0, 10), ev(Op::Recv, 0, 10, 40), ev(Op::Barrier, -1, 55, 100),
                             ev(Op::Finalize, -1, 100, 101)});
  const AlignedSteps a = align({&r0, &r1});
  REQUIRE(a.input[0].size() == 2);
  REQUIRE(a.input[1].size() == 3);
  CHECK(a.input[0][0].w == Approx(40e-9));
  CHECK(a.input[0][0].w_send == Approx(10e-9));  // the point-to-point send comes first
  REQUIRE(a.input[1][0].incoming.size() == 1);
  CHECK(a.input[1][0].incoming[0] == Partner{0, 0});
  CHECK(a.input[1][0].incoming[0].w_send == Approx(10e-9));
  // The barrier: everybody hears everybody, as one partner group of both members' steps (rank 0's
  // step 1 left after all of its 40 ns, rank 1's step 2 after its 15).
  CHECK(a.input[1][1].incoming.empty());
  CHECK(a.input[0][0].incoming.empty());
  REQUIRE(a.groups.size() == 1);
  REQUIRE(a.groups[0].members.size() == 2);
  CHECK(a.groups[0].members[0] == Partner{0, 0});
  CHECK(a.groups[0].members[0].w_send == Approx(40e-9));
  CHECK(a.groups[0].members[1] == Partner{1, 1});
  CHECK(a.groups[0].members[1].w_send == Approx(15e-9));
  CHECK(a.input[0][0].groups == std::vector<std::uint32_t>{0});
  CHECK(a.input[1][1].groups == std::vector<std::uint32_t>{0});

  // g = L = 0: Phi(1,1) = max(0, 0 + 10) = 10; Phi(1,0) = max(40, Phi(1,1) + 15 = 25) = 40;
  // Phi(2,1) = max(10 + 15, 0 + 40) = 40 (the barrier waits for rank 0's computation).
  const MpmPrediction m = mpm(a.input, BspParams{}, a.groups);
  CHECK_THAT(m.phi[1], Catch::Matchers::Approx(std::vector<double>{10e-9, 40e-9, 40e-9}));
  CHECK(m.psi == Approx(40e-9));
}
