// A message channel: what MPI's non-overtaking rule orders messages by (model/trace/matching.hpp):
// global communicator, source and destination world ranks, tag. Shared by the whole-trace
// matching and the replay's linker (model/replay/replay_link.cpp).
#pragma once

#include <cstdint>

namespace mstep {

struct ChannelKey {
  std::uint32_t comm;
  std::int32_t src, dst, tag;
  bool operator==(const ChannelKey&) const = default;
};

// Mixes every field into every bit (open addressing takes the high bits, std::unordered_map the low).
struct ChannelHash {
  std::uint64_t operator()(const ChannelKey& k) const {
    std::uint64_t h = k.comm;
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(k.src);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(k.dst);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(k.tag);
    return (h ^ (h >> 29)) * 0x9E3779B97F4A7C15ull;
  }
};

}  // namespace mstep
