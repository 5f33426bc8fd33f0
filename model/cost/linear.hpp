// The plain linear model T(n) = T0 + n/B, fitted separately below and above a protocol boundary
// (MODELS.md section 5): the baseline every richer point-to-point model must beat.
#pragma once

#include <cstdint>
#include <span>

namespace mstep::model {

// One line T(n) = T0 + n/B: T0 seconds of start-up, B bytes per second (infinite B: the time
// does not grow with the size).
struct LinearCost {
  double T0 = 0;
  double B = 0;

  double time(std::uint64_t n) const { return T0 + static_cast<double>(n) / B; }
};

// Two lines, one for sizes below `boundary` and one for sizes at and above it (the boundary is
// where the protocol changes, so "at" belongs to the upper regime, like S in LogGPS).
struct TwoRegimeLinearModel {
  LinearCost below;
  LinearCost above;
  std::uint64_t boundary = 0;

  double time(std::uint64_t n) const { return n < boundary ? below.time(n) : above.time(n); }
};

// One measurement: a message of `bytes` took `seconds`.
struct TimedSize {
  std::uint64_t bytes = 0;
  double seconds = 0;
};

// An ordinary least-squares line through samples, and how well it fits.
struct LinearFit {
  LinearCost cost;
  double residual_rms = 0;  // sqrt(mean((t - T(n))^2)), seconds
  std::size_t samples = 0;
};

// Ordinary least squares of seconds on bytes: slope a, intercept b, T0 = b and B = 1/a (a zero
// slope gives B = +infinity; a negative one a negative B, reported rather than hidden). Needs
// at least two distinct sizes, else std::invalid_argument.
LinearFit fit_line(std::span<const TimedSize> samples);

struct TwoRegimeFit {
  TwoRegimeLinearModel model;
  LinearFit below;  // the fit of the samples with bytes < boundary
  LinearFit above;  // the fit of the samples with bytes >= boundary
};

// fit_line on each side of `boundary`; each side needs two distinct sizes.
TwoRegimeFit fit_two_regime(std::span<const TimedSize> samples, std::uint64_t boundary);

}  // namespace mstep::model
