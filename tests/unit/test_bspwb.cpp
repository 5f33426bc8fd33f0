// BSPWB and MPM (MODELS.md section 2) against values worked out by hand: the FFT of Roda et al.
// (formulas 15-17), an imbalance that moves between ranks (MPM < BSPWB), whole-world partner
// sets (MPM == BSPWB), ghost steps aligned by the sender's step index, and send points (messages
// that leave before their sender's step has finished computing).
#include <catch2/catch.hpp>

#include <random>
#include <stdexcept>
#include <vector>

#include "model/cost/bspwb.hpp"
#include "model/cost/bspwb_stream.hpp"
#include "model/trace/step_alignment.hpp"

using namespace mstep::model;

namespace {

StepRecord step(double w, std::uint64_t in, std::uint64_t out, std::vector<Partner> incoming = {}) {
  StepRecord s;
  s.w = w, s.in_bytes = in, s.out_bytes = out, s.incoming = std::move(incoming);
  return s;
}

// A step whose first send comes after `w_send` of its `w` seconds of computation.
StepRecord sends_at(double w_send, double w, std::uint64_t in, std::uint64_t out,
                    std::vector<Partner> incoming = {}) {
  StepRecord r = step(w, in, out, std::move(incoming));
  r.w_send = w_send;
  return r;
}

// The same steps with every send point set to all of w: the paper's compute-then-send steps.
std::vector<RankSteps> paper_send_points(std::vector<RankSteps> ranks) {
  for (RankSteps& r : ranks) {
    for (StepRecord& s : r) {
      s.w_send = s.w;
      for (Partner& p : s.incoming) p.w_send = -1;
    }
  }
  return ranks;
}

// The FFT of Roda et al. section 4.1 on p ranks for N complex numbers (16 bytes each), with
// per-element constants D (division), F (sequential FFT) and R (combination). Step s = 1..log p:
// ranks whose low s-1 bits are 0 are active; an active rank with bit s-1 set sends its
// N 2^(s-1)/p elements to rank XOR 2^(s-1) and is done (a PingPong, h = that many elements).
// Step 1 computes D N/p + F N/p log2(N/p), step s >= 2 combines R N 2^(s-2)/p, and rank 0 ends
// with a step that only combines R N/2 (formula 17).
std::vector<RankSteps> fft_steps(unsigned p, unsigned log_p, double N, double D, double F,
                                 double R, unsigned log_n_over_p) {
  const double n_over_p = N / p;
  std::vector<RankSteps> ranks(p);
  for (unsigned r = 0; r < p; ++r) {
    for (unsigned s = 1; s <= log_p; ++s) {
      const unsigned bit = 1u << (s - 1);
      if ((r & (bit - 1)) != 0) break;  // inactive from here on: ghost steps
      const double w = s == 1 ? D * n_over_p + F * n_over_p * log_n_over_p
                              : R * N * (1u << (s - 2)) / p;
      const auto bytes = static_cast<std::uint64_t>(16 * N * bit / p);
      if (r & bit) {
        ranks[r].push_back(step(w, 0, bytes));
        break;
      }
      ranks[r].push_back(step(w, bytes, 0, {{r ^ bit}}));  // sender's step: the same index
    }
  }
  ranks[0].push_back(step(R * N / 2, 0, 0));
  return ranks;
}

}  // namespace

TEST_CASE("h-relation: sum or max of in and out", "[bspwb]") {
  const StepRecord s = step(0, 3, 5);
  CHECK(h_relation(s, HCombine::Sum) == 8);
  CHECK(h_relation(s, HCombine::Max) == 5);
}

TEST_CASE("FFT of Roda et al.: formulas 15-17 on 4 ranks", "[bspwb][mpm][fft]") {
  // p = 4, N = 4096 complex (16 B), N/p = 1024, log2(N/p) = 10.
  // D = 1e-6, F = 1e-7, R = 2e-6 s per element; g = 1e-9 s/B, L = 1e-5 s.
  // Step 1 (all ranks): w = D*1024 + F*1024*10 = 1.024e-3 + 1.024e-3 = 2.048e-3;
  //   odd ranks send 1024 complex = 16384 B to rank XOR 1.
  // Step 2 (ranks 0, 2): w = R*N*2^0/p = 2e-6*1024 = 2.048e-3; rank 2 sends 2048 complex =
  //   32768 B to rank 0.
  // Step 3 (rank 0 only): w = R*N/2 = 2e-6*2048 = 4.096e-3, no communication.
  const std::vector<RankSteps> ranks = {
      {step(2.048e-3, 16384, 0, {{1}}), step(2.048e-3, 32768, 0, {{2}}), step(4.096e-3, 0, 0)},
      {step(2.048e-3, 0, 16384)},
      {step(2.048e-3, 16384, 0, {{3}}), step(2.048e-3, 0, 32768)},
      {step(2.048e-3, 0, 16384)},
  };
  // The builder used for 8 ranks below produces this list for 4 (w up to rounding).
  const std::vector<RankSteps> built = fft_steps(4, 2, 4096, 1e-6, 1e-7, 2e-6, 10);
  REQUIRE(built.size() == ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    REQUIRE(built[r].size() == ranks[r].size());
    for (std::size_t s = 0; s < ranks[r].size(); ++s) {
      CHECK(built[r][s].w == Approx(ranks[r][s].w));
      CHECK(built[r][s].in_bytes == ranks[r][s].in_bytes);
      CHECK(built[r][s].out_bytes == ranks[r][s].out_bytes);
      CHECK(built[r][s].incoming == ranks[r][s].incoming);
    }
  }

  // (15) T1 = D N/p + F N/p log(N/p) + L + g h = 2.048e-3 + 1e-5 + 16384e-9 = 2.074384e-3
  // (16) T2 = T1 + R N/p + L + g h = 2.074384e-3 + 2.048e-3 + 1e-5 + 32768e-9 = 4.165152e-3
  // (17) T3 = T2 + R N/2 = 4.165152e-3 + 4.096e-3 = 8.261152e-3  (the paper: no L)
  //      MODELS.md charges L to every step: 8.261152e-3 + 1e-5 = 8.271152e-3
  BspParams paper{1e-9, 1e-5, HCombine::Sum, /*latency_on_empty_steps=*/false};
  BspParams models_md{1e-9, 1e-5};

  SECTION("BSPWB") {
    const BspwbPrediction b = bspwb(ranks, paper);
    REQUIRE(b.T.size() == 3);
    CHECK(b.T[0] == Approx(2.074384e-3));
    CHECK(b.T[1] == Approx(4.165152e-3));
    CHECK(b.T[2] == Approx(8.261152e-3));
    CHECK(b.total == Approx(8.261152e-3));
    CHECK(bspwb(ranks, models_md).total == Approx(8.271152e-3));
  }
  SECTION("MPM: rank 0 carries the maximum, so Phi(s,0) = T(s) (the paper's T_s = Phi_s,NAME)") {
    const MpmPrediction m = mpm(ranks, paper);
    REQUIRE(m.phi.size() == 4);
    REQUIRE(m.phi[0].size() == 3);
    CHECK(m.phi[0][0] == Approx(2.074384e-3));
    CHECK(m.phi[0][1] == Approx(4.165152e-3));
    CHECK(m.phi[0][2] == Approx(8.261152e-3));
    // Ranks 1 and 3 only send in step 1: Gamma = {self}, w = 2.048e-3, h = 16384 -> T1.
    CHECK_THAT(m.phi[1], Catch::Matchers::Approx(std::vector<double>{2.074384e-3}));
    CHECK_THAT(m.phi[3], Catch::Matchers::Approx(std::vector<double>{2.074384e-3}));
    // Rank 2: step 1 receives from 3 -> T1; step 2 sends 32768 B: T1 + 2.048e-3 + 1e-5 +
    // 32768e-9 = T2.
    REQUIRE(m.phi[2].size() == 2);
    CHECK(m.phi[2][0] == Approx(2.074384e-3));
    CHECK(m.phi[2][1] == Approx(4.165152e-3));
    CHECK(m.psi == Approx(8.261152e-3));
    CHECK(mpm(ranks, models_md).psi == Approx(8.271152e-3));
  }
}

TEST_CASE("FFT of Roda et al.: formulas 15-17 on 8 ranks, built from the algorithm",
          "[bspwb][mpm][fft]") {
  // p = 8, N = 4096, N/p = 512, log2(N/p) = 9; D, F, R, g, L as above.
  // (15) T1 = 1e-6*512 + 1e-7*512*9 + 1e-5 + 1e-9*512*16
  //         = 0.512e-3 + 0.4608e-3 + 0.01e-3 + 0.008192e-3 = 0.990992e-3
  // (16) s=2: T2 = T1 + 2e-6*512 + 1e-5 + 1e-9*1024*16
  //         = 0.990992e-3 + 1.024e-3 + 0.01e-3 + 0.016384e-3 = 2.041376e-3
  //      s=3: T3 = T2 + 2e-6*1024 + 1e-5 + 1e-9*2048*16
  //         = 2.041376e-3 + 2.048e-3 + 0.01e-3 + 0.032768e-3 = 4.132144e-3
  // (17) T4 = T3 + 2e-6*4096/2 = 4.132144e-3 + 4.096e-3 = 8.228144e-3
  const std::vector<RankSteps> ranks = fft_steps(8, 3, 4096, 1e-6, 1e-7, 2e-6, 9);
  // Ghost steps: rank 0 has 4 steps, rank 4 has 3, ranks 2 and 6 have 2, odd ranks 1.
  CHECK(ranks[0].size() == 4);
  CHECK(ranks[4].size() == 3);
  CHECK(ranks[6].size() == 2);
  CHECK(ranks[5].size() == 1);
  const BspParams paper{1e-9, 1e-5, HCombine::Sum, false};
  const BspwbPrediction b = bspwb(ranks, paper);
  REQUIRE(b.T.size() == 4);
  CHECK(b.T[0] == Approx(0.990992e-3));
  CHECK(b.T[1] == Approx(2.041376e-3));
  CHECK(b.T[2] == Approx(4.132144e-3));
  CHECK(b.T[3] == Approx(8.228144e-3));
  const MpmPrediction m = mpm(ranks, paper);
  CHECK(m.phi[0][0] == Approx(0.990992e-3));
  CHECK(m.phi[0][1] == Approx(2.041376e-3));
  CHECK(m.phi[0][2] == Approx(4.132144e-3));
  CHECK(m.phi[0][3] == Approx(8.228144e-3));
  CHECK(m.psi == Approx(8.228144e-3));
}

TEST_CASE("MPM beats BSPWB when the heavy rank changes from step to step", "[bspwb][mpm]") {
  // Four ranks, two steps, g = 0.25 s/B, L = 1 s. Step 1: exchanges 0<->1 and 2<->3; step 2:
  // 0<->2 and 1<->3; every exchange moves 2 B each way, so h = 2 + 2 = 4 and g h + L = 2.
  // Rank 0 computes 4 s in step 1, rank 3 computes 5 s in step 2, everything else 1 s.
  const std::vector<RankSteps> ranks = {
      {step(4, 2, 2, {{1}}), step(1, 2, 2, {{2}})},
      {step(1, 2, 2, {{0}}), step(1, 2, 2, {{3}})},
      {step(1, 2, 2, {{3}}), step(1, 2, 2, {{0}})},
      {step(1, 2, 2, {{2}}), step(5, 2, 2, {{1}})},
  };
  const BspParams params{0.25, 1};

  // BSPWB: T1 = 4 + 2 = 6; T2 = 6 + 5 + 2 = 13.
  const BspwbPrediction b = bspwb(ranks, params);
  CHECK(b.T == std::vector<double>{6, 13});

  // MPM step 1: Phi(1,0) = Phi(1,1) = max(4, 1) + 2 = 6; Phi(1,2) = Phi(1,3) = 1 + 2 = 3.
  // Step 2: Phi(2,0) = max(6+1, Phi(1,2)+w(2,2) = 3+1) + 2 = 9
  //         Phi(2,1) = max(6+1, Phi(1,3)+w(2,3) = 3+5) + 2 = 10
  //         Phi(2,2) = max(3+1, 6+1) + 2 = 9
  //         Phi(2,3) = max(3+5, 6+1) + 2 = 10;  Psi = 10 < 13.
  const MpmPrediction m = mpm(ranks, params);
  CHECK(m.phi[0] == std::vector<double>{6, 9});
  CHECK(m.phi[1] == std::vector<double>{6, 10});
  CHECK(m.phi[2] == std::vector<double>{3, 9});
  CHECK(m.phi[3] == std::vector<double>{3, 10});
  CHECK(m.psi == 10);
  CHECK(m.psi < b.total);

  SECTION("@ = max: h = max(2, 2) = 2, g h + L = 1.5") {
    // BSPWB: T1 = 4 + 1.5 = 5.5; T2 = 5.5 + 5 + 1.5 = 12.
    // MPM: Phi(1,0) = 5.5, Phi(1,2) = 2.5; Phi(2,1) = max(5.5+1, 2.5+5) + 1.5 = 9 = Psi.
    const BspParams max_params{0.25, 1, HCombine::Max};
    CHECK(bspwb(ranks, max_params).total == 12);
    const MpmPrediction mm = mpm(ranks, max_params);
    CHECK(mm.phi[0] == std::vector<double>{5.5, 8});  // max(5.5+1, 2.5+1) + 1.5
    CHECK(mm.psi == 9);
  }
}

TEST_CASE("MPM equals BSPWB when every Gamma is the whole world", "[bspwb][mpm]") {
  // g = 0.5 s/B, L = 2 s. h (sum) per step and rank:
  //   step 1: 4+0=4, 2+2=4, 0+10=10  -> max 10; max w = 3
  //   step 2: 0+6=6, 3+3=6, 1+0=1    -> max 6;  max w = 5
  //   step 3: 2+2=4, 0+1=1, 5+0=5    -> max 5;  max w = 4
  // T1 = 3 + 0.5*10 + 2 = 10; T2 = 10 + 5 + 3 + 2 = 20; T3 = 20 + 4 + 2.5 + 2 = 28.5.
  const std::vector<Partner> not0{{1}, {2}}, not1{{0}, {2}}, not2{{0}, {1}};
  const std::vector<RankSteps> ranks = {
      {step(1, 4, 0, not0), step(5, 0, 6, not0), step(2, 2, 2, not0)},
      {step(3, 2, 2, not1), step(1, 3, 3, not1), step(1, 0, 1, not1)},
      {step(2, 0, 10, not2), step(2, 1, 0, not2), step(4, 5, 0, not2)},
  };
  const BspParams params{0.5, 2};
  const std::vector<double> expected{10, 20, 28.5};
  CHECK(bspwb(ranks, params).T == expected);
  const MpmPrediction m = mpm(ranks, params);
  for (const std::vector<double>& phi : m.phi) CHECK(phi == expected);
  CHECK(m.psi == 28.5);
}

TEST_CASE("MPM aligns ghost steps by the sender's step index", "[mpm]") {
  // Rank 1 computes 2 s in a step without communication, then 3 s and sends 10 B to rank 0,
  // whose only step receives them. g = 0.1 s/B, L = 1 s.
  //   Phi(1,1) = 2 + 0 + 1 = 3;  Phi(2,1) = 3 + 3 + 0.1*10 + 1 = 8
  //   Phi(1,0) = max(0 + 1, Phi(1,1) + w(2,1) = 3 + 3) + 0.1*max(10, 10) + 1 = 8
  const BspParams params{0.1, 1};
  std::vector<RankSteps> ranks = {
      {step(1, 10, 0, {{1, 1}})},
      {step(2, 0, 0), step(3, 0, 10)},
  };
  const MpmPrediction m = mpm(ranks, params);
  CHECK_THAT(m.phi[0], Catch::Matchers::Approx(std::vector<double>{8}));
  CHECK_THAT(m.phi[1], Catch::Matchers::Approx(std::vector<double>{3, 8}));
  CHECK(m.psi == Approx(8));

  // BSPWB aligns by index: T1 = max(1, 2) + max(0.1*10 + 1, 0 + 1) = 4;
  // T2 = 4 + max(0 (ghost), 3) + max(0 + 1 (ghost), 0.1*10 + 1) = 9.
  CHECK_THAT(bspwb(ranks, params).T, Catch::Matchers::Approx(std::vector<double>{4, 9}));

  // Without the step index the partner defaults to rank 1's step 0 (w = 2, h = 0):
  //   Phi(1,0) = max(1, 2) + 0.1*max(10, 0) + 1 = 4.
  ranks[0][0].incoming = {{1}};
  CHECK(mpm(ranks, params).phi[0][0] == Approx(4));
}

TEST_CASE("MPM: a pivot row leaves before its owner eliminates (gauss.c on 2 ranks)",
          "[mpm][send-point]") {
  // Rows 0..3 of a Gaussian elimination, owner k % 2. The owner of row k sends it (4 B) and then
  // eliminates (E = 10 s); the other rank receives it and eliminates. A rank that received row k
  // eliminates, then sends row k+1, so the tracker's steps are [E, send, E, receive]:
  //   rank 0: s1 [send r0, E, recv r1]      w 10, w_send 0,  in 4, out 4, partner (1, s2)
  //           s2 [E, send r2, E, recv r3]   w 20, w_send 10, in 4, out 4, partner (1, s3)
  //           s3 [E]                        w 10
  //   rank 1: s1 [recv r0]                  w 0,             in 4,        partner (0, s1)
  //           s2 [E, send r1, E, recv r2]   w 20, w_send 10, in 4, out 4, partner (0, s2)
  //           s3 [E, send r3, E]            w 20, w_send 10,       out 4
  // g = 0.125 s/B, L = 1 s, h = in + out: a step of h 8 costs g*8 + L = 2 s, of h 4 1.5 s; the
  // paper's L-free compute-only last step (latency_on_empty_steps = false).
  const std::vector<RankSteps> ranks = {
      {sends_at(0, 10, 4, 4, {{1, 1}}), sends_at(10, 20, 4, 4, {{1, 2}}), step(10, 0, 0)},
      {step(0, 4, 0, {{0, 0}}), sends_at(10, 20, 4, 4, {{0, 1}}), sends_at(10, 20, 0, 4)},
  };
  const BspParams params{0.125, 1, HCombine::Sum, false};

  // The overlapped schedule, each message taking 2 s: r0 leaves rank 0 at 0 and arrives at 2;
  // rank 1 eliminates to 12, sends r1 (arrives 14) and eliminates to 22. Rank 0 eliminated to
  // 10, receives r1 at 14, eliminates to 24, sends r2 (arrives 26), eliminates to 34. Rank 1
  // receives r2 at 26, eliminates to 36, sends r3 (arrives 38), eliminates to 46. Rank 0
  // receives r3 at 38 and eliminates to 48: the run takes 48 s, (E + 2) per row after the first.
  // New MPM, Phi(s,i) = max(Phi(s-1,i) + w(s,i), Phi(t-1,j) + w_send(t,j)) + g*H + L:
  //   Phi(1,1) = max(0 + 0, 0 + 0) + 2 = 2
  //   Phi(1,0) = max(0 + 10, Phi(1,1) + 10 = 12) + 2 = 14
  //   Phi(2,1) = max(2 + 20, Phi(1,0) + 10 = 24) + 2 = 26
  //   Phi(2,0) = max(14 + 20, Phi(2,1) + 10 = 36) + 2 = 38
  //   Phi(3,1) = 26 + 20 + (0.125*4 + 1) = 47.5   (its own send of r3 still costs g*h + L)
  //   Phi(3,0) = 38 + 10 + 0 = 48 = Psi: the schedule's 48 s.
  const MpmPrediction m = mpm(ranks, params);
  CHECK(m.phi[0] == std::vector<double>{14, 38, 48});
  CHECK(m.phi[1] == std::vector<double>{2, 26, 47.5});
  CHECK(m.psi == 48);

  // The paper's formula charges each sender's whole step before its message leaves, so every
  // row waits for its sender's elimination of the previous row too, 2E + 2 per row:
  //   Phi(1,1) = max(0, 0 + w(1,0) = 10) + 2 = 12
  //   Phi(1,0) = max(10, Phi(1,1) + w(2,1) = 32) + 2 = 34
  //   Phi(2,1) = max(12 + 20, Phi(1,0) + w(2,0) = 54) + 2 = 56
  //   Phi(2,0) = max(34 + 20, Phi(2,1) + w(3,1) = 76) + 2 = 78
  //   Phi(3,1) = 56 + 20 + 1.5 = 77.5;  Phi(3,0) = 78 + 10 = 88 = Psi (83% too long)
  const MpmPrediction paper = mpm(paper_send_points(ranks), params);
  CHECK(paper.phi[0] == std::vector<double>{34, 78, 88});
  CHECK(paper.phi[1] == std::vector<double>{12, 56, 77.5});
  CHECK(paper.psi == 88);

  // BSPWB has no send points: the same T with or without them. T1 = max(10, 0) + max(2, 1.5) =
  // 12; T2 = 12 + 20 + 2 = 34; T3 = 34 + max(10, 20) + max(0 + 1, 0.125*4 + 1) = 55.5 (a step
  // with traffic, so L is charged).
  CHECK(bspwb(ranks, params).T == std::vector<double>{12, 34, 55.5});
  CHECK(bspwb(ranks, params).T == bspwb(paper_send_points(ranks), params).T);
}

TEST_CASE("MPM: send points equal to w give the paper's formula 8 exactly", "[mpm][send-point]") {
  // The moving imbalance above, once with unset send points (-1), once with every step's
  // w_send = w, once with every partner's w_send = its sender's w: Phi must be identical, bit for
  // bit (Phi(1,0) = 6, Phi(2,1) = 10, ... as computed in that test).
  const std::vector<RankSteps> unset = {
      {step(4, 2, 2, {{1}}), step(1, 2, 2, {{2}})},
      {step(1, 2, 2, {{0}}), step(1, 2, 2, {{3}})},
      {step(1, 2, 2, {{3}}), step(1, 2, 2, {{0}})},
      {step(1, 2, 2, {{2}}), step(5, 2, 2, {{1}})},
  };
  std::vector<RankSteps> per_partner = unset;
  for (RankSteps& r : per_partner)
    for (std::size_t s = 0; s < r.size(); ++s)
      for (Partner& p : r[s].incoming) p.w_send = unset[p.rank][s].w;  // kSameStep: step s
  const BspParams params{0.25, 1};
  const MpmPrediction expected = mpm(unset, params);
  CHECK(expected.phi[1] == std::vector<double>{6, 10});
  CHECK(mpm(paper_send_points(unset), params).phi == expected.phi);
  CHECK(mpm(per_partner, params).phi == expected.phi);
  CHECK(mpm(per_partner, params).psi == expected.psi);
}

TEST_CASE("MPM: a ring whose ranks receive, send and then compute", "[mpm][send-point]") {
  // Three ranks pass a token around twice, 0 -> 1 -> 2 -> 0. Rank 0 computes 3 s, sends and
  // receives; ranks 1 and 2 receive, pass the token on at once and then compute 5 s. 1 B per
  // message, g = 0, L = 1: every step with traffic costs 1 s. Steps (tracker):
  //   rank 0: s1 [3, send, recv]        w 3, w_send 3, partner (2, s2)
  //           s2 [3, send, recv]        w 3, w_send 3, partner (2, s3)
  //   rank 1: s1 [recv]                 w 0,           partner (0, s1)
  //           s2 [send, 5, recv]        w 5, w_send 0, partner (0, s2)
  //           s3 [send, 5]              w 5, w_send 0
  //   rank 2: s1 [recv]                 w 0,           partner (1, s2)
  //           s2 [send, 5, recv]        w 5, w_send 0, partner (1, s3)
  //           s3 [send, 5]              w 5, w_send 0
  const std::vector<RankSteps> ranks = {
      {sends_at(3, 3, 1, 1, {{2, 1}}), sends_at(3, 3, 1, 1, {{2, 2}})},
      {step(0, 1, 0, {{0, 0}}), sends_at(0, 5, 1, 1, {{0, 1}}), sends_at(0, 5, 0, 1)},
      {step(0, 1, 0, {{1, 1}}), sends_at(0, 5, 1, 1, {{1, 2}}), sends_at(0, 5, 0, 1)},
  };
  const BspParams params{0, 1};

  // Schedule, 1 s per hop: rank 0 sends at 3; rank 1 gets the token at 4 and passes it on
  // (computes 4..9); rank 2 gets it at 5 (computes 5..10); rank 0 gets it at 6, computes to 9,
  // sends; rank 1 gets it at 10 (computes 10..15), rank 2 at 11 (11..16), rank 0 at 12.
  //   Phi(1,1) = max(0, 0 + w_send(1,0) = 3) + 1 = 4
  //   Phi(1,2) = max(0, Phi(1,1) + 0) + 1 = 5
  //   Phi(1,0) = max(0 + 3, Phi(1,2) + 0) + 1 = 6
  //   Phi(2,1) = max(4 + 5, Phi(1,0) + 3 = 9) + 1 = 10
  //   Phi(2,2) = max(5 + 5, Phi(2,1) + 0) + 1 = 11
  //   Phi(2,0) = max(6 + 3, Phi(2,2) + 0) + 1 = 12
  //   Phi(3,1) = 10 + 5 + 1 = 16;  Phi(3,2) = 11 + 5 + 1 = 17 = Psi (the schedule's 16 plus the
  //   L that MODELS.md charges to a last step that sends).
  const MpmPrediction m = mpm(ranks, params);
  CHECK(m.phi[0] == std::vector<double>{6, 12});
  CHECK(m.phi[1] == std::vector<double>{4, 10, 16});
  CHECK(m.phi[2] == std::vector<double>{5, 11, 17});
  CHECK(m.psi == 17);

  // The paper's formula makes the token wait for each rank's computation after it passed it on:
  //   Phi(1,1) = 4;  Phi(1,2) = max(0, 4 + 5) + 1 = 10;  Phi(1,0) = max(3, 10 + 5) + 1 = 16
  //   Phi(2,1) = max(9, 16 + 3) + 1 = 20;  Phi(2,2) = max(15, 20 + 5) + 1 = 26
  //   Phi(2,0) = max(19, 26 + 5) + 1 = 32;  Phi(3,1) = 26;  Phi(3,2) = 32;  Psi = 32.
  const MpmPrediction paper = mpm(paper_send_points(ranks), params);
  CHECK(paper.phi[0] == std::vector<double>{16, 32});
  CHECK(paper.phi[1] == std::vector<double>{4, 20, 26});
  CHECK(paper.phi[2] == std::vector<double>{10, 26, 32});
  CHECK(paper.psi == 32);
}

TEST_CASE("MPM: a partner's own send point overrides its step's first send", "[mpm][send-point]") {
  // Rank 0's only step: send to 1, compute 4 s, send to 2, compute 6 s (w 10, first send at 0).
  // Ranks 1 and 2 compute 1 s and receive. g = 0, L = 1.
  const BspParams params{0, 1};
  std::vector<RankSteps> ranks = {
      {sends_at(0, 10, 0, 2)},
      {step(1, 1, 0, {{0, 0, 0.0}})},
      {step(1, 1, 0, {{0, 0, 4.0}})},
  };
  // Phi(1,1) = max(1, 0 + 0) + 1 = 2;  Phi(1,2) = max(1, 0 + 4) + 1 = 5;  Phi(1,0) = 10 + 1.
  MpmPrediction m = mpm(ranks, params);
  CHECK(m.phi[1][0] == 2);
  CHECK(m.phi[2][0] == 5);
  CHECK(m.phi[0][0] == 11);
  // Without its own send point the partner falls back to the step's: Phi(1,2) = max(1, 0) + 1.
  ranks[2][0].incoming[0].w_send = -1;
  CHECK(mpm(ranks, params).phi[2][0] == 2);
  // A send point is never later than the end of the sender's computation: 99 counts as 10.
  ranks[2][0].incoming[0].w_send = 99;
  CHECK(mpm(ranks, params).phi[2][0] == 11);
  ranks[0][0].w_send = 99;
  ranks[2][0].incoming[0].w_send = -1;
  CHECK(mpm(ranks, params).phi[2][0] == 11);
}

TEST_CASE("MPM rejects partners that do not exist or depend on each other", "[mpm]") {
  const BspParams params{1, 1};
  SECTION("unknown rank") {
    const std::vector<RankSteps> ranks = {{step(1, 1, 0, {{5}})}};
    CHECK_THROWS_AS(mpm(ranks, params), std::invalid_argument);
  }
  SECTION("unknown step") {
    const std::vector<RankSteps> ranks = {{step(1, 1, 0, {{1, 3}})}, {step(1, 0, 1)}};
    CHECK_THROWS_AS(mpm(ranks, params), std::invalid_argument);
  }
  SECTION("a partner may name a later step index than the receiving one; no cycle, no error") {
    // (0,1) names rank 1's step 1, so it needs Phi(1,0); (1,0) names rank 0's step 1, so it
    // needs Phi(0,0), which needs nothing: no cycle.
    const std::vector<RankSteps> ranks = {
        {step(1, 0, 1), step(1, 1, 0, {{1, 1}})},
        {step(1, 1, 0, {{0, 1}}), step(1, 0, 1)},
    };
    CHECK_NOTHROW(mpm(ranks, params));
  }
  SECTION("cycle") {
    // (0,0) received what rank 1 sent in its step 1, so it needs Phi(1,0); (1,0) received what
    // rank 0 sent in its step 1, so it needs Phi(0,0): no execution can produce this.
    const std::vector<RankSteps> ranks = {
        {step(1, 1, 0, {{1, 1}}), step(1, 0, 1)},
        {step(1, 1, 0, {{0, 1}}), step(1, 0, 1)},
    };
    CHECK_THROWS_AS(mpm(ranks, params), std::invalid_argument);
  }
}

TEST_CASE("Prediction error is signed (formula 18)", "[bspwb]") {
  CHECK(error_pct(10, 9) == Approx(10));    // 100 * (10 - 9) / 10
  CHECK(error_pct(10, 13) == Approx(-30));  // 100 * (10 - 13) / 10
  CHECK(error_pct(8, 8) == 0);
}

TEST_CASE("No ranks or no steps predict zero", "[bspwb][mpm]") {
  const BspParams params{1, 1};
  CHECK(bspwb({}, params).total == 0);
  const std::vector<RankSteps> empty(3);
  CHECK(bspwb(empty, params).T.empty());
  CHECK(mpm(empty, params).psi == 0);
}

TEST_CASE("machine terms sit beside g*h + L: BSPWB per rank, MPM over the partners", "[bspwb][mpm][cold]") {
  // Step 1: rank 0 computes 10 and sends 100 B to rank 1 (a cold send: extra 5); rank 1 computes
  // 4 and receives it (a cold receive: extra 2); rank 2 computes 3 alone. g = 0.01, L = 1.
  const BspParams params{0.01, 1};
  std::vector<RankSteps> ranks = {{step(10, 0, 100)}, {step(4, 100, 0, {{0}})}, {step(3, 0, 0)}};
  ranks[0][0].extra = 5;
  ranks[1][0].extra = 2;
  // BSPWB: 10 + max(0.01 x 100 + 1 + 5, 1 + 1 + 2, 0 + 1 + 0) = 17 (12 without the terms).
  CHECK(bspwb(ranks, params).total == Approx(17));
  // MPM: Phi(1,0) = 10 + (1 + 5) + 1 = 17; Phi(1,1) = max(4, 10) + max(1 + 2, 1 + 5) + 1 = 17;
  // Phi(1,2) = 3 + 0 + 1 = 4: rank 2 hears from nobody and pays nothing.
  const MpmPrediction m = mpm(ranks, params);
  CHECK(m.phi[0][0] == Approx(17));
  CHECK(m.phi[1][0] == Approx(17));
  CHECK(m.phi[2][0] == Approx(4));
  CHECK(m.psi == Approx(17));
  SECTION("MPM equals BSPWB when every Gamma is the whole world, extras and all") {
    // Rank 0 moves more (g*h = 2 + 0), rank 1 pays more (1 + 5): the step costs max(2, 6) + 1.
    std::vector<RankSteps> both = {{step(3, 100, 100, {{1}})}, {step(2, 50, 50, {{0}})}};
    both[1][0].extra = 5;
    CHECK(bspwb(both, params).total == Approx(3 + 6 + 1));
    CHECK(mpm(both, params).psi == Approx(3 + 6 + 1));
  }
  SECTION("a step that only pays machine terms, with no latency on empty steps") {
    BspParams no_empty = params;
    no_empty.latency_on_empty_steps = false;
    std::vector<RankSteps> quiet = {{step(2, 0, 0)}, {step(1, 0, 0)}};
    quiet[1][0].extra = 3;
    CHECK(bspwb(quiet, no_empty).total == Approx(2 + 3));
  }
}

TEST_CASE("add_machine_terms charges each record's seconds to its step", "[cold]") {
  AlignedSteps aligned;
  aligned.input = {{step(1, 0, 0), step(1, 0, 0)}, {step(1, 0, 0)}};
  aligned.event_step = {{0, 0, 1, 1}, {0, 0}};
  const std::vector<MachineCharge> charges = {
      {0, 1, 2.0}, {0, 2, 3.0}, {0, 3, 4.0}, {1, 1, 5.0},
      {1, 7, 9.0},   // no such event: dropped
      {4, 0, 9.0}};  // no such rank: dropped
  add_machine_terms(aligned, charges);
  CHECK(aligned.input[0][0].extra == 2.0);
  CHECK(aligned.input[0][1].extra == 7.0);
  CHECK(aligned.input[1][0].extra == 5.0);
}

TEST_CASE("MPM: a partner group is the same as listing its members as partners of every member", "[mpm]") {
  // Three ranks end a step with a barrier-like collective (everybody hears everybody), then compute.
  // Step 0: w = 10, 30, 20 ns, sending after 5, 25 and 20 ns; h = 100, 0, 300 B. Step 1: w = 1, 2, 3.
  const BspParams p{1e-9, 7e-9};
  std::vector<RankSteps> listed(3), grouped(3);
  const double w0[] = {10e-9, 30e-9, 20e-9}, ws[] = {5e-9, 25e-9, 20e-9};
  const std::uint64_t out[] = {100, 0, 300};
  for (std::uint32_t i = 0; i < 3; ++i) {
    StepRecord s0;
    s0.w = w0[i];
    s0.w_send = ws[i];
    s0.out_bytes = out[i];
    StepRecord s1;
    s1.w = (i + 1) * 1e-9;
    listed[i] = {s0, s1};
    grouped[i] = {s0, s1};
    for (std::uint32_t j = 0; j < 3; ++j)
      if (j != i) listed[i][0].incoming.push_back(Partner{j, 0, ws[j]});
    grouped[i][0].groups = {0};
  }
  PartnerGroup group;
  for (std::uint32_t j = 0; j < 3; ++j) group.members.push_back(Partner{j, 0, ws[j]});
  const MpmPrediction a = mpm(listed, p);
  const MpmPrediction b = mpm(grouped, p, std::vector<PartnerGroup>{group});
  // By hand: every step 0 ends at max(own w, every partner's send point) + g * max h + L, with
  // the own w dominating its send point: rank 0: max(10, 25, 20) + 300 + 7 = 332; rank 1:
  // max(30, 5, 20) + 307 = 337; rank 2: max(20, 5, 25) + 307 = 332. Step 1 adds w + L (h = 0).
  CHECK_THAT(a.phi[0], Catch::Matchers::Approx(std::vector<double>{332e-9, 340e-9}));
  CHECK_THAT(a.phi[1], Catch::Matchers::Approx(std::vector<double>{337e-9, 346e-9}));
  CHECK_THAT(a.phi[2], Catch::Matchers::Approx(std::vector<double>{332e-9, 342e-9}));
  CHECK(b.phi == a.phi);
  CHECK(b.psi == a.psi);
  // A group naming a step that does not exist is refused like a partner.
  PartnerGroup bad;
  bad.members.push_back(Partner{0, 5, -1});
  CHECK_THROWS_WITH(mpm(grouped, p, std::vector<PartnerGroup>{bad}),
                    "MPM: partner group 0 names rank 0 step 5, which does not exist");
}

TEST_CASE("BSPWB summed as steps come in, ranks interleaved, equals bspwb() to the bit", "[bspwb][stream]") {
  std::mt19937_64 rng(7);
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * static_cast<double>(rng() % 1000000) / 1e6; };
  for (const bool latency_on_empty : {true, false}) {
    for (int trial = 0; trial < 20; ++trial) {
      // 6 ranks of 0 to 40 steps (ghost steps where a rank has fewer), one rank without a trace.
      std::vector<RankSteps> ranks(6);
      for (std::size_t r = 0; r + 1 < ranks.size(); ++r) {
        ranks[r].resize(rng() % 41);
        for (StepRecord& s : ranks[r]) {
          s.w = uniform(0, 1e-3);
          s.in_bytes = rng() % 3 == 0 ? 0 : rng() % 100000;
          s.out_bytes = rng() % 3 == 0 ? 0 : rng() % 100000;
          s.extra = rng() % 4 == 0 ? uniform(0, 1e-5) : 0.0;
        }
      }
      BspParams p;
      p.g = 1e-9;
      p.L = 2e-6;
      p.latency_on_empty_steps = latency_on_empty;
      const double whole = bspwb(ranks, p).total;
      BspwbStream stream(p, ranks.size(), ranks.size() - 1);
      std::vector<std::size_t> next(ranks.size(), 0);
      std::vector<bool> ended(ranks.size(), false);
      for (std::size_t left = ranks.size() - 1; left > 0;) {
        const std::size_t r = rng() % (ranks.size() - 1);
        if (ended[r]) continue;
        if (next[r] < ranks[r].size()) {
          const StepRecord& s = ranks[r][next[r]];
          stream.step(static_cast<std::uint32_t>(next[r]++), s.w, h_relation(s, p.combine), s.extra);
        } else {
          stream.rank_ended(static_cast<std::uint32_t>(ranks[r].size()));
          ended[r] = true;
          --left;
        }
      }
      CHECK(stream.total() == whole);
    }
  }
}
