// The streaming pass's message channels (model/trace/stream_pass.cpp): each channel's queue of
// unmatched sends or receives, by ChannelKey. Empty channels are kept for the next message (most
// carry many) and swept out when they have doubled in number since the last sweep, so that what
// is kept follows the channels in use, not every pair that ever talked; a swept channel's place
// goes to the next new one.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <tuple>
#include <utility>
#include <vector>

#include "format/flat_map.hpp"
#include "model/trace/channel.hpp"

namespace mstep {

// Channel: default-constructible, with `bool idle() const` (no message waiting).
// The index is open addressing (a node map's lookup divided by its bucket count and chased a
// node: 5% of a 16 384-rank report); the channels lie in a deque, so one stays put while others
// are made. A few recent channels are remembered in front of the index (forgotten at a sweep).
template <class Channel>
class ChannelTable {
 public:
  // The channel of `key`, made if need be.
  Channel& operator[](const ChannelKey& key) {
    Recent& recent = recent_[ChannelHash{}(key) >> 62];
    if (recent.channel && recent.key == key) return *recent.channel;
    std::uint32_t* id = ids_.find(key);
    if (!id) {
      if (ids_.size() >= sweep_at_) sweep();
      std::uint32_t made;
      if (!free_.empty()) {
        made = free_.back();
        free_.pop_back();
      } else {
        made = static_cast<std::uint32_t>(slab_.size());
        slab_.emplace_back();
      }
      id = &ids_.insert(key, made);
    }
    Channel& ch = slab_[*id];
    recent = {key, &ch};
    return ch;
  }

  std::size_t size() const { return ids_.size(); }  // channels kept, idle ones included
  std::size_t places() const { return slab_.size(); }  // channels ever made at once

  // Calls f(key, channel) for every channel kept, in key order (source, destination,
  // communicator, tag): what is left at the end comes out in one order whatever the hashing.
  template <class F>
  void for_each_in_order(F f) {
    std::vector<std::pair<ChannelKey, std::uint32_t>> all;
    all.reserve(ids_.size());
    ids_.for_each([&](const ChannelKey& key, std::uint32_t id) { all.emplace_back(key, id); });
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      return std::tie(a.first.src, a.first.dst, a.first.comm, a.first.tag) <
             std::tie(b.first.src, b.first.dst, b.first.comm, b.first.tag);
    });
    for (const auto& [key, id] : all) f(key, slab_[id]);
  }

 private:
  void sweep() {
    std::vector<std::pair<ChannelKey, std::uint32_t>> idle;
    ids_.for_each([&](const ChannelKey& key, std::uint32_t id) {
      if (slab_[id].idle()) idle.emplace_back(key, id);
    });
    for (const auto& [key, id] : idle) {
      slab_[id] = Channel{};  // its queues' memory back to the heap: most swept channels saw one message
      free_.push_back(id);
      ids_.erase(key);
    }
    sweep_at_ = std::max<std::size_t>(4096, 2 * ids_.size());
    recent_ = {};
  }

  struct Recent {
    ChannelKey key{};
    Channel* channel = nullptr;
  };
  FlatMap<ChannelKey, std::uint32_t, ChannelHash> ids_{0};  // places in slab_
  std::deque<Channel> slab_;
  std::vector<std::uint32_t> free_;  // places of swept channels
  std::size_t sweep_at_ = 4096;
  std::array<Recent, 4> recent_{};
};

}  // namespace mstep
