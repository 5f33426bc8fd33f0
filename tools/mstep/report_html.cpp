#include "tools/mstep/report_html.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace mstep::cli {
namespace {

using model::ActivityPicture;
using model::Report;

constexpr const char* kCompute = "#4e79a7", *kComm = "#f28e2b", *kWait = "#e15759";
constexpr int kLabelWidth = 96;

std::string esc(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// "1.23 s", "45.6 ms", "789 us", "12 ns": three significant digits in the unit that suits.
std::string human(double s) {
  const double a = std::abs(s);
  if (!std::isfinite(s)) return "-";
  if (s == 0) return "0";
  if (a >= 1) return fmt::format("{:.3g} s", s);
  if (a >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  if (a >= 1e-6) return fmt::format("{:.3g} us", s * 1e6);
  return fmt::format("{:.3g} ns", s * 1e9);
}

// Tick spacing of 1, 2 or 5 times a power of ten giving about `n` ticks over `span`.
double tick_step(double span, int n) {
  const double raw = span / n, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

// Runs of bins of one colour and strength drawn as one rectangle each.
class RunDrawer {
 public:
  RunDrawer(std::string& out, int y, int h) : out_(out), y_(y), h_(h) {}
  void bin(int x, const char* colour, int alpha_quarters) {
    if (colour != colour_ || alpha_quarters != alpha_ || x != end_) flush();
    if (!colour || alpha_quarters == 0) return;
    if (start_ < 0) start_ = x, colour_ = colour, alpha_ = alpha_quarters;
    end_ = x + 1;
  }
  void flush() {
    if (start_ >= 0)
      fmt::format_to(std::back_inserter(out_), "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}/>",
                     kLabelWidth + start_, y_, end_ - start_, h_, colour_,
                     alpha_ == 4 ? "" : fmt::format(" fill-opacity=\"{}\"", alpha_ / 4.0));
    start_ = -1, colour_ = nullptr, alpha_ = 0, end_ = -1;
  }

 private:
  std::string& out_;
  int y_, h_;
  int start_ = -1, end_ = -1, alpha_ = 0;
  const char* colour_ = nullptr;
};

// The dominant activity of a bin and how busy it was (quarters of the bin's capacity, at least 1).
std::pair<const char*, int> look(double c, double m, double w, double capacity) {
  const double total = c + m + w;
  if (total <= 1e-3 * capacity) return {nullptr, 0};
  const char* colour = c >= m && c >= w ? kCompute : m >= w ? kComm : kWait;
  return {colour, std::clamp(static_cast<int>(std::lround(4 * total / capacity)), 1, 4)};
}

void timeline(std::string& out, const Report& rep, const ActivityPicture& pic) {
  const int row_h = pic.rows <= 16 ? 18 : pic.rows <= 64 ? 10 : 5, pred_h = std::max(2, row_h / 2), gap = row_h >= 10 ? 6 : 2;
  const int ticks = 5;  // M-step ends: ticks above each rank's bar, so they hide none of it
  const int pitch = ticks + row_h + pred_h + gap, top = 24, height = top + pic.rows * pitch + 8, width = kLabelWidth + pic.width + 16;
  const bool predicted = !pic.predicted_compute.empty();
  const double bin_s = pic.span_s / pic.width;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                     "viewBox=\"0 0 {} {}\" font-size=\"11\">",
                 width, height, width, height);
  const double step = tick_step(pic.span_s, 8);
  for (double t = 0; t <= pic.span_s * 1.0001; t += step) {
    const double x = kLabelWidth + t / bin_s;
    fmt::format_to(it, "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"grid\"/>"
                       "<text x=\"{0:.1f}\" y=\"14\" text-anchor=\"middle\">{3}</text>",
                   x, top - 4, height - 8, human(t));
  }
  const int drawn_ends = [&] {
    int n = 0;
    for (const auto& e : pic.step_ends) n += static_cast<int>(e.size());
    return n;
  }();
  for (int row = 0; row < pic.rows; ++row) {
    const int first = row * pic.ranks_per_row, last = std::min(rep.ranks, first + pic.ranks_per_row) - 1;
    const int ranks_here = last - first + 1;
    const int y = top + row * pitch + ticks;
    double c = 0, m = 0, w = 0;
    for (int b = 0; b < pic.width; ++b) c += pic.compute[pic.at(row, b)], m += pic.mpi[pic.at(row, b)], w += pic.wait[pic.at(row, b)];
    const std::string name = ranks_here == 1 ? fmt::format("rank {}", first) : fmt::format("ranks {}-{}", first, last);
    fmt::format_to(it, "<g class=\"rank-row\" data-first-rank=\"{}\" data-ranks=\"{}\"><title>{}: computation {}, "
                       "communication {}, wait {}; {} M-steps</title><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                   first, ranks_here, name, human(c), human(m), human(w), pic.steps[static_cast<std::size_t>(row)],
                   kLabelWidth - 6, y + row_h - 2, name);
    RunDrawer actual(out, y, row_h);
    for (int b = 0; b < pic.width; ++b) {
      const auto [colour, alpha] = look(pic.compute[pic.at(row, b)], std::max(0.0f, pic.mpi[pic.at(row, b)]),
                                        pic.wait[pic.at(row, b)], bin_s * ranks_here);
      actual.bin(b, colour, alpha);
    }
    actual.flush();
    if (predicted) {
      RunDrawer below(out, y + row_h + 1, pred_h);
      for (int b = 0; b < pic.width; ++b) {
        const auto [colour, alpha] = look(pic.predicted_compute[pic.at(row, b)], pic.predicted_mpi[pic.at(row, b)], 0,
                                          bin_s * ranks_here);
        below.bin(b, colour, alpha);
      }
      below.flush();
    }
    for (const float e : pic.step_ends[static_cast<std::size_t>(row)])
      fmt::format_to(it, "<line class=\"mstep-end\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>",
                     kLabelWidth + e / bin_s, y - ticks, y - 1);
    if (!rep.loggps_rank_s.empty()) {
      double predicted_end = 0;
      for (int r = first; r <= last && r < static_cast<int>(rep.loggps_rank_s.size()); ++r)
        predicted_end = std::max(predicted_end, rep.loggps_rank_s[static_cast<std::size_t>(r)]);
      const double x = kLabelWidth + std::min(predicted_end, pic.span_s) / bin_s;
      fmt::format_to(it, "<path class=\"loggps-end\" d=\"M{0:.1f} {1} l-4 -5 h8 z\"><title>LogGPS: {2} ends at {3}</title></path>",
                     x, y + row_h + pred_h + 1, name, human(predicted_end));
    }
    out += "</g>";
  }
  out += "</svg>\n";
  fmt::format_to(it,
                 "<p class=\"legend\"><span style=\"background:{}\"></span>computation <span style=\"background:{}\">"
                 "</span>communication (in MPI, not waiting) <span style=\"background:{}\"></span>wait (a receive "
                 "before its message was sent; a collective before its last member arrived) <b>'</b> M-step end (above the bar) "
                 "<b>&#9650;</b> where LogGPS predicts the rank ends</p>\n",
                 kCompute, kComm, kWait);
  std::string how = fmt::format("Each pixel column is {} of the run", human(bin_s));
  if (pic.ranks_per_row > 1) how += fmt::format("; each row sums {} ranks", pic.ranks_per_row);
  how += ". A column shows the activity that took most of its time, paler where the ranks were in none of them "
         "(before MPI_Init's end, after MPI_Finalize's start).";
  if (predicted) how += " Below each rank: the run as the LogGPS replay predicts it (computation, and time in MPI calls in one colour: the replay does not tell waiting from moving data).";
  else how += " The LogGPS prediction is drawn below each rank when the parameters have LogGPS.";
  std::uint64_t steps = 0;
  for (const auto n : pic.steps) steps += n;
  if (static_cast<std::uint64_t>(drawn_ends) < steps)
    how += fmt::format(" M-step ends are drawn where a row has at most one every three pixels ({} of {} drawn).",
                       drawn_ends, steps);
  fmt::format_to(it, "<p class=\"note\">{}</p>\n", esc(how));
}

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
                     human(m.predicted_s), m.error_pct, bar(m.predicted_s, kCompute));
    else
      fmt::format_to(it, "<tr class=\"model\"><td>{}</td><td>-</td><td>-</td><td>{}</td></tr>\n", esc(m.name), esc(m.note));
  }
  out += "</table>\n<p class=\"note\">error = (actual - predicted) / actual: positive where the model is short.</p>\n";
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
  fmt::format_to(it,
                 "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mstep report: {}</title>\n"
                 "<style>body{{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}}h1{{font-size:20px;word-break:break-all}}"
                 "h2{{font-size:16px;margin-top:28px}}table{{border-collapse:collapse}}td,th{{padding:2px 10px;"
                 "text-align:left;border-bottom:1px solid #ddd}}.note{{color:#555;font-size:12px;max-width:1100px}}"
                 ".legend span{{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}}"
                 "svg.timeline text{{fill:#333}}svg.timeline .grid{{stroke:#ddd}}svg.timeline .mstep-end{{stroke:#000;"
                 "stroke-width:1}}svg.timeline .loggps-end{{fill:#000}}.problems{{color:#a00}}</style></head><body>\n",
                 esc(rep.trace));
  fmt::format_to(it, "<h1>mstep report: {}</h1>\n<p>", esc(rep.trace));
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
  models(out, rep);
  out += "<h2>Timeline</h2>\n";
  if (page.picture) timeline(out, rep, *page.picture);
  else fmt::format_to(it, "<p class=\"note\">{}</p>\n", esc(page.picture_note));
  hotspots(out, rep, *page.hotspots);
  worst_steps(out, rep);
  if (!rep.problems.empty() || !rep.notes.empty()) {
    out += "<h2>Notes</h2>\n<ul>";
    for (const auto& p : rep.problems) fmt::format_to(it, "<li class=\"problems\">{}</li>", esc(p));
    for (const auto& n : rep.notes) fmt::format_to(it, "<li>{}</li>", esc(n));
    out += "</ul>\n";
  }
  out += "<p class=\"note\">Written by mstep.</p>\n</body></html>\n";
  os.write(out.data(), static_cast<std::streamsize>(out.size()));
}

}  // namespace mstep::cli
