// The names of libmstep's substitute collectives, as MSTEP_BARRIER / MSTEP_BCAST take them and
// meta.json's "collectives" records them: one grammar for the writer (interpose/substitute.hpp)
// and the reader (model/replay/replay_collectives.hpp).
//   barrier: mpi | central | tree:N (2 <= N <= 255) | dissemination | auto
//   bcast:   mpi | flat | binomial | esssp | auto
// The empty name is "mpi" (MPICH's own).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mstep {

enum class BarrierAlgo : std::uint8_t { Mpi, Central, Tree, Dissemination, Auto };
enum class BcastAlgo : std::uint8_t { Mpi, Flat, Binomial, Esssp, Auto };

struct BarrierName {
  BarrierAlgo algo = BarrierAlgo::Mpi;
  int arity = 0;  // Tree
};

// nullopt for a name outside the grammar.
std::optional<BarrierName> parse_barrier_name(std::string_view name);
std::optional<BcastAlgo> parse_bcast_name(std::string_view name);

std::string barrier_name(BarrierName b);  // "tree:4"
const char* bcast_name(BcastAlgo a);      // "flat"

}  // namespace mstep
