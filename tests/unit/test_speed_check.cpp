// model/analysis/speed_check.hpp: two calibrations of one transport compared, before and after a
// validation's runs.
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
                  "again after them); rows whose runs came out in the other period miss by as much");
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
