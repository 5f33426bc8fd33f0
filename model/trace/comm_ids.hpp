// One id per communicator of the run. Communicator ids in a trace are local to a rank (creation
// order); the reader pairs the members' local ids so that a message or a collective on one
// communicator is recognised as such on every member.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "format/rank_trace.hpp"

namespace mstep {

// Ranks create communicators by collective calls, in the same order where they share members, so
// the k-th communicator with a given identity on one rank is the k-th with it on every member.
// The identity of an intracommunicator is its member list. An intercommunicator's CommDef lists
// only its remote group, which is the OTHER side on each side, so its identity is the unordered
// pair {local group, remote group}. The local group comes from the Intercomm_create record (its
// comm is local_comm) or a duplicate's parent; where neither is in the trace (communicators
// registered on first use, intercommunicators split from others) it is derived from the other
// side's traces, and an intercommunicator whose local group cannot be told gets an id of its own
// (its messages stay unmatched, never matched wrongly). Intra and inter identities never meet.
// Returns per rank: local id -> global id (0 is MPI_COMM_WORLD). `ranks[i]` may be null.
std::vector<std::vector<std::uint32_t>> global_comm_ids(std::span<const RankTrace* const> ranks);

// The global id of rank `rank`'s local communicator `local`, given global_comm_ids' answer. A
// communicator whose definition was lost gets an id unique to that rank: it matches nothing.
// Inline: the streamed pass asks it for every message.
inline std::uint32_t unknown_comm(std::size_t rank, std::uint16_t local) {
  return 0x80000000u | static_cast<std::uint32_t>(rank << 16) | local;
}
inline std::uint32_t global_comm(const std::vector<std::vector<std::uint32_t>>& ids, std::size_t rank,
                                 std::uint16_t local) {
  return rank < ids.size() && local < ids[rank].size() ? ids[rank][local] : unknown_comm(rank, local);
}

}  // namespace mstep
