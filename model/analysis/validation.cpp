#include "model/analysis/validation.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "model/params/fit.hpp"
#include "model/trace/matching.hpp"

namespace mstep::model {
namespace {

// "gauss n1024", with the experiment in brackets when it is not the main table.
std::string row_name(const std::string& case_name, const std::string& size_label, const std::string& experiment) {
  std::string s = fmt::format("{} {}", case_name, size_label);
  if (!experiment.empty()) s += fmt::format(" [{}]", experiment);
  return s;
}

std::string crossing_column(const ValidationRow& r) {
  if (!r.ok()) return "-";
  return fmt::format("{}/{}", r.sizes.at_or_above, r.sizes.messages());
}

std::string row_note(const ValidationRow& r) {
  std::string note;
  if (!r.ok()) note = "failed: " + r.error;
  if (r.oversubscribed) {
    if (!note.empty()) note += "; ";
    note += fmt::format("oversubscribed: {} ranks on {} cores", r.ranks, r.cores);
  }
  if (r.ok() && r.params_after) {
    if (!note.empty()) note += "; ";
    note += "predicted with the calibration after the runs (the run's period)";
  }
  if (r.ok() && r.params_during) {
    if (!note.empty()) note += "; ";
    note += "predicted with a calibration made during the runs (the run's period)";
  }
  if (r.ok() && r.other_period) {
    if (!note.empty()) note += "; ";
    note += fmt::format("another period: 8 B half round trip {:.2g} / {:.2g} us at Init / Finalize", r.probe_init_s * 1e6,
                        r.probe_finalize_s * 1e6);
  }
  return note;
}

std::string join_args(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

std::string percent(double v) { return std::isfinite(v) ? fmt::format("{:.1f}", v) : "-"; }

}  // namespace

SizesAroundS sizes_around(const TraceDir& trace, std::uint64_t S) {
  SizesAroundS out;
  out.S = S;
  bool any = false;
  for (const auto& rank : trace.ranks) {
    if (!rank) continue;
    for (const Event& e : rank->events) {
      if (!is_p2p_send(e) || e.peer == kNoPeer) continue;
      const std::uint64_t k = e.send_bytes;
      (k >= S ? out.at_or_above : out.below) += 1;
      out.smallest = any ? std::min(out.smallest, k) : k;
      out.largest = any ? std::max(out.largest, k) : k;
      any = true;
    }
  }
  return out;
}

const Prediction* ValidationRow::find(std::string_view model) const {
  for (const auto& p : predictions)
    if (p.model == model) return &p;
  return nullptr;
}

std::size_t median_index(std::span<const double> values) {
  if (values.empty()) return 0;
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const bool na = std::isnan(values[a]), nb = std::isnan(values[b]);
    if (na || nb) return !na && nb;
    return values[a] < values[b];
  });
  return order[(values.size() - 1) / 2];
}

ModelSummary summarize_model(std::span<const ValidationRow> rows, std::string_view model, int ranks) {
  ModelSummary s;
  s.model = std::string(model);
  std::vector<double> abs_errors;
  for (const auto& r : rows) {
    if (!r.ok() || r.ranks != ranks) continue;
    const Prediction* p = r.find(model);
    if (!p || !p->available || !std::isfinite(p->error_pct)) continue;
    abs_errors.push_back(std::abs(p->error_pct));
  }
  s.rows = abs_errors.size();
  if (abs_errors.empty()) return s;
  s.max_abs_error_pct = *std::max_element(abs_errors.begin(), abs_errors.end());
  s.over_10pct = static_cast<std::size_t>(
      std::count_if(abs_errors.begin(), abs_errors.end(), [](double e) { return e > kOverPct; }));
  s.median_abs_error_pct = median(std::move(abs_errors));
  return s;
}

std::vector<ModelSummary> summarize_models(std::span<const ValidationRow> rows, int ranks) {
  std::vector<ModelSummary> out;
  for (const auto model : kValidatedModels) out.push_back(summarize_model(rows, model, ranks));
  return out;
}

std::vector<int> timed_rank_counts(std::span<const ValidationRow> rows, int except) {
  std::vector<int> out;
  for (const auto& r : rows) {
    if (r.ranks == except || std::find(out.begin(), out.end(), r.ranks) != out.end()) continue;
    const auto same = [&](const ValidationRow& x) { return x.ranks == r.ranks; };
    const bool all_fit = std::none_of(rows.begin(), rows.end(), [&](const ValidationRow& x) { return same(x) && x.oversubscribed; });
    const bool any_ran = std::any_of(rows.begin(), rows.end(), [&](const ValidationRow& x) { return same(x) && x.ok(); });
    if (all_fit && any_ran) out.push_back(r.ranks);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<CrossingRow> crossing_rows(std::span<const ValidationRow> rows, int ranks) {
  std::vector<CrossingRow> out;
  for (const auto& r : rows) {
    if (!r.ok() || r.ranks != ranks || !r.sizes.crosses()) continue;
    const Prediction* gps = r.find("LogGPS");
    const Prediction* gp = r.find("LogGP");
    if (!gps || !gp || !gps->available || !gp->available) continue;
    if (!std::isfinite(gps->error_pct) || !std::isfinite(gp->error_pct)) continue;
    CrossingRow c;
    c.experiment = r.experiment;
    c.case_name = r.case_name;
    c.size_label = r.size_label;
    c.ranks = r.ranks;
    c.loggps_abs_error_pct = std::abs(gps->error_pct);
    c.loggp_abs_error_pct = std::abs(gp->error_pct);
    c.tie = std::abs(c.loggps_abs_error_pct - c.loggp_abs_error_pct) <= kTiePct;
    c.loggps_better = !c.tie && c.loggps_abs_error_pct < c.loggp_abs_error_pct;
    out.push_back(std::move(c));
  }
  return out;
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Met: return "met";
    case Verdict::NotMet: return "not met";
    case Verdict::Untested: return "untested";
  }
  return "?";
}

std::vector<Goal> check_goals(std::span<const ValidationRow> rows, int ranks) {
  std::size_t failed = 0;
  for (const auto& r : rows) failed += !r.ok() && r.ranks == ranks;
  const ModelSummary gps = summarize_model(rows, "LogGPS", ranks);
  const std::string failed_note =
      failed ? fmt::format("; {} run{} failed, so the suite is not validated", failed, failed == 1 ? "" : "s") : "";

  std::vector<Goal> goals;
  Goal median_goal{fmt::format("median |LogGPS error| <= {}% at {} ranks", kGoalMedianPct, ranks), Verdict::Untested, ""};
  Goal max_goal{fmt::format("no |LogGPS error| above {}% at {} ranks", kGoalMaxPct, ranks), Verdict::Untested, ""};
  if (gps.rows == 0) {
    median_goal.detail = max_goal.detail = fmt::format("no run at {} ranks has a LogGPS prediction", ranks) + failed_note;
  } else {
    median_goal.verdict = gps.median_abs_error_pct <= kGoalMedianPct && !failed ? Verdict::Met : Verdict::NotMet;
    median_goal.detail = fmt::format("median {:.2f}% over {} run{}", gps.median_abs_error_pct, gps.rows,
                                     gps.rows == 1 ? "" : "s") + failed_note;
    max_goal.verdict = gps.max_abs_error_pct <= kGoalMaxPct && !failed ? Verdict::Met : Verdict::NotMet;
    max_goal.detail = fmt::format("largest {:.2f}%, {} over {}%", gps.max_abs_error_pct, gps.over_10pct, kOverPct) +
                      failed_note;
  }
  goals.push_back(std::move(median_goal));
  goals.push_back(std::move(max_goal));

  Goal cross_goal{"LogGPS better than LogGP wherever messages cross S", Verdict::Untested, ""};
  const auto crossing = crossing_rows(rows, ranks);
  if (crossing.empty()) {
    cross_goal.detail = fmt::format("no run at {} ranks sends a message of S bytes or more", ranks);
  } else {
    std::string worse, ties;
    std::size_t better = 0;
    for (const auto& c : crossing) {
      const std::string name = row_name(c.case_name, c.size_label, c.experiment);
      if (c.loggps_better) ++better;
      else if (c.tie) ties += (ties.empty() ? "" : ", ") + name;
      else worse += (worse.empty() ? "" : ", ") + name;
    }
    cross_goal.verdict = worse.empty() ? Verdict::Met : Verdict::NotMet;
    cross_goal.detail = fmt::format("better on {} of {}", better, crossing.size());
    if (!ties.empty()) cross_goal.detail += fmt::format("; a tie (within {} points) on {}", kTiePct, ties);
    if (!worse.empty()) cross_goal.detail += "; not better on " + worse;
  }
  goals.push_back(std::move(cross_goal));
  return goals;
}

std::string format_signed_pct(double pct, int decimals) {
  if (std::isnan(pct)) return "-";
  if (std::isinf(pct)) return pct > 0 ? "+inf" : "-inf";
  // -0.0 and values that round to zero print as +0.0: the sign of nothing is noise.
  const double scale = std::pow(10.0, decimals);
  if (std::round(std::abs(pct) * scale) == 0) pct = 0;
  return fmt::format("{:+.{}f}", pct, decimals);
}

std::string format_seconds(double s) { return std::isfinite(s) ? fmt::format("{:.6f}", s) : "-"; }

std::string text_table(std::span<const ValidationRow> rows) {
  std::size_t case_w = 12, size_w = 10;  // widened to the longest name
  for (const auto& r : rows) {
    case_w = std::max(case_w, r.case_name.size());
    size_w = std::max(size_w, r.size_label.size());
  }
  std::string out = fmt::format("{:<{}} {:<{}} {:>5} {:>11}", "case", case_w, "size", size_w, "ranks", "actual s");
  for (const auto model : kValidatedModels) out += fmt::format(" {:>11} {:>7}", fmt::format("{} s", model), "err %");
  out += fmt::format(" {:>11}  {}\n", ">=S msgs", "note");
  for (const auto& r : rows) {
    out += fmt::format("{:<{}} {:<{}} {:>5} {:>11}", r.case_name, case_w, r.size_label, size_w, r.ranks,
                       format_seconds(r.actual_s));
    for (const auto model : kValidatedModels) {
      const Prediction* p = r.find(model);
      const bool have = r.ok() && p && p->available;
      out += fmt::format(" {:>11} {:>7}", have ? format_seconds(p->predicted_s) : "-",
                         have ? format_signed_pct(p->error_pct) : "-");
    }
    out += fmt::format(" {:>11}  {}", crossing_column(r), row_note(r));
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  return out;
}

std::string markdown_table(std::span<const ValidationRow> rows) {
  std::string out = "| case | size | args | ranks | actual s |";
  std::string rule = "|---|---|---|--:|--:|";
  for (const auto model : kValidatedModels) {
    out += fmt::format(" {0} s | {0} err % |", model);
    rule += "--:|--:|";
  }
  out += " msgs >= S | note |\n" + rule + "--:|---|\n";
  for (const auto& r : rows) {
    const std::string args = r.args.empty() ? "(none)" : fmt::format("`{}`", join_args(r.args));
    out += fmt::format("| {} | {} | {} | {} | {} |", r.case_name, r.size_label, args, r.ranks, format_seconds(r.actual_s));
    for (const auto model : kValidatedModels) {
      const Prediction* p = r.find(model);
      const bool have = r.ok() && p && p->available;
      out += fmt::format(" {} | {} |", have ? format_seconds(p->predicted_s) : "-",
                         have ? format_signed_pct(p->error_pct) : "-");
    }
    std::string note = row_note(r);
    std::replace(note.begin(), note.end(), '|', '/');
    out += fmt::format(" {} | {} |\n", crossing_column(r), note);
  }
  return out;
}

std::string summary_text(std::span<const ValidationRow> rows, int ranks, bool markdown) {
  const auto summaries = summarize_models(rows, ranks);
  std::string out;
  if (markdown) {
    out += fmt::format("| model | runs at {} ranks | median abs error % | max abs error % | over {}% |\n", ranks, kOverPct);
    out += "|---|--:|--:|--:|--:|\n";
    for (const auto& s : summaries)
      out += fmt::format("| {} | {} | {} | {} | {} |\n", s.model, s.rows, percent(s.median_abs_error_pct),
                         percent(s.max_abs_error_pct), s.over_10pct);
  } else {
    out += fmt::format("{:<8} {:>6} {:>14} {:>12} {:>9}\n", "model", "runs", "median |err| %", "max |err| %",
                       fmt::format("over {}%", kOverPct));
    for (const auto& s : summaries)
      out += fmt::format("{:<8} {:>6} {:>14} {:>12} {:>9}\n", s.model, s.rows, percent(s.median_abs_error_pct),
                         percent(s.max_abs_error_pct), s.over_10pct);
  }
  return out;
}

std::string goals_text(std::span<const ValidationRow> rows, int ranks, bool markdown) {
  const std::string bullet = markdown ? "- " : "  ";
  std::string out = fmt::format("Runs at {} ranks that cross S (a message of S bytes or more), |error| of LogGPS "
                                "against LogGP:\n",
                                ranks);
  if (markdown) out += "\n";
  const auto crossing = crossing_rows(rows, ranks);
  for (const auto& c : crossing)
    out += fmt::format("{}{}: LogGPS {:.2f}%, LogGP {:.2f}%: {}\n", bullet, row_name(c.case_name, c.size_label, c.experiment),
                       c.loggps_abs_error_pct, c.loggp_abs_error_pct,
                       c.loggps_better ? "LogGPS better" : c.tie ? "a tie" : "LogGPS not better");
  if (crossing.empty()) out += bullet + "(none)\n";
  out += markdown ? "\nGoals:\n\n" : "\nGoals:\n";
  for (const auto& g : check_goals(rows, ranks))
    out += fmt::format("{}{}: {} ({})\n", bullet, g.goal, verdict_name(g.verdict), g.detail);
  // Runs whose own round trip says the machine was not in the calibration's state count as they
  // came out; say how many, since their misses are the machine's and not the models'.
  std::size_t runs = 0, other = 0, after = 0, during = 0;
  for (const ValidationRow& r : rows)
    if (r.ok() && r.ranks == ranks && !r.oversubscribed) {
      ++runs;
      other += r.other_period ? 1 : 0;
      after += r.params_after ? 1 : 0;
      during += r.params_during ? 1 : 0;
    }
  if (during)
    out += fmt::format("{}{} of {} runs at {} ranks were predicted with a calibration made during the runs, when a run "
                       "came out of every calibration's period: their own period's\n",
                       bullet, during, runs, ranks);
  if (after)
    out += fmt::format("{}{} of {} runs at {} ranks were predicted with the calibration made after the runs, whose "
                       "8-byte half round trip was nearer theirs than the first calibration's\n",
                       bullet, after, runs, ranks);
  if (other)
    out += fmt::format("{}{} of {} runs at {} ranks came out in another period of the machine than their calibration "
                       "(\"another period\" in the tables): their errors count above as they are\n",
                       bullet, other, runs, ranks);
  return out;
}

}  // namespace mstep::model
