#include "model/trace/matching.hpp"

#include "model/trace/channel.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

namespace mstep {
namespace {

struct PendingRecv {
  std::uint32_t post = 0, done = 0;
  std::uint64_t bytes = 0;
};

struct Channel {
  std::vector<std::uint32_t> sends;  // sender's event indices, in call order
  std::vector<PendingRecv> recvs;    // receiver's, sorted by posting order later
};

}  // namespace

bool is_p2p_recv(const Event& e) {
  switch (event_role(e)) {
    case Role::Recv: return true;
    case Role::SendRecv:
    case Role::Complete: return (e.flags & kRecvHalf) != 0;
    default: return false;
  }
}

bool is_collective_call(const Event& e) {
  const Role r = op_role(e.op);
  // A record flagged incomplete is MPI time only, for the step tracker too (the recorder never
  // flags a collective so, but a damaged or hand-made trace can: it made the streamed step table
  // index the step before step 1 and allocate gigabytes, found by tests/fuzz/fuzz_model.cpp).
  return !e.continuation() && !(e.flags & kIncomplete) &&
         (r == Role::CollAll || r == Role::CollRootIn || r == Role::CollRootOut);
}

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

bool is_p2p_send(const Event& e) {
  const Role r = event_role(e);
  return r == Role::Send || r == Role::Isend || (r == Role::SendRecv && !(e.flags & kRecvHalf));
}

Matching match_messages(std::span<const RankTrace* const> ranks) {
  const auto comm_ids = global_comm_ids(ranks);
  std::unordered_map<ChannelKey, Channel, ChannelHash> channels;
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
        channels[{global_comm(comm_ids, r, e.comm), static_cast<std::int32_t>(r), e.peer, e.tag}].sends.push_back(i);
      } else if (is_p2p_recv(e)) {
        std::uint32_t post = i;
        if (op_role(e.op) == Role::Complete) {
          const auto it = irecv_of_request.find(e.request);
          if (it != irecv_of_request.end()) post = it->second;
        }
        channels[{global_comm(comm_ids, r, e.comm), e.peer, static_cast<std::int32_t>(r), e.tag}].recvs.push_back(
            {post, i, e.recv_bytes});
      }
    }
  }
  Matching m;
  for (auto& [key, ch] : channels) {
    std::sort(ch.recvs.begin(), ch.recvs.end(), [](const auto& a, const auto& b) { return a.post < b.post; });
    const std::size_t n = std::min(ch.sends.size(), ch.recvs.size());
    for (std::size_t k = 0; k < n; ++k) {
      m.messages.push_back(Message{key.src, key.dst, ch.sends[k], ch.recvs[k].post, ch.recvs[k].done,
                                   ch.recvs[k].bytes, key.tag, key.comm});
    }
    for (std::size_t k = n; k < ch.sends.size(); ++k) {
      const Event& e = ranks[static_cast<std::size_t>(key.src)]->events[ch.sends[k]];
      m.unmatched.push_back({key.src, ch.sends[k],
                             fmt::format("rank {} event {}: {} to {} tag {} of {} bytes was never received{}",
                                         key.src, ch.sends[k], mpi_name(e.op), key.dst, key.tag, e.send_bytes,
                                         ranks[static_cast<std::size_t>(key.dst)] ? "" : " (no trace of the receiver)")});
    }
    for (std::size_t k = n; k < ch.recvs.size(); ++k) {
      const Event& e = ranks[static_cast<std::size_t>(key.dst)]->events[ch.recvs[k].done];
      m.unmatched.push_back({key.dst, ch.recvs[k].done,
                             fmt::format("rank {} event {}: {} from {} tag {} has no recorded send{}", key.dst,
                                         ch.recvs[k].done, mpi_name(e.op), key.src, key.tag,
                                         ranks[static_cast<std::size_t>(key.src)] ? "" : " (no trace of the sender)")});
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
