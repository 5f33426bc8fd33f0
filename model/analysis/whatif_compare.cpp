// compare_whatif: the models of `mstep report` under two parameter sets (model/analysis/whatif.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "model/trace/matching.hpp"
#include "model/analysis/report.hpp"
#include "model/trace/timeline.hpp"
#include "model/analysis/whatif.hpp"

namespace mstep::model {
namespace {

using SiteKey = std::tuple<WaitKind, std::int32_t, std::uint32_t, Op>;
SiteKey key_of(const WaitSite& w) { return {w.kind, w.rank, w.callsite, w.op}; }

}  // namespace

double speedup(double baseline_s, double whatif_s) {
  if (whatif_s == 0) return baseline_s == 0 ? 1.0 : std::numeric_limits<double>::infinity();
  return baseline_s / whatif_s;
}

WhatIfResult compare_whatif(const TraceDir& trace, const CalibrationParams& baseline, const CalibrationParams& whatif,
                            unsigned streamed_jobs) {
  // The totals come from build_report itself, so that the baseline column is exactly what
  // `mstep report` says with the same parameter file, whatever terms the models grow.
  const bool streamed = streamed_jobs > 0;
  const Report base = streamed ? build_report_streamed(trace, &baseline, 0, streamed_jobs) : build_report(trace, &baseline);
  const Report what = streamed ? build_report_streamed(trace, &whatif, 0, streamed_jobs) : build_report(trace, &whatif);
  WhatIfResult out;
  out.trace = base.trace;
  out.ranks = base.ranks;
  out.complete = base.complete;
  out.actual_s = base.actual_s;
  out.problems = base.problems;
  out.notes = base.notes;
  for (const auto& n : what.notes)
    if (std::find(out.notes.begin(), out.notes.end(), n) == out.notes.end()) out.notes.push_back("what-if: " + n);

  for (const ModelResult& b : base.models) {
    ModelComparison m;
    m.name = b.name;
    const auto w = std::find_if(what.models.begin(), what.models.end(), [&](const ModelResult& r) { return r.name == b.name; });
    if (w == what.models.end()) continue;
    m.available = b.available && w->available;
    if (m.available) {
      m.baseline_s = b.predicted_s;
      m.whatif_s = w->predicted_s;
      m.speedup = speedup(m.baseline_s, m.whatif_s);
    } else {
      m.note = !b.available ? "baseline: " + b.note : "what-if: " + w->note;
    }
    out.models.push_back(std::move(m));
  }

  // Per rank: the LogGPS replays build_report ran for its totals.
  for (std::size_t r = 0; r < base.loggps_rank_s.size() && r < what.loggps_rank_s.size(); ++r) {
    if (!trace.ranks[r]) continue;
    out.per_rank.push_back({static_cast<std::int32_t>(r), r < base.rank_actual_s.size() ? base.rank_actual_s[r] : 0,
                            base.loggps_rank_s[r], what.loggps_rank_s[r]});
  }

  // Waits: the baseline's are the report's; the what-if's keep the baseline's S for which sends
  // are synchronous (see SiteComparison), so they are measured again with only LogGPS changed.
  WaitOptions options;
  if (baseline.loggps) options.rendezvous_bytes = baseline.loggps->S;
  options.loggps = whatif.loggps;
  std::map<SiteKey, double> what_predicted;
  const auto waits = [&] {
    if (streamed) return measure_waits_streamed(trace, options);
    std::vector<const RankTrace*> ranks;
    for (const auto& r : trace.ranks) ranks.push_back(r ? &*r : nullptr);
    return measure_waits(ranks, match_messages(ranks), Timeline(ranks), options);
  }();
  for (const WaitSite& w : waits)
    what_predicted[key_of(w)] = w.predicted_wait_s;
  for (const WaitSite& b : base.waits) {
    const auto w = what_predicted.find(key_of(b));
    out.sites.push_back({b, w != what_predicted.end() ? w->second : std::numeric_limits<double>::quiet_NaN()});
  }
  return out;
}

}  // namespace mstep::model
