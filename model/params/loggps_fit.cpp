// The machine's parameters from its measurements: LogGPS from the PRTT curves of `mstep calibrate`
// (MODELS.md section 3, with the calibrated rendezvous of model/cost/loggps.hpp) and BSPWB's g and L
// per pattern (section 2), on the numerics of fit.cpp.
#include "model/params/fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace mstep::model {
namespace {

std::string bytes_text(double b) {
  if (b >= 1048576 && std::fmod(b, 1048576) == 0) return fmt::format("{} MiB", b / 1048576);
  if (b >= 1024 && std::fmod(b, 1024) == 0) return fmt::format("{} KiB", b / 1024);
  return fmt::format("{} B", b);
}

}  // namespace

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
