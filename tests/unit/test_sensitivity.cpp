// mstep sensitivity's mapping of an added parameter to each model's (model/analysis/sensitivity.hpp),
// by hand, and its sweep grammar.
#include <cmath>

#include <catch2/catch.hpp>

#include "model/analysis/sensitivity.hpp"

using namespace mstep::model;

namespace {

CalibrationParams base() {
  CalibrationParams c;
  LogGPSParams p;
  p.L = 1e-6, p.o = 5e-7, p.Os = 1e-10, p.Or = 2e-10, p.g = 3e-7, p.Gs = 4e-10, p.Gl = 5e-11, p.s = 128, p.S = 8192;
  c.loggps = p;
  MpmParams m;
  m.L = 2e-6, m.g = 1e-9;
  c.mpm = m;
  LinearParams l;
  l.model.below = {1e-6, 1e9};  // T0 1 us, 1 GB/s
  l.model.above = {3e-6, 4e9};
  c.linear = l;
  return c;
}

}  // namespace

TEST_CASE("sensitivity: an added L, o, g or G in each model's terms", "[sensitivity]") {
  const double v = 2e-6;
  {
    const CalibrationParams c = add_to_params(base(), SweepParam::L, v).params;
    CHECK(c.loggps->L == Approx(3e-6));
    CHECK(c.loggps->o == Approx(5e-7));
    CHECK(c.mpm->L == Approx(4e-6));
    CHECK(c.linear->model.below.T0 == Approx(3e-6));
    CHECK(c.linear->model.above.T0 == Approx(5e-6));
  }
  {
    // o is paid at both ends: MPM's and the linear model's one latency a message gains 2 v.
    const CalibrationParams c = add_to_params(base(), SweepParam::o, v).params;
    CHECK(c.loggps->o == Approx(2.5e-6));
    CHECK(c.loggps->L == Approx(1e-6));
    CHECK(c.mpm->L == Approx(6e-6));
    CHECK(c.linear->model.below.T0 == Approx(5e-6));
  }
  {
    const EditedParams e = add_to_params(base(), SweepParam::g, v);
    CHECK(e.params.loggps->g == Approx(2.3e-6));
    CHECK(e.params.mpm->L == Approx(2e-6));  // MPM and linear have no gap
    CHECK(e.notes.size() == 2);
  }
  {
    // G: the apparatus's k G on the wire, every message's: LogGPS's per-byte gaps both (T2 of an
    // eager message and of a delivered rendezvous alike), not its CPU overheads.
    const double G = 1e-9;
    const CalibrationParams c = add_to_params(base(), SweepParam::G, G).params;
    CHECK(c.loggps->Gs == Approx(1.4e-9));
    CHECK(c.loggps->Gl == Approx(1.05e-9));
    CHECK(c.loggps->Os == Approx(1e-10));
    CHECK(c.loggps->Or == Approx(2e-10));
    CHECK(c.mpm->g == Approx(2e-9));
    CHECK(c.linear->model.below.B == Approx(1.0 / (1e-9 + 1e-9)));   // 0.5 GB/s
    CHECK(c.linear->model.above.B == Approx(1.0 / (0.25e-9 + 1e-9)));  // 0.8 GB/s
    // A 16 KiB rendezvous (delivered) arrives k G later: T2 = L + k Gl.
    LogGPSParams raised = *c.loggps, was = *base().loggps;
    raised.rendezvous_model = was.rendezvous_model = RendezvousModel::Delivered;
    CHECK(LogGPS{raised}.T2(16384) - LogGPS{was}.T2(16384) == Approx(16384 * G).epsilon(1e-3));
  }
}

TEST_CASE("sensitivity: the sweep's grammar", "[sensitivity]") {
  const Sweep s = parse_sweep("G=0,0.5ns/B,2ns/B");
  CHECK(s.param == SweepParam::G);
  REQUIRE(s.values.size() == 3);
  CHECK(s.values[0] == 0);
  CHECK(s.values[2] == Approx(2e-9));
  CHECK(s.labels[1] == "0.5ns/B");
  CHECK_THROWS_WITH(parse_sweep("Q=1us"), "--sweep 'Q=1us': the parameter must be L, o, g or G (e.g. --sweep L=0,5us,10us)");
  CHECK_THROWS_WITH(parse_sweep("L="), "--sweep 'L=': give values after '=', e.g. L=0,5us,10us");
}

TEST_CASE("sensitivity: the measured slowdown without the apparatus's own cost", "[sensitivity]") {
  // Baseline 2.0 s; the apparatus armed at 0 took 2.5 s (its own 0.5 s); the point took 3.0 s:
  // the parameter added 0.5 s to a 2.0 s run, 1.25, where the raw ratio says 1.5.
  CHECK(apparatus_slowdown(2.0, 3.0, 2.5) == Approx(1.25));
  CHECK(slowdown(2.0, 3.0) == Approx(1.5));
  CHECK(apparatus_slowdown(2.0, 2.5, 2.5) == 1.0);  // the 0 point itself
  CHECK(apparatus_slowdown(2.0, 1.9, 2.0) == Approx(0.95));  // a point faster than its 0 run
  CHECK(std::isnan(apparatus_slowdown(0.0, 1.0, 1.0)));
}
