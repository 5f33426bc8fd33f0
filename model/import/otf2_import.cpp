#include "model/import/otf2_import.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>
#include <otf2/otf2.h>

#include "format/rank_trace.hpp"
#include "model/export/otf2.hpp"
#include "model/import/otf2_archive.hpp"
#include "model/import/otf2_clocks.hpp"

namespace mstep::model {
namespace {
namespace fs = std::filesystem;

using otf2::Definitions;

// One MPI call as OTF2 told it, before it becomes records.
struct Message {
  enum Kind : std::uint8_t {
    Send, Isend, Recv, Irecv, IrecvRequest, IsendComplete, Collective,
    IcollRequest, IcollComplete  // a nonblocking collective's start, and its completion with what it moved
  } kind{};
  std::int32_t peer = kNoPeer;
  std::int32_t tag = kNoTag;
  std::uint64_t bytes = 0, bytes_in = 0;
  std::uint64_t request = 0;
  OTF2_CommRef comm = 0;
};

class RankReader {
 public:
  RankReader(const Definitions& defs, int rank, int world, std::map<std::string, std::uint64_t>& skipped)
      : defs_(defs), rank_(rank), skipped_(skipped) {
    trace_.header.rank = rank;
    trace_.header.world_size = world;
    // Ticks are nanoseconds whatever the archive's timer resolution (Score-P's may be a CPU's cycle
    // rate): an mstep file of clock kind 1 has exactly 1e9 ticks per second.
    trace_.header.clock_kind = 1;
    trace_.header.ticks_per_second = 1e9;
    ns_per_tick_ = 1e9 / static_cast<double>(defs.resolution);
    // Communicators holding this rank, MPI_COMM_WORLD first.
    const std::optional<OTF2_CommRef> world_ref = otf2::world_comm(defs);
    for (const auto& [comm, group] : defs.comms)
      if (world_ref && comm == *world_ref) add_comm(comm, otf2::members(defs, group, rank));
    for (const auto& [comm, group] : defs.comms) {
      if (world_ref && comm == *world_ref) continue;
      const std::vector<std::int32_t> m = otf2::members(defs, group, rank);
      if (std::find(m.begin(), m.end(), rank) != m.end()) add_comm(comm, m);
    }
  }

  std::uint64_t handled = 0;  // events of the kinds read here (the others are counted as skipped)
  int synthesized = 0;        // MPI_Init and MPI_Finalize records added where the archive had none

  void enter(OTF2_TimeStamp stamp, OTF2_RegionRef region) {
    ++handled;
    const std::uint64_t t = ns(stamp);
    seen(t);
    const auto op = op_of(region);
    if (depth_ > 0 || !op) {
      if (depth_ > 0) ++depth_;
      else skip(region_label(region));
      return;
    }
    depth_ = 1;
    op_ = *op;
    enter_ = t;
    messages_.clear();
  }

  void leave(OTF2_TimeStamp stamp, OTF2_RegionRef) {
    ++handled;
    const std::uint64_t t = ns(stamp);
    seen(t);
    if (depth_ == 0) return;
    if (--depth_ > 0) return;
    emit(t);
  }

  void message(const Message& m) {
    ++handled;
    if (depth_ == 0) {
      ++skipped_["MPI events outside an MPI call's Enter/Leave"];
      return;
    }
    messages_.push_back(m);
  }

  // A time the location was alive at (any event, also of regions not imported).
  void seen(std::uint64_t t) {
    first_seen_ = std::min(first_seen_, t);
    last_seen_ = std::max(last_seen_, t);
  }

  // `sync`: clock samples that put the rank on the common clock (model/import/otf2_clocks.hpp);
  // empty: the archive's own clock, shared by all ranks.
  RankTrace& finish(const std::vector<ClockSync>& sync = {}) {
    // Tools that start tracing inside MPI_Init (EZTrace) record neither it nor MPI_Finalize: the
    // rank's life is then marked by an MPI_Init ending at its first event and an MPI_Finalize at
    // its last, as mstep's analyses time a run from one to the other.
    if (!trace_.events.empty() && first_seen_ <= last_seen_) {
      if (trace_.events.front().op != Op::Init && trace_.events.front().op != Op::Init_thread) {
        Event init;
        init.op = Op::Init;
        init.t_enter = init.t_exit = std::min(first_seen_, trace_.events.front().t_enter);
        trace_.events.insert(trace_.events.begin(), init);
        ++synthesized;
      }
      if (trace_.events.back().op != Op::Finalize) {
        Event fin;
        fin.op = Op::Finalize;
        fin.t_enter = fin.t_exit = std::max(last_seen_, trace_.events.back().t_exit);
        trace_.events.push_back(fin);
        ++synthesized;
      }
    }
    if (!trace_.events.empty()) {
      const auto ns = [](std::uint64_t ticks) { return static_cast<std::int64_t>(ticks); };
      const std::uint64_t first = trace_.events.front().t_enter, last = trace_.events.back().t_exit;
      if (sync.empty()) {
        trace_.clocks.push_back(ClockSync{ClockSync::AtInit, first, ns(first), 0, 0});
        trace_.clocks.push_back(ClockSync{ClockSync::AtFinalize, last, ns(last), 0, 0});
      } else {
        trace_.clocks = sync;
        if (sync.size() == 1)  // one offset throughout: a second sample at the rank's last tick
          trace_.clocks.push_back(ClockSync{ClockSync::AtFinalize, last, ns(last), sync.front().offset_ns, 0});
      }
    }
    return trace_;
  }

  std::int32_t world_rank(OTF2_CommRef comm, std::uint32_t comm_rank) const {
    const auto it = local_.find(comm);
    if (it == local_.end() || comm_rank == OTF2_UNDEFINED_UINT32) return kNoPeer;
    const MemberList& m = trace_.comms[it->second].world_ranks;
    return comm_rank < m.size() ? m.data()[comm_rank] : kNoPeer;
  }

 private:
  void add_comm(OTF2_CommRef ref, const std::vector<std::int32_t>& world_ranks) {
    const auto id = static_cast<std::uint16_t>(trace_.comms.size());
    local_[ref] = id;
    trace_.comms.push_back({id, false, MemberList(world_ranks)});
  }
  std::uint16_t local_comm(OTF2_CommRef ref) const {
    const auto it = local_.find(ref);
    return it == local_.end() ? 0 : it->second;
  }
  std::string region_label(OTF2_RegionRef region) const {
    const auto n = defs_.region_name.find(region);
    const auto s = n == defs_.region_name.end() ? defs_.strings.end() : defs_.strings.find(n->second);
    return s == defs_.strings.end() ? std::string("?") : s->second;
  }
  std::optional<Op> op_of(OTF2_RegionRef region) {
    const auto cached = op_cache_.find(region);
    if (cached != op_cache_.end()) return cached->second;
    std::optional<Op> op;
    const std::string name = region_label(region);
    for (int i = 0; i < kOpCount; ++i)
      if (mpi_name(static_cast<Op>(i)) == name) op = static_cast<Op>(i);  // "mstep_flush" too: mstep's own archives
    op_cache_[region] = op;
    return op;
  }
  void skip(const std::string& region) {
    ++skipped_[region.rfind("MPI_", 0) == 0 ? fmt::format("calls of {} (not modelled)", region)
                                            : std::string("calls of functions other than MPI")];
  }
  std::uint32_t request_of(std::uint64_t otf2_request, bool open) {
    const auto it = requests_.find(otf2_request);
    if (it != requests_.end()) {
      const std::uint32_t id = it->second;
      if (!open) requests_.erase(it);
      return id;
    }
    const std::uint32_t id = ++next_request_;
    if (open) requests_[otf2_request] = id;
    return id;
  }

  void emit(std::uint64_t exit) {
    Event base;
    base.op = op_;
    base.t_enter = enter_;
    base.t_exit = std::max(enter_, exit);
    std::vector<Event> out;
    const Role role = op_role(op_);
    for (const Message& m : messages_) {
      Event e = base;
      e.comm = local_comm(m.comm);
      e.peer = m.peer;
      e.tag = m.tag;
      switch (m.kind) {
        case Message::Send: e.send_bytes = m.bytes; break;
        case Message::Isend: e.send_bytes = m.bytes, e.request = request_of(m.request, true); break;
        case Message::Recv:
          e.recv_bytes = m.bytes;
          if (role == Role::SendRecv) e.flags |= kRecvHalf;
          break;
        case Message::IrecvRequest: {
          e.peer = kAnySource, e.tag = kNoTag, e.request = request_of(m.request, true);
          if (role == Role::Start) e.flags |= kRecvHalf;  // a persistent receive's Start, as libmstep writes it
          irecv_at_[e.request] = trace_.events.size() + out.size();
          break;
        }
        case Message::Irecv: {
          e.recv_bytes = m.bytes, e.flags |= kRecvHalf, e.request = request_of(m.request, false);
          // The Irecv that posted it takes the message's source and tag (OTF2 does not keep the posted ones).
          if (const auto at = irecv_at_.find(e.request); at != irecv_at_.end()) {
            if (at->second < trace_.events.size()) {
              trace_.events[at->second].peer = m.peer;
              trace_.events[at->second].tag = m.tag;
              trace_.events[at->second].comm = e.comm;
            }
            irecv_at_.erase(at);
          }
          break;
        }
        case Message::IsendComplete: e.peer = kNoPeer, e.tag = kNoTag, e.request = request_of(m.request, false); break;
        case Message::Collective:
          e.send_bytes = m.bytes, e.recv_bytes = m.bytes_in, e.tag = kNoTag;
          if (m.peer == rank_) e.flags |= kRoot;
          break;
        case Message::IcollRequest:
          e.peer = kNoPeer, e.tag = kNoTag, e.request = request_of(m.request, true);
          icoll_at_[e.request] = trace_.events.size() + out.size();
          break;
        case Message::IcollComplete: {
          // As libmstep writes it: the completing record carries kCollDone; the call's record
          // takes the communicator, root and sizes OTF2 gives only here.
          e.peer = kNoPeer, e.tag = kNoTag, e.comm = 0, e.flags |= kCollDone, e.request = request_of(m.request, false);
          if (const auto at = icoll_at_.find(e.request); at != icoll_at_.end()) {
            if (at->second < trace_.events.size()) {
              Event& call = trace_.events[at->second];
              call.comm = local_comm(m.comm);
              call.send_bytes = m.bytes, call.recv_bytes = m.bytes_in;
              const Role r = op_role(call.op);
              if (r == Role::CollRootOut || r == Role::CollRootIn) {
                call.peer = m.peer;
                if (m.peer == rank_) call.flags |= kRoot;
              }
            }
            icoll_at_.erase(at);
          }
          break;
        }
      }
      out.push_back(e);
    }
    // Sends first, as libmstep writes a Sendrecv (send record, then the receive half).
    std::stable_sort(out.begin(), out.end(), [](const Event& a, const Event& b) {
      return !(a.flags & kRecvHalf) && (b.flags & kRecvHalf);
    });
    if (out.empty()) {
      Event e = base;
      if (role == Role::Complete) e.flags |= kIncomplete;  // a Test that completed nothing
      out.push_back(e);
    }
    for (std::size_t i = 1; i < out.size(); ++i) out[i].flags |= kContinuation;
    trace_.events.insert(trace_.events.end(), out.begin(), out.end());
  }

  const Definitions& defs_;
  int rank_;
  std::map<std::string, std::uint64_t>& skipped_;
  RankTrace trace_;
  std::unordered_map<OTF2_CommRef, std::uint16_t> local_;
  std::unordered_map<OTF2_RegionRef, std::optional<Op>> op_cache_;
  std::unordered_map<std::uint64_t, std::uint32_t> requests_;  // open OTF2 request -> ours
  std::unordered_map<std::uint32_t, std::size_t> irecv_at_;    // our request -> its Irecv record
  std::unordered_map<std::uint32_t, std::size_t> icoll_at_;    // our request -> its nonblocking collective
  std::uint32_t next_request_ = 0;
  int depth_ = 0;
  Op op_ = Op::Init;
  std::uint64_t enter_ = 0;  // ns
  std::uint64_t first_seen_ = std::numeric_limits<std::uint64_t>::max(), last_seen_ = 0;
  double ns_per_tick_ = 1;
  std::uint64_t ns(OTF2_TimeStamp stamp) const {
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(stamp) * ns_per_tick_));
  }
  std::vector<Message> messages_;
};

RankReader& reader_of(void* d) { return *static_cast<RankReader*>(d); }

OTF2_EvtReaderCallbacks* event_callbacks() {
  OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetEnterCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* d, OTF2_AttributeList*, OTF2_RegionRef r) {
    reader_of(d).enter(t, r);
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* d, OTF2_AttributeList*, OTF2_RegionRef r) {
    reader_of(d).leave(t, r);
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d, OTF2_AttributeList*,
                                                    uint32_t to, OTF2_CommRef c, uint32_t tag, uint64_t n) {
    RankReader& r = reader_of(d);
    r.message({Message::Send, r.world_rank(c, to), static_cast<std::int32_t>(tag), n, 0, 0, c});
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d, OTF2_AttributeList*,
                                                     uint32_t to, OTF2_CommRef c, uint32_t tag, uint64_t n, uint64_t req) {
    RankReader& r = reader_of(d);
    r.message({Message::Isend, r.world_rank(c, to), static_cast<std::int32_t>(tag), n, 0, req, c});
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d, OTF2_AttributeList*,
                                                    uint32_t from, OTF2_CommRef c, uint32_t tag, uint64_t n) {
    RankReader& r = reader_of(d);
    r.message({Message::Recv, r.world_rank(c, from), static_cast<std::int32_t>(tag), n, 0, 0, c});
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d, OTF2_AttributeList*,
                                                     uint32_t from, OTF2_CommRef c, uint32_t tag, uint64_t n, uint64_t req) {
    RankReader& r = reader_of(d);
    r.message({Message::Irecv, r.world_rank(c, from), static_cast<std::int32_t>(tag), n, 0, req, c});
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d,
                                                            OTF2_AttributeList*, uint64_t req) {
    reader_of(d).message({Message::IrecvRequest, kAnySource, kNoTag, 0, 0, req, 0});
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d,
                                                             OTF2_AttributeList*, uint64_t req) {
    reader_of(d).message({Message::IsendComplete, kNoPeer, kNoTag, 0, 0, req, 0});
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d,
                                                               OTF2_AttributeList*) {
    ++reader_of(d).handled;  // the call's Enter marks its start
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d,
                                                             OTF2_AttributeList*, OTF2_CollectiveOp, OTF2_CommRef c,
                                                             uint32_t root, uint64_t sent, uint64_t received) {
    RankReader& r = reader_of(d);
    r.message({Message::Collective, r.world_rank(c, root), kNoTag, sent, received, 0, c});
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d, OTF2_AttributeList*, uint64_t req) {
        reader_of(d).message({Message::IcollRequest, kNoPeer, kNoTag, 0, 0, req, 0});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d, OTF2_AttributeList*, OTF2_CollectiveOp, OTF2_CommRef c,
             uint32_t root, uint64_t sent, uint64_t received, uint64_t req) {
        RankReader& r = reader_of(d);
        r.message({Message::IcollComplete, r.world_rank(c, root), kNoTag, sent, received, req, c});
        return OTF2_CALLBACK_SUCCESS;
      });
  return cb;
}

}  // namespace

std::string otf2_anchor(const std::string& anchor) {
  std::error_code ec;
  if (!fs::is_directory(anchor, ec)) {
    if (!fs::exists(anchor, ec)) throw Otf2Error(fmt::format("{}: no such file or directory", anchor));
    return anchor;
  }
  std::string found;
  for (const auto& entry : fs::directory_iterator(anchor, ec)) {
    if (entry.path().extension() != ".otf2") continue;
    if (!found.empty()) throw Otf2Error(fmt::format("{} holds several OTF2 archives: name the .otf2 file", anchor));
    found = entry.path().string();
  }
  if (found.empty()) throw Otf2Error(fmt::format("{} holds no OTF2 archive (no .otf2 file)", anchor));
  return found;
}

Otf2ImportSummary import_otf2(const std::string& anchor_given, const std::string& out_dir, bool keep_clocks) {
  const std::string anchor = otf2_anchor(anchor_given);
  const Otf2Clocks clocks = keep_clocks ? Otf2Clocks{} : check_otf2_clocks(anchor);
  Definitions defs;
  const otf2::ReaderPtr reader = otf2::open(anchor, defs);
  Otf2ImportSummary sum;
  sum.creator = defs.creator;
  sum.clocks = clocks.why;
  sum.ranks = static_cast<int>(defs.mpi_locations.size());
  sum.ticks_per_second = static_cast<double>(defs.resolution);
  OTF2_EvtReaderCallbacks* ecb = event_callbacks();
  std::optional<RankReader> rr;
  otf2::read_ranks(
      reader.get(), defs, anchor, ecb,
      [&](int rank) -> void* { return &rr.emplace(defs, rank, sum.ranks, sum.skipped); },
      [&](int rank, std::uint64_t n) {
        if (n > rr->handled) sum.skipped["events of other kinds (OpenMP, I/O, metrics, RMA, ...)"] += n - rr->handled;
        RankTrace& t = rr->finish(clocks.aligned ? clocks.samples[static_cast<std::size_t>(rank)] : std::vector<ClockSync>{});
        sum.synthesized += rr->synthesized;
        sum.records += t.events.size();
        write_rank_trace((fs::path(out_dir) / rank_file_name(rank)).string(), t);
        rr.reset();
      });
  OTF2_EvtReaderCallbacks_Delete(ecb);
  return sum;
}

}  // namespace mstep::model
