// libmstep's substitute collectives (interpose/substitute.hpp), one family a setting: the
// environment variable that selects it, the MPI calls it covers, the setting that copies MPICH
// 4.0.2's own choice at 2 ranks (what `mstep sensitivity` runs and `mstep calibrate` times), and
// the field of meta.json's "collectives" where a run records what ran. The tools' one list of them
// (libmstep reads the same variables in interpose/substitute.cpp, which links none of model/).
#pragma once

#include <array>
#include <string>

#include "format/trace_format.hpp"
#include "model/trace/trace_dir.hpp"

namespace mstep::model {

struct SubstituteFamily {
  const char* variable;      // "MSTEP_BARRIER"
  std::array<Op, 2> ops;     // the calls it covers (the same op twice where one)
  const char* mpich_choice;  // the setting that runs MPICH's own algorithm over point-to-point
  std::string RunMeta::*recorded;  // what ran, "" where MPICH's own collective did
};

inline const std::array<SubstituteFamily, 10> kSubstituteFamilies{{
    {"MSTEP_BARRIER", {Op::Barrier, Op::Barrier}, "dissemination", &RunMeta::barrier_substitute},
    {"MSTEP_BCAST", {Op::Bcast, Op::Bcast}, "binomial", &RunMeta::bcast_substitute},
    {"MSTEP_ALLREDUCE", {Op::Allreduce, Op::Allreduce}, "pt2pt", &RunMeta::allreduce_substitute},
    {"MSTEP_ALLTOALL", {Op::Alltoall, Op::Alltoallv}, "pt2pt", &RunMeta::alltoall_substitute},
    {"MSTEP_ALLGATHER", {Op::Allgather, Op::Allgatherv}, "pt2pt", &RunMeta::allgather_substitute},
    {"MSTEP_REDUCE", {Op::Reduce, Op::Reduce}, "pt2pt", &RunMeta::reduce_substitute},
    {"MSTEP_GATHER", {Op::Gather, Op::Gatherv}, "pt2pt", &RunMeta::gather_substitute},
    {"MSTEP_SCATTER", {Op::Scatter, Op::Scatterv}, "pt2pt", &RunMeta::scatter_substitute},
    {"MSTEP_REDUCE_SCATTER", {Op::Reduce_scatter, Op::Reduce_scatter_block}, "pt2pt",
     &RunMeta::reduce_scatter_substitute},
    {"MSTEP_SCAN", {Op::Scan, Op::Exscan}, "pt2pt", &RunMeta::scan_substitute},
}};

// The family that covers `op`; nullptr for a call libmstep has no substitute for.
inline const SubstituteFamily* substitute_family(Op op) {
  for (const SubstituteFamily& f : kSubstituteFamilies)
    if (f.ops[0] == op || f.ops[1] == op) return &f;
  return nullptr;
}

// Did the run make `op` with libmstep's substitute (meta.json says so)?
inline bool ran_substitute(const RunMeta& meta, Op op) {
  const SubstituteFamily* f = substitute_family(op);
  return f != nullptr && !(meta.*(f->recorded)).empty();
}

}  // namespace mstep::model
