// What build_report and build_report_streamed share: a model's row, and how many unmatched
// messages the problems list names one by one.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "model/analysis/report.hpp"
#include "model/cost/bspwb.hpp"

namespace mstep::model::detail {

inline constexpr std::size_t kMaxUnmatchedShown = 10;

inline ModelResult result(std::string name, double actual, double predicted) {
  ModelResult m;
  m.name = std::move(name);
  m.available = true;
  m.predicted_s = predicted;
  m.error_pct = error_pct(actual, predicted);
  return m;
}

inline ModelResult missing(std::string name, std::string note) {
  ModelResult m;
  m.name = std::move(name);
  m.note = std::move(note);
  return m;
}

}  // namespace mstep::model::detail
