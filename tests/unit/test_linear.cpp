// The two-regime linear model T(n) = T0 + n/B (MODELS.md section 5) and its least-squares fit.
#include <catch2/catch.hpp>

#include <limits>
#include <stdexcept>
#include <vector>

#include "model/cost/linear.hpp"

using namespace mstep::model;

TEST_CASE("An exact line is recovered", "[linear]") {
  // T0 = 2 us, B = 1e9 B/s: t = 2e-6 + n * 1e-9 -> 0 B: 2e-6, 1000 B: 3e-6, 2000 B: 4e-6,
  // 4000 B: 6e-6.
  const std::vector<TimedSize> samples{{0, 2e-6}, {1000, 3e-6}, {2000, 4e-6}, {4000, 6e-6}};
  const LinearFit fit = fit_line(samples);
  CHECK(fit.cost.T0 == Approx(2e-6));
  CHECK(fit.cost.B == Approx(1e9));
  CHECK(fit.residual_rms == Approx(0).margin(1e-15));
  CHECK(fit.samples == 4);
  CHECK(fit.cost.time(3000) == Approx(5e-6));  // 2e-6 + 3000/1e9
}

TEST_CASE("Least squares through scattered points", "[linear]") {
  // (0,1), (1,3), (2,2), (3,4): mean n = 1.5, mean t = 2.5;
  // Snn = 2.25 + 0.25 + 0.25 + 2.25 = 5; Snt = 2.25 - 0.25 - 0.25 + 2.25 = 4;
  // slope = 0.8 -> B = 1.25; T0 = 2.5 - 0.8 * 1.5 = 1.3.
  // Residuals -0.3, 0.9, -0.9, 0.3: squares sum 1.8, mean 0.45, RMS sqrt(0.45) = 0.6708204.
  const std::vector<TimedSize> samples{{0, 1}, {1, 3}, {2, 2}, {3, 4}};
  const LinearFit fit = fit_line(samples);
  CHECK(fit.cost.T0 == Approx(1.3));
  CHECK(fit.cost.B == Approx(1.25));
  CHECK(fit.residual_rms == Approx(0.6708204));
}

TEST_CASE("Two regimes fitted on each side of the boundary", "[linear]") {
  // Below 8192 B: T0 = 1 us, B = 2e9 B/s; from 8192 B on: T0 = 10 us, B = 5e9 B/s.
  //   1024 -> 1e-6 + 0.512e-6 = 1.512e-6;   2048 -> 1e-6 + 1.024e-6 = 2.024e-6;
  //   4096 -> 1e-6 + 2.048e-6 = 3.048e-6;
  //   8192 -> 10e-6 + 1.6384e-6 = 11.6384e-6;   65536 -> 10e-6 + 13.1072e-6 = 23.1072e-6;
  //   1048576 -> 10e-6 + 209.7152e-6 = 219.7152e-6.
  const std::vector<TimedSize> samples{{1024, 1.512e-6},   {2048, 2.024e-6},
                                       {4096, 3.048e-6},   {8192, 11.6384e-6},
                                       {65536, 23.1072e-6}, {1048576, 219.7152e-6}};
  const TwoRegimeFit fit = fit_two_regime(samples, 8192);
  CHECK(fit.below.samples == 3);
  CHECK(fit.above.samples == 3);
  CHECK(fit.model.below.T0 == Approx(1e-6));
  CHECK(fit.model.below.B == Approx(2e9));
  CHECK(fit.model.above.T0 == Approx(10e-6));
  CHECK(fit.model.above.B == Approx(5e9));
  CHECK(fit.model.boundary == 8192);
  // 8191 B is below: 1e-6 + 8191/2e9 = 5.0955e-6; 8192 B is above: 11.6384e-6.
  CHECK(fit.model.time(8191) == Approx(5.0955e-6));
  CHECK(fit.model.time(8192) == Approx(11.6384e-6));
}

TEST_CASE("Linear fit edge cases", "[linear]") {
  // A flat line: slope 0 -> B = +infinity, T(n) = T0 = 5.
  const std::vector<TimedSize> flat{{1, 5}, {2, 5}};
  const LinearFit fit = fit_line(flat);
  CHECK(fit.cost.T0 == 5);
  CHECK(fit.cost.B == std::numeric_limits<double>::infinity());
  CHECK(fit.cost.time(100) == 5);
  // One distinct size cannot give a line.
  const std::vector<TimedSize> one_size{{64, 1}, {64, 2}};
  CHECK_THROWS_AS(fit_line(one_size), std::invalid_argument);
  CHECK_THROWS_AS(fit_line({}), std::invalid_argument);
  // Nothing above the boundary.
  CHECK_THROWS_AS(fit_two_regime(flat, 1000), std::invalid_argument);
}
