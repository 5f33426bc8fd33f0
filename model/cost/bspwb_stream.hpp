// BSPWB (MODELS.md formula 5) summed as the steps of a run come in: each rank's steps in order,
// the ranks in any interleaving (the streaming report hands them over as it predicts them). The
// sum is bspwb()'s, to the bit: T(s) = T(s-1) + max_i w(s,i) + max_i (g*h(s,i) + L + extra(s,i)),
// step after step, where a rank without step s is in a ghost step (w = 0, h = 0: it contributes L).
// Step s is summed once every rank has given it or ended without it, so what is held is the steps
// between the slowest rank and the fastest.
#pragma once

#include <cstdint>
#include <deque>
#include <map>

#include "model/cost/bspwb.hpp"

namespace mstep::model {

class BspwbStream {
 public:
  // `ranks`: every rank of the run (a rank with no trace is a ghost in every step); `givers`: the
  // ranks that will give steps and call rank_ended.
  BspwbStream(const BspParams& params, std::size_t ranks, std::size_t givers);
  // Step `s` (0-based) of one rank, with h = h_relation of its bytes.
  void step(std::uint32_t s, double w, double h, double extra);
  // A giving rank gave all of its steps: `steps` of them.
  void rank_ended(std::uint32_t steps);
  // bspwb().total; call after every giving rank has ended (what is left is summed then).
  double total();

 private:
  struct Step {
    double max_w = 0;
    double max_comm = -1.7976931348623157e308;  // lowest
    double max_extra = 0;
    bool any_traffic = false;
    std::size_t ranks = 0;
  };
  void flush(bool all);

  BspParams params_;
  std::size_t ranks_, givers_;
  std::deque<Step> pending_;  // steps base_.. not summed yet
  std::uint32_t base_ = 0;
  double T_ = 0;
  std::size_t ended_without_base_ = 0;               // ranks that ended after at most base_ steps
  std::map<std::uint32_t, std::size_t> ended_after_;  // the others: step count -> ranks
};

}  // namespace mstep::model
