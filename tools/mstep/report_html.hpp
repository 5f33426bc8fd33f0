// `mstep report --format html`: the report as one self-contained page (inline SVG and CSS, no
// script, nothing fetched): the run's timeline per rank in the manner of Roda et al.'s Figure 1
// (computation, communication and wait, M-step ends; below each rank the run as the LogGPS replay
// predicts it, and where it predicts the rank ends), predicted against actual per model, the wait hotspots
// by call site and the M-steps that miss most. Large runs are drawn by pixel
// (model/analysis/activity.hpp), and the page says how.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "model/analysis/activity.hpp"
#include "model/analysis/report.hpp"
#include "model/trace/trace_dir.hpp"
#include "tools/mstep/report_common.hpp"

namespace mstep::cli {

struct HtmlReport {
  const model::Report* report = nullptr;
  const std::vector<Hotspot>* hotspots = nullptr;
  const RunMeta* meta = nullptr;
  std::string params_file;
  const model::ActivityPicture* picture = nullptr;  // null: no timeline (picture_note says why)
  std::string picture_note;
  std::string latency;          // the run's probed round trip beside the parameters' ("" when not probed)
  std::string latency_warning;  // the sentence when they differ ("" when they do not)
};

void write_report_html(std::ostream& out, const HtmlReport& page);

}  // namespace mstep::cli
