// The Linker (model/replay/replay_plan.hpp): model/trace/matching.hpp's matching and the replay's
// collective instances, found as each rank's records are read rather than over the whole trace.
//
// A channel (communicator, source, destination, tag) holds only the messages one side has read
// and the other not yet: the side that comes second takes the oldest, so the k-th send meets
// the k-th receive whatever order the ranks are read in. Receives are offered to their channels
// in posting order once they are known to have completed: a blocking receive at once, an Irecv
// when its Wait/Test is read. Until then the receives read after that Irecv wait behind it, and
// the rank's records from that Irecv on are not final (linked_end), so the replay reads ahead.
#include <algorithm>

#include "format/flat_map.hpp"
#include "model/trace/channel.hpp"

#include "model/replay/replay_plan.hpp"

namespace mstep::model::detail {
namespace {

// The messages of a channel read by one side only, oldest first. Mostly one: it is kept inline,
// the rest in a pooled list (Linker::Impl::overflow), so that a slot of the channel map is 32 bytes
// (at 16 Ki ranks the map holds hundreds of thousands of channels, and every message looks one up).
struct Fifo {
  std::uint32_t first = kNone;
  std::uint32_t more = kNone;  // index of the rest in the pool, kNone: none
  bool sends_ahead = false;
  bool empty() const { return first == kNone; }
};

// The rest of one channel's messages, from `head` on.
struct Overflow {
  std::vector<std::uint32_t> ids;
  std::uint32_t head = 0;
};

// A receive waiting for its turn in posting order.
struct Deferred {
  std::uint32_t post = 0;
  std::uint32_t done = kNone;  // its completing record; kNone: not read yet
  bool dropped = false;        // completed without a message of this run, or never completed
  ChannelKey key{};
  std::uint64_t bytes = 0;
};

// Per rank; nothing allocated until used (a million ranks).
struct RankLink {
  FlatMap<std::uint32_t, std::uint32_t> isend{0};  // request -> message, until its Wait is read
  FlatMap<std::uint32_t, std::uint64_t> irecv{0};  // request -> sequence number of its Deferred
  std::vector<Deferred> deferred;                  // from deferred_head on
  std::size_t deferred_head = 0;
  std::uint64_t deferred_base = 0;                 // sequence number of deferred[deferred_head]
  std::vector<std::pair<std::uint32_t, std::uint32_t>> collectives;  // global communicator, collectives read

  bool waiting() const { return deferred_head < deferred.size(); }
  Deferred& front() { return deferred[deferred_head]; }
  Deferred& at(std::uint64_t seq) { return deferred[deferred_head + (seq - deferred_base)]; }
  std::uint64_t next_seq() const { return deferred_base + (deferred.size() - deferred_head); }
  void pop() {
    ++deferred_head;
    ++deferred_base;
    if (deferred_head == deferred.size()) {
      deferred.clear();
      deferred_head = 0;
    } else if (deferred_head >= 64 && 2 * deferred_head >= deferred.size()) {
      deferred.erase(deferred.begin(), deferred.begin() + static_cast<std::ptrdiff_t>(deferred_head));
      deferred_head = 0;
    }
  }
  std::uint32_t& collective_count(std::uint32_t gcomm) {
    for (auto& [c, n] : collectives)
      if (c == gcomm) return n;
    return collectives.emplace_back(gcomm, 0).second;
  }
};

std::uint8_t send_mode(const Event& e) {
  if (e.flags & kSyncMode) return kSynchronous;  // a started MPI_Ssend_init request
  if (e.flags & kBufferedMode) return kBuffered;
  switch (e.op) {
    case Op::Ssend:
    case Op::Issend: return kSynchronous;
    case Op::Bsend:
    case Op::Ibsend: return kBuffered;
    default: return kBySize;
  }
}

}  // namespace

struct Linker::Impl {
  RunInfo& run;
  Linker& self;
  FlatMap<ChannelKey, Fifo, ChannelHash> channels{64};  // grows with the channels in use; small runs (the fuzzer's) pay less
  std::vector<Overflow> overflow;  // lists kept for reuse (a short one's memory with it)
  std::vector<std::uint32_t> free_overflow;
  std::vector<RankLink> ranks;
  std::vector<std::uint32_t> free_msgs, free_instances;
  FlatMap<std::uint64_t, std::uint32_t> instance_of{64};

  Impl(RunInfo& r, Linker& l) : run(r), self(l), ranks(r.ranks.size()) {}

  bool present(std::int32_t rank) const {
    return rank >= 0 && static_cast<std::size_t>(rank) < run.ranks.size() && run.ranks[static_cast<std::size_t>(rank)].present;
  }

  std::uint32_t new_msg() {
    std::uint32_t id;
    if (!free_msgs.empty()) {
      id = free_msgs.back();
      free_msgs.pop_back();
      self.msgs_[id] = LiveMsg{};
    } else {
      id = static_cast<std::uint32_t>(self.msgs_.size());
      self.msgs_.emplace_back();
    }
    return id;
  }

  // A channel's list: the first message inline, the rest in the pool.
  void push(Fifo& f, std::uint32_t id) {
    if (f.first == kNone) {
      f.first = id;
      return;
    }
    if (f.more == kNone) {
      if (!free_overflow.empty()) {
        f.more = free_overflow.back();
        free_overflow.pop_back();
      } else {
        f.more = static_cast<std::uint32_t>(overflow.size());
        overflow.emplace_back();
      }
    }
    overflow[f.more].ids.push_back(id);
  }

  std::uint32_t pop(Fifo& f) {
    const std::uint32_t id = f.first;
    if (f.more == kNone) {
      f.first = kNone;
      return id;
    }
    Overflow& o = overflow[f.more];
    f.first = o.ids[o.head++];
    if (o.head == o.ids.size()) {
      if (o.ids.capacity() > 16) std::vector<std::uint32_t>().swap(o.ids);  // a long list's memory goes
      else o.ids.clear();
      o.head = 0;
      free_overflow.push_back(f.more);
      f.more = kNone;
    } else if (o.head >= 64 && 2 * o.head >= o.ids.size()) {
      o.ids.erase(o.ids.begin(), o.ids.begin() + o.head);
      o.head = 0;
    }
    return id;
  }

  // The channel's message for a side just read: the one the other side left, or a new one that
  // the channel holds (one reference) until the other side takes it.
  std::uint32_t take(const ChannelKey& key, bool send) {
    Fifo* f = channels.find(key);
    if (f && f->sends_ahead != send) {
      const std::uint32_t id = pop(*f);
      if (f->empty()) channels.erase(key);
      --self.msgs_[id].refs;  // the channel's hold; the caller has added its own
      return id;
    }
    const std::uint32_t id = new_msg();
    self.msgs_[id].refs = 1;
    if (!f) {
      Fifo fresh;
      fresh.sends_ahead = send;
      f = &channels.insert(key, fresh);
    }
    push(*f, id);
    return id;
  }

  // The channel of rank r's send record e, and of its receive record e.
  ChannelKey send_channel(std::uint32_t r, const Event& e) const {
    return ChannelKey{run.gcomm(r, e.comm), static_cast<std::int32_t>(r), e.peer, e.tag};
  }
  ChannelKey recv_channel(std::uint32_t r, const Event& e) const {
    return ChannelKey{run.gcomm(r, e.comm), e.peer, static_cast<std::int32_t>(r), e.tag};
  }

  void link_send(std::uint32_t r, RankWindow& w, std::uint32_t i, const Event& e) {
    // Add this side's references before take() drops the channel's.
    std::uint32_t id = take(send_channel(r, e), true);
    LiveMsg& m = self.msgs_[id];
    m.refs += 1;
    m.src = static_cast<std::int32_t>(r);
    m.send_event = i;
    m.mode = send_mode(e);
    if (m.dst < 0) m.bytes = e.send_bytes, m.other = e.peer;
    if (event_role(e) == Role::Isend && e.request) {
      ++m.refs;  // held for the Wait/Test that completes it, whenever that is read
      if (std::uint32_t* old = ranks[r].isend.find(e.request)) {
        release(*old);  // a request id reused without a completion: the old one never completes
        *old = id;
      } else {
        ranks[r].isend.insert(e.request, id);
      }
    }
    w.link[i - w.base] = id;
  }

  void release(std::uint32_t id) {
    if (self.release_ref(id)) self.free_msg(id);
  }

  void assign(std::uint32_t r, RankWindow& w, const Deferred& d) {
    if (d.dropped) return;
    std::uint32_t id = take(d.key, false);
    LiveMsg& m = self.msgs_[id];
    m.refs = static_cast<std::uint8_t>(m.refs + (d.post == d.done ? 1 : 2));
    m.dst = static_cast<std::int32_t>(r);
    if (m.src < 0) m.other = d.key.src;
    m.post_event = d.post;
    m.recv_event = d.done;
    m.bytes = d.bytes;
    w.link[d.post - w.base] = id;
    w.link[d.done - w.base] = id;
  }

  void drain(std::uint32_t r, RankWindow& w) {
    RankLink& rl = ranks[r];
    while (rl.waiting() && (rl.front().done != kNone || rl.front().dropped)) {
      assign(r, w, rl.front());
      rl.pop();
    }
  }

  void link_collective(std::uint32_t r, RankWindow& w, std::uint32_t i, const Event& e) {
    const RankInfo& info = run.ranks[r];
    const std::uint32_t gcomm = run.gcomm(r, e.comm);
    const std::uint32_t k = ranks[r].collective_count(gcomm)++;
    const std::uint64_t key = (std::uint64_t{gcomm} << 32) | k;
    std::uint32_t* found = instance_of.find(key);
    const bool added = !found;
    std::uint32_t id;
    if (added) {
      if (!free_instances.empty()) {
        id = free_instances.back();
        free_instances.pop_back();
      } else {
        id = static_cast<std::uint32_t>(self.instances_.size());
        self.instances_.push_back(nullptr);
      }
      self.instances_[id] = std::make_unique<LiveInstance>();
      self.instances_[id]->key = key;
      self.instances_[id]->gcomm = gcomm;
      instance_of.insert(key, id);
    } else {
      id = *found;
    }
    LiveInstance& inst = *self.instances_[id];
    w.link[i - w.base] = id;
    ++inst.registered;
    const CommDef* def = e.comm < info.def_of.size() ? info.def_of[e.comm] : nullptr;
    const std::uint32_t me = e.comm < info.crank_of.size() ? info.crank_of[e.comm] : kNone;
    if (!def || def->inter || me == kNone) {
      inst.bad = true;
      return;
    }
    const auto n = static_cast<std::uint32_t>(def->world_ranks.size());
    std::uint32_t root = 0;
    const Role role = op_role(e.op);
    if (role == Role::CollRootOut || role == Role::CollRootIn) {
      if (e.flags & kRoot) {
        root = me;
      } else {
        const std::int64_t rt = def->world_ranks.rank_of(e.peer);
        if (rt < 0) {
          inst.bad = true;
          return;
        }
        root = static_cast<std::uint32_t>(rt);
      }
    }
    if (added) {
      const auto members = run.members.find(gcomm);
      inst.members = members == run.members.end() ? &def->world_ranks : &members->second;
      for (const std::int32_t m : *inst.members) inst.bad = inst.bad || !present(m);
      inst.shape = choose_collective(e.op, n, root, collective_block_bytes(e, n), run.substitutes, *inst.members);
    } else if (inst.shape.op != e.op || inst.shape.n != n || inst.shape.root != root) {
      inst.bad = true;  // the members disagree on what this collective is
    } else if (e.flags & kRoot) {
      inst.shape = choose_collective(e.op, n, root, collective_block_bytes(e, n), run.substitutes, *inst.members);  // the root's sizes win
    }
  }
};

Linker::Linker(RunInfo& run) : impl_(std::make_unique<Impl>(run, *this)) {}
Linker::~Linker() = default;

void Linker::link(std::uint32_t r, RankWindow& w, std::uint32_t from) {
  Impl& im = *impl_;
  RankLink& rl = im.ranks[r];
  const auto world = static_cast<std::int32_t>(im.run.ranks.size());
  // The channel map outgrows the cache where messages in flight are many and spread over pairs
  // (random partners at 1024 ranks: a memory round trip a take, 28% of the replay): then its slots
  // are asked for a few records ahead of their take. A map that fits the L2 cache does without:
  // there the look-ahead costs 10% more instructions and saves nothing.
  constexpr std::size_t kPrefetchFrom = 8192;  // entries: 16 Ki slots of 32 bytes, 512 KiB
  constexpr std::uint32_t kAhead = 8;
  const bool ahead = im.channels.size() >= kPrefetchFrom;
  const auto prefetch = [&](std::uint32_t j) {
    const Event& e = w.ev[j - w.base];
    if (e.peer < 0 || e.peer >= world || is_collective_call(e)) return;
    if (is_p2p_send(e)) im.channels.prefetch(im.send_channel(r, e));
    else if (is_p2p_recv(e)) im.channels.prefetch(im.recv_channel(r, e));
  };
  if (ahead)
    for (std::uint32_t j = from; j < std::min(w.end(), from + kAhead); ++j) prefetch(j);
  for (std::uint32_t i = from; i < w.end(); ++i) {
    if (ahead && i + kAhead < w.end()) prefetch(i + kAhead);
    const Event& e = w.ev[i - w.base];
    if (is_collective_call(e)) {
      im.link_collective(r, w, i, e);
      continue;
    }
    const Role role = event_role(e);
    if (role == Role::Irecv && e.request) {
      rl.irecv.insert(e.request, rl.next_seq());
      rl.deferred.push_back(Deferred{i});
      continue;
    }
    if (role == Role::Complete && e.request && !(e.flags & (kRecvHalf | kIncomplete))) {
      if (const std::uint32_t* id = rl.isend.find(e.request)) {
        w.link[i - w.base] = *id;  // uses the reference the Isend held for it
        msgs_[*id].send_done = i;
        rl.isend.erase(e.request);
      }
      continue;
    }
    if (e.peer < 0 || e.peer >= world) {
      // No partner (PROC_NULL, or not a rank of this run): an Irecv it completes has no message.
      if (role == Role::Complete && (e.flags & kRecvHalf))
        if (const std::uint64_t* seq = rl.irecv.find(e.request)) {
          rl.at(*seq).dropped = true;
          rl.irecv.erase(e.request);
          im.drain(r, w);
        }
      continue;
    }
    if (is_p2p_send(e)) {
      if (im.present(e.peer)) im.link_send(r, w, i, e);
      continue;
    }
    if (!is_p2p_recv(e)) continue;
    Deferred* d = nullptr;
    if (role == Role::Complete)
      if (const std::uint64_t* seq = rl.irecv.find(e.request)) {
        d = &rl.at(*seq);
        rl.irecv.erase(e.request);
      }
    // The completed receive; posted by this record unless an Irecv before it posted it.
    Deferred got{i, i, !im.present(e.peer), im.recv_channel(r, e), e.recv_bytes};
    if (d) {
      got.post = d->post;
      *d = got;
    } else if (!rl.waiting()) {
      im.assign(r, w, got);  // no Irecv before it waiting: its turn is now (no queue to pass)
      continue;
    } else {
      rl.deferred.push_back(got);
    }
    im.drain(r, w);
  }
}

void Linker::finish(std::uint32_t r, RankWindow& w) {
  Impl& im = *impl_;
  RankLink& rl = im.ranks[r];
  for (std::size_t i = rl.deferred_head; i < rl.deferred.size(); ++i)
    if (rl.deferred[i].done == kNone) rl.deferred[i].dropped = true;  // an Irecv never completed: no message
  rl.irecv.clear();
  im.drain(r, w);
  rl.isend.for_each([&](std::uint32_t, std::uint32_t id) { im.release(id); });  // Isends never completed
  rl.isend.clear();
}

std::uint32_t Linker::linked_end(std::uint32_t r, const RankWindow& w) const {
  const RankLink& rl = impl_->ranks[r];
  return rl.deferred_head < rl.deferred.size() ? rl.deferred[rl.deferred_head].post : w.end();
}

void Linker::give_up_oldest(std::uint32_t r, RankWindow& w) {
  RankLink& rl = impl_->ranks[r];
  if (!rl.waiting()) return;
  Deferred& d = rl.front();
  if (d.done == kNone) {
    d.dropped = true;
    std::uint32_t request = 0;
    bool found = false;
    rl.irecv.for_each([&](std::uint32_t q, std::uint64_t seq) {
      if (seq == rl.deferred_base) request = q, found = true;
    });
    if (found) rl.irecv.erase(request);
  }
  impl_->drain(r, w);
}

bool Linker::release_ref(std::uint32_t id) { return --msgs_[id].refs == 0; }

void Linker::free_msg(std::uint32_t id) { impl_->free_msgs.push_back(id); }

void Linker::free_instance(std::uint32_t id) {
  impl_->instance_of.erase(instances_[id]->key);  // a member reading it later makes a new one
  instances_[id].reset();
  impl_->free_instances.push_back(id);
}

std::uint32_t Linker::collectives_read(std::uint32_t r, std::uint32_t gcomm) const {
  for (const auto& [c, n] : impl_->ranks[r].collectives)
    if (c == gcomm) return n;
  return 0;
}

}  // namespace mstep::model::detail
