// M-steps of all ranks tied together: each rank's steps are inferred again from its events (the
// same StepTracker the recorder runs), and every received message names the step in which its
// sender sent it (MODELS.md section 1, "ghost steps"), which is what MPM needs. Each partner
// also carries its send point (Partner::w_send: the sender step's computation before the send
// record of its latest message to the receiving step; a collective's is all of the step's
// computation, since a collective closes its step), and each step its first send's
// (StepRecord::w_send; all of w in a step that sends nothing): MPM's message departure times.
#pragma once

#include <span>
#include <vector>

#include "format/rank_trace.hpp"
#include "model/cost/bspwb.hpp"
#include "model/trace/matching.hpp"
#include "model/replay/replay.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {

struct AlignedSteps {
  std::vector<RankSteps> input;                 // per rank: the model input (w, w_send in seconds)
  std::vector<PartnerGroup> groups;             // partners of all-hear-all collectives (StepRecord::groups)
  std::vector<std::vector<mstep::StepRecord>> steps;    // per rank: the inferred step records
  std::vector<std::vector<double>> actual_end_s;  // per rank and step: end, seconds after `zero_s`
  std::vector<std::vector<std::uint32_t>> event_step;  // per rank and event: 0-based step index
  double zero_s = 0;      // earliest MPI_Init exit on the common timeline
  double actual_s = 0;    // latest MPI_Finalize entry (or last event) minus zero_s
  std::vector<double> rank_actual_s;  // per rank: its MPI_Finalize entry (or last event) minus zero_s
};

// `ranks[i]` may be null: that rank then has no steps and no partners.
AlignedSteps align_steps(std::span<const RankTrace* const> ranks, const Matching& matching,
                         const Timeline& timeline);

// Adds each charge (a replay's cold-start and fresh-buffer seconds of one record) to the
// StepRecord::extra of the step that record belongs to, so that MPM and BSPWB pay the machine
// terms the event-driven replay paid, on the same messages. Charges naming no step are dropped.
void add_machine_terms(AlignedSteps& aligned, std::span<const MachineCharge> charges);

}  // namespace mstep::model
