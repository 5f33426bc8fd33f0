// The numerics of calibration: medians that survive descheduled samples, weighted and robust lines,
// a curve cut into segments where its points leave the line, the synchronous boundary of a sweep.
// What they make of the measurements (LogGPS, BSPWB) is in loggps_fit.cpp.
#include "model/params/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace mstep::model {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMadToSigma = 1.4826;

double weight_of(const XY& p, Weighting w) {
  if (w == Weighting::Absolute) return 1.0;
  if (p.y == 0 || !std::isfinite(p.y))
    throw std::invalid_argument(fmt::format("relative fit: time {} at x = {} cannot weigh", p.y, p.x));
  return 1.0 / (p.y * p.y);
}

// Residual of one point against a line, in the unit the weighting minimises.
double residual(const LineFit& f, const XY& p, Weighting w) {
  const double r = p.y - f(p.x);
  return w == Weighting::Relative ? r / p.y : r;
}

// Deviation of a point from the prediction of a line, for the leave-the-fit test.
double deviation(const LineFit& f, const XY& p, Weighting w) {
  const double predicted = f(p.x);
  if (w == Weighting::Absolute) return p.y - predicted;
  const double scale = predicted > 0 ? predicted : std::abs(p.y);
  return scale > 0 ? (p.y - predicted) / scale : 0.0;
}

std::vector<XY> select(std::span<const XY> points, std::size_t begin, std::size_t end,
                       const std::vector<bool>& excluded) {
  std::vector<XY> out;
  for (std::size_t i = begin; i < end; ++i)
    if (!excluded[i]) out.push_back(points[i]);
  return out;
}

// Weighted sum of squared residuals of the best line through points[begin, end) (minus excluded).
double segment_cost(std::span<const XY> points, std::size_t begin, std::size_t end,
                    const std::vector<bool>& excluded, Weighting w) {
  const std::vector<XY> sel = select(points, begin, end, excluded);
  if (sel.size() < 2) return std::numeric_limits<double>::infinity();
  const LineFit f = fit_line_weighted(sel, w);
  double sum = 0;
  for (const XY& p : sel) sum += std::pow(residual(f, p, w), 2);
  return sum;
}

// Standard error of a weighted line's prediction at x, relative to the prediction (absolute for
// Absolute weighting), with the noise level taken as the larger of the fit's own residual and a
// fifth of the tolerance (few points underestimate their scatter).
double prediction_error(const std::vector<XY>& pts, const LineFit& f, double x, const SegmentOptions& o) {
  if (pts.size() < 2) return 0.0;
  double sw = 0, sx = 0;
  for (const XY& p : pts) {
    const double w = weight_of(p, o.weighting);
    sw += w, sx += w * p.x;
  }
  const double xm = sx / sw;
  double sxx = 0;
  for (const XY& p : pts) sxx += weight_of(p, o.weighting) * (p.x - xm) * (p.x - xm);
  const double sigma = std::max(o.weighting == Weighting::Relative ? f.rel_rms : f.abs_rms, o.tolerance / 5);
  const double var = sigma * sigma * (1 / sw + (sxx > 0 ? (x - xm) * (x - xm) / sxx : 0.0));
  const double se = std::sqrt(var);
  if (o.weighting == Weighting::Absolute) return se;
  const double predicted = f(x);
  return predicted > 0 ? se / predicted : 0.0;
}


}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

double RobustSummary::relative_error() const {
  if (kept == 0 || median == 0) return std::numeric_limits<double>::infinity();
  return 1.2533 * mad / std::sqrt(static_cast<double>(kept)) / std::abs(median);
}

RobustSummary robust_summary(std::span<const double> samples, double cut, double stretch, double slack) {
  RobustSummary s;
  s.samples = samples.size();
  if (samples.empty()) {
    s.median = kNaN;
    return s;
  }
  std::vector<double> all(samples.begin(), samples.end());
  std::sort(all.begin(), all.end());
  const double low = all[(all.size() - 1) / 5];
  const double limit = low >= 0 ? stretch * low + slack : low + slack;
  std::vector<double> unstretched;
  for (double x : all)
    if (x <= limit) unstretched.push_back(x);
  const double m = median(unstretched);
  std::vector<double> dev;
  dev.reserve(unstretched.size());
  for (double x : unstretched) dev.push_back(std::abs(x - m));
  s.mad = kMadToSigma * median(dev);
  std::vector<double> kept;
  for (double x : unstretched)
    if (std::abs(x - m) <= cut * s.mad) kept.push_back(x);
  if (kept.empty()) kept = unstretched;  // MAD 0 with scattered values: keep what the first cut kept
  s.kept = kept.size();
  s.median = median(kept);
  return s;
}

LineFit fit_line_weighted(std::span<const XY> points, Weighting weighting) {
  if (points.empty()) throw std::invalid_argument("line fit of no points");
  double sw = 0, sx = 0, sy = 0;
  for (const XY& p : points) {
    const double w = weight_of(p, weighting);
    sw += w, sx += w * p.x, sy += w * p.y;
  }
  const double xm = sx / sw, ym = sy / sw;
  // Centred sums: sizes run to megabytes and times to microseconds.
  double sxx = 0, sxy = 0;
  for (const XY& p : points) {
    const double w = weight_of(p, weighting);
    sxx += w * (p.x - xm) * (p.x - xm);
    sxy += w * (p.x - xm) * (p.y - ym);
  }
  LineFit f;
  f.points = points.size();
  f.slope = sxx > 0 ? sxy / sxx : 0.0;
  f.intercept = ym - f.slope * xm;
  double rel = 0, abs_sum = 0;
  for (const XY& p : points) {
    const double r = p.y - f(p.x);
    abs_sum += r * r;
    rel += p.y != 0 ? (r / p.y) * (r / p.y) : 0.0;
  }
  const auto n = static_cast<double>(points.size());
  f.rel_rms = std::sqrt(rel / n);
  f.abs_rms = std::sqrt(abs_sum / n);
  return f;
}

RobustLineFit fit_line_robust(std::span<const XY> points, Weighting weighting, double cut,
                              double floor) {
  RobustLineFit out;
  out.outlier.assign(points.size(), false);
  out.fit = fit_line_weighted(points, weighting);
  const std::size_t keep_at_least = std::max<std::size_t>(2, (points.size() + 1) / 2);
  for (int round = 0; round < 3 && points.size() > 2; ++round) {
    std::vector<double> r(points.size());
    std::vector<double> abs_r;
    for (std::size_t i = 0; i < points.size(); ++i) {
      r[i] = residual(out.fit, points[i], weighting);
      if (!out.outlier[i]) abs_r.push_back(std::abs(r[i]));
    }
    double sigma = kMadToSigma * median(abs_r);
    if (weighting == Weighting::Relative) sigma = std::max(sigma, floor);
    else sigma = std::max(sigma, floor * std::abs(out.fit(points[points.size() / 2].x)));
    std::vector<bool> next(points.size());
    std::size_t kept = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      next[i] = std::abs(r[i]) > cut * sigma;
      if (!next[i]) ++kept;
    }
    if (kept < keep_at_least || next == out.outlier) break;
    out.outlier = next;
    out.fit = fit_line_weighted(select(points, 0, points.size(), out.outlier), weighting);
  }
  return out;
}

std::vector<Segment> segment_curve(std::span<const XY> points, const SegmentOptions& o) {
  const std::size_t n = points.size();
  std::vector<Segment> segs;
  if (n == 0) return segs;
  const std::size_t min_points = std::max<std::size_t>(2, o.min_points);
  const std::size_t confirm = std::max<std::size_t>(1, o.confirm);
  std::vector<bool> excluded(n, false);

  std::size_t begin = 0;
  while (begin < n) {
    std::size_t end = std::min(n, begin + min_points);
    while (end < n) {
      const std::vector<XY> sel = select(points, begin, end, excluded);
      LineFit f = fit_line_weighted(sel, o.weighting);
      // Within one protocol time does not fall with size: a falling slope is noise, and
      // extrapolated it would make the next point seem to jump.
      if (f.slope < 0) {
        double sw = 0, sy = 0;
        for (const XY& p : sel) sw += weight_of(p, o.weighting), sy += weight_of(p, o.weighting) * p.y;
        f.slope = 0, f.intercept = sy / sw;
      }
      // Leaving the fit means: further off than the tolerance plus twice the uncertainty of the
      // extrapolated line (a slope fitted over 1..3 bytes says little about 6 bytes).
      auto leaves = [&](const XY& p, double& d) {
        d = deviation(f, p, o.weighting);
        return std::abs(d) > o.tolerance + 2 * prediction_error(sel, f, p.x, o);
      };
      double d = 0;
      if (!leaves(points[end], d)) {
        ++end;
        continue;
      }
      std::size_t leaving = 1;
      for (std::size_t j = end + 1; j < n && leaving < confirm; ++j) {
        double dj = 0;
        if (!leaves(points[j], dj) || (dj > 0) != (d > 0)) break;
        ++leaving;
      }
      if (leaving >= confirm) break;  // a boundary: points[end] opens the next segment
      excluded[end] = true;           // it left alone: an outlier
      ++end;
    }
    Segment s;
    s.begin = begin;
    s.end = end;
    segs.push_back(s);
    begin = end;
  }

  // A segment whose first point is far off the line of its other points (at least min_points of
  // them) did not start there: that point was an outlier just before the boundary.
  for (std::size_t k = 1; k < segs.size(); ++k) {
    Segment& a = segs[k - 1];
    Segment& b = segs[k];
    const std::vector<XY> rest = select(points, b.begin + 1, b.end, excluded);
    if (rest.size() < min_points) continue;
    const LineFit f = fit_line_weighted(rest, o.weighting);
    if (std::abs(deviation(f, points[b.begin], o.weighting)) <= o.tolerance) continue;
    excluded[b.begin] = true;
    a.end = ++b.begin;
  }

  if (o.refine) {
    const std::size_t window = confirm + 1;
    for (std::size_t k = 1; k < segs.size(); ++k) {
      Segment& a = segs[k - 1];
      Segment& b = segs[k];
      // Only backwards: a jump is found exactly where it is, and moving it forwards would only
      // let the earlier line tilt to swallow the first point after the jump.
      const std::size_t lo = std::max(a.begin + 2, b.begin > window ? b.begin - window : 0);
      double best = segment_cost(points, a.begin, b.begin, excluded, o.weighting) +
                    segment_cost(points, b.begin, b.end, excluded, o.weighting);
      std::size_t best_at = b.begin;
      for (std::size_t cut = lo; cut < b.begin; ++cut) {
        const double c = segment_cost(points, a.begin, cut, excluded, o.weighting) +
                         segment_cost(points, cut, b.end, excluded, o.weighting);
        if (c < 0.8 * best) best = c, best_at = cut;
      }
      a.end = b.begin = best_at;
    }
  }

  for (Segment& s : segs) {
    std::vector<XY> sel = select(points, s.begin, s.end, excluded);
    if (sel.empty()) sel.assign(points.begin() + static_cast<std::ptrdiff_t>(s.begin),
                                points.begin() + static_cast<std::ptrdiff_t>(s.end));
    s.fit = fit_line_weighted(sel, o.weighting);
    for (std::size_t i = s.begin; i < s.end; ++i)
      if (excluded[i]) s.outliers.push_back(i);
  }
  return segs;
}

std::size_t synchronous_from(const std::vector<bool>& synchronous) {
  const std::size_t n = synchronous.size();
  // cost(i) = waiting sizes below i + eager sizes from i on; i = n: none waits.
  std::size_t cost = 0;
  for (bool v : synchronous) cost += v ? 0 : 1;  // cost(0)
  std::size_t best = 0, best_cost = cost;
  for (std::size_t i = 1; i <= n; ++i) {
    cost += synchronous[i - 1] ? 1 : 0;
    cost -= synchronous[i - 1] ? 0 : 1;
    if (cost <= best_cost) best = i, best_cost = cost;
  }
  return best;
}

}  // namespace mstep::model
