#include "format/checked_frames.hpp"

#include <functional>
#include <mutex>
#include <string_view>
#include <unordered_set>

namespace mstep {
namespace {

// Frames whose payload is at least this many times their compressed size (and at least 4 KiB):
// the ones whose decompression costs much more than hashing their bytes.
constexpr std::uint32_t kMinRaw = 4096, kMinRatio = 8;
constexpr std::size_t kMaxKept = std::size_t{1} << 18;  // 256 Ki frames, about 14 MiB at most

struct Key {
  std::uint64_t hash;
  std::uint32_t csize, raw;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const { return k.hash; }
};

struct Memo {
  std::mutex mutex;  // the replays may run on a second thread (report --jobs 2)
  std::unordered_set<Key, KeyHash> whole;
};

Memo& memo() {
  static Memo m;
  return m;
}

bool worth_it(std::span<const std::uint8_t> compressed, std::uint32_t raw) {
  return raw >= kMinRaw && raw / kMinRatio >= compressed.size();
}

Key key_of(std::span<const std::uint8_t> compressed, std::uint32_t raw) {
  // 64 bits of hash, with the sizes: two different frames taken for one another is not a risk.
  const std::string_view bytes(reinterpret_cast<const char*>(compressed.data()), compressed.size());
  return {std::hash<std::string_view>{}(bytes), static_cast<std::uint32_t>(compressed.size()), raw};
}

}  // namespace

bool frame_known_whole(std::span<const std::uint8_t> compressed, std::uint32_t raw) {
  if (!worth_it(compressed, raw)) return false;
  const Key k = key_of(compressed, raw);
  Memo& m = memo();
  std::lock_guard lock(m.mutex);
  return m.whole.contains(k);
}

void note_frame_whole(std::span<const std::uint8_t> compressed, std::uint32_t raw) {
  if (!worth_it(compressed, raw)) return;
  const Key k = key_of(compressed, raw);
  Memo& m = memo();
  std::lock_guard lock(m.mutex);
  if (m.whole.size() < kMaxKept) m.whole.insert(k);
}

}  // namespace mstep
