#include "tools/mstep/html_parts.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>

#include <fmt/format.h>

#include "tools/mstep/output.hpp"

namespace mstep::cli {
namespace {

using model::ActivityPicture;

constexpr const char* kCompute = "#4e79a7", *kComm = "#f28e2b", *kWait = "#e15759";
constexpr int kLabelWidth = 96;

std::string esc_impl(std::string_view s) {
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
std::string human_impl(double s) {
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

// Runs of bins of one colour and strength, drawn as one <path> per colour and strength for the
// whole row (a run costs about 20 bytes: a page of 128 busy rows stays a few MB).
class RunDrawer {
 public:
  RunDrawer(std::string& out, int y, int h) : out_(out), y_(y), h_(h) {}
  void bin(int x, const char* colour, int alpha_quarters) {
    if (colour != colour_ || alpha_quarters != alpha_ || x != end_) close_run();
    if (!colour || alpha_quarters == 0) return;
    if (start_ < 0) start_ = x, colour_ = colour, alpha_ = alpha_quarters;
    end_ = x + 1;
  }
  void finish() {
    close_run();
    for (std::size_t k = 0; k < paths_.size(); ++k) {
      if (paths_[k].empty()) continue;
      const int alpha = static_cast<int>(k % 4) + 1;
      fmt::format_to(std::back_inserter(out_), "<path fill=\"{}\"{} d=\"{}\"/>", kColours[k / 4],
                     alpha == 4 ? "" : fmt::format(" fill-opacity=\"{}\"", alpha / 4.0), paths_[k]);
      paths_[k].clear();
    }
  }

 private:
  static constexpr const char* kColours[] = {kCompute, kComm, kWait};
  void close_run() {
    if (start_ >= 0) {
      const std::size_t c = colour_ == kCompute ? 0 : colour_ == kComm ? 1 : 2;
      fmt::format_to(std::back_inserter(paths_[c * 4 + static_cast<std::size_t>(alpha_ - 1)]), "M{} {}h{}v{}h-{}z",
                     kLabelWidth + start_, y_, end_ - start_, h_, end_ - start_);
    }
    start_ = -1, colour_ = nullptr, alpha_ = 0, end_ = -1;
  }
  std::string& out_;
  int y_, h_;
  int start_ = -1, end_ = -1, alpha_ = 0;
  const char* colour_ = nullptr;
  std::array<std::string, 12> paths_;  // colour x strength
};

// The dominant activity of a bin and how busy it was (quarters of the bin's capacity, at least 1).
std::pair<const char*, int> look(double c, double m, double w, double capacity) {
  const double total = c + m + w;
  if (total <= 1e-3 * capacity) return {nullptr, 0};
  const char* colour = c >= m && c >= w ? kCompute : m >= w ? kComm : kWait;
  return {colour, std::clamp(static_cast<int>(std::lround(4 * total / capacity)), 1, 4)};
}

}  // namespace

std::string html_escape(std::string_view s) { return esc_impl(s); }

void html_page_end(std::string& out, std::span<const std::string> problems, std::span<const std::string> notes,
                   std::ostream& os) {
  if (!problems.empty() || !notes.empty()) {
    out += "<h2>Notes</h2>\n<ul>";
    for (const auto& p : problems) fmt::format_to(std::back_inserter(out), "<li class=\"problems\">{}</li>", esc_impl(p));
    for (const auto& n : notes) fmt::format_to(std::back_inserter(out), "<li>{}</li>", esc_impl(n));
    out += "</ul>\n";
  }
  out += "<p class=\"note\">Written by mstep.</p>\n</body></html>\n";
  os.write(out.data(), static_cast<std::streamsize>(out.size()));
}

void emit_page(const std::string& output, const std::function<void(std::ostream&)>& write) {
  if (output.empty()) {
    write(std::cout);
    std::cout.flush();
    return;
  }
  std::ofstream out(output, std::ios::binary);
  if (out) write(out);
  out.close();
  if (!out) fail(1, fmt::format("cannot write {}", output));
  std::fprintf(stderr, "mstep: wrote %s\n", output.c_str());
}
std::string human_seconds(double s) { return human_impl(s); }

void html_page_start(std::string& out, std::string_view title) {
  fmt::format_to(std::back_inserter(out),
                 "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mstep report: {}</title>\n"
                 "<style>body{{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}}h1{{font-size:20px;word-break:break-all}}"
                 "h2{{font-size:16px;margin-top:28px}}table{{border-collapse:collapse}}td,th{{padding:2px 10px;"
                 "text-align:left;border-bottom:1px solid #ddd}}.note{{color:#555;font-size:12px;max-width:1100px}}"
                 ".legend span{{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}}"
                 "svg.timeline text{{fill:#333}}svg.timeline .grid{{stroke:#ddd}}svg.timeline .mstep-end{{stroke:#000;"
                 "stroke-width:1}}svg.timeline .loggps-end{{fill:#000}}.problems{{color:#a00}}</style></head><body>\n",
                 esc_impl(title));
  fmt::format_to(std::back_inserter(out), "<h1>{}</h1>\n", esc_impl(title));
}

void html_timeline(std::string& out, const ActivityPicture& pic, int ranks, std::span<const PredictedBand> bands) {
  const int row_h = pic.rows <= 16 ? 18 : pic.rows <= 64 ? 10 : 5, pred_h = std::max(2, row_h / 2), gap = row_h >= 10 ? 6 : 2;
  const int ticks = 5;  // M-step ends: ticks above each rank's bar, so they hide none of it
  const int nbands = static_cast<int>(bands.size());
  const int pitch = ticks + row_h + nbands * (pred_h + 1) + gap, top = 24, height = top + pic.rows * pitch + 8;
  const int width = kLabelWidth + pic.width + 16;
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
                   x, top - 4, height - 8, human_impl(t));
  }
  std::uint64_t steps = 0, drawn_ends = 0;
  for (std::size_t r = 0; r < pic.step_ends.size(); ++r) steps += pic.steps[r], drawn_ends += pic.step_ends[r].size();
  for (int row = 0; row < pic.rows; ++row) {
    const int first = row * pic.ranks_per_row, last = std::min(ranks, first + pic.ranks_per_row) - 1;
    const int ranks_here = last - first + 1;
    const int y = top + row * pitch + ticks;
    double c = 0, m = 0, w = 0;
    for (int b = 0; b < pic.width; ++b) c += pic.compute[pic.at(row, b)], m += pic.mpi[pic.at(row, b)], w += pic.wait[pic.at(row, b)];
    const std::string name = ranks_here == 1 ? fmt::format("rank {}", first) : fmt::format("ranks {}-{}", first, last);
    fmt::format_to(it, "<g class=\"rank-row\" data-first-rank=\"{}\" data-ranks=\"{}\"><title>{}: computation {}, "
                       "communication {}, wait {}; {} M-steps</title><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                   first, ranks_here, name, human_impl(c), human_impl(m), human_impl(w), pic.steps[static_cast<std::size_t>(row)],
                   kLabelWidth - 6, y + row_h - 2, name);
    RunDrawer actual(out, y, row_h);
    for (int b = 0; b < pic.width; ++b) {
      const auto [colour, alpha] = look(pic.compute[pic.at(row, b)], std::max(0.0f, pic.mpi[pic.at(row, b)]),
                                        pic.wait[pic.at(row, b)], bin_s * ranks_here);
      actual.bin(b, colour, alpha);
    }
    actual.finish();
    for (const float e : pic.step_ends[static_cast<std::size_t>(row)])
      fmt::format_to(it, "<line class=\"mstep-end\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>",
                     kLabelWidth + e / bin_s, y - ticks, y - 1);
    for (int k = 0; k < nbands; ++k) {
      const PredictedBand& band = bands[static_cast<std::size_t>(k)];
      const int by = y + row_h + 1 + k * (pred_h + 1);
      RunDrawer below(out, by, pred_h);
      for (int b = 0; b < pic.width; ++b) {
        const auto [colour, alpha] = look((*band.compute)[pic.at(row, b)], (*band.mpi)[pic.at(row, b)], 0, bin_s * ranks_here);
        below.bin(b, colour, alpha);
      }
      below.finish();
      if (band.rank_end_s && !band.rank_end_s->empty()) {
        double end = 0;
        for (int r = first; r <= last && r < static_cast<int>(band.rank_end_s->size()); ++r)
          end = std::max(end, (*band.rank_end_s)[static_cast<std::size_t>(r)]);
        fmt::format_to(it, "<path class=\"predicted-end\" d=\"M{0:.1f} {1} l-4 -5 h8 z\"><title>{2}: {3} ends at {4}</title></path>",
                       kLabelWidth + std::min(end, pic.span_s) / bin_s, by + pred_h, esc_impl(band.name), name, human_impl(end));
      }
    }
    out += "</g>";
  }
  out += "</svg>\n";
  fmt::format_to(it,
                 "<p class=\"legend\"><span style=\"background:{}\"></span>computation <span style=\"background:{}\">"
                 "</span>communication (in MPI, not waiting) <span style=\"background:{}\"></span>wait (a receive "
                 "before its message was sent; a collective before its last member arrived) <b>'</b> M-step end "
                 "(above the bar) <b>&#9650;</b> where a prediction has the rank end</p>\n",
                 kCompute, kComm, kWait);
  std::string how = fmt::format("Each pixel column is {} of the run", human_impl(bin_s));
  if (pic.ranks_per_row > 1) how += fmt::format("; each row sums {} ranks", pic.ranks_per_row);
  how += ". A column shows the activity that took most of its time, paler where the ranks were in none of them "
         "(before MPI_Init's end, after MPI_Finalize's start).";
  if (nbands > 0) {
    how += " Below each rank, top to bottom:";
    for (int k = 0; k < nbands; ++k) how += fmt::format("{} the run as {} predicts it", k ? ";" : "", bands[static_cast<std::size_t>(k)].name);
    how += " (computation, and time in MPI calls in one colour: the replay does not tell waiting from moving data).";
  } else {
    how += " A prediction is drawn below each rank when the parameters have LogGPS.";
  }
  if (drawn_ends < steps)
    how += fmt::format(" M-step ends are drawn where a row has at most one every three pixels ({} of {} drawn).",
                       drawn_ends, steps);
  fmt::format_to(it, "<p class=\"note\">{}</p>\n", esc_impl(how));
}

}  // namespace mstep::cli
