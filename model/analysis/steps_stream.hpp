// M-steps, MPM and BSPWB in a streaming pass (model/trace/stream_pass.hpp): what align_steps,
// mpm() and bspwb() compute from a whole trace, computed as the records, messages and collectives
// come, keeping only the steps still needed: a step stays until it is predicted and no step of
// another rank can name it any more (its messages matched, its collectives complete, the steps
// that named it predicted).
//
// The inputs are align_steps' (model/trace/step_alignment.hpp): the recorder's StepTracker run
// again on each rank's records, each received message naming the step its sender sent it in with
// its send point, collectives as partner groups (everybody hears everybody) or pairwise partners
// (rooted). Phi is mpm()'s formula, evaluated in dependency order as steps become ready; the step
// table keeps the `keep_rows` steps whose MPM prediction misses by the most time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format/rank_trace.hpp"
#include "model/analysis/report.hpp"
#include "model/cost/bspwb.hpp"
#include "model/replay/replay.hpp"
#include "model/trace/stream_pass.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {

struct StreamedSteps {
  std::uint64_t steps = 0;          // over all ranks
  std::optional<double> mpm_psi;    // nullopt without parameters or when the steps could not be ordered
  std::optional<double> bspwb_total;
  std::string mpm_problem;          // why mpm_psi is missing when parameters were given
  std::vector<StepRow> rows;        // the kept steps, by rank and step
  std::size_t peak_steps_held = 0;  // the most steps held at one time
};

class StepStream {
 public:
  // `metas`: as for stream_pass. `params`: MPM's (null: steps only). `charges`: the LogGPS
  // replay's machine terms (add_machine_terms).
  StepStream(std::span<const RankTrace* const> metas, const Timeline& timeline, const BspParams* params,
             std::span<const MachineCharge> charges, std::size_t keep_rows);
  ~StepStream();
  StepStream(const StepStream&) = delete;
  StepStream& operator=(const StepStream&) = delete;

  RecordTag record(std::int32_t rank, std::uint32_t index, const Event& e);
  void message(const StreamedMessage& m);
  void unmatched(std::int32_t rank, RecordTag tag);  // a send or receive never matched
  void collective(std::span<const StreamedMember> members);
  void rank_end(std::int32_t rank, std::uint64_t records);
  // After the pass: what is left is evaluated (or found to be in a cycle).
  StreamedSteps finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mstep::model
