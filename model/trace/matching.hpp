// Which receive got which send. MPI's non-overtaking rule makes messages between one sender and
// one receiver on one communicator with one tag arrive in the order they were sent; the trace
// records the actual source and tag of every completed receive (wildcards included), so the k-th
// such receive in posting order got the k-th such send. Partners are world ranks on every
// communicator (on an intercommunicator, of the remote group), so a channel is (global
// communicator, source world rank, destination world rank, tag) on both sides.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/rank_trace.hpp"
#include "model/trace/comm_ids.hpp"  // global_comm_ids, global_comm

namespace mstep {

struct Message {
  std::int32_t src = 0;
  std::int32_t dst = 0;
  std::uint32_t send_event = 0;  // index of the send record in the sender's events
  std::uint32_t post_event = 0;  // receive posted: the Recv/Sendrecv record, or the Irecv record
  std::uint32_t recv_event = 0;  // receive completed: the same, or the Wait/Test record
  std::uint64_t bytes = 0;       // as the receiver got it
  std::int32_t tag = 0;
  std::uint32_t comm = 0;        // global communicator id
};

struct Unmatched {
  std::int32_t rank = 0;
  std::uint32_t event = 0;
  std::string what;  // one line: "rank 0 event 17: MPI_Send to 1 tag 3 of 8 bytes was never received"
};

struct Matching {
  std::vector<Message> messages;  // sorted by (src, send_event)
  std::vector<Unmatched> unmatched;
};

// `ranks[i]` may be null (an unreadable rank): messages to and from it are left unmatched.
Matching match_messages(std::span<const RankTrace* const> ranks);

// True for the first record of a collective call (Barrier, Bcast, Reduce, All*, ...), unless it is
// flagged kIncomplete (MPI time only, as the step tracker takes it). (A damaged or hand-made trace
// can flag a collective so, never the recorder: it made the streamed step table index the step
// before step 1 and allocate gigabytes, found by tests/fuzz/fuzz_model.cpp.)
// Inline, with the two below: the streamed pass asks them of every record (called out of line
// they were 7% of its instructions).
inline bool is_collective_call(const Event& e) {
  const Role r = op_role(e.op);
  return !e.continuation() && !(e.flags & kIncomplete) &&
         (r == Role::CollAll || r == Role::CollRootIn || r == Role::CollRootOut);
}

// One member's part in a collective: its rank and the index of its collective record.
struct CollectiveCall {
  std::int32_t rank = 0;
  std::uint32_t event = 0;
};
// Every collective of the run, each as the calls of its members: the k-th collective on a
// communicator at each member is one instance. Instances come in (communicator, k) order.
std::vector<std::vector<CollectiveCall>> collective_instances(std::span<const RankTrace* const> ranks);

// True for a record that starts a point-to-point send (including Sendrecv's send half).
inline bool is_p2p_send(const Event& e) {
  const Role r = event_role(e);
  return r == Role::Send || r == Role::Isend || (r == Role::SendRecv && !(e.flags & kRecvHalf));
}
// True for a record that completes a point-to-point receive (Recv, Sendrecv's receive half, the
// Wait/Test record of an Irecv).
inline bool is_p2p_recv(const Event& e) {
  switch (event_role(e)) {
    case Role::Recv: return true;
    case Role::SendRecv:
    case Role::Complete: return (e.flags & kRecvHalf) != 0;
    default: return false;
  }
}

}  // namespace mstep
