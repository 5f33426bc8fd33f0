#include "tools/calibrate/fits_to_params.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/params/fit.hpp"

namespace mstep::calib {

namespace {

model::CurveSegment segment_of(const std::string& curve, const std::vector<model::PrttPoint>& pts,
                               std::size_t begin, std::size_t end, const model::LineFit& f,
                               std::size_t outliers) {
  return {curve, pts[begin].bytes, pts[end - 1].bytes, f.intercept, f.slope, f.rel_rms, f.points, outliers};
}

}  // namespace

model::ColdStart cold_start_of(const ColdStartSamples& samples, const ColdStartSamples& small,
                               model::CalibrationParams& p) {
  model::ColdStart c = model::fit_cold_start(samples.rtt, samples.send, samples.bytes);
  const bool small_pays = model::fit_cold_start(small.rtt, small.send, small.bytes).messages > 0;
  // The sizes that pay: the eager sizes of the protocol the measured size uses. Below s, where
  // there is a short protocol of its own (s < S), messages travel inside the FIFO element and do
  // not pay (shared memory); where s = S (TCP: one eager protocol), every eager size does unless
  // the small size measured did not.
  if (p.loggps) {
    c.to = p.loggps->S;
    c.from = model::cold_start_from(p.loggps->s, p.loggps->S, samples.bytes,
                                    !small_pays && !small.rtt.empty() ? std::optional(small.bytes) : std::nullopt);
  }
  if (samples.bytes < c.from || samples.bytes >= c.to) {
    p.meta.notes.push_back(fmt::format("cold start not measured: {} B is not an eager size here (eager: below {} B; "
                                       "short protocol below {} B)",
                                       samples.bytes, c.to, p.loggps ? p.loggps->s : 0));
    c.messages = 0;
  } else if (c.messages > 0) {
    p.meta.notes.push_back(fmt::format("cold start: the first {} messages of a pair cost {:.1f} us more to send "
                                       "and {:.1f} us more to receive ({} B, on the fresh pair); charged to {} B..{} B "
                                       "({} B messages, measured just before, {})",
                                       c.messages, c.send * 1e6, c.recv * 1e6, samples.bytes, c.from, c.to - 1,
                                       small.bytes, small_pays ? "paid too" : "did not pay"));
  }
  return c;
}

model::CalibrationParams build_params(const Pt2ptResult& pt, const PatternResult& pat,
                                      const PatternOptions& pat_opt, const BroadcastResult& bc,
                                      std::uint64_t bcast_bytes, int processes) {
  model::CalibrationParams out;
  out.warnings = pt.warnings;
  out.raw = pt.raw;

  // LogGPS. Needs two sizes below S; if every size waits, fit as if none did and keep S.
  std::size_t below = 0;
  for (const auto& p : pt.points) below += p.bytes < pt.S ? 1 : 0;
  model::LoggpsFit lf = below >= 2 ? model::derive_loggps(pt.points, pt.S)
                                   : model::derive_loggps(pt.points, model::kInfiniteBytes);
  if (below < 2) {
    lf.params.S = pt.S;
    out.warnings.push_back(fmt::format("fewer than two sizes below S = {} bytes: o, Os, Or, L fitted over all sizes", pt.S));
  }
  lf.params.P = static_cast<std::uint32_t>(processes);
  lf.params.rendezvous_push = pt.push;
  out.loggps = lf.params;
  if (pt.push_bytes > 0)
    out.meta.notes.push_back(fmt::format(
        "rendezvous progress: a receiver's Wait for {} B took {:.1f} us while its sender computed {:.1f} us after its "
        "Isend: the data {} (rendezvous_push {})",
        pt.push_bytes, 1e6 * pt.push_wait, 1e6 * pt.push_compute,
        pt.push ? "leaves only once the sender is back inside MPI" : "moves without the sender", pt.push));
  out.warnings.insert(out.warnings.end(), lf.warnings.begin(), lf.warnings.end());
  out.meta.S_fit = lf.S_fit;
  double worst_rtt = 0, worst_gap = 0;
  for (const auto& s : lf.rtt_segments) {
    out.segments.push_back(segment_of("half_rtt", pt.points, s.begin, s.end, s.fit, s.outliers.size()));
    worst_rtt = std::max(worst_rtt, s.fit.rel_rms);
  }
  for (const auto& s : lf.gap_segments) {
    out.segments.push_back(segment_of("gap", pt.points, s.begin, s.end, s.fit, s.outliers.size()));
    worst_gap = std::max(worst_gap, s.fit.rel_rms);
  }
  const std::size_t n_below = std::max<std::size_t>(below, 1);
  out.segments.push_back(segment_of("send_overhead", pt.points, 0, n_below, lf.send_fit, 0));
  out.segments.push_back(segment_of("recv_overhead", pt.points, 0, n_below, lf.recv_fit, 0));
  out.meta.residuals["half_rtt"] = worst_rtt;
  out.meta.residuals["gap"] = worst_gap;
  out.meta.residuals["send_overhead"] = lf.send_fit.rel_rms;
  out.meta.residuals["recv_overhead"] = lf.recv_fit.rel_rms;

  // The two-regime linear model on the half round trips, split at S.
  std::vector<model::XY> lo, hi;
  for (const auto& p : pt.points) (p.bytes < pt.S ? lo : hi).push_back({static_cast<double>(p.bytes), p.half_rtt});
  model::LinearParams lin;
  auto cost = [&](const std::vector<model::XY>& c, double& residual) {
    const model::LineFit f = model::fit_line_robust(c).fit;
    residual = f.rel_rms;
    return model::LinearCost{f.intercept, f.slope > 0 ? 1 / f.slope : std::numeric_limits<double>::infinity()};
  };
  if (lo.size() >= 2 && hi.size() >= 2) {
    lin.model.boundary = pt.S;
    lin.model.below = cost(lo, lin.residual_below);
    lin.model.above = cost(hi, lin.residual_above);
  } else {
    std::vector<model::XY> all = lo;
    all.insert(all.end(), hi.begin(), hi.end());
    lin.model.boundary = model::kInfiniteBytes;
    lin.model.below = lin.model.above = cost(all, lin.residual_below);
    lin.residual_above = lin.residual_below;
  }
  out.linear = lin;
  out.meta.residuals["linear.below"] = lin.residual_below;
  out.meta.residuals["linear.above"] = lin.residual_above;

  // BSPWB / MPM.
  const model::BspwbFit bf = model::fit_bspwb(pat_opt.h, pat.patterns);
  model::MpmParams mpm;
  mpm.g = bf.all.slope, mpm.L = bf.all.intercept, mpm.residual = bf.all.rel_rms, mpm.h = pat_opt.h;
  for (std::size_t i = 0; i < bf.patterns.size(); ++i) {
    const auto& f = bf.patterns[i].fit;
    mpm.patterns.push_back({bf.patterns[i].name, f.slope, f.intercept, f.rel_rms, pat.patterns[i].seconds});
    out.meta.residuals["mpm." + bf.patterns[i].name] = f.rel_rms;
  }
  out.meta.residuals["mpm"] = bf.all.rel_rms;
  // One line across the eager and rendezvous ranges by design (the paper's fit): 25% is usual.
  if (bf.all.rel_rms > 0.4)
    out.warnings.push_back(fmt::format("BSPWB fit T(h) = g h + L: residual {:.0f}% (over 40%)", 100 * bf.all.rel_rms));
  out.mpm = mpm;

  model::BroadcastParams b;
  b.bytes = bcast_bytes;
  b.network.nodes = bc.nodes;
  b.network.latency = bc.latency;
  b.network.injection = bc.injection;
  for (double& x : b.network.latency) x = std::max(0.0, x);
  out.broadcast = b;
  return out;
}

}  // namespace mstep::calib
