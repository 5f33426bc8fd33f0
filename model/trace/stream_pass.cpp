#include "model/trace/stream_pass.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model/trace/channel.hpp"
#include "model/trace/channel_table.hpp"
#include "model/trace/comm_ids.hpp"
#include "model/trace/open_posts.hpp"

namespace mstep {
namespace {

// An Irecv this many records old and still not completed is taken to be never completed (as the
// replay's kMaxLookahead): receives posted after it are released to their channels without it.
constexpr std::uint32_t kMaxOpenPost = 1u << 22;

// Decoded records the pass holds over all ranks. 8 MiB was as fast as 32 at 64 to 16 384 ranks and
// smaller: the 1024-rank ring's report 79 -> 52 MB, the 16 384-rank one 175 -> 155 MB.
constexpr std::size_t kDecodedBudget = std::size_t{8} << 20;

struct SendItem {
  std::uint32_t index = 0;
  Event e;
  RecordTag tag;
};

struct RecvItem {
  std::uint32_t post = 0, done = 0, done_call = 0;
  std::uint64_t bytes = 0;
  Event post_e, done_e, call_e;
  ChannelKey key{};
  bool single = false;  // the only receive of its call
  RecordTag tag;
};

// A queue that allocates nothing while it stays empty (most channels hold one message at a time).
template <class T>
class Fifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  T& front() { return items_[head_]; }
  void push_back(T t) { items_.push_back(std::move(t)); }
  void pop_front() {
    if (++head_ == items_.size()) items_.clear(), head_ = 0;
  }
  auto begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() const { return items_.end(); }

 private:
  std::vector<T> items_;
  std::size_t head_ = 0;
};

struct Channel {
  Fifo<SendItem> sends;
  Fifo<RecvItem> recvs;
  bool idle() const { return sends.empty() && recvs.empty(); }
};

// A call that completes one receive at most: its waits are final with that receive.
bool single_receive_call(Op op) {
  switch (op) {
    case Op::Recv:
    case Op::Mrecv:
    case Op::Wait:
    case Op::Waitany:
    case Op::Test:
    case Op::Testany:
    case Op::Sendrecv:
    case Op::Sendrecv_replace: return true;
    default: return false;
  }
}

// Collectives a rank has entered so far, by global communicator: a sorted list, since a rank is in
// few communicators (an unordered_map, its buckets and a node a communicator, was some 150 bytes a
// rank: 10 MB of a 65 536-rank report).
class CollectiveCounts {
 public:
  // The count for `comm`, made 0 if it had none.
  std::uint64_t& operator[](std::uint32_t comm) {
    auto it = std::lower_bound(counts_.begin(), counts_.end(), comm, before);
    if (it == counts_.end() || it->first != comm) it = counts_.insert(it, {comm, 0});
    return it->second;
  }
  std::uint64_t reached(std::uint32_t comm) const {
    const auto it = std::lower_bound(counts_.begin(), counts_.end(), comm, before);
    return it == counts_.end() || it->first != comm ? 0 : it->second;
  }

 private:
  using Count = std::pair<std::uint32_t, std::uint64_t>;  // communicator, collectives
  static bool before(const Count& c, std::uint32_t comm) { return c.first < comm; }
  std::vector<Count> counts_;
};

struct Cursor {
  std::optional<RankEventReader> reader;  // in place: a block a rank was rounded up by a fifth
  std::vector<Event> frame;
  std::size_t pos = 0;
  std::uint32_t index = 0;  // of the next record
  bool ended = false;
  OpenIrecvs open_posts;                        // Irecvs not yet completed
  std::map<std::uint32_t, RecvItem> completed;  // by post: waiting for the receives posted before
  std::uint32_t call_index = 0;                 // the last record that is not a continuation
  Event call;
  ReceivingCalls receiving_calls;               // calls completing several receives, not yet resolved
  CollectiveCounts coll_seq;  // global comm -> collectives so far
  std::vector<const CommDef*> def_of;                         // local comm id -> definition
};

struct Instance {
  std::vector<StreamedMember> members;
  std::size_t expected = std::numeric_limits<std::size_t>::max();  // members still to come, counted at creation
  const CommDef* def = nullptr;                                    // member list (null: unknown)
};

class Pass {
 public:
  Pass(std::span<const RankTrace* const> metas, std::span<const std::string> files, const Timeline& tl,
       StreamVisitor& v, bool may_read_ahead)
      : metas_(metas), tl_(tl), v_(v), comm_ids_(global_comm_ids(metas)), cursors_(metas.size()) {
    const auto P = metas.size();
    // Decoded records held: at most kDecodedBudget bytes over all ranks, from 4 to 4096 a rank (at
    // least 16 a rank was 58 MB of a 65 536-rank report's 457).
    const std::size_t chunk = std::clamp<std::size_t>(kDecodedBudget / (sizeof(Event) * std::max<std::size_t>(P, 1)), 4, 4096);
    for (std::size_t r = 0; r < P; ++r) {
      Cursor& c = cursors_[r];
      if (!metas[r] || r >= files.size() || files[r].empty()) {
        c.ended = true;
        continue;
      }
      for (const CommDef& d : metas[r]->comms) {
        if (d.id >= c.def_of.size()) c.def_of.resize(d.id + 1u, nullptr);
        c.def_of[d.id] = &d;
      }
      bool more = false;
      try {  // the reader opens its file at the first read
        // A thread a rank file, for runs of few ranks and large files.
        const bool read_ahead = may_read_ahead && read_ahead_pays(P, metas[r]->file_bytes);
        c.reader.emplace(files[r], chunk, read_ahead);
        more = advance(c);
      } catch (const TraceError& e) {  // read_rank_metadata could, so this is rare: the file changed
        c.reader.reset();
        out_.damaged.push_back(static_cast<int>(r));
        out_.problems.push_back(e.what());
        c.ended = true;
        continue;
      }
      if (more) active_.push_back({static_cast<std::uint32_t>(r), time_of(r)});
      else finish_rank(r);
    }
  }

  StreamPassResult run() {
    sweep();
    // What is left never completed: the collectives some member never reached, the unmatched.
    for (auto& [key, inst] : instances_) emit(inst);
    instances_.clear();
    channels_.for_each_in_order([this](const ChannelKey& key, const Channel& ch) {
      for (const SendItem& s : ch.sends) unmatched_send(key, s);
      for (const RecvItem& rv : ch.recvs) unmatched_recv(rv);
    });
    for (std::size_t r = 0; r < cursors_.size(); ++r) {
      for (const ReceivingCalls::Call& call : cursors_[r].receiving_calls.all())
        v_.call_complete(static_cast<std::int32_t>(r), call.call);
      cursors_[r].receiving_calls.clear();
    }
    std::sort(out_.unmatched.begin(), out_.unmatched.end(), [](const Unmatched& a, const Unmatched& b) {
      return a.rank != b.rank ? a.rank < b.rank : a.event < b.event;
    });
    return std::move(out_);
  }

 private:
  // The ranks' records in the order of their start times, but for a window of time: in turn, each
  // rank with records starting before the window's end takes them all, the ranks in their order.
  // That visits the ranks' state in the order it lies in memory (a heap of next records went from
  // rank to rank at every record or two, a cache miss each at thousands of ranks), and keeps what
  // waits for a match to what one window adds. The window is sized so that a round takes from 2 to 8
  // records a rank, whatever the run's rate of records: each rank's state is then fetched once for
  // a few records (a round of a quarter to one record a rank made the 16 384-rank ring's report
  // take 1.9-2.3 s, 2 to 8 records 1.2 s, with the same peaks of messages and M-steps held).
  void sweep() {
    double width = 1e-6;
    double lo = std::numeric_limits<double>::infinity();
    for (const Active& a : active_) lo = std::min(lo, a.next);
    while (!active_.empty()) {
      const double end = lo + width;
      double next_lo = std::numeric_limits<double>::infinity();
      std::size_t taken = 0, kept = 0;
      for (Active a : active_) {
        // The earliest rank always takes a record (a window below the clock's resolution at this
        // time, or times that are not numbers, still move on).
        if (a.next <= lo || !(a.next >= end)) {
          Cursor& c = cursors_[a.rank];
          bool more = true;
          do {
            process(a.rank, c.frame[c.pos]);
            ++c.pos;
            ++c.index;
            ++taken;
            more = advance(c);
          } while (more && !((a.next = time_of(a.rank)) >= end));
          if (!more) {
            finish_rank(a.rank);
            continue;
          }
        }
        next_lo = std::min(next_lo, a.next);
        active_[kept++] = a;
      }
      active_.resize(kept);
      lo = next_lo;
      if (taken < 2 * kept) width *= 2;
      else if (taken > 8 * kept && width > 1e-15) width /= 2;
    }
  }

  double time_of(std::size_t r) const {
    return tl_.seconds(static_cast<int>(r), cursors_[r].frame[cursors_[r].pos].t_enter);
  }

  // Makes frame[pos] the next record; false at the end of the rank's file.
  bool advance(Cursor& c) {
    while (c.pos >= c.frame.size()) {
      c.frame.clear();
      c.pos = 0;
      if (!c.reader->read(c.frame)) return false;
    }
    return true;
  }

  bool traced(std::int32_t rank) const {
    return rank >= 0 && static_cast<std::size_t>(rank) < metas_.size() && metas_[static_cast<std::size_t>(rank)] &&
           cursors_[static_cast<std::size_t>(rank)].reader;
  }

  void process(std::size_t r, const Event& e) {
    Cursor& c = cursors_[r];
    const auto rank = static_cast<std::int32_t>(r);
    ++out_.records;
    if (!e.continuation()) {
      close_call(r);
      c.call_index = c.index, c.call = e;
    }
    const RecordTag tag = v_.record(rank, c.index, e);
    if (is_collective_call(e)) collective(r, e, tag);
    if (event_role(e) == Role::Irecv && e.request) c.open_posts.post(c.index, e.request, e);
    const auto world = static_cast<std::int32_t>(metas_.size());
    const bool recv = is_p2p_recv(e);
    std::uint32_t post = c.index;
    Event post_e = e;
    if (recv && op_role(e.op) == Role::Complete) {
      if (OpenIrecvs::Post p; c.open_posts.take(e.request, p)) {
        post = p.index;
        post_e = p.e;
      }
    }
    if (e.peer >= 0 && e.peer < world) {
      if (is_p2p_send(e)) {
        const ChannelKey key{global_comm(comm_ids_, r, e.comm), rank, e.peer, e.tag};
        if (!traced(e.peer)) unmatched_send(key, SendItem{c.index, e, tag});
        else push_send(key, SendItem{c.index, e, tag});
      } else if (recv) {
        RecvItem item{post, c.index, c.call_index, e.recv_bytes, post_e, e, c.call,
                      ChannelKey{global_comm(comm_ids_, r, e.comm), e.peer, rank, e.tag}, single_receive_call(c.call.op),
                      tag};
        if (!item.single) ++c.receiving_calls.at(c.call_index).receives;
        if (!traced(e.peer)) unmatched_recv(item);
        else if (c.completed.empty() && (c.open_posts.empty() || post < c.open_posts.oldest().index))
          push_recv(std::move(item));  // no receive posted before it is open: its turn is now
        else c.completed.emplace(post, std::move(item));
      }
    }
    release(c, false);
  }

  // Hands the completed receives to their channels in posting order, as far as no receive posted
  // earlier is still open.
  void release(Cursor& c, bool all) {
    while (!c.open_posts.empty() && c.index - c.open_posts.oldest().index > kMaxOpenPost) c.open_posts.drop_oldest();
    while (!c.completed.empty() && (all || c.open_posts.empty() || c.completed.begin()->first < c.open_posts.oldest().index)) {
      auto node = c.completed.extract(c.completed.begin());
      push_recv(std::move(node.mapped()));
    }
  }

  void push_send(const ChannelKey& key, SendItem s) {
    Channel& ch = channels_[key];
    if (!ch.recvs.empty()) {
      matched(key, s, ch.recvs.front());
      ch.recvs.pop_front();
      note_in_flight(-1);
      return;
    }
    ch.sends.push_back(s);
    note_in_flight(+1);
  }

  void push_recv(RecvItem rv) {
    Channel& ch = channels_[rv.key];
    if (!ch.sends.empty()) {
      matched(rv.key, ch.sends.front(), rv);
      ch.sends.pop_front();
      note_in_flight(-1);
      return;
    }
    ch.recvs.push_back(std::move(rv));
    note_in_flight(+1);
  }

  void note_in_flight(int d) {
    in_flight_ = d > 0 ? in_flight_ + 1 : in_flight_ - 1;
    out_.peak_in_flight = std::max(out_.peak_in_flight, in_flight_);
  }

  void matched(const ChannelKey& key, const SendItem& s, const RecvItem& rv) {
    StreamedMessage m;
    m.message = Message{key.src, key.dst, s.index, rv.post, rv.done, rv.bytes, key.tag, key.comm};
    m.send = s.e;
    m.post = rv.post_e;
    m.done = rv.call_e;
    m.done_call = rv.done_call;
    m.single = rv.single;
    m.send_tag = s.tag;
    m.recv_tag = rv.tag;
    ++out_.messages;
    v_.message(m);
    if (!rv.single) resolved(key.dst, rv.done_call);
  }

  void unmatched_send(const ChannelKey& key, const SendItem& s) {
    v_.unmatched(key.src, s.index, s.tag);
    out_.unmatched.push_back({key.src, s.index,
                              fmt::format("rank {} event {}: {} to {} tag {} of {} bytes was never received{}", key.src,
                                          s.index, mpi_name(s.e.op), key.dst, key.tag, s.e.send_bytes,
                                          traced(key.dst) ? "" : " (no trace of the receiver)")});
  }

  // The call that began at `call` on `rank` got one more of its receives settled.
  void resolved(std::int32_t rank, std::uint32_t call) {
    ReceivingCalls& calls = cursors_[static_cast<std::size_t>(rank)].receiving_calls;
    ReceivingCalls::Call* c = calls.find(call);
    if (!c) return;
    ++c->resolved;
    if (c->closed && c->resolved >= c->receives) {
      calls.erase(*c);
      v_.call_complete(rank, call);
    }
  }

  // The rank's current call has had its last record.
  void close_call(std::size_t r) {
    Cursor& c = cursors_[r];
    if (c.receiving_calls.empty()) return;  // (most calls complete one receive at most: no entry)
    ReceivingCalls::Call* call = c.receiving_calls.find(c.call_index);
    if (!call || call->closed) return;
    call->closed = true;
    if (call->resolved >= call->receives) {
      c.receiving_calls.erase(*call);
      v_.call_complete(static_cast<std::int32_t>(r), c.call_index);
    }
  }

  void unmatched_recv(const RecvItem& rv) {
    v_.unmatched(rv.key.dst, rv.done, rv.tag);
    if (!rv.single) resolved(rv.key.dst, rv.done_call);
    out_.unmatched.push_back({rv.key.dst, rv.done,
                              fmt::format("rank {} event {}: {} from {} tag {} has no recorded send{}", rv.key.dst,
                                          rv.done, mpi_name(rv.done_e.op), rv.key.src, rv.key.tag,
                                          traced(rv.key.src) ? "" : " (no trace of the sender)")});
  }

  // ---- collectives
  void collective(std::size_t r, const Event& e, RecordTag tag) {
    Cursor& c = cursors_[r];
    const std::uint32_t comm = global_comm(comm_ids_, r, e.comm);
    const std::uint64_t seq = c.coll_seq[comm]++;
    auto [it, fresh] = instances_.try_emplace({comm, seq});
    Instance& inst = it->second;
    if (fresh) {
      const CommDef* def = e.comm < c.def_of.size() ? c.def_of[e.comm] : nullptr;
      if (def && !def->inter) {
        inst.def = def;
        inst.expected = 0;
        for (const std::int32_t m : def->world_ranks)
          if (traced(m) && !cursors_[static_cast<std::size_t>(m)].ended) ++inst.expected;
      }
    }
    inst.members.push_back({static_cast<std::int32_t>(r), c.index, e, tag});
    if (inst.members.size() >= inst.expected) {
      emit(inst);
      instances_.erase(it);
    }
  }

  void emit(Instance& inst) {
    std::sort(inst.members.begin(), inst.members.end(),
              [](const StreamedMember& a, const StreamedMember& b) { return a.rank < b.rank; });
    v_.collective(inst.members);
  }

  void finish_rank(std::size_t r) {
    Cursor& c = cursors_[r];
    c.ended = true;
    close_call(r);
    if (c.reader && !c.reader->problem().empty()) {
      out_.damaged.push_back(static_cast<int>(r));
      out_.problems.push_back(c.reader->problem());
    }
    c.open_posts.clear();
    release(c, true);
    c.frame = {};
    v_.rank_end(static_cast<std::int32_t>(r), c.index);
    // Instances waiting for this rank, which it never reached, wait for it no more.
    for (auto it = instances_.begin(); it != instances_.end();) {
      Instance& inst = it->second;
      const std::uint64_t reached = c.coll_seq.reached(it->first.first);
      if (inst.def && reached <= it->first.second && inst.def->world_ranks.rank_of(static_cast<std::int32_t>(r)) >= 0) {
        --inst.expected;
        if (inst.members.size() >= inst.expected) {
          emit(inst);
          it = instances_.erase(it);
          continue;
        }
      }
      ++it;
    }
  }

  std::span<const RankTrace* const> metas_;
  const Timeline& tl_;
  StreamVisitor& v_;
  std::vector<std::vector<std::uint32_t>> comm_ids_;
  std::vector<Cursor> cursors_;
  struct Active {
    std::uint32_t rank;
    double next;  // its next record's start (Timeline seconds)
  };
  std::vector<Active> active_;  // ranks with records left, in rank order
  ChannelTable<Channel> channels_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, Instance> instances_;
  std::size_t in_flight_ = 0;
  StreamPassResult out_;
};

}  // namespace

StreamPassResult stream_pass(std::span<const RankTrace* const> metas, std::span<const std::string> files,
                             const Timeline& timeline, StreamVisitor& visitor, bool read_ahead) {
  return Pass(metas, files, timeline, visitor, read_ahead).run();
}

}  // namespace mstep
