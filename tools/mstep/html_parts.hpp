// The parts of mstep's HTML pages (report, whatif): escaping, times as people read them, the page's
// head and style, and the timeline of ranks drawn by pixel (model/analysis/activity.hpp) with
// bands of predictions below each rank. Inline SVG and CSS, no script.
#pragma once

#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/analysis/activity.hpp"

namespace mstep::cli {

std::string html_escape(std::string_view s);
// "1.23 s", "45.6 ms", "789 us", "12 ns", "0": three significant digits in the unit that suits.
std::string human_seconds(double s);
// <!DOCTYPE html> to the opening <body> and the page's <h1>.
void html_page_start(std::string& out, std::string_view title);

// The page's notes (problems marked as such, if any of either) and its end, after which `out` is
// written to `os`.
void html_page_end(std::string& out, std::span<const std::string> problems, std::span<const std::string> notes,
                   std::ostream& os);

// A prediction drawn below each rank: computation and MPI time per bin (rows x width of the
// picture), and where it predicts each rank ends (seconds after the picture's zero; may be empty).
struct PredictedBand {
  std::string name;  // "LogGPS", "LogGPS, what-if"
  const std::vector<float>* compute = nullptr;
  const std::vector<float>* mpi = nullptr;
  const std::vector<double>* rank_end_s = nullptr;
};

// The timeline SVG of `ranks` ranks, its legend and a note on how it was drawn.
void html_timeline(std::string& out, const model::ActivityPicture& pic, int ranks, std::span<const PredictedBand> bands);

// Writes the page `write` makes to `output` ("mstep: wrote FILE" on stderr), or to standard output
// when `output` is empty; a file that cannot be written is a one-line error, exit 1.
void emit_page(const std::string& output, const std::function<void(std::ostream&)>& write);

}  // namespace mstep::cli
