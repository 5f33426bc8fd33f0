// `mstep whatif --format html`: the what-if beside the baseline on one self-contained page: every
// model's time under both parameter sets, the run's timeline with the LogGPS replay under each
// below every rank, the ranks' predicted ends and the wait hotspots (html_parts.hpp draws).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "model/analysis/activity.hpp"
#include "model/analysis/whatif.hpp"

namespace mstep::cli {

struct WhatIfWaitRow {
  std::string kind, call, where;
  double wait_s = 0, baseline_s = 0, whatif_s = 0;
  std::uint64_t count = 0;
};

struct WhatIfHtml {
  const model::WhatIfResult* result = nullptr;
  std::vector<std::string> changes;  // "L 163 ns -> 2 us"
  std::vector<std::string> notes;
  std::string params_file, network;
  std::vector<WhatIfWaitRow> waits;
  // The run by pixel, with the baseline's LogGPS prediction in predicted_*; null: no timeline.
  const model::ActivityPicture* picture = nullptr;
  std::vector<float> whatif_compute, whatif_mpi;  // the what-if's LogGPS prediction, same bins
  std::string picture_note;
};

void write_whatif_html(std::ostream& out, const WhatIfHtml& page);

}  // namespace mstep::cli
