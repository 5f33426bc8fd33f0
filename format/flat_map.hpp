// A small open-addressing map from a key to a value: no allocation per insert, which the
// wrappers' Isend/Irecv hot path (keys: MPI_Request and MPI_Comm handles, ints in the MPICH ABI)
// and the replay's linking of records (request ids, message channels) cannot afford. Shared by
// the writer (interpose/) and the reader (model/).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace mstep {

// Fibonacci hashing: handles differ in low and high bits alike.
struct IntHash {
  template <class K>
  std::uint64_t operator()(K key) const {
    return static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<K>>(key)) * 0x9E3779B97F4A7C15ull;
  }
};

// Asks the cache for the line at p, which is not read now but soon. GCC 12 at -O2 deletes a
// __builtin_prefetch of a computed slot as dead code (seen with objdump): an asm statement stays.
inline void prefetch_address(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 (%0)" : : "r"(p));
#else
  __builtin_prefetch(p);
#endif
}

template <class Key, class Value, class Hash = IntHash>
class FlatMap {
 public:
  // capacity 0: nothing is allocated until the first insert (maps kept per rank at scale).
  explicit FlatMap(std::size_t capacity = 1024) {
    if (capacity) slots_.resize(round_up(capacity));
  }

  Value* find(const Key& key) {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = index(key);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }
  // Asks the cache for key's home slot ahead of a find/insert/erase (a map larger than the
  // cache costs a memory round trip a lookup otherwise).
  void prefetch(const Key& key) const {
    if (size_) prefetch_address(slots_.data() + index(key));
  }
  // Inserts or replaces; returns the stored value.
  Value& insert(const Key& key, Value v) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    for (std::size_t i = index(key);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (!s.used) {
        s = Slot{key, true, std::move(v)};
        ++size_;
        return s.value;
      }
      if (s.key == key) {
        s.value = std::move(v);
        return s.value;
      }
    }
  }
  // Backward-shift deletion: no tombstones, so lookups stay short however long the run.
  bool erase(const Key& key) {
    if (slots_.empty()) return false;
    std::size_t i = index(key);
    for (;; i = (i + 1) & mask()) {
      if (!slots_[i].used) return false;
      if (slots_[i].key == key) break;
    }
    std::size_t hole = i;
    for (std::size_t j = (hole + 1) & mask(); slots_[j].used; j = (j + 1) & mask()) {
      const std::size_t home = index(slots_[j].key);
      // Move j into the hole unless its home lies cyclically in (hole, j].
      const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!stays) {
        slots_[hole] = std::move(slots_[j]);
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return true;
  }
  std::size_t size() const { return size_; }
  // Calls f(key, value) for every entry.
  template <class F>
  void for_each(F f) {
    for (Slot& s : slots_)
      if (s.used) f(s.key, s.value);
  }
  void clear() {
    slots_.clear();
    size_ = 0;
  }

 private:
  struct Slot {
    Key key{};
    bool used = false;
    Value value{};
  };
  // The smallest table holds 3 entries: maps kept per rank (a replay's requests in flight) mostly
  // hold one or two, and 16 slots a map were 29 MB of a 65 536-rank replay.
  static std::size_t round_up(std::size_t n) {
    std::size_t c = 4;
    while (c < n) c <<= 1;
    return c;
  }
  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t index(const Key& key) const { return static_cast<std::size_t>(Hash{}(key) >> 32) & mask(); }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.empty() ? 4 : old.size() * 2);
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) insert(s.key, std::move(s.value));
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

template <class Value>
using FlatHandleMap = FlatMap<int, Value>;

}  // namespace mstep
