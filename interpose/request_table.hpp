// Pending nonblocking requests by handle. A handle is not unique: MPICH hands out one shared
// handle for every request that completed at once (an eager Isend, say), so each handle keeps a
// first-in first-out list of the requests behind it. Nodes come from a pool: no allocation per
// request in steady state.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <mpi.h>

#include "format/flat_map.hpp"

namespace mstep {

struct CommInfo;

// What the recorder remembers of a pending nonblocking request until a Wait/Test completes it.
struct RequestInfo {
  std::uint32_t id = 0;
  bool recv = false;
  const CommInfo* comm = nullptr;  // Comm_idup: the new communicator
  // Comm_idup: where MPI puts the new communicator's handle, valid once the request completes.
  MPI_Comm* created = nullptr;
  bool collective = false;  // a nonblocking collective's: its completion carries kCollDone
  // The delay apparatus's hold for a rendezvous-sized nonblocking send: its Wait/Test completion
  // returns no earlier than this (this rank's CLOCK_MONOTONIC, ns); INT64_MIN: none.
  std::int64_t hold_until_ns = INT64_MIN;
};

// A persistent request (MPI_Send_init and friends, MPI_Recv_init) from its creation to its
// MPI_Request_free: what each MPI_Start of it sends or receives.
struct PersistentRequest {
  bool recv = false;
  std::int32_t peer = -1;  // world rank: destination, or posted source (kAnySource, kNoPeer)
  std::int32_t tag = -1;
  std::uint64_t bytes = 0;  // a send's size
  const CommInfo* comm = nullptr;
  std::uint8_t mode_flags = 0;  // kSyncMode (Ssend_init), kBufferedMode (Bsend_init)
  // A persistent collective (MPI_Bcast_init, ...): the record each Start writes, as its
  // nonblocking collective's (op, root, bytes, communicator); times and request set at the Start.
  bool collective = false;
  Event started{};
};

class RequestTable {
 public:
  void add(int handle, const RequestInfo& info) {
    const std::uint32_t node = allocate(info);
    if (Fifo* f = heads_.find(handle)) {
      nodes_[f->tail].next = node;
      f->tail = node;
    } else {
      heads_.insert(handle, Fifo{node, node});
    }
  }
  // The oldest request behind `handle`, removed; nullopt if there is none.
  std::optional<RequestInfo> take(int handle) {
    Fifo* f = heads_.find(handle);
    if (!f) return std::nullopt;
    const std::uint32_t node = f->head;
    const RequestInfo info = nodes_[node].info;
    if (node == f->tail) heads_.erase(handle);
    else f->head = nodes_[node].next;
    nodes_[node].next = free_;
    free_ = node;
    return info;
  }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct Node {
    RequestInfo info;
    std::uint32_t next = kNone;
  };
  struct Fifo {
    std::uint32_t head = kNone, tail = kNone;
  };
  std::uint32_t allocate(const RequestInfo& info) {
    std::uint32_t n = free_;
    if (n == kNone) {
      n = static_cast<std::uint32_t>(nodes_.size());
      nodes_.push_back({});
    } else {
      free_ = nodes_[n].next;
    }
    nodes_[n] = Node{info, kNone};
    return n;
  }
  FlatHandleMap<Fifo> heads_{4096};
  std::vector<Node> nodes_;
  std::uint32_t free_ = kNone;
};

}  // namespace mstep
