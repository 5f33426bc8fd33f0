// Collective advice (model/analysis/advise.hpp) against values worked out by hand from MODELS.md
// sections 3 and 4, and MPICH's default as the LogGPS replay charges it.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "model/analysis/advise.hpp"

using namespace mstep::model;
using mstep::Op;
using mstep::BarrierAlgo;

namespace {

constexpr double us = 1e-6;

// L 2 us, o 1 us, g 0.5 us, 1 ns per byte on the wire, rendezvous from 1000 bytes.
LogGPSParams small_net() {
  LogGPSParams p;
  p.L = 2 * us, p.o = 1 * us, p.g = 0.5 * us, p.Gs = p.Gl = 1e-9, p.S = 1000;
  return p;
}

CalibrationParams with(const LogGPSParams& p) {
  CalibrationParams c;
  c.loggps = p;
  return c;
}

CollectiveSite site(Op op, std::uint32_t P, std::uint64_t bytes, std::uint64_t calls_per_rank) {
  CollectiveSite s;
  s.op = op, s.comm_size = P, s.bytes = bytes, s.ranks = P, s.records = calls_per_rank * P;
  for (std::uint32_t r = 0; r < P; ++r) s.members.push_back(static_cast<std::int32_t>(r));
  return s;
}

const AlgorithmEstimate& named(const CollectiveAdvice& a, const std::string& name) {
  for (const auto& e : a.algorithms)
    if (e.name == name) return e;
  FAIL("no algorithm " << name);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("advise: w and D of a uniform LogGPS network", "[advise]") {
  // 8 bytes, eager: busy T1 = o = 1 us; end to end T1 + T2 + T3 = 1 + (2 + 0.008) + 1.
  BroadcastPair eager = uniform_broadcast_pair(small_net(), 8);
  CHECK(eager.injection == Approx(1 * us));
  CHECK(eager.latency == Approx(3.008 * us));
  // 2000 bytes, rendezvous: busy T4 + T5 + T1 = 4 + 4 + 1; end to end 4 + 4 + 1 + (2 + 2) + 1.
  BroadcastPair rndv = uniform_broadcast_pair(small_net(), 2000);
  CHECK(rndv.injection == Approx(9 * us));
  CHECK(rndv.latency == Approx(5 * us));
  // A gap longer than the send: the sender is busy g, the first child still has it at 4.008 us.
  LogGPSParams slow_gap = small_net();
  slow_gap.g = 3 * us;
  BroadcastPair gapped = uniform_broadcast_pair(slow_gap, 8);
  CHECK(gapped.injection == Approx(3 * us));
  CHECK(gapped.injection + gapped.latency == Approx(4.008 * us));
}

TEST_CASE("advise: MPICH's binomial broadcast replayed alone equals the binomial schedule", "[advise]") {
  // Root 0 of 8 sends to 4, 2, 1 (D = 1, w = 3.008): 4.008, 5.008, 6.008; 4 sends to 6, 5:
  // 8.016, 9.016; 2 to 3: 9.016; 6 to 7: 12.024 us.
  const double replayed = isolated_collective_s(Op::Bcast, 8, 0, 8, small_net());
  CHECK(replayed == Approx(12.024 * us));
  const BroadcastNetwork net = uniform_broadcast_network(8, uniform_broadcast_pair(small_net(), 8));
  CHECK(binomial_tree_time(net, 0) == Approx(replayed));
  CHECK(isolated_collective_s(Op::Bcast, 1, 0, 8, small_net()) == 0);
  // Dissemination barrier of 4: two rounds of o + L + o.
  CHECK(isolated_collective_s(Op::Barrier, 4, 0, 0, small_net()) == Approx(8 * us));
}

TEST_CASE("advise: MPICH's default pays its calibrated residual, as in the report's replay", "[advise]") {
  // Calibrated at 2 ranks: MPI_Barrier measured 5 us where its one round of messages is 4 us
  // (o + L + o): 1 us per round beyond its messages. At 4 ranks, two rounds: 8 + 2 = 10 us, where
  // libmstep's dissemination (its program of messages) stays at 8 us.
  CalibrationParams c = with(small_net());
  c.collectives[Op::Barrier] = CollectiveTimes{{0}, {5 * us}, {4 * us}};
  const CollectiveAdvice a = advise_collective(site(Op::Barrier, 4, 0, 100), c);
  CHECK(a.algorithms.front().predicted_s == Approx(10 * us));
  CHECK(named(a, "dissemination").predicted_s == Approx(8 * us));
  CHECK(a.best == "dissemination");
  CHECK(a.gain_per_call_s == Approx(2 * us));
  REQUIRE(a.notes.size() == 1);
  CHECK(a.notes[0].find("+2.000 us a call") != std::string::npos);
  // The broadcast likewise: 8 B at 8 ranks, 0.5 us a round beyond the binomial tree's messages
  // (residual 0.5 us at 2 ranks, three rounds at 8): 12.024 + 1.5 us.
  c.collectives[Op::Bcast] = CollectiveTimes{{8}, {4.508 * us}, {4.008 * us}};
  const CollectiveAdvice b = advise_collective(site(Op::Bcast, 8, 8, 100), c);
  CHECK(b.algorithms.front().predicted_s == Approx(13.524 * us));
  CHECK(named(b, "binomial tree").predicted_s == Approx(12.024 * us));
}

TEST_CASE("advise: barrier algorithms of 4 ranks", "[advise]") {
  const CollectiveAdvice a = advise_collective(site(Op::Barrier, 4, 0, 100), with(small_net()));
  REQUIRE(a.algorithms.size() == 6);
  CHECK(a.algorithms.front().mpich_default);
  CHECK(a.algorithms.front().name == "MPICH default: dissemination");
  CHECK(a.default_s == Approx(8 * us));
  // L 2, o_s = o_r = 1, g 0.5: f_r = f_s = 1, t_msg = 4.
  CHECK(named(a, "central counter").predicted_s == Approx(12 * us));          // 2*4 + 2*1 + 2*1
  CHECK(named(a, "combining tree (n=2)").predicted_s == Approx(16 * us));     // 4*2 + 1 + 4 + 2 + 1
  CHECK(named(a, "combining tree (n=4)").predicted_s == Approx(14 * us));     // 6*1 + 1 + 4 + 2 + 1
  CHECK(named(a, "combining tree (n=8)").predicted_s == Approx((10.0 * 2 / 3 + 8) * us));
  CHECK(named(a, "dissemination").predicted_s == Approx(8 * us));             // 4 * 2 rounds
  // Dissemination ties MPICH's own: no gain, and the default keeps the tie.
  CHECK(a.best == "MPICH default: dissemination");
  CHECK(a.gain_per_call_s == 0);
  CHECK(a.gain_s == 0);
}

TEST_CASE("advise: a flat tree beats MPICH's binomial broadcast on a long-latency network", "[advise]") {
  LogGPSParams p = small_net();
  p.L = 100 * us;  // D = 1 us, w = 101.008 us
  const CollectiveAdvice a = advise_collective(site(Op::Bcast, 8, 8, 10), with(p));
  CHECK(a.network == "uniform LogGPS");
  CHECK(a.algorithms.front().name == "MPICH default: binomial tree");
  // Binomial: 4 at 102.008, 2 at 103.008; 6 at 204.016, 3 and 5 at 205.016; 7 at 306.024.
  CHECK(a.default_s == Approx(306.024 * us));
  CHECK(named(a, "binomial tree").predicted_s == Approx(306.024 * us));
  CHECK(named(a, "flat tree").predicted_s == Approx(108.008 * us));  // 7 * 1 + 101.008
  // Uniform pairs: E-SSSP attaches everyone to the root (all at infinity when it relaxes them).
  CHECK(named(a, "E-SSSP").predicted_s == Approx(108.008 * us));
  CHECK(named(a, "E-SSSP + labeling").predicted_s == Approx(108.008 * us));
  CHECK(a.best == "flat tree");
  CHECK(a.gain_per_call_s == Approx(198.016 * us));
  CHECK(a.gain_s == Approx(1980.16 * us));  // 10 calls per rank
}

TEST_CASE("advise: a broadcast on calibrated pairs takes the communicator's sub-table", "[advise]") {
  // 4 calibrated nodes at 8 bytes: w(u,v) = 10 (u+1) + v us, D = 1 us.
  BroadcastParams cal;
  cal.bytes = 8;
  cal.network.nodes = 4;
  for (std::size_t u = 0; u < 4; ++u)
    for (std::size_t v = 0; v < 4; ++v) {
      cal.network.latency.push_back((10.0 * (u + 1) + v) * us);
      cal.network.injection.push_back(1 * us);
    }
  const std::int32_t members[] = {3, 1};
  const BroadcastNetwork same = broadcast_subnetwork(cal, members, small_net(), 8);
  REQUIRE(same.nodes == 2);
  CHECK(same.w(0, 1) == Approx(41 * us));  // w(3,1)
  CHECK(same.w(1, 0) == Approx(23 * us));  // w(1,3)
  // 108 bytes: 100 more bytes on the wire at 1 ns each move w by 0.1 us; D (T1) does not move.
  const BroadcastNetwork moved = broadcast_subnetwork(cal, members, small_net(), 108);
  CHECK(moved.w(0, 1) == Approx(41.1 * us));
  CHECK(moved.D(0, 1) == Approx(1 * us));
  const std::int32_t outside[] = {0, 4};
  CHECK(broadcast_subnetwork(cal, outside, small_net(), 8).nodes == 0);

  CalibrationParams params = with(small_net());
  params.broadcast = cal;
  CollectiveSite s = site(Op::Bcast, 2, 8, 1);
  s.members = {3, 1};
  CollectiveAdvice a = advise_collective(s, params);
  CHECK(a.network.starts_with("calibrated pairs"));
  // Root 3 sends to 1: D + w(3,1) = 42 us, for every schedule and for MPICH's binomial tree.
  CHECK(a.default_s == Approx(42 * us));
  CHECK(named(a, "flat tree").predicted_s == Approx(42 * us));
  s.members = {5, 1};  // rank 5 is not in the table
  a = advise_collective(s, params);
  CHECK(a.network == "uniform LogGPS");
  REQUIRE(a.notes.size() == 1);
}

TEST_CASE("advise: what it cannot advise on", "[advise]") {
  CHECK_THROWS_WITH(advise_collective(site(Op::Barrier, 4, 0, 1), CalibrationParams{}),
                    "collective advice needs LogGPS parameters");
  CHECK_THROWS_WITH(advise_collective(site(Op::Allreduce, 4, 8, 1), with(small_net())),
                    "no advice for MPI_Allreduce: only MPI_Barrier and MPI_Bcast");
}

TEST_CASE("advise: libmstep's substitutes as the replay charges them", "[advise]") {
  const auto subs = [](const char* barrier, const char* bcast) { return substitutes_from_names(barrier, bcast); };
  const LogGPSParams p = small_net();  // o + L + o = 4 us, T1 = 1 us > g
  // Central counter of 4: 1, 2 and 3 send at 0, all there at 3; rank 0's receives end at 4, 5, 6;
  // it releases 1, 2, 3 with sends starting at 6, 7, 8, the last there at 8 + 4 = 12 us, MODELS.md's
  // 2 (o + L + o) + (P-2) f_r + (P-2) f_s.
  CHECK(isolated_collective_s(Op::Barrier, 4, 0, 0, p, subs("central", "")) == Approx(12e-6));
  // Combining tree of arity 2: 3 to 1 ends at 4, 1 to 0 at 8, then 0 takes 2's (there since 3) at
  // 9; the binomial release from 0 at 9: 2 at 13, 1 at 14, 3 (from 2) at 17 us.
  CHECK(isolated_collective_s(Op::Barrier, 4, 0, 0, p, subs("tree:2", "")) == Approx(17e-6));
  CHECK(isolated_collective_s(Op::Barrier, 4, 0, 0, p, subs("dissemination", "")) == Approx(8e-6));
  // Flat broadcast of 8 B: the third send starts at 2, + 4.008 us; binomial from root 1: rel 3 at
  // 8.016 us, as MPICH's (the same schedule).
  CHECK(isolated_collective_s(Op::Bcast, 4, 0, 8, p, subs("", "flat")) == Approx(6.008e-6));
  CHECK(isolated_collective_s(Op::Bcast, 4, 1, 8, p, subs("", "binomial")) ==
        Approx(isolated_collective_s(Op::Bcast, 4, 1, 8, p)));
  // Unknown names are MPICH's own.
  CHECK_FALSE(subs("tree:1", "pipeline").any());
  // E-SSSP depends on the run's per-pair latencies: its calls keep their recorded durations.
  const CollShape e = choose_collective(Op::Bcast, 4, 0, 8, subs("", "esssp"));
  CHECK(e.algo == CollAlgo::Unsupported);
  CHECK(e.substitute);
  CHECK(subs("tree:16", "").arity == 16);
}

TEST_CASE("advise: the replay charges the E-SSSP and auto broadcasts that ran, planned from meta.json", "[advise]") {
  const LogGPSParams p = small_net();  // o + L + o = 4 us, a sender busy 1 us a message (T1)
  // What libmstep writes for MSTEP_BCAST=esssp|auto (collectives.loggps) and under
  // MSTEP_DELAY_PAIRS (delay.pairs): rank 0 alone, 1-3 together, 100 us between the two.
  mstep::RunMeta meta;
  meta.ranks = 4;
  meta.bcast_substitute = "esssp";
  meta.bcast_loggps_json = R"({"L": 2e-6, "o": 1e-6, "Os": 0, "Or": 0, "g": 5e-7, "Gs": 1e-9, "Gl": 1e-9, "s": null, "S": 1000})";
  meta.delayed = true;
  meta.delay_pairs_json = R"({"clusters": [[0], [1, 2, 3]], "inter": "100us"})";
  const std::vector<std::int32_t> members{0, 1, 2, 3};
  {
    INFO("esssp: every member is best served by the root across the slow link (103.008, 104.008 and 105.008 us, "
         "where relaying through 1 would reach 2 at 106.016)");
    const CollectiveSubstitutes subs = substitutes_of(meta);
    REQUIRE(subs.plans);
    const CollShape e = choose_collective(Op::Bcast, 4, 0, 8, subs, members);
    REQUIRE(e.algo == CollAlgo::BcastTree);
    CHECK(e.substitute);
    REQUIRE(e.tree);
    CHECK(e.tree->children[0].size() == 3);
    // Charged on the replay's one network as the flat tree it is: the third send starts at 2 us,
    // + 4.008 (the binomial tree would be 8.016).
    CHECK(isolated_collective_s(Op::Bcast, 4, 0, 8, p, subs) == Approx(6.008e-6));
    // The same inputs give the same plan object (made once).
    CHECK(choose_collective(Op::Bcast, 4, 0, 8, subs, members).tree == e.tree);
    // Without the members (a caller that cannot name them): the recorded durations, as before.
    CHECK(choose_collective(Op::Bcast, 4, 0, 8, subs).algo == CollAlgo::Unsupported);
  }
  {
    INFO("auto: flat 105.008 against MPICH's binomial 107.016 us is under its 10% margin: MPICH's schedule, run "
         "by libmstep under the delay apparatus; undelayed, the flat tree");
    meta.bcast_substitute = "auto";
    const CollShape a = choose_collective(Op::Bcast, 4, 0, 8, substitutes_of(meta), members);
    CHECK(a.algo == CollAlgo::BcastBinomial);
    CHECK(a.substitute);
    // Undelayed, on the uniform network, the flat tree (6.008 us) beats the binomial one (8.016) by
    // a quarter: auto ran it, and the replay charges it.
    meta.delayed = false;
    meta.delay_pairs_json.clear();
    const CollShape u = choose_collective(Op::Bcast, 4, 0, 8, substitutes_of(meta), members);
    CHECK(u.algo == CollAlgo::BcastTree);
    CHECK(u.substitute);
    CHECK(isolated_collective_s(Op::Bcast, 4, 0, 8, p, substitutes_of(meta)) == Approx(6.008e-6));
    // On two ranks undelayed, auto calls MPICH's own at once.
    const CollShape two = choose_collective(Op::Bcast, 2, 0, 8, substitutes_of(meta), std::vector<std::int32_t>{0, 1});
    CHECK(two.algo == CollAlgo::BcastBinomial);
    CHECK_FALSE(two.substitute);
  }
  {
    INFO("older traces (no collectives.loggps) and damaged parameters keep the recorded durations");
    meta.bcast_loggps_json.clear();
    CHECK_FALSE(substitutes_of(meta).plans);
    CHECK(choose_collective(Op::Bcast, 4, 0, 8, substitutes_of(meta), members).algo == CollAlgo::Unsupported);
    meta.bcast_loggps_json = R"({"L": "2us"})";
    CHECK_FALSE(substitutes_of(meta).plans);
  }
}

TEST_CASE("advise: where E-SSSP ties the copy of the binomial tree, auto ran the copy (meta.json bcast_tie)",
          "[advise]") {
  // 8 ranks, 8 bytes, L = 0.5, o = 1, g = 1.25 us: a sender busy D = g = 1.25 us a message, the
  // message there w = o + L + o - D = 1.25 us after: MPICH's binomial tree 3 (D + w) = 7.5 us, the
  // labeled E-SSSP tree 7.5 too, the flat tree 7 D + w = 10. MPICH's own costs 0.5 us a round more
  // (3 rounds): 9 us, and 7.5 < 0.9 * 9: auto runs one of libmstep's trees.
  mstep::RunMeta meta;
  meta.ranks = 8;
  meta.bcast_substitute = "auto";
  meta.bcast_loggps_json = R"({"L": 5e-7, "o": 1e-6, "Os": 0, "Or": 0, "g": 1.25e-6, "Gs": 0, "Gl": 0, "s": null, "S": 1000})";
  meta.auto_native_mpich = true;
  meta.auto_mpich = {{Op::Bcast, mstep::model::CollectiveTimes{{8}, {1.5e-6}, {1e-6}}}};
  const std::vector<std::int32_t> members{0, 1, 2, 3, 4, 5, 6, 7};
  meta.auto_bcast_binomial_on_tie = true;  // libmstep of 2026-11-26 on
  const CollShape copy = choose_collective(Op::Bcast, 8, 0, 8, substitutes_of(meta), members);
  CHECK(copy.algo == CollAlgo::BcastBinomial);
  CHECK(copy.substitute);
  meta.auto_bcast_binomial_on_tie = false;  // an older trace: E-SSSP ran
  const CollShape esssp = choose_collective(Op::Bcast, 8, 0, 8, substitutes_of(meta), members);
  CHECK(esssp.algo == CollAlgo::BcastTree);
  CHECK(esssp.substitute);
}

TEST_CASE("advise: the adaptive barrier over every tree arity (MSTEP_BARRIER=auto)", "[advise]") {
  // o = g = 0, L = 1: central 2 L ties dissemination's 2 rounds at P = 4 (the tie goes to the
  // central counter), and loses to one round at P = 2.
  const AdaptiveBarrier a4 = adaptive_barrier_any_arity({1, 0, 0, 0}, 4);
  CHECK(a4.algorithm == BarrierAlgorithm::CentralCounter);
  CHECK(a4.time == 2);
  CHECK(adaptive_barrier_any_arity({1, 0, 0, 0}, 2).algorithm == BarrierAlgorithm::Dissemination);
  // A gap of 10 dominates: dissemination 10 * 2 = 20, central 2 + 2 * 10 + 2 * 10 = 42, the binary
  // combining tree (0 + 1 + 0 + 0) * 2 + 0 + (2 - 1) * 10 + 1 + 0 = 13, arity 3 about 24.9.
  const AdaptiveBarrier g = adaptive_barrier_any_arity({1, 0, 0, 10}, 4);
  CHECK(g.algorithm == BarrierAlgorithm::CombiningTree);
  CHECK(g.arity == 2);
  CHECK(g.time == Approx(13));
  // The replay charges the same choice from meta.json's parameters.
  mstep::RunMeta meta;
  meta.barrier_substitute = "auto", meta.auto_L = 1, meta.auto_g = 10;
  const CollShape s = choose_collective(Op::Barrier, 4, 0, 0, substitutes_of(meta));
  CHECK(s.algo == CollAlgo::BarrierCombiningTree);
  CHECK(s.arity == 2);
  CHECK(s.substitute);
}

TEST_CASE("advise: MSTEP_BARRIER=auto runs MPICH's own barrier unless its choice is clearly faster", "[advise]") {
  // L = 1, o = g = 0. At P = 2 dissemination's one round (1) is the adaptive choice, MPICH's own
  // algorithm: with nothing calibrated MPICH's barrier is predicted the same, so MPICH's own runs.
  // libmstep's copy runs under the delay apparatus (MPICH's messages bypass it) and in traces of
  // an older libmstep.
  const LogPBarrierParams p{1, 0, 0, 0};
  CHECK(adaptive_barrier_name(p, 2).algo == BarrierAlgo::Dissemination);
  CHECK(auto_barrier_runs(p, 2, false).algo == BarrierAlgo::Mpi);
  CHECK(auto_barrier_runs(p, 2, true).algo == BarrierAlgo::Dissemination);
  CHECK(auto_barrier_runs(p, 2, false, false).algo == BarrierAlgo::Dissemination);
  // At P = 4 the central counter (2) ties dissemination's two rounds (2): no gain, MPICH's.
  CHECK(auto_barrier_runs(p, 4, false).algo == BarrierAlgo::Mpi);
  // MPICH measured 0.5 a round beyond its messages: 2 + 2 * 0.5 = 3 at P = 4, and the central
  // counter's 2 is more than 10% faster; at P = 2, 1 against 1.5: libmstep's dissemination.
  CHECK(auto_barrier_runs(p, 4, false, true, 0.5).algo == BarrierAlgo::Central);
  CHECK(auto_barrier_runs(p, 2, false, true, 0.5).algo == BarrierAlgo::Dissemination);
  // 0.05 a round: 1 against 1.05 at P = 2, within the 10% margin: MPICH's.
  CHECK(auto_barrier_runs(p, 2, false, true, 0.05).algo == BarrierAlgo::Mpi);
  // The replay charges what ran, from meta.json: MPICH's default (not a substitute) on 2 ranks.
  mstep::RunMeta meta;
  meta.barrier_substitute = "auto", meta.auto_L = 1, meta.auto_native_mpich = true;
  const CollShape two = choose_collective(Op::Barrier, 2, 0, 0, substitutes_of(meta));
  CHECK(two.algo == CollAlgo::BarrierDissemination);
  CHECK_FALSE(two.substitute);
  CHECK_FALSE(choose_collective(Op::Barrier, 4, 0, 0, substitutes_of(meta)).substitute);
  // With MPICH's calibrated barrier in meta.json (measured 1.5 where its messages are 1):
  meta.auto_mpich[Op::Barrier] = CollectiveTimes{{0}, {1.5}, {1.0}};
  const CollShape four = choose_collective(Op::Barrier, 4, 0, 0, substitutes_of(meta));
  CHECK(four.algo == CollAlgo::BarrierCentral);
  CHECK(four.substitute);
  CHECK(choose_collective(Op::Barrier, 2, 0, 0, substitutes_of(meta)).substitute);
  meta.auto_mpich.clear();
  meta.delayed = true;
  CHECK(choose_collective(Op::Barrier, 2, 0, 0, substitutes_of(meta)).substitute);
  meta.delayed = false, meta.auto_native_mpich = false;  // an older trace
  CHECK(choose_collective(Op::Barrier, 2, 0, 0, substitutes_of(meta)).substitute);
}

TEST_CASE("advise: a broadcast across two clusters joined by a slow link", "[advise]") {
  // Ranks {0, 1} and {2, 3}, 100 us added between the clusters; D = 1, w = 3.008 us inside.
  std::string error;
  const mstep::PairLatency grid =
      mstep::PairLatency::parse(R"({"clusters": [[0, 1], [2, 3]], "inter": "100us"})", 4, error);
  REQUIRE(error.empty());
  const CollectiveAdvice a = advise_collective(site(Op::Bcast, 4, 8, 1), with(small_net()), &grid);
  CHECK(a.network == "uniform LogGPS + the per-pair latencies");
  // Flat: 1 at 4.008, 2 at 2 + 103.008, 3 at 3 + 103.008 us.
  CHECK(named(a, "flat tree").predicted_s == Approx(106.008e-6));
  // MPICH's binomial tree: 0 to 2 (104.008) then to 1; 2 to 3 at 104.008 + 4.008 us. MPICH's
  // default is timed on the same network.
  CHECK(named(a, "binomial tree").predicted_s == Approx(108.016e-6));
  CHECK(a.default_s == Approx(108.016e-6));
  // E-SSSP attaches all three to the root (no relaxation through 1 or 2 is shorter); the labeling
  // sends across the slow link first: 2 at 104.008, 3 at 105.008, 1 at 6.008 us.
  CHECK(named(a, "E-SSSP").predicted_s == Approx(106.008e-6));
  CHECK(named(a, "E-SSSP + labeling").predicted_s == Approx(105.008e-6));
  CHECK(a.best == "E-SSSP + labeling");
  CHECK(a.gain_per_call_s == Approx(3.008e-6));
}

TEST_CASE("collective spans: from the last arrival needed to the last exit", "[advise]") {
  using mstep::model::SpanMember;
  // Barrier: entries 1, 3, 2; exits 4, 5, 4.5: 5 - 3.
  const std::vector<SpanMember> barrier{{1, 4, false}, {3, 5, false}, {2, 4.5, false}};
  CHECK(*instance_span(Op::Barrier, barrier) == 2);
  // Bcast from the second: it enters at 2. The first enters at 1 and leaves at 6 (6 - 2 = 4); the
  // third enters late at 9, its data long there, and leaves at 9.5 (0.5); the root leaves at 3 (1).
  const std::vector<SpanMember> bcast{{1, 6, false}, {2, 3, true}, {9, 9.5, false}};
  CHECK(*instance_span(Op::Bcast, bcast) == 4);
  const std::vector<SpanMember> rootless{{1, 6, false}, {2, 3, false}};
  CHECK_FALSE(instance_span(Op::Bcast, rootless));
  CHECK_FALSE(instance_span(Op::Allreduce, barrier));
  CHECK_FALSE(instance_span(Op::Barrier, {}));

  mstep::model::SpanStats s;
  CHECK(s.median_s() == 0);
  for (const double x : {5.0, 1.0, 3.0, 2.0}) s.add(x);
  CHECK(s.count() == 4);
  CHECK(s.mean_s() == 2.75);
  CHECK(s.median_s() == 2.5);
  s.add(10);
  CHECK(s.median_s() == 3);
  // Beyond the sample: the mean stays exact, the median is of a sample of the same values.
  mstep::model::SpanStats many;
  for (std::size_t i = 0; i < 3 * mstep::model::SpanStats::kSpanSample; ++i) many.add(7);
  CHECK(many.sampled());
  CHECK(many.mean_s() == 7);
  CHECK(many.median_s() == 7);
}
