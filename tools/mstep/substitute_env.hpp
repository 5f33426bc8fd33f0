// libmstep's substitute collectives (interpose/substitute.hpp) set to MPICH 4.0.2's own choice of
// algorithm, each over point-to-point messages: what `mstep sensitivity` runs in every run, so that
// the delay apparatus reaches each message, and what `mstep calibrate` measures them as.
#pragma once

#include <utility>

namespace mstep::cli {

inline constexpr std::pair<const char*, const char*> kMpichChoiceSubstitutes[] = {
    {"MSTEP_BARRIER", "dissemination"}, {"MSTEP_BCAST", "binomial"}, {"MSTEP_ALLREDUCE", "pt2pt"},
    {"MSTEP_ALLTOALL", "pt2pt"},        {"MSTEP_ALLGATHER", "pt2pt"}, {"MSTEP_REDUCE", "pt2pt"},
    {"MSTEP_GATHER", "pt2pt"},          {"MSTEP_SCATTER", "pt2pt"},   {"MSTEP_REDUCE_SCATTER", "pt2pt"},
    {"MSTEP_SCAN", "pt2pt"}};

}  // namespace mstep::cli
