// model/analysis/speed_check.hpp: two calibrations of one transport compared, before and after a
// validation's runs.
#include <cmath>

#include <catch2/catch.hpp>

#include "model/analysis/speed_check.hpp"

using namespace mstep::model;

namespace {

CalibrationParams calibration(double rtt_8B, double rtt_at_S) {
  CalibrationParams p;
  LogGPSParams l;
  l.L = 1e-6, l.S = 8192;
  p.loggps = l;
  p.meta.half_rtt_8B = rtt_8B;
  p.raw.push_back(RawPoint{8, rtt_8B, 0, 0, 0, 0, false});
  p.raw.push_back(RawPoint{4096, rtt_8B * 2, 0, 0, 0, 0, false});
  p.raw.push_back(RawPoint{8192, rtt_at_S, 0, 0, 0, 0, true});
  return p;
}

}  // namespace

TEST_CASE("speed check: what moved between two calibrations, beyond the tolerance", "[validation]") {
  // TCP's two speeds: the rendezvous at S from 55 us to 40 us (-27%), 8 B from 6.0 to 6.3 us (+5%).
  const auto moved = speed_change(calibration(6.0e-6, 55e-6), calibration(6.3e-6, 40e-6));
  REQUIRE(moved);
  CHECK(*moved == "the machine changed speed during these runs: at 8192 B (S) 55 us -> 40 us (-27%) (calibrated "
                  "again after them); each row is predicted with the calibration of its run's period");
  // Both moved.
  const auto both = speed_change(calibration(0.2e-6, 3.5e-6), calibration(0.6e-6, 4.5e-6));
  REQUIRE(both);
  CHECK(both->find("half round trip of 8 B 0.2 us -> 0.6 us (+200%), at 8192 B (S) 3.5 us -> 4.5 us (+29%)") !=
        std::string::npos);
  // Within 15%: nothing to say; nor without measurements.
  CHECK_FALSE(speed_change(calibration(6.0e-6, 55e-6), calibration(6.5e-6, 60e-6)));
  CHECK_FALSE(speed_change(CalibrationParams{}, calibration(6.0e-6, 55e-6)));
  CHECK(speed_change(calibration(6.0e-6, 55e-6), calibration(6.5e-6, 60e-6), 0.05));  // a tighter tolerance
}

namespace {

// A run of `rtts.size() + 1` ranks: rank 0 serves the clock sync (no round trip of its own), rank
// r + 1 has the round trips rtts[r] = {at MPI_Init, at MPI_Finalize} in ns (0: no such sample).
mstep::TraceDir run_with_round_trips(const std::vector<std::pair<std::int64_t, std::int64_t>>& rtts,
                                     std::vector<std::string> hosts = {}) {
  mstep::TraceDir d;
  d.meta.hosts = std::move(hosts);
  d.ranks.resize(rtts.size() + 1);
  d.ranks[0].emplace();
  d.ranks[0]->clocks.push_back(mstep::ClockSync{mstep::ClockSync::AtInit, 0, 0, 0, 0});
  for (std::size_t r = 0; r < rtts.size(); ++r) {
    auto& t = d.ranks[r + 1].emplace();
    if (rtts[r].first) t.clocks.push_back(mstep::ClockSync{mstep::ClockSync::AtInit, 0, 0, 0, rtts[r].first});
    if (rtts[r].second) t.clocks.push_back(mstep::ClockSync{mstep::ClockSync::AtFinalize, 0, 0, 0, rtts[r].second});
  }
  return d;
}

}  // namespace

TEST_CASE("speed check: the run's own 8-byte round trips against the calibration's", "[validation]") {
  // Three ranks beside rank 0: medians of 400/420/1400 ns and of 380/390/400 ns, halved.
  const auto run = probed_latency(run_with_round_trips({{400, 380}, {1400, 400}, {420, 390}}));
  CHECK(run.ranks == 3);
  CHECK(run.at_init_s == Approx(210e-9));
  CHECK(run.at_finalize_s == Approx(195e-9));
  CHECK_FALSE(run_speed_difference(run, calibration(0.2e-6, 3.5e-6)));  // 5% and 2.5% off: nothing to say
  // A best of 8 below the calibration's median by a third is the probe's own bias, not a faster
  // machine; below half of it is.
  CHECK_FALSE(run_speed_difference(probed_latency(run_with_round_trips({{260, 270}})), calibration(0.2e-6, 3.5e-6)));
  CHECK(run_speed_difference(probed_latency(run_with_round_trips({{190, 400}})), calibration(0.2e-6, 3.5e-6)));
  CHECK(run_speed_difference(probed_latency(run_with_round_trips({{400, 540}})), calibration(0.2e-6, 3.5e-6)));
  // The machine's slow period: 3.5 times the calibration's 0.2 us at MPI_Finalize.
  const auto slow = probed_latency(run_with_round_trips({{400, 1400}}));
  const auto said = run_speed_difference(slow, calibration(0.2e-6, 3.5e-6));
  REQUIRE(said);
  CHECK(*said == "the run's 8-byte half round trip (0.2 us at MPI_Init, 0.7 us at MPI_Finalize; libmstep's clock "
                 "sync with rank 0) is 3.5 times the parameters' (0.2 us): the machine was not in the state it was "
                 "calibrated in, and predictions of small messages are off by about as much (calibrate again in "
                 "the run's conditions)");
  // A killed rank has no MPI_Finalize sample; a calibration without the measurement says nothing.
  const auto killed = probed_latency(run_with_round_trips({{1400, 0}}));
  CHECK(killed.at_finalize_s == 0);
  CHECK(run_speed_difference(killed, calibration(0.2e-6, 3.5e-6)));
  CHECK_FALSE(run_speed_difference(killed, CalibrationParams{}));
  // Only the MPI_Finalize sample: the ratio said is that one's, not a missing Init's.
  const auto late = run_speed_difference(probed_latency(run_with_round_trips({{0, 1400}})), calibration(0.2e-6, 3.5e-6));
  REQUIRE(late);
  CHECK(late->find("(0.7 us at MPI_Finalize; libmstep's clock sync with rank 0) is 3.5 times") != std::string::npos);
  // A 1-rank run (or rank 0 alone) has nothing to compare.
  CHECK(probed_latency(run_with_round_trips({})).ranks == 0);
  CHECK_FALSE(run_speed_difference(probed_latency(run_with_round_trips({})), calibration(0.2e-6, 3.5e-6)));
  // Hosts: the ranks on rank 0's host when the calibration's pair shared one, the others otherwise.
  const auto two_hosts = run_with_round_trips({{400, 400}, {6000, 6000}}, {"a", "a", "b"});
  CHECK(probed_latency(two_hosts, true).at_init_s == Approx(200e-9));
  CHECK(probed_latency(two_hosts, false).at_init_s == Approx(3000e-9));
  CalibrationParams across = calibration(3e-6, 10e-6);
  across.meta.pair = {0, 1};
  across.meta.hosts = {"x", "y"};
  CHECK_FALSE(calibrated_on_one_host(across));
  across.meta.hosts = {"x", "x"};
  CHECK(calibrated_on_one_host(across));
}

TEST_CASE("speed check: of several calibrations, the one of the run's period", "[validation]") {
  // The run probed 0.6 us: against 0.85 x 0.17 = 0.1445 us and 0.85 x 0.66 = 0.561 us, the second
  // (|ln(0.6/0.561)| = 0.067 against |ln(0.6/0.1445)| = 1.42).
  const double periods[] = {0.17e-6, 0.66e-6};
  auto m = nearest_period(0.6e-6, periods);
  CHECK(m.by_probe);
  CHECK(m.index == 1);
  CHECK(m.run_s == Approx(0.6e-6));
  // 0.2 us: the first (|ln(0.2/0.1445)| = 0.325 against |ln(0.561/0.2)| = 1.03).
  CHECK(nearest_period(0.2e-6, periods).index == 0);
  // The probe's bias decides between close ones: 0.56 us is the 0.66 us period's best of 8
  // (0.85 x 0.66 = 0.561), not the 0.5 us one's (0.425): by plain ratio it would be the 0.5 us.
  const double close[] = {0.5e-6, 0.66e-6};
  CHECK(nearest_period(0.56e-6, close).index == 1);
  // Equals: the first. A calibration without the measurement is never chosen over one with it.
  const double same[] = {0.4e-6, 0.4e-6};
  CHECK(nearest_period(0.3e-6, same).index == 0);
  const double unmeasured[] = {0, 0.66e-6};
  CHECK(nearest_period(0.1e-6, unmeasured).index == 1);
  // Nothing to go by: the first, and says so.
  const double none[] = {0.0, 0.0};
  CHECK_FALSE(nearest_period(0.3e-6, none).by_probe);
  CHECK_FALSE(nearest_period(0.0, periods).by_probe);
  CHECK(nearest_period(0.0, periods).index == 0);

  // The run's value: the geometric mean of its two probes, or the one it has.
  CHECK(run_half_rtt(ProbedLatency{0.2e-6, 0.8e-6, 1, true}) == Approx(0.4e-6));
  CHECK(run_half_rtt(ProbedLatency{0, 0.8e-6, 1, true}) == Approx(0.8e-6));
  CHECK(run_half_rtt(ProbedLatency{0.3e-6, 0, 1, true}) == Approx(0.3e-6));
  CHECK(run_half_rtt(ProbedLatency{}) == 0);

  // From a trace: round trips of 1200 and 1000 ns halved, 600 and 500 ns (sqrt: 548 ns): the 0.66 us
  // calibration of the three is the run's period (the 0.17 us one is not, and one has no
  // measurement).
  const auto run = run_with_round_trips({{1200, 1000}});
  const CalibrationParams fast = calibration(0.17e-6, 3.5e-6), slow = calibration(0.66e-6, 4.5e-6), blank;
  const CalibrationParams* three[] = {&blank, &fast, &slow};
  const auto t = choose_by_period(run, three);
  CHECK(t.by_probe);
  CHECK(t.index == 2);
  CHECK(t.in_period);
  CHECK(t.run_s == Approx(std::sqrt(600e-9 * 500e-9)));
  // Two of the run's period: the first given, though the second is nearer (0.75 us: 600 ns is
  // within 30% above, 500 ns not below half; 0.64 us nearer by ratio). Two calibrations of one
  // period differ by their noise; the order is the user's.
  const CalibrationParams in_a = calibration(0.75e-6, 4e-6), in_b = calibration(0.64e-6, 4e-6);
  const CalibrationParams* both_in[] = {&fast, &in_a, &in_b};
  CHECK(choose_by_period(run, both_in).index == 1);
  const CalibrationParams* b_first[] = {&in_b, &in_a};
  CHECK(choose_by_period(run, b_first).index == 0);
  // A run that changed period between its probes (halves 1280 and 1008 ns, as a TCP ring of
  // 2026-11-28 did, scaled down ten times) is placed by their mean, 1136 ns: in the period of a
  // calibration of 978 ns (at most 1271), though its MPI_Init probe alone is not and one of 1290
  // ns is nearer.
  const auto straddling = run_with_round_trips({{2560, 2016}});
  const CalibrationParams tcp_before = calibration(0.978e-6, 7.7e-6), tcp_after = calibration(1.29e-6, 9.4e-6);
  CHECK(run_speed_difference(probed_latency(straddling), tcp_before));
  const CalibrationParams* tcp_both[] = {&tcp_before, &tcp_after};
  CHECK(choose_by_period(straddling, tcp_both).index == 0);
  CHECK(choose_by_period(straddling, tcp_both).in_period);
  // None of the run's period: the nearest, and says so.
  const CalibrationParams far_fast = calibration(0.1e-6, 3e-6), far_slow = calibration(3e-6, 9e-6);
  const CalibrationParams* none_in[] = {&far_slow, &fast, &far_fast};
  const auto nearest = choose_by_period(run, none_in);
  CHECK(nearest.by_probe);
  CHECK_FALSE(nearest.in_period);
  CHECK(nearest.index == 1);  // |ln(0.548/0.1445)| = 1.33 against 1.54 (3 us) and 1.86 (0.1 us)
  const CalibrationParams* fast_first[] = {&fast, &slow};
  CHECK(choose_by_period(run_with_round_trips({{300, 340}}), fast_first).index == 0);
  // A run without probes (one rank): the first file.
  CHECK_FALSE(choose_by_period(run_with_round_trips({}), fast_first).by_probe);
  // Each file against the ranks on its own kind of host: ranks 1 (rank 0's host, 600 ns) and 2
  // (another, 6 us). One on one host of 0.7 us (|ln(0.6/0.595)| = 0.008) before one across hosts
  // of 7.5 us (|ln(6/6.375)| = 0.061) and one across of 2 us (1.26); across hosts of 7.5 us before
  // one on one host of 1.5 us (|ln(0.6/1.275)| = 0.75).
  const auto hosts = run_with_round_trips({{1200, 1200}, {12000, 12000}}, {"a", "a", "b"});
  CalibrationParams across = calibration(7.5e-6, 20e-6), across_fast = calibration(2e-6, 10e-6);
  across.meta.pair = across_fast.meta.pair = {0, 1};
  across.meta.hosts = across_fast.meta.hosts = {"x", "y"};
  const CalibrationParams local = calibration(0.7e-6, 4e-6), local_slow = calibration(1.5e-6, 5e-6);
  const CalibrationParams* mixed[] = {&across_fast, &local, &across};
  CHECK(choose_by_period(hosts, mixed).index == 1);
  const CalibrationParams* across_first[] = {&local_slow, &across};
  CHECK(choose_by_period(hosts, across_first).index == 1);
  const CalibrationParams* local_first[] = {&across_fast, &local_slow};
  CHECK(choose_by_period(hosts, local_first).index == 1);  // 0.75 against 1.26
}

TEST_CASE("speed check: a calibration whose phases ran in different periods", "[validation]") {
  ParamsMeta m;
  CHECK_FALSE(mixed_periods(m));
  m.probes_8B = {{"start", 0.266e-6}};
  CHECK_FALSE(mixed_periods(m));  // one probe: nothing to compare
  // 0.266, 0.311, 0.716 us (a quick calibration of 2026-11-29): 0.716 / 0.266 = 2.69 > 1.6.
  m.probes_8B = {{"start", 0.266e-6}, {"after point-to-point", 0.311e-6}, {"after collectives", 0.716e-6}};
  const auto said = mixed_periods(m);
  REQUIRE(said);
  CHECK(said->find("0.266 us start, 0.311 us after point-to-point, 0.716 us after collectives") != std::string::npos);
  CHECK(said->find("2.7 times apart") != std::string::npos);
  // Within one period: 0.236 to 0.296 us, 1.25 times.
  m.probes_8B = {{"start", 0.236e-6}, {"after point-to-point", 0.296e-6}, {"after collectives", 0.27e-6}};
  CHECK_FALSE(mixed_periods(m));
  CHECK(mixed_periods(m, 1.2));  // the bound is the caller's

  // Of two calibrations in the run's period, a mixed one is passed over for the other, even given
  // first; alone in the period it is still chosen before the nearest of another period.
  const auto run = run_with_round_trips({{1200, 1000}});  // halves 600 and 500 ns
  CalibrationParams mixed = calibration(0.66e-6, 4.5e-6), clean = calibration(0.7e-6, 4.5e-6);
  mixed.meta.probes_8B = {{"start", 0.66e-6}, {"after point-to-point", 0.65e-6}, {"after collectives", 0.2e-6}};
  const CalibrationParams* mixed_first[] = {&mixed, &clean};
  CHECK(choose_by_period(run, mixed_first).index == 1);
  const CalibrationParams far = calibration(3e-6, 9e-6);
  const CalibrationParams* mixed_and_far[] = {&far, &mixed};
  CHECK(choose_by_period(run, mixed_and_far).index == 1);
  CHECK(choose_by_period(run, mixed_and_far).in_period);
}
