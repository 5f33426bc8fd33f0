// Run-time M-step inference (MODELS.md section 1), fed one rank's records in call order. Pure:
// the recorder runs it inside the wrappers and the reader can run it again on a trace.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "format/trace_format.hpp"

namespace mstep {

class StepTracker {
 public:
  StepTracker(std::int32_t self_world_rank, std::int32_t world_size, std::uint64_t start_ticks);

  // `members`: world ranks of the record's communicator, for collectives.
  void feed(const Event& e, std::span<const std::int32_t> members);
  // Closes the open step at `end_ticks` if anything happened in it.
  void finish(std::uint64_t end_ticks);
  std::span<const StepRecord> closed() const { return closed_; }
  void clear_closed() { closed_.clear(); }
  std::uint32_t current_index() const { return open_.index; }

 private:
  struct Accum {
    std::uint64_t compute = 0, mpi = 0;
  };
  void send_side(std::uint64_t t, std::uint64_t bytes);
  void receive(std::int32_t from, std::uint64_t bytes, std::uint64_t t);
  void add_partner(std::int32_t rank);
  // Closes the open step at `t`; `carry` (what happened after t) starts the next one.
  void close(std::uint64_t t, Accum carry);

  std::int32_t self_;
  StepRecord open_;
  Accum since_recv_;          // computation and MPI time after the last completed receive
  bool has_recv_ = false;     // a receive completed in the open step
  bool active_ = false;       // anything happened in the open step
  std::uint64_t last_exit_;
  std::uint64_t last_recv_t_ = 0;
  std::vector<std::uint64_t> member_bits_;  // Gamma membership, one bit per world rank
  std::vector<StepRecord> closed_;
};

}  // namespace mstep
