#include "tools/mstep/report_html.hpp"

#include "tools/mstep/html_parts.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace mstep::cli {
namespace {

using model::Report;

constexpr const char* kBar = "#4e79a7";
std::string esc(std::string_view s) { return html_escape(s); }
std::string human(double s) { return human_seconds(s); }

void models(std::string& out, const Report& rep) {
  auto it = std::back_inserter(out);
  double most = rep.actual_s;
  for (const auto& m : rep.models)
    if (m.available && std::isfinite(m.predicted_s)) most = std::max(most, m.predicted_s);
  out += "<h2>Predicted against actual</h2>\n<table class=\"models\"><tr><th>model</th><th>predicted</th>"
         "<th>error</th><th></th></tr>\n";
  auto bar = [&](double s, const char* colour) {
    return most > 0 ? fmt::format("<svg width=\"404\" height=\"12\"><rect width=\"{:.1f}\" height=\"12\" fill=\"{}\"/></svg>",
                                  std::max(0.0, 400 * s / most), colour)
                    : std::string();
  };
  fmt::format_to(it, "<tr class=\"actual\"><td>actual</td><td>{}</td><td></td><td>{}</td></tr>\n", human(rep.actual_s),
                 bar(rep.actual_s, "#555"));
  for (const auto& m : rep.models) {
    if (m.available)
      fmt::format_to(it, "<tr class=\"model\"><td>{}</td><td>{}</td><td>{:+.1f}%</td><td>{}</td></tr>\n", esc(m.name),
                     human(m.predicted_s), m.error_pct, bar(m.predicted_s, kBar));
    else
      fmt::format_to(it, "<tr class=\"model\"><td>{}</td><td>-</td><td>-</td><td>{}</td></tr>\n", esc(m.name), esc(m.note));
  }
  out += "</table>\n<p class=\"note\">error = (actual - predicted) / actual: positive where the model is short.</p>\n";
}

// Per rank: the actual end (MPI_Finalize entry) beside LogGPS's; the 64 ranks it misses most.
void per_rank(std::string& out, const Report& rep) {
  if (rep.loggps_rank_s.size() != rep.rank_actual_s.size() || rep.rank_actual_s.empty()) return;
  std::vector<std::size_t> order(rep.rank_actual_s.size());
  for (std::size_t r = 0; r < order.size(); ++r) order[r] = r;
  auto miss = [&](std::size_t r) { return std::abs(rep.loggps_rank_s[r] - rep.rank_actual_s[r]); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return miss(a) > miss(b); });
  if (order.size() > 64) order.resize(64);
  std::sort(order.begin(), order.end());
  auto it = std::back_inserter(out);
  fmt::format_to(it, "<h2>Per rank</h2>\n<table class=\"ranks\"><tr><th>rank</th><th>actual end</th><th>LogGPS</th>"
                     "<th>error</th></tr>\n");
  for (const std::size_t r : order) {
    const double a = rep.rank_actual_s[r], p = rep.loggps_rank_s[r];
    fmt::format_to(it, "<tr class=\"rank\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", r, human(a), human(p),
                   a > 0 ? fmt::format("{:+.1f}%", 100 * (a - p) / a) : std::string("-"));
  }
  out += "</table>\n";
  if (rep.rank_actual_s.size() > 64)
    fmt::format_to(it, "<p class=\"note\">The 64 of {} ranks LogGPS misses by the most time, in rank order.</p>\n",
                   rep.rank_actual_s.size());
}

void hotspots(std::string& out, const Report& rep, const std::vector<Hotspot>& hot) {
  auto it = std::back_inserter(out);
  out += "<h2>Wait hotspots</h2>\n";
  if (hot.empty()) {
    out += "<p>No call waited.</p>\n";
    return;
  }
  out += "<table class=\"hotspots\"><tr><th>kind</th><th>call</th><th>where</th><th>wait</th><th>LogGPS predicts</th>"
         "<th>calls</th><th>share of run</th><th>ranks</th></tr>\n";
  for (std::size_t i = 0; i < hot.size() && i < 20; ++i) {
    const Hotspot& h = hot[i];
    const std::string where = h.file.empty() ? h.function : fmt::format("{} ({}:{})", h.function, path_basename(h.file), h.line);
    fmt::format_to(it, "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{}</td></tr>\n",
                   model::wait_kind_name(h.kind), esc(h.mpi_call), esc(where), human(h.wait_s),
                   human(h.predicted_wait_s), h.count, share_pct(rep, h.wait_s), h.ranks.size());
  }
  out += "</table>\n";
  if (hot.size() > 20) fmt::format_to(it, "<p class=\"note\">The 20 largest of {} sites; `mstep report --format json` lists all.</p>\n", hot.size());
}

void worst_steps(std::string& out, const Report& rep) {
  std::vector<const model::StepRow*> worst;
  for (const auto& s : rep.steps)
    if (std::isfinite(s.miss_s)) worst.push_back(&s);
  if (worst.empty()) return;
  std::sort(worst.begin(), worst.end(), [](auto* a, auto* b) { return model::misses_more(*a, *b); });
  auto it = std::back_inserter(out);
  fmt::format_to(it, "<h2>M-steps MPM misses most</h2>\n<p>{} M-steps over all ranks; each step on its own.</p>\n"
                     "<table class=\"steps\"><tr><th>rank</th><th>step</th><th>actual</th><th>MPM</th><th>miss</th>"
                     "<th>computation</th><th>bytes in</th><th>bytes out</th></tr>\n",
                 rep.step_count);
  for (std::size_t i = 0; i < worst.size() && i < 20; ++i) {
    const auto& s = *worst[i];
    fmt::format_to(it, "<tr><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                   s.rank, s.step, s.step == 1 ? " (warm-up)" : "", human(s.actual_s), human(s.mpm_s), human(s.miss_s),
                   human(s.compute_s), s.bytes_in, s.bytes_out);
  }
  out += "</table>\n";
}

}  // namespace

void write_report_html(std::ostream& os, const HtmlReport& page) {
  const Report& rep = *page.report;
  std::string out;
  auto it = std::back_inserter(out);
  html_page_start(out, "mstep report: " + rep.trace);
  out += "<p>";

  if (page.meta && !page.meta->command.empty()) {
    std::string cmd;
    for (const auto& a : page.meta->command) cmd += (cmd.empty() ? "" : " ") + a;
    fmt::format_to(it, "<code>{}</code><br>", esc(cmd));
  }
  fmt::format_to(it, "{} ranks, {}; actual run time <b>{}</b> (MPI_Init to {}); {} messages matched; {:.1f}% of all "
                     "ranks' time in MPI{}</p>\n",
                 rep.ranks, rep.complete ? "complete" : "incomplete", human(rep.actual_s),
                 rep.finalized_ranks == rep.ranks ? "MPI_Finalize" : "the last record", rep.messages,
                 share_pct(rep, rep.mpi_s),
                 page.params_file.empty() ? std::string("; no parameters") : "; parameters " + esc(page.params_file));
  if (!page.latency.empty()) fmt::format_to(it, "<p class=\"note\">{}</p>\n", esc(page.latency));
  if (!page.latency_warning.empty())
    fmt::format_to(it, "<p><b>Warning:</b> {}</p>\n", esc(page.latency_warning));
  models(out, rep);
  out += "<h2>Timeline</h2>\n";
  if (page.picture) {
    const model::ActivityPicture& pic = *page.picture;
    std::vector<PredictedBand> bands;
    if (!pic.predicted_compute.empty()) bands.push_back({"LogGPS", &pic.predicted_compute, &pic.predicted_mpi, &rep.loggps_rank_s});
    html_timeline(out, pic, rep.ranks, bands);
  }
  else fmt::format_to(it, "<p class=\"note\">{}</p>\n", esc(page.picture_note));
  per_rank(out, rep);
  hotspots(out, rep, *page.hotspots);
  worst_steps(out, rep);
  html_page_end(out, rep.problems, rep.notes, os);
}

}  // namespace mstep::cli
