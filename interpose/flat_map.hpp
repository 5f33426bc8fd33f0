// A small open-addressing map from an integer handle (MPI_Request, MPI_Comm are ints in the MPICH
// ABI) to a value: no allocation per insert, which the Isend/Irecv hot path cannot afford.
#pragma once

#include <cstdint>
#include <vector>

namespace mstep {

template <class Value>
class FlatHandleMap {
 public:
  explicit FlatHandleMap(std::size_t capacity = 1024) { slots_.resize(round_up(capacity)); }

  Value* find(int key) {
    for (std::size_t i = index(key);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }
  void insert(int key, const Value& v) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    for (std::size_t i = index(key);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (!s.used) {
        s = Slot{key, true, v};
        ++size_;
        return;
      }
      if (s.key == key) {
        s.value = v;
        return;
      }
    }
  }
  // Backward-shift deletion: no tombstones, so lookups stay short however long the run.
  bool erase(int key) {
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
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].used = false;
    --size_;
    return true;
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    int key = 0;
    bool used = false;
    Value value{};
  };
  static std::size_t round_up(std::size_t n) {
    std::size_t c = 16;
    while (c < n) c <<= 1;
    return c;
  }
  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t index(int key) const {
    // Fibonacci hashing: handles differ in low and high bits alike.
    return static_cast<std::size_t>((static_cast<std::uint32_t>(key) * 0x9E3779B97F4A7C15ull) >> 32) &
           mask();
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.size() * 2);
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) insert(s.key, s.value);
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace mstep
