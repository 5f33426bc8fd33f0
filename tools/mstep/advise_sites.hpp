// mstep advise's input: every MPI_Barrier and MPI_Bcast call site of a trace (call, application
// line, communicator size, root, message size), its calls' measured time summed over the ranks,
// and the measured span of each instance where the trace can be streamed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/analysis/advise.hpp"
#include "model/trace/trace_dir.hpp"

namespace mstep::cli {

using model::CollectiveSite;

struct AdviseSites {
  std::vector<CollectiveSite> sites;
  double run_s = 0;                 // slowest rank, MPI_Init exit to MPI_Finalize entry (its own clock)
  std::uint64_t intercomm_calls = 0;
  std::vector<std::string> problems;
  std::vector<int> damaged;  // ranks whose file broke off in a frame the metadata read skipped
  bool spans_measured = false;  // the instances' spans (the trace could be streamed)
};

// Every rank's records read a frame at a time, then (where the trace can be streamed) a streaming
// pass for the instances' spans; the sites in (call, location, size, root, bytes) order.
AdviseSites gather_advise_sites(const TraceDir& trace);

}  // namespace mstep::cli
