#include "model/analysis/speed_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/params/fit.hpp"

namespace mstep::model {
namespace {

// The half round trip of the first raw size at or above S (0 when there is none).
double at_S(const CalibrationParams& p, std::uint64_t& size) {
  if (!p.loggps || p.loggps->S == kInfiniteBytes) return 0;
  for (const RawPoint& r : p.raw)
    if (r.bytes >= p.loggps->S) {
      size = r.bytes;
      return r.half_rtt;
    }
  return 0;
}

std::string us(double s) { return fmt::format("{:.3g} us", s * 1e6); }

// model::median, with 0 for no samples (the fields' "not measured").
double median_or_zero(std::vector<double> v) { return v.empty() ? 0.0 : median(std::move(v)); }

}  // namespace

std::optional<std::string> speed_change(const CalibrationParams& before, const CalibrationParams& after,
                                        double tolerance) {
  std::vector<std::string> moved;
  auto compare = [&](const std::string& what, double a, double b) {
    if (a > 0 && b > 0 && std::abs(b / a - 1) > tolerance)
      moved.push_back(fmt::format("{} {} -> {} ({:+.0f}%)", what, us(a), us(b), 100 * (b / a - 1)));
  };
  compare("half round trip of 8 B", before.meta.half_rtt_8B, after.meta.half_rtt_8B);
  std::uint64_t size_before = 0, size_after = 0;
  const double s_before = at_S(before, size_before), s_after = at_S(after, size_after);
  if (size_before == size_after) compare(fmt::format("at {} B (S)", size_before), s_before, s_after);
  if (moved.empty()) return std::nullopt;
  return fmt::format("the machine changed speed during these runs: {} (calibrated again after them); each row is "
                     "predicted with the calibration of its run's period",
                     fmt::join(moved, ", "));
}

namespace {

// The smallest and largest of the calibration's probes (nullopt: fewer than two).
std::optional<std::pair<double, double>> probe_range(const ParamsMeta& meta) {
  const auto& probes = meta.probes_8B;
  if (probes.size() < 2) return std::nullopt;
  const auto [low, high] = std::minmax_element(probes.begin(), probes.end(),
                                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return std::pair{low->second, high->second};
}

}  // namespace

bool spans_periods(const ParamsMeta& meta, double ratio) {
  const auto range = probe_range(meta);
  return range && range->first > 0 && range->second > range->first * ratio;
}

std::optional<std::string> mixed_periods(const ParamsMeta& meta, double ratio) {
  if (!spans_periods(meta, ratio)) return std::nullopt;
  const auto [low, high] = *probe_range(meta);
  std::vector<std::string> seen;
  for (const auto& [at, half] : meta.probes_8B) seen.push_back(fmt::format("{} {}", us(half), at));
  return fmt::format("the 8-byte half round trip moved during the calibration ({}): its phases ran in different "
                     "periods of this machine ({:.2g} times apart), so its point-to-point parameters and its "
                     "collectives describe different states; calibrate again",
                     fmt::join(seen, ", "), high / low);
}

bool calibrated_on_one_host(const CalibrationParams& params) {
  const auto& m = params.meta;
  if (m.pair.size() != 2) return true;
  const auto a = static_cast<std::size_t>(m.pair[0]), b = static_cast<std::size_t>(m.pair[1]);
  if (m.pair[0] < 0 || m.pair[1] < 0 || a >= m.hosts.size() || b >= m.hosts.size()) return true;
  return m.hosts[a] == m.hosts[b];
}

ProbedLatency probed_latency(const TraceDir& trace, bool same_host) {
  ProbedLatency out;
  out.same_host = same_host;
  const auto& hosts = trace.meta.hosts;
  const bool known = hosts.size() == trace.ranks.size() && !hosts.empty();
  std::vector<double> init, finalize;
  for (std::size_t r = 1; r < trace.ranks.size(); ++r) {
    if (!trace.ranks[r]) continue;
    if (known && (hosts[r] == hosts[0]) != same_host) continue;
    bool used = false;
    for (const ClockSync& c : trace.ranks[r]->clocks) {
      // Rank 0 serves the ping-pong and keeps no round trip; a sample of INT64_MAX never finished.
      if (c.rtt_ns <= 0 || c.rtt_ns > 1'000'000'000) continue;
      (c.when == ClockSync::AtInit ? init : finalize).push_back(0.5e-9 * static_cast<double>(c.rtt_ns));
      used = true;
    }
    out.ranks += used ? 1 : 0;
  }
  out.at_init_s = median_or_zero(std::move(init));
  out.at_finalize_s = median_or_zero(std::move(finalize));
  return out;
}

std::optional<std::string> run_speed_difference(const ProbedLatency& run, const CalibrationParams& params,
                                                double tolerance) {
  const double cal = params.meta.half_rtt_8B;
  if (cal <= 0 || (run.at_init_s <= 0 && run.at_finalize_s <= 0)) return std::nullopt;
  // The probe is a best of 8 round trips, the calibration's a median of many: a run in the
  // calibration's state probes up to a third below it here (the ring 0.77-0.91 of it, collectives'
  // benchmark 0.64-1.03, TCP 0.67), so only a probe below half of it says "faster".
  auto off = [&](double probed) { return probed > 0 && (probed > cal * (1 + tolerance) || probed < cal * kProbeFasterBelow); };
  if (!off(run.at_init_s) && !off(run.at_finalize_s)) return std::nullopt;
  std::vector<std::string> seen;
  if (run.at_init_s > 0) seen.push_back(fmt::format("{} at MPI_Init", us(run.at_init_s)));
  if (run.at_finalize_s > 0) seen.push_back(fmt::format("{} at MPI_Finalize", us(run.at_finalize_s)));
  // The ratio said is the measured end farther from the calibration's (a missing one is not).
  auto distance = [&](double probed) { return probed > 0 ? std::abs(probed / cal - 1) : -1.0; };
  const double worst = distance(run.at_init_s) >= distance(run.at_finalize_s) ? run.at_init_s : run.at_finalize_s;
  return fmt::format("the run's 8-byte half round trip ({}; libmstep's clock sync with rank 0) is {:.2g} times the "
                     "parameters' ({}): the machine was not in the state it was calibrated in, and predictions of "
                     "small messages are off by about as much (calibrate again in the run's conditions)",
                     fmt::join(seen, ", "), worst / cal, us(cal));
}

double run_half_rtt(const ProbedLatency& run) {
  if (run.at_init_s > 0 && run.at_finalize_s > 0) return std::sqrt(run.at_init_s * run.at_finalize_s);
  return run.at_init_s > 0 ? run.at_init_s : std::max(run.at_finalize_s, 0.0);
}

PeriodMatch nearest_period(double run_s, std::span<const double> calibrated_s) {
  PeriodMatch m;
  m.run_s = run_s > 0 ? run_s : 0;
  if (!(run_s > 0)) return m;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < calibrated_s.size(); ++i) {
    if (!(calibrated_s[i] > 0)) continue;
    const double distance = std::abs(std::log(run_s / (kProbeOverCalibration * calibrated_s[i])));
    if (distance < best) best = distance, m.index = i, m.by_probe = true;
  }
  return m;
}

PeriodMatch choose_by_period(const TraceDir& trace, std::span<const CalibrationParams* const> candidates) {
  // The probe per kind of host: read at most twice, whatever the number of files.
  std::optional<ProbedLatency> probe[2];
  auto probe_for = [&](const CalibrationParams& p) -> const ProbedLatency& {
    const bool one_host = calibrated_on_one_host(p);
    auto& slot = probe[one_host ? 1 : 0];
    if (!slot) slot = probed_latency(trace, one_host);
    return *slot;
  };
  // A calibration whose phases ran in different periods (spans_periods) only when no other is in
  // the run's period: its point-to-point half describes one state, its collectives another.
  for (const bool take_mixed : {false, true})
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (!take_mixed && spans_periods(candidates[i]->meta)) continue;
      const ProbedLatency& run = probe_for(*candidates[i]);
      const double run_s = run_half_rtt(run), cal = candidates[i]->meta.half_rtt_8B;
      if (cal > 0 && run_s > 0 && run_s <= cal * (1 + kProbeSlowerAbove) && run_s >= cal * kProbeFasterBelow)
        return PeriodMatch{i, true, true, run_s};
    }
  // None in the run's period: the nearest, each on the run's scale for its kind of host (the
  // ratio of the first file's probe to its own).
  std::vector<double> calibrated(candidates.size(), 0.0);
  const double first = candidates.empty() ? 0.0 : run_half_rtt(probe_for(*candidates[0]));
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const double own = run_half_rtt(probe_for(*candidates[i]));
    if (own > 0 && first > 0) calibrated[i] = candidates[i]->meta.half_rtt_8B * first / own;
  }
  return nearest_period(first, calibrated);
}

}  // namespace mstep::model
