#include "model/export/otf2.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>
#include <otf2/otf2.h>

#include "format/trace_file.hpp"
#include "model/trace/comm_ids.hpp"
#include "model/trace/matching.hpp"
#include "model/trace/rank_comms.hpp"
#include "model/trace/timeline.hpp"

namespace mstep::model {
namespace {

// libotf2 prints its errors by default; mstep says them in its own one line instead.
thread_local std::string otf2_message;
OTF2_ErrorCode remember_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* format, va_list va) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, format ? format : "", va);
  otf2_message = buf;
  return code;
}

void check(OTF2_ErrorCode code, const char* what) {
  if (code == OTF2_SUCCESS) return;
  throw Otf2Error(fmt::format("OTF2 {}: {}{}{}", what, OTF2_Error_GetName(code),
                              otf2_message.empty() ? "" : ": ", otf2_message));
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
OTF2_FlushCallbacks kFlush = {pre_flush, post_flush};

struct ArchiveCloser {
  void operator()(OTF2_Archive* a) const noexcept { OTF2_Archive_Close(a); }
};

OTF2_RegionRole region_role(Op op) {
  switch (op_role(op)) {
    case Role::Send: case Role::Recv: case Role::Isend: case Role::Irecv: case Role::Complete: case Role::SendRecv:
    case Role::Start:
      return OTF2_REGION_ROLE_POINT2POINT;
    case Role::CollRootOut: return OTF2_REGION_ROLE_COLL_ONE2ALL;
    case Role::CollRootIn: return OTF2_REGION_ROLE_COLL_ALL2ONE;
    case Role::CollAll: return op == Op::Barrier ? OTF2_REGION_ROLE_BARRIER : OTF2_REGION_ROLE_COLL_ALL2ALL;
    case Role::Tool: return OTF2_REGION_ROLE_ARTIFICIAL;
    case Role::Other: break;
  }
  return OTF2_REGION_ROLE_FUNCTION;
}

OTF2_CollectiveOp collective_op(Op op) {
  switch (blocking_collective(op)) {
    case Op::Barrier: return OTF2_COLLECTIVE_OP_BARRIER;
    case Op::Bcast: return OTF2_COLLECTIVE_OP_BCAST;
    case Op::Gather: return OTF2_COLLECTIVE_OP_GATHER;
    case Op::Gatherv: return OTF2_COLLECTIVE_OP_GATHERV;
    case Op::Scatter: return OTF2_COLLECTIVE_OP_SCATTER;
    case Op::Scatterv: return OTF2_COLLECTIVE_OP_SCATTERV;
    case Op::Allgather: return OTF2_COLLECTIVE_OP_ALLGATHER;
    case Op::Allgatherv: return OTF2_COLLECTIVE_OP_ALLGATHERV;
    case Op::Alltoall: return OTF2_COLLECTIVE_OP_ALLTOALL;
    case Op::Alltoallv: return OTF2_COLLECTIVE_OP_ALLTOALLV;
    case Op::Alltoallw: return OTF2_COLLECTIVE_OP_ALLTOALLW;
    case Op::Allreduce: return OTF2_COLLECTIVE_OP_ALLREDUCE;
    case Op::Reduce: return OTF2_COLLECTIVE_OP_REDUCE;
    case Op::Reduce_scatter: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER;
    case Op::Scan: return OTF2_COLLECTIVE_OP_SCAN;
    case Op::Exscan: return OTF2_COLLECTIVE_OP_EXSCAN;
    default: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK;
  }
}

// One rank's records as OTF2 events, a call (its first record and continuations) at a time.
class RankWriter {
 public:
  RankWriter(OTF2_EvtWriter* w, int rank, const RankTrace& meta, const Timeline& tl, double zero_s,
             const std::vector<std::uint32_t>& global_of, const std::unordered_map<std::uint32_t, std::uint32_t>& comm_ref,
             Otf2Summary& sum)
      : w_(w), rank_(rank), tl_(tl), zero_s_(zero_s), global_of_(global_of), comm_ref_(comm_ref), sum_(sum) {
    comms_ = RankComms(meta.comms);
  }

  void add(const Event& e) {
    if (!e.continuation()) flush();
    call_.push_back(e);
  }

  void flush() {
    if (call_.empty()) return;
    const Event& first = call_.front();
    const OTF2_TimeStamp enter = stamp(first.t_enter), exit = std::max(enter, stamp(first.t_exit));
    const auto region = static_cast<OTF2_RegionRef>(first.op);
    check(OTF2_EvtWriter_Enter(w_, nullptr, enter, region), "Enter");
    ++sum_.calls;
    const Role role = op_role(first.op);
    const CommDef* def = comms_.find(first.comm);
    const OTF2_CommRef comm = comm_of(first.comm);
    const bool coll = role == Role::CollRootOut || role == Role::CollRootIn || role == Role::CollAll;
    if (coll && def && def->inter) {
      ++sum_.skipped;  // OTF2's intercommunicators are not written: the call is Enter/Leave alone
    } else if (coll) {
      std::uint32_t root = OTF2_UNDEFINED_UINT32;
      if (role != Role::CollAll && def) {
        const std::int64_t r = def->world_ranks.rank_of((first.flags & kRoot) ? rank_ : first.peer);
        if (r >= 0) root = static_cast<std::uint32_t>(r);
      }
      if (is_nonblocking_collective(first.op) && first.request) {
        // OTF2 3.0 as Score-P writes it: the request at the call, the collective at the Wait/Test
        // that completes it (written there from what is kept here).
        check(OTF2_EvtWriter_NonBlockingCollectiveRequest(w_, nullptr, enter, first.request),
              "NonBlockingCollectiveRequest");
        pending_icolls_[first.request] = PendingCollective{first.op, comm, root, first.send_bytes, first.recv_bytes};
      } else {
        check(OTF2_EvtWriter_MpiCollectiveBegin(w_, nullptr, enter), "MpiCollectiveBegin");
        check(OTF2_EvtWriter_MpiCollectiveEnd(w_, nullptr, exit, collective_op(first.op), comm, root, first.send_bytes,
                                              first.recv_bytes),
              "MpiCollectiveEnd");
      }
      ++sum_.collectives;
    } else {
      // Send sides at the call's entry, receive sides at its exit (OTF2 wants time order).
      for (const Event& e : call_) {
        const Role r = event_role(e);
        if (is_p2p_recv(e) || (e.flags & kIncomplete)) continue;
        const std::int64_t peer = partner(e);
        switch (r) {
          case Role::Send: case Role::SendRecv:
            if (peer >= 0) send(OTF2_EvtWriter_MpiSend(w_, nullptr, enter, static_cast<std::uint32_t>(peer), comm,
                                                       static_cast<std::uint32_t>(e.tag), e.send_bytes));
            break;
          case Role::Isend:
            if (peer >= 0) send(OTF2_EvtWriter_MpiIsend(w_, nullptr, enter, static_cast<std::uint32_t>(peer), comm,
                                                        static_cast<std::uint32_t>(e.tag), e.send_bytes, e.request));
            break;
          case Role::Irecv:
            if (e.request) check(OTF2_EvtWriter_MpiIrecvRequest(w_, nullptr, enter, e.request), "MpiIrecvRequest");
            break;
          case Role::Complete:
            if (e.request && (e.flags & kCollDone)) {
              if (const auto it = pending_icolls_.find(e.request); it != pending_icolls_.end()) {
                const PendingCollective& c = it->second;
                check(OTF2_EvtWriter_NonBlockingCollectiveComplete(w_, nullptr, exit, collective_op(c.op), c.comm, c.root,
                                                                   c.sent, c.received, e.request),
                      "NonBlockingCollectiveComplete");
                pending_icolls_.erase(it);
              }
            } else if (e.request) {
              check(OTF2_EvtWriter_MpiIsendComplete(w_, nullptr, exit, e.request), "MpiIsendComplete");
            }
            break;
          default: break;
        }
      }
      for (const Event& e : call_) {
        if (!is_p2p_recv(e) || (e.flags & kIncomplete)) continue;
        const std::int64_t peer = partner(e);
        if (peer < 0) continue;
        const OTF2_CommRef c = comm_of(e.comm);
        if (op_role(e.op) == Role::Complete)
          check(OTF2_EvtWriter_MpiIrecv(w_, nullptr, exit, static_cast<std::uint32_t>(peer), c,
                                        static_cast<std::uint32_t>(e.tag), e.recv_bytes, e.request),
                "MpiIrecv");
        else
          check(OTF2_EvtWriter_MpiRecv(w_, nullptr, exit, static_cast<std::uint32_t>(peer), c,
                                       static_cast<std::uint32_t>(e.tag), e.recv_bytes),
                "MpiRecv");
        ++sum_.receives;
      }
    }
    check(OTF2_EvtWriter_Leave(w_, nullptr, exit, region), "Leave");
    call_.clear();
  }

  OTF2_TimeStamp last() const { return last_; }

 private:
  // A nonblocking collective started and not yet completed (only those in flight are kept).
  struct PendingCollective {
    Op op;
    OTF2_CommRef comm;
    std::uint32_t root;
    std::uint64_t sent, received;
  };
  std::unordered_map<std::uint32_t, PendingCollective> pending_icolls_;
  void send(OTF2_ErrorCode code) {
    check(code, "MpiSend");
    ++sum_.sends;
  }
  // The partner as a rank of the record's communicator; -1 where it has none there.
  std::int64_t partner(const Event& e) {
    // A neighbourhood collective's messages keep their tag (kNeighborTag, 2^32 - 3 in OTF2's
    // unsigned tags; read back as -3).
    if (e.peer < 0 || (e.tag < 0 && e.tag != kNeighborTag)) return -1;
    const CommDef* def = comms_.find(e.comm);
    if (def && def->inter) {
      ++sum_.skipped;
      return -1;
    }
    return def ? def->world_ranks.rank_of(e.peer) : -1;
  }
  OTF2_CommRef comm_of(std::uint16_t local) const {
    const auto it = comm_ref_.find(local < global_of_.size() ? global_of_[local] : 0);
    return it == comm_ref_.end() ? 0 : it->second;
  }
  // Nanoseconds after the earliest record, never before the rank's previous event.
  OTF2_TimeStamp stamp(std::uint64_t ticks) {
    const double ns = std::round((tl_.seconds(rank_, ticks) - zero_s_) * 1e9);
    last_ = std::max(last_, ns > 0 ? static_cast<OTF2_TimeStamp>(ns) : 0);
    return last_;
  }

  OTF2_EvtWriter* w_;
  int rank_;
  const Timeline& tl_;
  double zero_s_;
  const std::vector<std::uint32_t>& global_of_;
  const std::unordered_map<std::uint32_t, std::uint32_t>& comm_ref_;
  Otf2Summary& sum_;
  RankComms comms_;
  std::vector<Event> call_;
  OTF2_TimeStamp last_ = 0;
};

class Strings {
 public:
  explicit Strings(OTF2_GlobalDefWriter* w) : w_(w) {}
  OTF2_StringRef operator()(const std::string& s) {
    const auto [it, added] = ids_.try_emplace(s, static_cast<OTF2_StringRef>(ids_.size()));
    if (added) check(OTF2_GlobalDefWriter_WriteString(w_, it->second, s.c_str()), "WriteString");
    return it->second;
  }

 private:
  OTF2_GlobalDefWriter* w_;
  std::map<std::string, OTF2_StringRef> ids_;
};

}  // namespace

Otf2Summary write_otf2(std::span<const RankTrace* const> metas, std::span<const std::string> files,
                       const std::string& directory) {
  OTF2_Error_RegisterCallback(remember_error, nullptr);
  otf2_message.clear();
  Otf2Summary sum;
  const auto P = metas.size();
  const Timeline timeline(std::vector<const RankTrace*>(metas.begin(), metas.end()));
  double zero = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < P; ++r)
    if (metas[r] && !metas[r]->events.empty())
      zero = std::min(zero, timeline.seconds(static_cast<int>(r), metas[r]->events.front().t_enter));
  if (!std::isfinite(zero)) zero = 0;

  // Communicators: one OTF2 Comm per communicator of the run, with the members of its definition.
  const auto global_ids = global_comm_ids(metas);
  std::unordered_map<std::uint32_t, std::uint32_t> comm_ref;  // global id -> OTF2 comm ref
  std::vector<std::pair<std::uint32_t, const CommDef*>> comm_defs;  // (global id, a definition)
  for (std::size_t r = 0; r < P; ++r) {
    if (!metas[r]) continue;
    for (const CommDef& d : metas[r]->comms) {
      if (d.inter) continue;
      const std::uint32_t g = global_comm(global_ids, r, d.id);
      if (comm_ref.try_emplace(g, static_cast<std::uint32_t>(comm_defs.size())).second) comm_defs.emplace_back(g, &d);
    }
  }

  std::unique_ptr<OTF2_Archive, ArchiveCloser> archive(OTF2_Archive_Open(
      directory.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
      OTF2_COMPRESSION_NONE));
  if (!archive) throw Otf2Error(fmt::format("cannot create the OTF2 archive {}{}{}", directory, otf2_message.empty() ? "" : ": ", otf2_message));
  check(OTF2_Archive_SetFlushCallbacks(archive.get(), &kFlush, nullptr), "SetFlushCallbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive.get()), "SetSerialCollectiveCallbacks");
  check(OTF2_Archive_SetCreator(archive.get(), "mstep"), "SetCreator");
  check(OTF2_Archive_OpenEvtFiles(archive.get()), "OpenEvtFiles");

  // Locations: rank r's (first) thread is location r, the location of MPI_COMM_WORLD's rank r;
  // further threads of a rank that made MPI calls from several get locations from P on.
  struct Location {
    std::uint64_t id;
    std::size_t rank;
    std::uint16_t thread;
    std::uint64_t events = 0;
  };
  std::vector<Location> locations;
  OTF2_TimeStamp length = 0;
  std::vector<Event> chunk;
  static const std::vector<std::uint32_t> kNoIds;
  auto write_location = [&](std::size_t r, std::uint16_t thread, std::uint64_t id, auto&& feed) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive.get(), id);
    if (!w) check(OTF2_ERROR_INVALID, "GetEvtWriter");
    if (metas[r]) {
      RankWriter rank(w, static_cast<int>(r), *metas[r], timeline, zero, r < global_ids.size() ? global_ids[r] : kNoIds,
                      comm_ref, sum);
      feed(rank);
      rank.flush();
      length = std::max(length, rank.last());
    }
    Location loc{id, r, thread};
    check(OTF2_EvtWriter_GetNumberOfEvents(w, &loc.events), "GetNumberOfEvents");
    sum.events += loc.events;
    check(OTF2_Archive_CloseEvtWriter(archive.get(), w), "CloseEvtWriter");
    locations.push_back(loc);
  };
  std::uint64_t next_id = P;
  PackHolder pack;
  for (std::size_t r = 0; r < P; ++r) {
    if (metas[r] && metas[r]->several_threads) {
      // Threads: the rank's records whole (its file in memory, one rank at a time), by thread.
      const RankTrace t = read_rank_trace(files[r]);
      if (!t.problem.empty()) sum.problems.push_back(t.problem);
      std::vector<std::uint16_t> threads(t.event_thread.begin(), t.event_thread.end());
      std::sort(threads.begin(), threads.end());
      threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
      for (std::size_t k = 0; k < threads.size(); ++k)
        write_location(r, threads[k], k == 0 ? r : next_id++, [&](RankWriter& w) {
          for (std::size_t i = 0; i < t.events.size(); ++i)
            if (t.event_thread[i] == threads[k]) w.add(t.events[i]);
        });
      continue;
    }
    write_location(r, 0, r, [&](RankWriter& w) {
      pack.hold(files[r]);  // a packed trace's file opened once for its ranks
      RankEventReader reader(files[r]);
      while (chunk.clear(), reader.read(chunk))
        for (const Event& e : chunk) w.add(e);
      if (!reader.problem().empty()) sum.problems.push_back(reader.problem());
    });
  }
  check(OTF2_Archive_CloseEvtFiles(archive.get()), "CloseEvtFiles");

  check(OTF2_Archive_OpenDefFiles(archive.get()), "OpenDefFiles");
  for (const Location& loc : locations) {
    OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(archive.get(), loc.id);
    if (!d) check(OTF2_ERROR_INVALID, "GetDefWriter");
    check(OTF2_Archive_CloseDefWriter(archive.get(), d), "CloseDefWriter");
  }
  check(OTF2_Archive_CloseDefFiles(archive.get()), "CloseDefFiles");

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive.get());
  if (!g) check(OTF2_ERROR_INVALID, "GetGlobalDefWriter");
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1'000'000'000, 0, length + 1, OTF2_UNDEFINED_TIMESTAMP),
        "WriteClockProperties");
  Strings str(g);
  const OTF2_StringRef none = str("");
  for (int op = 0; op < kOpCount; ++op) {
    const Op o = static_cast<Op>(op);
    const OTF2_StringRef name = str(mpi_name(o));
    check(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(op), name, name, none, region_role(o),
                                           o == Op::ToolFlush ? OTF2_PARADIGM_MEASUREMENT_SYSTEM : OTF2_PARADIGM_MPI,
                                           OTF2_REGION_FLAG_NONE, none, 0, 0),
          "WriteRegion");
  }
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, str("machine"), str("machine"), OTF2_UNDEFINED_SYSTEM_TREE_NODE),
        "WriteSystemTreeNode");
  for (std::size_t r = 0; r < P; ++r)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(r), str(fmt::format("rank {}", r)),
                                                  OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP),
          "WriteLocationGroup");
  for (const Location& loc : locations) {
    const std::string name = loc.id == loc.rank ? fmt::format("rank {}", loc.rank) : fmt::format("rank {} thread {}", loc.rank, loc.thread);
    check(OTF2_GlobalDefWriter_WriteLocation(g, loc.id, str(name), OTF2_LOCATION_TYPE_CPU_THREAD, loc.events,
                                             static_cast<OTF2_LocationGroupRef>(loc.rank)),
          "WriteLocation");
  }
  std::vector<std::uint64_t> members(P);
  for (std::size_t r = 0; r < P; ++r) members[r] = r;
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, str("MPI_COMM_WORLD locations"), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(P), members.data()),
        "WriteGroup");
  for (std::size_t c = 0; c < comm_defs.size(); ++c) {
    const std::span<const std::int32_t> world = comm_defs[c].second->world_ranks;
    members.assign(world.begin(), world.end());
    const auto group = static_cast<OTF2_GroupRef>(c + 1);
    const std::string name = comm_defs[c].first == 0 ? "MPI_COMM_WORLD" : fmt::format("communicator {}", comm_defs[c].first);
    check(OTF2_GlobalDefWriter_WriteGroup(g, group, str(name), OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(members.size()), members.data()),
          "WriteGroup");
    check(OTF2_GlobalDefWriter_WriteComm(g, static_cast<OTF2_CommRef>(c), str(name), group, OTF2_UNDEFINED_COMM,
                                         OTF2_COMM_FLAG_NONE),
          "WriteComm");
  }
  check(OTF2_Archive_CloseGlobalDefWriter(archive.get(), g), "CloseGlobalDefWriter");
  check(OTF2_Archive_Close(archive.release()), "Close");
  return sum;
}

}  // namespace mstep::model
