// Barrier algorithms timed on a network whose latency differs per pair of ranks (the delay
// apparatus's clusters, Mateescu and Taylor's grids), where Hoefler and Rehm's closed forms
// (collectives.hpp), which take one L, do not apply. Each algorithm is the program of blocking
// sends and receives libmstep's substitute runs (interpose/substitute.cpp), and the programs are
// run on LogP with a latency per pair:
//   a send starts when its rank is free and at least g after the rank's previous send, and keeps
//   the rank busy o_s; its message is at its receiver o_s + L(u, v) after the send started;
//   a receive completes o_r after the later of its post and its message's arrival;
//   dissemination's exchange is a send and then a receive (MPI_Sendrecv, the send not waited on);
//   the central counter's root takes its n - 1 messages in the order they arrive.
// All members enter at 0; the result is the latest exit.
#pragma once

#include <cstdint>
#include <functional>

#include "model/cost/collectives.hpp"

namespace mstep::model {

// L(u, v) in the same unit as `p` (p.L is not used: the pair's latency replaces it).
using PairLatencyFn = std::function<double(std::uint32_t from, std::uint32_t to)>;

double central_counter_barrier(const LogPBarrierParams& p, std::uint32_t P, const PairLatencyFn& latency);
// Gather up the tree of the given arity (children of r: arity r + 1 ... arity r + arity), then
// the release down MPICH's binomial tree from rank 0, as libmstep's tree:N.
double combining_tree_barrier(const LogPBarrierParams& p, std::uint32_t P, std::uint32_t arity,
                              const PairLatencyFn& latency);
double dissemination_barrier(const LogPBarrierParams& p, std::uint32_t P, const PairLatencyFn& latency);

}  // namespace mstep::model
