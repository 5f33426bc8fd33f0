#include "tools/mstep/whatif_html.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "tools/mstep/html_parts.hpp"

namespace mstep::cli {
namespace {

constexpr const char *kBaseline = "#9aa5b1", *kWhatIf = "#4e79a7";

std::string speedup_cell(double s) { return std::isfinite(s) ? fmt::format("{:.3g}x", s) : "inf"; }

void models(std::string& out, const model::WhatIfResult& res) {
  auto it = std::back_inserter(out);
  double most = res.actual_s;
  for (const auto& m : res.models)
    if (m.available) most = std::max({most, std::isfinite(m.baseline_s) ? m.baseline_s : 0.0, std::isfinite(m.whatif_s) ? m.whatif_s : 0.0});
  auto bar = [&](double s, const char* colour) {
    return most > 0 && std::isfinite(s)
               ? fmt::format("<rect width=\"{:.1f}\" height=\"7\" fill=\"{}\"/>", std::max(0.0, 400 * s / most), colour)
               : std::string();
  };
  out += "<h2>Every model, baseline and what-if</h2>\n<table class=\"models\"><tr><th>model</th><th>baseline</th>"
         "<th>what-if</th><th>speedup</th><th></th></tr>\n";
  fmt::format_to(it, "<tr class=\"actual\"><td>actual</td><td>{}</td><td></td><td></td><td></td></tr>\n",
                 human_seconds(res.actual_s));
  for (const auto& m : res.models) {
    if (!m.available) {
      fmt::format_to(it, "<tr class=\"model\"><td>{}</td><td>-</td><td>-</td><td>-</td><td>{}</td></tr>\n",
                     html_escape(m.name), html_escape(m.note));
      continue;
    }
    fmt::format_to(it, "<tr class=\"model\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><svg width=\"404\" height=\"16\">"
                       "{}<g transform=\"translate(0 8)\">{}</g></svg></td></tr>\n",
                   html_escape(m.name), human_seconds(m.baseline_s), human_seconds(m.whatif_s), speedup_cell(m.speedup),
                   bar(m.baseline_s, kBaseline), bar(m.whatif_s, kWhatIf));
  }
  fmt::format_to(it, "</table>\n<p class=\"legend\"><span style=\"background:{}\"></span>baseline <span "
                     "style=\"background:{}\"></span>what-if; speedup = baseline / what-if</p>\n",
                 kBaseline, kWhatIf);
}

void per_rank(std::string& out, const model::WhatIfResult& res) {
  if (res.per_rank.empty()) return;
  auto it = std::back_inserter(out);
  out += "<h2>LogGPS per rank</h2>\n<table class=\"ranks\"><tr><th>rank</th><th>actual</th><th>baseline</th>"
         "<th>what-if</th><th>speedup</th></tr>\n";
  for (std::size_t i = 0; i < res.per_rank.size() && i < 32; ++i) {
    const auto& r = res.per_rank[i];
    fmt::format_to(it, "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", r.rank, human_seconds(r.actual_s),
                   human_seconds(r.baseline_s), human_seconds(r.whatif_s), speedup_cell(model::speedup(r.baseline_s, r.whatif_s)));
  }
  out += "</table>\n";
  if (res.per_rank.size() > 32)
    fmt::format_to(it, "<p class=\"note\">The first 32 of {} ranks; `mstep whatif --format json` lists all.</p>\n",
                   res.per_rank.size());
}

void waits(std::string& out, const std::vector<WhatIfWaitRow>& rows) {
  auto it = std::back_inserter(out);
  out += "<h2>Wait hotspots</h2>\n";
  if (rows.empty()) {
    out += "<p>No call waited.</p>\n";
    return;
  }
  out += "<table class=\"hotspots\"><tr><th>kind</th><th>call</th><th>where</th><th>measured</th><th>LogGPS baseline</th>"
         "<th>LogGPS what-if</th><th>calls</th></tr>\n";
  for (std::size_t i = 0; i < rows.size() && i < 20; ++i) {
    const auto& h = rows[i];
    fmt::format_to(it, "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                   html_escape(h.kind), html_escape(h.call), html_escape(h.where), human_seconds(h.wait_s),
                   human_seconds(h.baseline_s), human_seconds(h.whatif_s), h.count);
  }
  out += "</table>\n";
}

}  // namespace

void write_whatif_html(std::ostream& os, const WhatIfHtml& page) {
  const model::WhatIfResult& res = *page.result;
  std::string out;
  auto it = std::back_inserter(out);
  html_page_start(out, "mstep whatif: " + res.trace);
  fmt::format_to(it, "<p>{} ranks, {}; actual run time <b>{}</b>; baseline parameters {}{}</p>\n<p>Changes:</p><ul>",
                 res.ranks, res.complete ? "complete" : "incomplete", human_seconds(res.actual_s),
                 html_escape(page.params_file), page.network.empty() ? "" : "; network " + html_escape(page.network));
  for (const auto& c : page.changes) fmt::format_to(it, "<li class=\"change\">{}</li>", html_escape(c));
  if (page.changes.empty()) out += "<li>none</li>";
  out += "</ul>\n";
  models(out, res);
  out += "<h2>Timeline</h2>\n";
  if (page.picture) {
    const model::ActivityPicture& pic = *page.picture;
    std::vector<double> base_end(static_cast<std::size_t>(res.ranks), 0.0), whatif_end(base_end);
    for (const auto& r : res.per_rank)
      if (r.rank >= 0 && r.rank < res.ranks) base_end[static_cast<std::size_t>(r.rank)] = r.baseline_s,
                                               whatif_end[static_cast<std::size_t>(r.rank)] = r.whatif_s;
    const PredictedBand bands[] = {{"LogGPS, baseline", &pic.predicted_compute, &pic.predicted_mpi, &base_end},
                                   {"LogGPS, what-if", &page.whatif_compute, &page.whatif_mpi, &whatif_end}};
    html_timeline(out, pic, res.ranks, bands);
  } else {
    fmt::format_to(it, "<p class=\"note\">{}</p>\n", html_escape(page.picture_note));
  }
  per_rank(out, res);
  waits(out, page.waits);
  html_page_end(out, res.problems, page.notes, os);
}

}  // namespace mstep::cli
