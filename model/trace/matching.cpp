#include "model/trace/matching.hpp"

#include "model/trace/channel.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

namespace mstep {
namespace {

// Every send and every receive with its channel, in flat arrays sorted by channel: a channel's
// sends in the sender's call order, its receives in posting order. A hash map of channels with two
// vectors each allocated per channel and was a quarter of a replay benchmark's run at 16 384 ranks.
struct SendRef {
  ChannelKey key;
  std::uint32_t index = 0;  // the sender's event
};

struct RecvRef {
  ChannelKey key;
  std::uint32_t post = 0, done = 0;
  std::uint64_t bytes = 0;
};

bool key_less(const ChannelKey& a, const ChannelKey& b) {
  if (a.comm != b.comm) return a.comm < b.comm;
  if (a.src != b.src) return a.src < b.src;
  if (a.dst != b.dst) return a.dst < b.dst;
  return a.tag < b.tag;
}

}  // namespace

std::vector<std::vector<CollectiveCall>> collective_instances(std::span<const RankTrace* const> ranks) {
  const auto comm_ids = global_comm_ids(ranks);
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<CollectiveCall>> instances;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r]) continue;
    std::map<std::uint32_t, std::uint64_t> seq;
    const auto& events = ranks[r]->events;
    for (std::uint32_t i = 0; i < events.size(); ++i) {
      if (!is_collective_call(events[i])) continue;
      const std::uint32_t comm = global_comm(comm_ids, r, events[i].comm);
      instances[{comm, seq[comm]++}].push_back({static_cast<std::int32_t>(r), i});
    }
  }
  std::vector<std::vector<CollectiveCall>> out;
  out.reserve(instances.size());
  for (auto& [key, calls] : instances) out.push_back(std::move(calls));
  return out;
}

Matching match_messages(std::span<const RankTrace* const> ranks) {
  const auto comm_ids = global_comm_ids(ranks);
  std::vector<SendRef> sends;
  std::vector<RecvRef> recvs;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r]) continue;
    const auto& events = ranks[r]->events;
    const auto world = static_cast<std::int32_t>(ranks.size());
    std::unordered_map<std::uint32_t, std::uint32_t> irecv_of_request;
    for (std::uint32_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      if (event_role(e) == Role::Irecv && e.request) irecv_of_request[e.request] = i;
      if (e.peer < 0 || e.peer >= world) continue;  // none, PROC_NULL, or not a rank of this run
      if (is_p2p_send(e)) {
        sends.push_back({{global_comm(comm_ids, r, e.comm), static_cast<std::int32_t>(r), e.peer, e.tag}, i});
      } else if (is_p2p_recv(e)) {
        std::uint32_t post = i;
        if (op_role(e.op) == Role::Complete) {
          const auto it = irecv_of_request.find(e.request);
          if (it != irecv_of_request.end()) post = it->second;
        }
        recvs.push_back({{global_comm(comm_ids, r, e.comm), e.peer, static_cast<std::int32_t>(r), e.tag}, post, i, e.recv_bytes});
      }
    }
  }
  std::sort(sends.begin(), sends.end(), [](const SendRef& a, const SendRef& b) {
    return key_less(a.key, b.key) || (a.key == b.key && a.index < b.index);
  });
  std::sort(recvs.begin(), recvs.end(), [](const RecvRef& a, const RecvRef& b) {
    if (!(a.key == b.key)) return key_less(a.key, b.key);
    return a.post != b.post ? a.post < b.post : a.done < b.done;
  });
  Matching m;
  const auto unmatched_send = [&](const SendRef& s) {
    const Event& e = ranks[static_cast<std::size_t>(s.key.src)]->events[s.index];
    m.unmatched.push_back({s.key.src, s.index,
                           fmt::format("rank {} event {}: {} to {} tag {} of {} bytes was never received{}", s.key.src,
                                       s.index, mpi_name(e.op), s.key.dst, s.key.tag, e.send_bytes,
                                       ranks[static_cast<std::size_t>(s.key.dst)] ? "" : " (no trace of the receiver)")});
  };
  const auto unmatched_recv = [&](const RecvRef& q) {
    const Event& e = ranks[static_cast<std::size_t>(q.key.dst)]->events[q.done];
    m.unmatched.push_back({q.key.dst, q.done,
                           fmt::format("rank {} event {}: {} from {} tag {} has no recorded send{}", q.key.dst, q.done,
                                       mpi_name(e.op), q.key.src, q.key.tag,
                                       ranks[static_cast<std::size_t>(q.key.src)] ? "" : " (no trace of the sender)")});
  };
  // Walk both arrays channel by channel: the k-th send of a channel meets its k-th receive.
  m.messages.reserve(std::min(sends.size(), recvs.size()));
  std::size_t si = 0, ri = 0;
  while (si < sends.size() || ri < recvs.size()) {
    if (ri == recvs.size() || (si < sends.size() && key_less(sends[si].key, recvs[ri].key))) {
      unmatched_send(sends[si++]);
    } else if (si == sends.size() || key_less(recvs[ri].key, sends[si].key)) {
      unmatched_recv(recvs[ri++]);
    } else {
      const ChannelKey key = sends[si].key;
      for (; si < sends.size() && ri < recvs.size() && sends[si].key == key && recvs[ri].key == key; ++si, ++ri)
        m.messages.push_back(Message{key.src, key.dst, sends[si].index, recvs[ri].post, recvs[ri].done, recvs[ri].bytes,
                                     key.tag, key.comm});
    }
  }
  std::sort(m.messages.begin(), m.messages.end(), [](const Message& a, const Message& b) {
    return a.src != b.src ? a.src < b.src : a.send_event < b.send_event;
  });
  std::sort(m.unmatched.begin(), m.unmatched.end(), [](const Unmatched& a, const Unmatched& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.event < b.event;
  });
  return m;
}

}  // namespace mstep
