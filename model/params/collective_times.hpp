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

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/trace_format.hpp"

namespace mstep::model {

// The residual of a call entered after `gap` seconds of computation: `back_to_back` at 0,
// `isolated` from `gap_s` on, linear between (`gap` below 0 is 0). The one rule of
// CollectiveTimes::residual_after and of the replay, which keeps the two ends per instance.
inline double residual_for_gap(double back_to_back, double isolated, double gap, double gap_s) {
  return back_to_back + std::min(std::max(gap, 0.0) / gap_s, 1.0) * (isolated - back_to_back);
}

struct CollectiveTimes {
  std::vector<std::uint64_t> bytes;          // m, a member's block (collective_block_bytes), increasing
  std::vector<double> measured_s, model_s;   // per call, at each size
  // libmstep's substitute for the operation (interpose/substitute.hpp; MPICH's choice at 2 ranks,
  // the same messages as MPICH's) at the same sizes, per call, the recorder's own cost per call
  // taken out (`mstep calibrate` runs the loops preloaded with and without the substitutes:
  // set_substitute_times). Empty where not measured.
  std::vector<double> substitute_s = {};
  // The same calls each after `isolated_gap_s` of computation on both ranks (`mstep calibrate`'s
  // isolated loop: a call entered after the last one's messages have settled, as in a program
  // that computes between its collectives), per call inside the call, measured and as the replay
  // charges that loop, at `bytes` (MPI_Waitall's exchange: the computation before its MPI_Irecv).
  // Empty where not measured (parameter files before stop 49).
  double isolated_gap_s = 0;
  std::vector<double> isolated_measured_s = {}, isolated_model_s = {};
  // libmstep's substitute in the same isolated loop, as substitute_s (empty: not measured).
  std::vector<double> substitute_isolated_s = {};
  // measured - model at m bytes: linear between the sizes, and beyond them along the nearest
  // segment (the end value where there is one size).
  double residual(std::uint64_t m) const;
  // The residual of a call entered after `gap` seconds of computation: residual(m) back to back,
  // isolated measured - isolated model from isolated_gap_s on, linear in the gap between the two;
  // residual(m) where the isolated loop was not measured.
  double residual_after(std::uint64_t m, double gap) const;
  bool has_isolated() const {
    return isolated_gap_s > 0 && isolated_measured_s.size() == bytes.size() && isolated_model_s.size() == bytes.size();
  }
  // substitute - model, the same way; 0 where substitute_s is empty.
  double substitute_residual(std::uint64_t m) const;
  // The substitute's for a call after `gap` seconds of computation, as residual_after (its
  // back-to-back one where its isolated loop was not measured).
  double substitute_residual_after(std::uint64_t m, double gap) const;
  bool has_substitute_isolated() const { return has_isolated() && substitute_isolated_s.size() == bytes.size(); }
  friend bool operator==(const CollectiveTimes&, const CollectiveTimes&) = default;
};

// By blocking operation (Op::Allreduce, ...).
using CollectiveTable = std::map<Op, CollectiveTimes>;

// MPI_Barrier's calibrated cost beyond its messages per round of MPICH's dissemination (its
// residual at 2 ranks, one round); 0 where the table has no MPI_Barrier.
double mpich_barrier_round_s(const CollectiveTable& table);

// Whether libmstep has a substitute for `op` (model/trace/substitutes.hpp, kSubstituteFamilies):
// set_substitute_times sets substitute_s for those alone (the others ran MPICH's own).
bool libmstep_has_substitute(Op op);

// Sets substitute_s of every operation of `table` that libmstep substitutes and the substitutes'
// loops measured at its sizes (`substitutes_preloaded`: bytes and measured_s; and
// substitute_isolated_s from its isolated_measured_s where both tables have the isolated loop): the substitute's time
// under the recorder less the recorder's cost per call, `recorder_s` (taken as 0 below 0: a cost is
// not negative), each at least 0. Per call the recorder does the same work whatever the collective
// and its size, so that cost is one figure (mstep calibrate measures it directly: the recorded less
// the native time of a collective that moves nothing). Returns the number of operations set.
int set_substitute_times(CollectiveTable& table, const CollectiveTable& substitutes_preloaded, double recorder_s);

// "collectives": {"MPI_Allreduce": {"bytes": [...], "measured_s": [...], "model_s": [...],
// "substitute_s": [...], "isolated": {"gap_s": G, "measured_s": [...], "model_s": [...],
// "substitute_s": [...]}}, ...} (substitute_s and isolated optional, and isolated's substitute_s);
// ParamsError naming the key on anything else.
CollectiveTable read_collective_times(const nlohmann::json& j, const std::string& file);
nlohmann::ordered_json collective_times_json(const CollectiveTable& table);

}  // namespace mstep::model
