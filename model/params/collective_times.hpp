// The blocking collectives as `mstep calibrate` measured them between two ranks: the time per call
// of each at a few message sizes, beside the LogGPS replay's charge for the same calls with the
// calibrated parameters. Their difference is MPICH's cost the decomposition into messages does not
// see (a collective's own software overhead, its reduction arithmetic and temporary buffers, the
// pipelining of back-to-back transfers); the LogGPS replay adds it to every call of that
// collective, per round of its algorithm (model/replay/replay.hpp). MPI_Sendrecv's entry is an
// exchange with the other rank (both ways at once, which a transport may not overlap as LogGP
// does): added to every MPI_Sendrecv whose two messages go to and come from one partner.
// MPI_Waitall's entry is the same exchange made of MPI_Irecv, MPI_Isend and MPI_Waitall (the three
// calls' time, per exchange): added to every MPI_Waitall that completes an Irecv from and an Isend
// to one partner, posted by the two calls just before it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/trace_format.hpp"

namespace mstep::model {

struct CollectiveTimes {
  std::vector<std::uint64_t> bytes;          // m, a member's block (collective_block_bytes), increasing
  std::vector<double> measured_s, model_s;   // per call, at each size
  // measured - model at m bytes: linear between the sizes, and beyond them along the nearest
  // segment (the end value where there is one size).
  double residual(std::uint64_t m) const;
  friend bool operator==(const CollectiveTimes&, const CollectiveTimes&) = default;
};

// By blocking operation (Op::Allreduce, ...).
using CollectiveTable = std::map<Op, CollectiveTimes>;

// MPI_Barrier's calibrated cost beyond its messages per round of MPICH's dissemination (its
// residual at 2 ranks, one round); 0 where the table has no MPI_Barrier.
double mpich_barrier_round_s(const CollectiveTable& table);

// "collectives": {"MPI_Allreduce": {"bytes": [...], "measured_s": [...], "model_s": [...]}, ...};
// ParamsError naming the key on anything else.
CollectiveTable read_collective_times(const nlohmann::json& j, const std::string& file);
nlohmann::ordered_json collective_times_json(const CollectiveTable& table);

}  // namespace mstep::model
