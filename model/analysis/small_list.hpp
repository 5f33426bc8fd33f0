// A list of trivially copyable values that keeps its first N in place and only a longer list on
// the heap: an M-step in flight names one or two partners, and a heap block for each of its lists
// was a third of a 65 536-rank report's blocks (README, Figures, "Stop 44").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>

namespace mstep::model {

template <class T, std::uint32_t N>
class SmallList {
  static_assert(std::is_trivially_copyable_v<T> && N >= 1);

 public:
  SmallList() = default;
  SmallList(const SmallList&) = delete;
  SmallList& operator=(const SmallList&) = delete;
  SmallList(SmallList&& other) noexcept { take(other); }
  SmallList& operator=(SmallList&& other) noexcept {
    if (this != &other) {
      free_heap();
      take(other);
    }
    return *this;
  }
  ~SmallList() { free_heap(); }

  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void clear() { size_ = 0; }
  void push_back(const T& value) {
    if (size_ == capacity_) [[unlikely]] grow(2 * static_cast<std::size_t>(capacity_));
    std::construct_at(data() + size_, value);
    ++size_;
  }
  // Inserts before `pos` (a pointer into the list); returns where the value now is.
  T* insert(const T* pos, const T& value) {
    const auto at = static_cast<std::size_t>(pos - data());
    push_back(value);
    std::rotate(data() + at, data() + size_ - 1, data() + size_);
    return data() + at;
  }
  template <class It>
  void assign(It first, It last) {
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    clear();
    if (n > capacity_) grow(n);
    std::copy(first, last, data());
    size_ = static_cast<std::uint32_t>(n);
  }
  // Back to the inline storage, emptied, where the heap holds more than `keep` values.
  void shrink(std::size_t keep) {
    if (capacity_ <= keep || capacity_ == N) return;
    free_heap();
    size_ = 0;
  }

 private:
  bool on_heap() const { return capacity_ > N; }
  T* data() { return on_heap() ? heap_ : std::launder(reinterpret_cast<T*>(inline_)); }
  const T* data() const { return on_heap() ? heap_ : std::launder(reinterpret_cast<const T*>(inline_)); }
  void grow(std::size_t want) {
    const std::size_t cap = std::max<std::size_t>(want, N + 1);
    T* bigger = std::allocator<T>().allocate(cap);
    if (size_ > 0) std::memcpy(static_cast<void*>(bigger), data(), size_ * sizeof(T));
    free_heap();
    heap_ = bigger;
    capacity_ = static_cast<std::uint32_t>(cap);
  }
  void free_heap() {
    if (on_heap()) std::allocator<T>().deallocate(heap_, capacity_);
    capacity_ = N;
  }
  void take(SmallList& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (other.on_heap()) heap_ = other.heap_;
    else std::memcpy(inline_, other.inline_, sizeof inline_);
    other.size_ = 0;
    other.capacity_ = N;
  }

  union {
    alignas(T) std::byte inline_[N * sizeof(T)];
    T* heap_;
  };
  std::uint32_t size_ = 0, capacity_ = N;
};

}  // namespace mstep::model
