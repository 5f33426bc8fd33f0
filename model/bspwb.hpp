// BSPWB and MPM (Roda et al. 1999; MODELS.md section 2): predicted run times of an M-step
// program from each rank's per-step computation time, bytes moved and incoming partners.
//
// Step indices in this interface are 0-based positions in a rank's own step list: the paper's
// step s is index s-1. Ranks may have different step counts (the paper's "ghost steps"): a rank
// that takes no part in a phase simply has no step for it, and a message is tied to the step of
// its sender by naming that step in the receiver's partner list.
#pragma once

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

  bool operator==(const Partner&) const = default;
};

// One M-step of one rank, as the step records of MODELS.md section 1 describe it.
struct StepRecord {
  double w = 0;                    // seconds of computation (time outside MPI)
  std::uint64_t in_bytes = 0;      // bytes received in the step
  std::uint64_t out_bytes = 0;     // bytes sent in the step
  std::vector<Partner> incoming;   // Gamma(s,i) without i itself: i is always implied

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

struct BspwbPrediction {
  std::vector<double> T;  // T[s]: predicted end of step s (formula 5, cumulative)
  double total = 0;       // T of the last step, 0 without steps
};

// BSPWB (formula 5): T(s) = T(s-1) + max_i w(s,i) + max_i (g*h(s,i) + L), over all ranks, with
// R = the largest step count; a rank without step s contributes w = 0 and h = 0 (ghost step).
BspwbPrediction bspwb(std::span<const RankSteps> ranks, const BspParams& params);

struct MpmPrediction {
  std::vector<std::vector<double>> phi;  // phi[i][s] = Phi(s,i), predicted end of i's step s
  double psi = 0;                        // formula 10: max_i of i's last Phi (0 without steps)
};

// MPM (formulas 7-10). For step s of rank i with partners Gamma = {(i,s)} U incoming:
//   H(s,i)   = max { h(t,j) : (j,t) in Gamma }
//   Phi(s,i) = max { Phi(t-1,j) + w(t,j) : (j,t) in Gamma } + g*H(s,i) + L,  Phi(-1,j) = 0
// so Phi(t-1,j) + w(t,j) is the predicted time at which sender j finished the computation of
// the step t in which it sent. Steps are evaluated in dependency order, not index order, so
// partners may name any step; a cyclic dependency (inconsistent input), a partner rank or step
// out of range throws std::invalid_argument.
MpmPrediction mpm(std::span<const RankSteps> ranks, const BspParams& params);

// Prediction error of formula 18, signed: 100 * (actual - model) / actual. Positive when the
// model underestimates.
double error_pct(double actual, double model);

}  // namespace mstep::model
