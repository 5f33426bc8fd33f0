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

std::string bytes_text(double b) {
  if (b >= 1048576 && std::fmod(b, 1048576) == 0) return fmt::format("{} MiB", b / 1048576);
  if (b >= 1024 && std::fmod(b, 1024) == 0) return fmt::format("{} KiB", b / 1024);
  return fmt::format("{} B", b);
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

LoggpsFit derive_loggps(std::span<const PrttPoint> points, std::uint64_t S_measured,
                        const SegmentOptions& options, double residual_warning) {
  LoggpsFit out;
  for (std::size_t i = 1; i < points.size(); ++i)
    if (points[i].bytes <= points[i - 1].bytes)
      throw std::invalid_argument("LogGPS fit: message sizes must be strictly ascending");
  auto curve = [&](double PrttPoint::*field, std::uint64_t below) {
    std::vector<XY> c;
    for (const PrttPoint& p : points)
      if (p.bytes < below) c.push_back({static_cast<double>(p.bytes), p.*field});
    return c;
  };
  const std::uint64_t S = S_measured;
  if (curve(&PrttPoint::half_rtt, S).size() < 2)
    throw std::invalid_argument(fmt::format(
        "LogGPS fit: needs at least two message sizes below S = {} bytes", S));
  LogGPSParams& P = out.params;
  P.S = S;

  const std::vector<XY> rtt = curve(&PrttPoint::half_rtt, kInfiniteBytes);
  const std::vector<XY> gap = curve(&PrttPoint::gap, kInfiniteBytes);
  // The direct test has placed S: each curve is segmented below S and from S on separately, so
  // that no line straddles the protocol change (on a sparse grid the steep line of the eager
  // sizes, extrapolated, can meet the rendezvous sizes again and hide the jump).
  std::size_t at_S = 0;
  while (at_S < points.size() && points[at_S].bytes < S) ++at_S;
  auto split_segments = [&](const std::vector<XY>& c) {
    std::vector<Segment> below = segment_curve(std::span<const XY>(c).first(at_S), options);
    const std::vector<Segment> above = segment_curve(std::span<const XY>(c).subspan(at_S), options);
    for (Segment sg : above) {
      sg.begin += at_S, sg.end += at_S;
      for (std::size_t& i : sg.outliers) i += at_S;
      below.push_back(std::move(sg));
    }
    return below;
  };
  out.rtt_segments = split_segments(rtt);
  out.gap_segments = split_segments(gap);

  // S_fit: where the half round trip jumps. With S measured, whether the first size from S on
  // leaves the line of the sizes below it; without, the boundary with the largest jump (> 30%).
  if (S != kInfiniteBytes) {
    if (at_S < rtt.size()) {
      const Segment* last_below = nullptr;
      for (const Segment& sg : out.rtt_segments)
        if (sg.end <= at_S) last_below = &sg;
      const Segment* first_above = nullptr;
      for (const Segment& sg : out.rtt_segments)
        if (sg.begin == at_S) first_above = &sg;
      const double x = rtt[at_S].x;
      const double before = last_below->fit(x);
      const double after = first_above->fit.points >= 2 ? first_above->fit(x) : rtt[at_S].y;
      if (before > 0 && std::abs(after / before - 1) > options.tolerance) out.S_fit = static_cast<std::uint64_t>(x);
      else
        out.warnings.push_back(fmt::format(
            "sends wait from S = {} bytes, but the half round trip does not jump there", S));
    }
  } else {
    double best = 0.3;
    for (std::size_t k = 1; k < out.rtt_segments.size(); ++k) {
      const double at = rtt[out.rtt_segments[k].begin].x;
      // Compare the two fits where the new segment starts: single points may be outliers.
      const double before = out.rtt_segments[k - 1].fit(at);
      const double jump = before > 0 ? out.rtt_segments[k].fit(at) / before - 1 : 0;
      if (jump > best) best = jump, out.S_fit = static_cast<std::uint64_t>(at);
    }
  }

  // s: the first boundary of the gap curve below S, if the short range has two sizes.
  std::uint64_t s = S;
  if (out.gap_segments.size() > 1) {
    const auto at = static_cast<std::uint64_t>(gap[out.gap_segments[1].begin].x);
    if (at < S && curve(&PrttPoint::gap, at).size() >= 2) s = at;
  }
  P.s = s;

  auto robust = [](const std::vector<XY>& c) {
    return c.size() >= 2 ? fit_line_robust(c).fit : fit_line_weighted(c);
  };
  // The small sizes: the first half-RTT segment below S, without its outliers.
  const Segment& first = out.rtt_segments.front();
  std::vector<XY> small_rtt, small_send, small_recv;
  for (std::size_t i = first.begin; i < first.end; ++i) {
    if (points[i].bytes >= S) break;
    if (std::find(first.outliers.begin(), first.outliers.end(), i) != first.outliers.end()) continue;
    const double x = static_cast<double>(points[i].bytes);
    small_rtt.push_back({x, points[i].half_rtt});
    small_send.push_back({x, points[i].send_overhead});
    small_recv.push_back({x, points[i].recv_overhead});
  }
  if (small_rtt.empty()) small_rtt = curve(&PrttPoint::half_rtt, S);
  if (small_send.empty()) small_send = curve(&PrttPoint::send_overhead, S), small_recv = curve(&PrttPoint::recv_overhead, S);
  out.rtt_fit = robust(small_rtt);
  const double o_s = robust(small_send).intercept, o_r = robust(small_recv).intercept;
  // Per-byte overheads: least squares through the small-size value, over everything below S.
  auto through = [](const std::vector<XY>& c, double intercept) {
    LineFit f;
    double num = 0, den = 0;
    for (const XY& p : c) {
      const double w = 1 / (p.y * p.y);
      num += w * p.x * (p.y - intercept), den += w * p.x * p.x;
    }
    f.intercept = intercept;
    f.slope = den > 0 ? num / den : 0;
    double rel = 0;
    for (const XY& p : c) rel += std::pow((p.y - f(p.x)) / p.y, 2);
    f.points = c.size();
    f.rel_rms = c.empty() ? 0 : std::sqrt(rel / static_cast<double>(c.size()));
    return f;
  };
  out.send_fit = through(curve(&PrttPoint::send_overhead, S), o_s);
  out.recv_fit = through(curve(&PrttPoint::recv_overhead, S), o_r);
  // g and Gs from the gap segments below s, without the points they left out.
  std::vector<XY> short_gap;
  for (const Segment& sg : out.gap_segments)
    for (std::size_t i = sg.begin; i < sg.end; ++i)
      if (gap[i].x < static_cast<double>(std::min(s, S)) &&
          std::find(sg.outliers.begin(), sg.outliers.end(), i) == sg.outliers.end())
        short_gap.push_back(gap[i]);
  if (short_gap.empty()) short_gap = curve(&PrttPoint::gap, std::min(s, S));
  out.gap_short_fit = robust(short_gap);
  // Gl: the last gap segments (the largest sizes), taken back from the end until they hold four
  // points over a factor of four in size, but never below s: a short last segment of two or
  // three points is at the mercy of one disturbed size.
  std::vector<XY> long_gap;
  for (std::size_t k = out.gap_segments.size(); k-- > 0;) {
    const Segment& sg = out.gap_segments[k];
    if (gap[sg.begin].x < static_cast<double>(s)) break;
    for (std::size_t i = sg.end; i-- > sg.begin;)
      if (std::find(sg.outliers.begin(), sg.outliers.end(), i) == sg.outliers.end()) long_gap.push_back(gap[i]);
    if (long_gap.size() >= 4 && long_gap.front().x >= 4 * long_gap.back().x) break;
  }
  if (long_gap.size() < 2)
    for (const XY& p : gap)
      if (p.x >= static_cast<double>(s)) long_gap.push_back(p);
  std::reverse(long_gap.begin(), long_gap.end());
  out.gap_long_fit = long_gap.size() >= 2 ? robust(long_gap) : out.gap_short_fit;

  P.o = (o_s + o_r) / 2;
  P.Os = out.send_fit.slope;
  P.Or = out.recv_fit.slope;
  P.L = out.rtt_fit.intercept - 2 * P.o;
  P.g = out.gap_short_fit.intercept;
  P.Gs = out.gap_short_fit.slope;
  P.Gl = out.gap_long_fit.slope;
  // Negative values become 0. A per-byte value says so only when it mattered: when over its
  // range it changed the time by more than 5% of the fixed part (a flat curve's slope is noise).
  auto clamp = [&](double& v, const char* name, double range = 0, double fixed = 0) {
    if (v >= 0) return;
    if (range == 0 || -v * range > 0.05 * std::abs(fixed))
      out.warnings.push_back(fmt::format("{} came out negative ({:.3g}) and was set to 0", name, v));
    v = 0;
  };
  const double below_S = static_cast<double>(std::min(S, points.back().bytes));
  // L = half RTT - 2o can only come out negative where the measured send and receive overheads
  // overlap the transfer (fast periods of shared memory). Clamping L alone would make o + L + o
  // overshoot the half round trip; keep the sum instead: o takes half of it and L is 0.
  if (P.L < 0) {
    out.warnings.push_back(fmt::format(
        "L came out negative ({:.3g} s: o = {:.3g} s is more than half the small-message half round trip "
        "{:.3g} s); o is set to half of it and L to 0, so that o + L + o stays the half round trip",
        P.L, P.o, out.rtt_fit.intercept));
    P.o = std::max(0.0, out.rtt_fit.intercept / 2);
    P.L = 0;
  }
  clamp(P.o, "o");
  // The cost of a small message, o + L + o, against the smallest size's measured half round trip.
  if (const PrttPoint& smallest = points.front(); smallest.bytes < S && smallest.half_rtt > 0) {
    const double model = 2 * P.o + P.L + P.Os * static_cast<double>(smallest.bytes) +
                         P.Or * static_cast<double>(smallest.bytes);
    if (std::abs(model / smallest.half_rtt - 1) > 0.05)
      out.warnings.push_back(fmt::format("o + L + o = {:.3g} s is {:+.0f}% off the measured half round trip of {} B "
                                         "({:.3g} s)", model, 100 * (model / smallest.half_rtt - 1),
                                         smallest.bytes, smallest.half_rtt));
  }
  clamp(P.Os, "Os", below_S, o_s);
  clamp(P.Or, "Or", below_S, o_r);
  clamp(P.g, "g");
  clamp(P.Gs, "Gs", static_cast<double>(std::min(s, points.back().bytes)), P.g);
  clamp(P.Gl, "Gl", static_cast<double>(points.back().bytes), out.gap_long_fit(static_cast<double>(points.back().bytes)));

  // The rendezvous (RendezvousModel::Delivered, H). Measured on shared memory and on TCP alike:
  // from S on, a blocking send takes as long as the half round trip, the sizes' slope is the
  // long gap's Gl (not Os + Gl + Or), and the intercept is more than T4 + T5 + T1 + T2 + T3
  // (UCX over TCP: by 25-30 us). H is that excess: the median, over the sizes from S to 4 S of
  // the first half-round-trip segment from S on, of the measured half round trip less the model's
  // without H. Only up to 4 S: there the handshake is most of the time, and beyond it a slope
  // that differs from Gl (caches, TCP's windows) would move H.
  P.rendezvous_model = RendezvousModel::Delivered;
  P.H = 0;
  for (const Segment& sg : out.rtt_segments) {
    if (sg.begin != at_S || at_S >= rtt.size()) continue;
    std::vector<double> excess;
    for (std::size_t i = sg.begin; i < sg.end; ++i)
      if (std::find(sg.outliers.begin(), sg.outliers.end(), i) == sg.outliers.end() &&
          (i == sg.begin || points[i].bytes < 4 * S))
        excess.push_back(rtt[i].y - LogGPS{P}.end_to_end(points[i].bytes, 0.0, -1.0));
    if (excess.empty()) break;
    const double h = median(excess);
    if (h < 0 && -h > 0.05 * rtt[at_S].y)
      out.warnings.push_back(fmt::format("H came out negative ({:.3g} s: rendezvous sizes took less than "
                                         "T4 + T5 + T1 + T2 + T3) and was set to 0", h));
    P.H = std::max(0.0, h);
    break;
  }

  auto check = [&](const std::string& what, const LineFit& f, double factor = 1,
                   const char* why = "noisy timings?") {
    if (f.points >= 3 && f.rel_rms > factor * residual_warning)
      out.warnings.push_back(fmt::format("{}: fit residual {:.0f}% (over {:.0f}%): {}", what,
                                         100 * f.rel_rms, 100 * factor * residual_warning, why));
  };
  for (const Segment& sg : out.rtt_segments)
    check(fmt::format("half round trip {}..{}", bytes_text(rtt[sg.begin].x),
                      bytes_text(rtt[sg.end - 1].x)), sg.fit);
  for (const Segment& sg : out.gap_segments)
    check(fmt::format("gap {}..{}", bytes_text(gap[sg.begin].x), bytes_text(gap[sg.end - 1].x)),
          sg.fit);
  // One line over all protocols below S cannot follow a jump at s: twice the tolerance there.
  const char* one_line = "a jump at s that one per-byte overhead cannot follow, or noisy timings";
  check("send overhead below S", out.send_fit, 2, one_line);
  check("receive overhead below S", out.recv_fit, 2, one_line);
  return out;
}

BspwbFit fit_bspwb(std::span<const double> h, std::span<const PatternTimes> patterns,
                   Weighting weighting) {
  if (patterns.empty()) throw std::invalid_argument("BSPWB fit: no patterns");
  if (h.size() < 2) throw std::invalid_argument("BSPWB fit: needs at least two h-relations");
  BspwbFit out;
  std::vector<double> sum(h.size(), 0.0);
  for (const PatternTimes& p : patterns) {
    if (p.seconds.size() != h.size())
      throw std::invalid_argument(fmt::format("BSPWB fit: pattern {} has {} times for {} h values",
                                              p.name, p.seconds.size(), h.size()));
    std::vector<XY> c;
    for (std::size_t i = 0; i < h.size(); ++i) {
      c.push_back({h[i], p.seconds[i]});
      sum[i] += p.seconds[i];
    }
    out.patterns.push_back({p.name, fit_line_robust(c, weighting).fit});
  }
  std::vector<XY> avg;
  for (std::size_t i = 0; i < h.size(); ++i)
    avg.push_back({h[i], sum[i] / static_cast<double>(patterns.size())});
  out.all = fit_line_robust(avg, weighting).fit;
  return out;
}

}  // namespace mstep::model
