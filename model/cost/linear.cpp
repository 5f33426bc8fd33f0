#include "model/cost/linear.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace mstep::model {

LinearFit fit_line(std::span<const TimedSize> samples) {
  const auto count = static_cast<double>(samples.size());
  double mean_n = 0, mean_t = 0;
  for (const TimedSize& x : samples) {
    mean_n += static_cast<double>(x.bytes);
    mean_t += x.seconds;
  }
  mean_n /= count;
  mean_t /= count;
  // Centred sums: sizes run to megabytes and times to microseconds, so the textbook
  // sum(n^2) - (sum n)^2 / N form would cancel catastrophically.
  double Snn = 0, Snt = 0;
  for (const TimedSize& x : samples) {
    const double dn = static_cast<double>(x.bytes) - mean_n;
    Snn += dn * dn;
    Snt += dn * (x.seconds - mean_t);
  }
  if (samples.size() < 2 || Snn == 0) {
    throw std::invalid_argument(fmt::format(
        "linear fit needs at least two distinct message sizes, got {} sample(s)",
        samples.size()));
  }
  const double slope = Snt / Snn;

  LinearFit fit;
  fit.samples = samples.size();
  fit.cost.T0 = mean_t - slope * mean_n;
  fit.cost.B = slope == 0 ? std::numeric_limits<double>::infinity() : 1 / slope;
  double squares = 0;
  for (const TimedSize& x : samples) {
    // The residual against the fitted line itself (slope, not 1/B, so that B = inf is exact).
    const double r = x.seconds - (fit.cost.T0 + slope * static_cast<double>(x.bytes));
    squares += r * r;
  }
  fit.residual_rms = std::sqrt(squares / count);
  return fit;
}

TwoRegimeFit fit_two_regime(std::span<const TimedSize> samples, std::uint64_t boundary) {
  std::vector<TimedSize> below, above;
  for (const TimedSize& x : samples) (x.bytes < boundary ? below : above).push_back(x);
  if (below.size() < 2 || above.size() < 2) {
    throw std::invalid_argument(fmt::format(
        "two-regime fit at {} bytes: {} sample(s) below and {} at or above, needs two sizes each",
        boundary, below.size(), above.size()));
  }
  TwoRegimeFit out;
  out.below = fit_line(below);
  out.above = fit_line(above);
  out.model = {out.below.cost, out.above.cost, boundary};
  return out;
}

}  // namespace mstep::model
