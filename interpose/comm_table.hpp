// Communicators the application uses, each with the world ranks of its members, so that every
// partner in the trace is a world rank. The wrapped creators (wrappers_env.cpp) register a new
// communicator when MPI returns it: creation is collective, so every member registers it at the same
// point of its sequence of creations, which is what lets the reader pair the members' ids
// (model/trace/comm_ids.hpp, global_comm_ids). MPI_Comm_idup's communicator is registered at the call
// (a duplicate has its parent's members) and its handle bound when the request completes.
// Communicators from calls mstep does not wrap (MPI_Comm_spawn, ...) are registered on first use.
#pragma once

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include <mpi.h>

#include "format/trace_format.hpp"
#include "format/flat_map.hpp"

namespace mstep {

struct CommInfo {
  std::uint16_t id = 0;
  std::int32_t size = 0;               // local size (remote size for an intercommunicator)
  bool inter = false;
  std::vector<std::int32_t> world;     // comm rank -> world rank (remote group if inter)

  // MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ROOT and out-of-range values map to kNoPeer.
  std::int32_t world_rank(int r) const { return r >= 0 && r < size ? world[r] : kNoPeer; }
  std::span<const std::int32_t> members() const { return world; }
};

class CommTable {
 public:
  void init(int world_rank, int world_size);
  const CommInfo& get(MPI_Comm comm) {
    if (comm == MPI_COMM_WORLD) return *infos_.front();
    return lookup(comm);
  }
  // A communicator MPI has just created: always a new entry, even if the handle is still known
  // (a handle freed by a call mstep does not wrap, such as MPI_Comm_disconnect, comes back).
  const CommInfo& add(MPI_Comm comm) {
    handles_.erase(static_cast<int>(comm));
    return lookup(comm);
  }
  // MPI_Comm_free: the handle may be reused for another communicator. The CommInfo stays alive:
  // requests still pending on the freed communicator point at it.
  void forget(MPI_Comm comm) { handles_.erase(static_cast<int>(comm)); }
  // MPI_Comm_idup: a new entry with `parent`'s members and no handle yet (the handle is valid only
  // once the request completes); bind() gives it its handle then.
  const CommInfo& add_copy(const CommInfo& parent);
  void bind(MPI_Comm comm, const CommInfo& info) {
    handles_.erase(static_cast<int>(comm));
    handles_.insert(static_cast<int>(comm), &info);
  }
  std::vector<CommDef> take_new();
  // Members of the communicator with trace id `id` (empty if unknown).
  std::span<const std::int32_t> members(std::uint16_t id) const {
    return id < infos_.size() ? infos_[id]->members() : std::span<const std::int32_t>{};
  }

 private:
  const CommInfo& lookup(MPI_Comm comm);
  // Ids are 16 bits in the trace; a run that creates more communicators shares the last id.
  std::uint16_t next_id() const { return static_cast<std::uint16_t>(std::min<std::size_t>(infos_.size(), kSharedCommId)); }
  std::vector<std::unique_ptr<CommInfo>> infos_;
  FlatHandleMap<const CommInfo*> handles_{64};
  std::size_t written_ = 0;  // infos_[written_..] are not in the trace yet
};

}  // namespace mstep
