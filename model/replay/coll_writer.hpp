// The replay's writer of a member's collective program (model/replay/replay_collectives.hpp's
// coll_program), shared by the files that write the programs of MPICH's algorithms: internal to
// model/replay.
#pragma once

#include <cstdint>

#include "model/replay/replay_collectives.hpp"

namespace mstep::model::coll_programs {

// Appends ops and closes steps; never allocates.
struct Writer {
  CollOp* ops;
  std::uint32_t* step_end;
  std::uint32_t n;
  std::uint32_t nops = 0;
  std::uint32_t nsteps = 0;

  void send(std::uint32_t round, std::uint32_t x, std::uint32_t peer, std::uint64_t bytes) {
    ops[nops++] = CollOp{round * n + x, peer, bytes & kMaxOpBytes, true};
  }
  void recv(std::uint32_t round, std::uint32_t x, std::uint32_t peer, std::uint64_t bytes) {
    ops[nops++] = CollOp{round * n + x, peer, bytes & kMaxOpBytes, false};
  }
  static constexpr std::uint64_t kMaxOpBytes = (std::uint64_t{1} << 63) - 1;  // CollOp::bytes' 63 bits
  // MPIC_Sendrecv: receive from `from` and send to `to` in one step (x = the sender's rank).
  void exchange(std::uint32_t round, std::uint32_t me, std::uint32_t from, std::uint64_t in_bytes,
                std::uint32_t to, std::uint64_t out_bytes) {
    recv(round, from, from, in_bytes);
    send(round, me, to, out_bytes);
    step();
  }
  void step() {
    if (nops > (nsteps ? step_end[nsteps - 1] : 0)) step_end[nsteps++] = nops;
  }
};

// MPIR_Allreduce_intra_recursive_doubling, or with `rabenseifner`
// MPIR_Allreduce_intra_reduce_scatter_allgather (replay_coll_reductions.cpp).
void allreduce(Writer& w, std::uint32_t n, std::uint32_t me, std::uint64_t m, bool rabenseifner);
// MPIR_Reduce_intra_reduce_scatter_gather (Rabenseifner's reduce).
void reduce_scatter_gather(Writer& w, std::uint32_t n, std::uint32_t me, std::uint32_t root, std::uint64_t m);
// MPIR_Reduce_scatter(_block)_intra_recursive_halving, blocks of m bytes.
void reduce_scatter_halving(Writer& w, std::uint32_t n, std::uint32_t me, std::uint64_t m);

}  // namespace mstep::model::coll_programs
