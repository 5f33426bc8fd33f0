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
