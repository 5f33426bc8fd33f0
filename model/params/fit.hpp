// Fitting for `mstep calibrate` (MODELS.md sections 2-5): robust summaries of repeated timings,
// weighted least-squares lines, piecewise fits whose boundaries are placed where the points leave
// the fit (Netgauge's PRTT protocol detection), the LogGPS parameters derived from PRTT-style
// curves, and the BSPWB/MPM g and L from the pattern timings. Pure C++, no MPI.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/cost/loggps.hpp"

namespace mstep::model {

// ---- Robust statistics --------------------------------------------------------------------

// The median (mean of the two middle values for an even count); NaN for no values.
double median(std::vector<double> values);

struct RobustSummary {
  double median = 0;       // median of the samples kept
  double mad = 0;          // 1.4826 * median absolute deviation (a robust sigma) after the first cut
  std::size_t samples = 0;
  std::size_t kept = 0;    // samples left after both cuts
  // The relative uncertainty of the median: 1.2533 * sigma / sqrt(kept) / median.
  double relative_error() const;
};

// Median of the samples after two rejections. Timings on a busy machine are stretched, never
// shortened, and a process that loses its CPU for a time slice stretches a microsecond sample to
// milliseconds; when the machine is busy that can be most samples. So first the samples above
// `stretch` times the 20th percentile plus `slack` are dropped, then of the rest those more than
// `cut` robust sigmas (1.4826 * MAD) from their median. No samples: median NaN.
RobustSummary robust_summary(std::span<const double> samples, double cut = 4.0, double stretch = 1.5,
                             double slack = 2e-6);

// ---- Lines --------------------------------------------------------------------------------

struct XY {
  double x = 0;
  double y = 0;
};

// Absolute: ordinary least squares. Relative: minimise sum(((y - f(x)) / y)^2), i.e. weights
// 1/y^2, so that microsecond and millisecond timings count alike (the right choice for sizes on a
// logarithmic grid from 1 B to 4 MiB).
enum class Weighting : std::uint8_t { Absolute, Relative };

struct LineFit {
  double intercept = 0;
  double slope = 0;
  double rel_rms = 0;  // sqrt(mean(((y - f) / y)^2)) over the points fitted
  double abs_rms = 0;  // sqrt(mean((y - f)^2))
  std::size_t points = 0;

  double operator()(double x) const { return intercept + slope * x; }
};

// Weighted least squares. One point, or points all at one x: slope 0 through their weighted
// mean. No points: std::invalid_argument. Relative weighting needs y != 0 (else
// std::invalid_argument).
LineFit fit_line_weighted(std::span<const XY> points, Weighting weighting = Weighting::Relative);

struct RobustLineFit {
  LineFit fit;
  std::vector<bool> outlier;  // per input point: left out of the final fit
};

// fit_line_weighted, then drop the points whose residual is more than `cut` robust sigmas from
// the line (a sigma of at least `floor` relative, so that an excellent fit does not reject its
// own points) and refit, up to three times. At least half of the points (and two) are kept.
RobustLineFit fit_line_robust(std::span<const XY> points, Weighting weighting = Weighting::Relative,
                              double cut = 4.0, double floor = 0.02);

// ---- Piecewise fits: boundaries where the points leave the fit ------------------------------

struct SegmentOptions {
  Weighting weighting = Weighting::Relative;
  // A point leaves the fit when it is further than this from the line extrapolated from the
  // points before it (relative to the prediction; absolute seconds for Absolute weighting).
  double tolerance = 0.15;
  std::size_t min_points = 3;  // points that start a segment, before anything is judged
  std::size_t confirm = 2;     // consecutive points that must leave on the same side for a boundary
  bool refine = true;          // move each boundary back to where two separate fits fit best
};

struct Segment {
  std::size_t begin = 0;  // [begin, end): indices into the (x-sorted) points
  std::size_t end = 0;
  LineFit fit;            // over the segment's points that are not outliers
  std::vector<std::size_t> outliers;  // indices that left the fit alone, without followers
};

// Netgauge's protocol detection, made robust: grow a segment point by point while each new point
// stays within `tolerance` (plus twice the standard error of the extrapolation) of the line
// fitted to the segment so far. A point that leaves the fit
// starts a new segment only if the next `confirm - 1` points leave it on the same side too;
// otherwise it is an outlier and is left out. A falling line is taken as flat for this test (time
// does not fall with size within one protocol). A new segment whose first point is off the line
// of its other points (at least min_points) gives that point to the earlier segment as an
// outlier. With `refine`, each boundary is then moved back (by
// at most confirm + 1 points) to where the two neighbouring fits together have a residual at
// least 20% smaller, which finds a change of slope where the extrapolation noticed it only later.
// Points must be sorted by x. Fewer than min_points points: one segment.
std::vector<Segment> segment_curve(std::span<const XY> points, const SegmentOptions& options = {});

// ---- LogGPS from PRTT-style measurements (MODELS.md section 3) -----------------------------

// Medians for one message size k between two ranks. Below S:
//   half_rtt      = PRTT(1,0,k)/2                  = o + k Os + L + k Gs + o + k Or
//   gap           = (PRTT(n,0,k) - PRTT(1,0,k))/(n-1) = g + k G (a train of back-to-back sends)
//   send_overhead = time in MPI_Send, sends spaced (PRTT(n,d,k))   = o + k Os
//   recv_overhead = time in MPI_Recv of a message already there   = o + k Or
struct PrttPoint {
  std::uint64_t bytes = 0;
  double half_rtt = 0;
  double gap = 0;
  double send_overhead = 0;
  double recv_overhead = 0;
};

struct LoggpsFit {
  LogGPSParams params;               // P is left at its default; the caller sets it
  std::vector<Segment> rtt_segments;  // over all points, x = bytes
  std::vector<Segment> gap_segments;
  LineFit rtt_fit;        // half_rtt over the first half-RTT segment: the intercept is 2o + L
  LineFit send_fit;       // send_overhead below S: intercept o_s, slope Os
  LineFit recv_fit;       // recv_overhead below S: intercept o_r, slope Or
  LineFit gap_short_fit;  // gap below s: g and Gs
  LineFit gap_long_fit;   // gap over the last gap segments (from s on): Gl
  std::uint64_t S_fit = kInfiniteBytes;  // where the half round trip jumps (see below)
  std::vector<std::string> warnings;
};

// The LogGPS parameters from the curves (points sorted by bytes, at least two below S):
//  - S is `S_measured` (from the direct late-receiver test; kInfiniteBytes: none found). Both
//    curves are segmented below S and from S on separately. S_fit is the first size from S on
//    if the half round trip jumps there (leaves the line below S by more than the tolerance;
//    if not, a warning); without S, the boundary where it jumps most (over 30%), if any.
//  - s is the first boundary of the gap curve below S, where the per-byte gap changes from Gs
//    to Gl (Netgauge detects protocols on this curve); none: s = S.
//  - "Small" sizes are those of the first half-RTT segment (below S). o_s, o_r and 2o + L are
//    the intercepts of send_overhead, recv_overhead and half_rtt fitted over them; o is the mean
//    of o_s and o_r, and L = (2o + L) - 2o, so that T1 + T2 + T3 = o + L + o reproduces the
//    half round trip of small messages (MODELS.md section 3).
//  - Os and Or: slopes of send_overhead and recv_overhead below S through (0, o_s), (0, o_r).
//  - g and Gs: intercept and slope of the gap below s; Gl: slope of the last gap segments (from
//    the end back to four points over a factor of four in size, not below s).
// Negative values are clamped to 0 with a warning; fits whose relative residual exceeds
// `residual_warning` add a warning.
LoggpsFit derive_loggps(std::span<const PrttPoint> points, std::uint64_t S_measured,
                        const SegmentOptions& options = {}, double residual_warning = 0.10);

// Where sends become synchronous in a late-receiver sweep (sizes ascending): the index i that
// misclassifies fewest sizes when all below i are taken as eager and all from i on as
// synchronous; ties go to the larger i (a lone size that waited does not count). No
// synchronous size: synchronous.size().
std::size_t synchronous_from(const std::vector<bool>& synchronous);

// ---- BSPWB / MPM g and L (MODELS.md section 2) ---------------------------------------------

struct PatternTimes {
  std::string name;
  std::vector<double> seconds;  // one per h
};

struct PatternFit {
  std::string name;
  LineFit fit;  // T(h) = g h + L: g = slope, L = intercept
};

struct BspwbFit {
  LineFit all;                      // over the average of the patterns at each h (formula 11)
  std::vector<PatternFit> patterns;
};

// Fits T(h) = g*h + L per pattern and over the per-h average of all patterns (robust, weighted).
// Every pattern needs one time per h; at least two distinct h.
BspwbFit fit_bspwb(std::span<const double> h, std::span<const PatternTimes> patterns,
                   Weighting weighting = Weighting::Relative);

}  // namespace mstep::model
