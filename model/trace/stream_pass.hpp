// One pass over a whole run read from its rank files a frame at a time, all ranks together in
// the order of their records' start on the common timeline, matching messages and collective
// instances as it goes: the analyses of `mstep report` for traces too large to hold in memory.
// What it keeps is what is in flight: the frame being read per rank, the sends not yet received
// and the receives not yet matched, the collectives some member has not reached yet. Taking the
// ranks in time order keeps that small (a rank cannot run far ahead of the messages it waits for).
//
// The messages and instances are those of match_messages and collective_instances
// (model/trace/matching.hpp), the same pairs by the same rule; only the order in which they are
// handed to the visitor differs (as they complete, not sorted).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/rank_trace.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/timeline.hpp"

namespace mstep {

// What a visitor attaches to a record it is handed (StreamVisitor::record), given back with the
// message or collective that names the record: the visitor's own note, kept in flight for it.
struct RecordTag {
  std::uint64_t a = 0, b = 0;
};

// A matched message with the records the analyses look at (the indices are in `message`).
struct StreamedMessage {
  Message message;
  Event send;                  // the send record
  Event post;                  // the record that posted the receive (Recv, Sendrecv or Irecv)
  Event done;                  // the first record of the call that completed it
  std::uint32_t done_call = 0; // that record's index
  // The call completes no other receive (Recv, Wait, Sendrecv, ...): no call_complete follows.
  bool single = false;
  RecordTag send_tag, recv_tag;  // record() returned these for the send and the completing record
};

// One member's part in a collective instance.
struct StreamedMember {
  std::int32_t rank = 0;
  std::uint32_t event = 0;
  Event call;
  RecordTag tag;
};

class StreamVisitor {
 public:
  virtual ~StreamVisitor() = default;
  // Every record of every rank, each rank's in file order. The tag returned comes back with the
  // message, collective or unmatched() that names the record.
  virtual RecordTag record(std::int32_t /*rank*/, std::uint32_t /*index*/, const Event& /*e*/) { return {}; }
  // Each matched message once both its send and its receive have been read.
  virtual void message(const StreamedMessage& /*m*/) {}
  // A send or receive record that no message will name (never matched, or its partner has no trace).
  virtual void unmatched(std::int32_t /*rank*/, std::uint32_t /*index*/, RecordTag /*tag*/) {}
  // Each collective instance once all its members have made their call (or ended without it),
  // members in rank order.
  virtual void collective(std::span<const StreamedMember> /*members*/) {}
  // Every message the call of `rank` that begins at record `call` completed has been handed to
  // message() (or is known never to be matched): what a receiving call waited is final. Not
  // called for calls whose message was `single`.
  virtual void call_complete(std::int32_t /*rank*/, std::uint32_t /*call*/) {}
  // A rank's records are all read (`records` of them).
  virtual void rank_end(std::int32_t /*rank*/, std::uint64_t /*records*/) {}
};

struct StreamPassResult {
  std::uint64_t records = 0;
  std::uint64_t messages = 0;
  std::vector<Unmatched> unmatched;   // sorted by (rank, event), as match_messages'
  std::vector<int> damaged;           // ranks whose file broke off at a damaged frame
  std::vector<std::string> problems;  // one line each for those (parallel to damaged)
  // The most sends and receives waiting for their match at one time (what the pass held).
  std::size_t peak_in_flight = 0;
};

// `metas[r]` (null: no trace of rank r) holds rank r's definitions and clock samples
// (read_rank_metadata or a whole RankTrace); its records are read from `files[r]`, ahead on
// threads of their own where read_ahead_pays() and `read_ahead` say so.
StreamPassResult stream_pass(std::span<const RankTrace* const> metas, std::span<const std::string> files,
                             const Timeline& timeline, StreamVisitor& visitor, bool read_ahead = true);

}  // namespace mstep
