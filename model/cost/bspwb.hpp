// BSPWB and MPM (Roda et al. 1999; MODELS.md section 2): predicted run times of an M-step
// program from each rank's per-step computation time, bytes moved and incoming partners.
//
// Step indices in this interface are 0-based positions in a rank's own step list: the paper's
// step s is index s-1. Ranks may have different step counts (the paper's "ghost steps"): a rank
// that takes no part in a phase simply has no step for it, and a message is tied to the step of
// its sender by naming that step in the receiver's partner list.
//
// One deliberate difference from MODELS.md (and the paper): MPM's sender term. The paper's
// M-step computes, then sends, then receives, so a message leaves when its sender has finished
// the step's computation, Phi(s-1,j) + w(s,j). Recorded steps need not have that shape: the
// step tracker opens a step at its first send after a receive, and the computation that follows
// the send (up to the step's last receive) belongs to the same step. A Gaussian elimination whose
// pivot-row owner sends the row and then eliminates, or a ring rank that receives, sends and then
// computes, has most of w after its sends; charging all of w before the message leaves
// serialises work the ranks actually overlap (gauss.c, 2 ranks: MPM 1.48 s, actual 0.86 s, with
// send points 0.80 s). So a message leaves after the computation that preceded it in its
// sender's step (Partner::w_send, else StepRecord::w_send), and only the receiver's own term
// keeps all of its w; see mpm(). When every send point is the whole w (hand-made input, steps
// that compute before they send) this is exactly formula 8. BSPWB is unchanged: it has no
// per-message timing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace mstep::model {

// How in- and out-traffic of one rank combine into its h-relation (MODELS.md formula 6):
// Sum for machines that serialise the two directions (the paper's results), Max for machines
// that move them in parallel.
enum class HCombine : std::uint8_t { Sum, Max };

// "The same step index as the receiving step" (the default when the sender's step is unknown).
inline constexpr std::uint32_t kSameStep = std::numeric_limits<std::uint32_t>::max();

// One incoming partner j of a step: world rank j and the index of j's step in which j sent the
// message (kSameStep: the receiver's own step index).
struct Partner {
  std::uint32_t rank = 0;
  std::uint32_t step = kSameStep;
  // Send point of the message(s) this step received from that step of j: the seconds of j's
  // computation in that step before the message left (the latest such message if there are
  // several), at most the step's w. Negative: unknown, use the sender step's StepRecord::w_send.
  double w_send = -1;

  // A partner is identified by rank and step alone: w_send describes its messages (step
  // alignment merges several messages of one partner into one entry), it does not identify it.
  bool operator==(const Partner& o) const { return rank == o.rank && step == o.step; }
};

// Partners many steps share: the members of one collective in which every member hears every
// other (Barrier, Allreduce, Allgather, Alltoall, ...), as (rank, step, send point) of each
// member's step. Listing them in every member's `incoming` would take n^2 entries and time per
// collective; a group is stored once and its maxima computed once. A group may contain the step
// that names it: its own terms are already in Phi (its w_send is at most its w).
struct PartnerGroup {
  std::vector<Partner> members;
  bool operator==(const PartnerGroup&) const = default;
};

// One M-step of one rank, as the step records of MODELS.md section 1 describe it.
struct StepRecord {
  double w = 0;                    // seconds of computation (time outside MPI)
  std::uint64_t in_bytes = 0;      // bytes received in the step
  std::uint64_t out_bytes = 0;     // bytes sent in the step
  std::vector<Partner> incoming;   // Gamma(s,i) without i itself: i is always implied
  std::vector<std::uint32_t> groups;  // and every member of these PartnerGroups (indexes)
  // Seconds of the step's computation before its first send (at most w): when its messages
  // leave, for partners that give no Partner::w_send of their own. Negative: all of w, the
  // paper's compute-then-send step (hand-made input gets this by default).
  double w_send = -1;
  // Seconds of machine terms the papers' models do not have: the cold-start and fresh-buffer
  // costs (model/params/cold_start.hpp) of this step's messages, as the LogGPS replay charged them
  // (add_machine_terms in model/trace/step_alignment.hpp). They sit beside g*h: BSPWB charges
  // max_i (g*h(s,i) + extra(s,i) + L), MPM max { g*h(t,j) + extra(t,j) : (j,t) in Gamma } + L,
  // so that MPM still equals BSPWB when every Gamma is the whole world. 0 (hand-made input, no
  // calibrated cold start): the papers' formulas.
  double extra = 0;

  bool operator==(const StepRecord&) const = default;
};

// All steps of one rank, in order.
using RankSteps = std::vector<StepRecord>;

struct BspParams {
  double g = 0;  // seconds per byte
  double L = 0;  // seconds
  HCombine combine = HCombine::Sum;
  // MODELS.md adds L to every step. The paper's FFT formula (17) adds none to a last step that
  // only computes; set this to false to charge L only to steps whose h-relation is non-zero
  // (BSPWB: max_i h(s,i) > 0; MPM: H(s,i) > 0) and so reproduce such formulas.
  bool latency_on_empty_steps = true;
};

// h(s,i) = in(s,i) @ out(s,i) in bytes (formula 6), as a double so that g*h cannot overflow.
double h_relation(const StepRecord& step, HCombine combine);
// The same from a step's bytes in and out (for callers that hold no StepRecord).
inline double h_relation(std::uint64_t in_bytes, std::uint64_t out_bytes, HCombine combine) {
  const auto in = static_cast<double>(in_bytes);
  const auto out = static_cast<double>(out_bytes);
  return combine == HCombine::Sum ? in + out : std::max(in, out);
}

struct BspwbPrediction {
  std::vector<double> T;  // T[s]: predicted end of step s (formula 5, cumulative)
  double total = 0;       // T of the last step, 0 without steps
};

// BSPWB (formula 5): T(s) = T(s-1) + max_i w(s,i) + max_i (g*h(s,i) + L + extra(s,i)), over all
// ranks, with R = the largest step count; a rank without step s contributes w = 0 and h = 0
// (ghost step). With extra = 0 this is formula 5.
BspwbPrediction bspwb(std::span<const RankSteps> ranks, const BspParams& params);

struct MpmPrediction {
  std::vector<std::vector<double>> phi;  // phi[i][s] = Phi(s,i), predicted end of i's step s
  double psi = 0;                        // formula 10: max_i of i's last Phi (0 without steps)
};

// MPM (formulas 7-10, with send points). For step s of rank i with partners Gamma =
// {(i,s)} U incoming:
//   H(s,i)   = max { h(t,j) : (j,t) in Gamma }
//   Phi(s,i) = max( Phi(s-1,i) + w(s,i),
//                   max { Phi(t-1,j) + ws(t,j->i) : (j,t) in incoming } ) + C(s,i) + L
//   C(s,i)   = max { g*h(t,j) + extra(t,j) : (j,t) in Gamma }   (g*H(s,i) without machine terms)
// with Phi(-1,j) = 0 (L omitted when H = 0 and !latency_on_empty_steps) and ws(t,j->i) the send
// point of the partner: its Partner::w_send if that is >= 0, else the sender step's
// StepRecord::w_send if that is >= 0, else w(t,j); never more than w(t,j). Phi(t-1,j) + ws is
// when j's message to i left; i itself must finish all of its computation.
// - With ws = w everywhere this is the paper's formula 8, max { Phi(t-1,j) + w(t,j) : (j,t) in
//   Gamma } + g*H + L, bit for bit; in general Phi is never above formula 8's (ws <= w).
// - g*H + L stays after the max, so it follows i's own computation as in the paper: i's step
//   ends with its receives, after all of its computation (the tracker carries computation after
//   the last receive into the next step), and i's sends are charged there too (their MPI time is
//   not in w), as the h-relation does. A message sent early only lets a partner's receive finish
//   sooner; it does not make i's own communication free.
// - The sender's communication before the message (earlier sends of the same step) is not added
//   to its departure; H includes the sender's h(t,j), all of its traffic, as in the paper.
// Steps are evaluated in dependency order, not index order, so partners may name any step; a
// cyclic dependency (inconsistent input), a partner rank or step out of range throws
// std::invalid_argument. `groups`: the PartnerGroups that StepRecord::groups index.
MpmPrediction mpm(std::span<const RankSteps> ranks, const BspParams& params,
                  std::span<const PartnerGroup> groups = {});

// Prediction error of formula 18, signed: 100 * (actual - model) / actual. Positive when the
// model underestimates.
double error_pct(double actual, double model);

}  // namespace mstep::model
