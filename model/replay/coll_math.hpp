// Integer logarithms the collective algorithms count rounds with (replay_collectives.cpp and
// replay_coll_choice.cpp).
#pragma once

#include <bit>
#include <cstdint>

namespace mstep::model::coll_math {

inline std::uint32_t ceil_log2(std::uint32_t n) {
  std::uint32_t k = 0;
  while ((std::uint64_t{1} << k) < n) ++k;
  return k;
}

inline std::uint32_t floor_pow2(std::uint32_t n) { return n == 0 ? 0 : std::bit_floor(n); }

inline std::uint32_t log2_of(std::uint64_t pow2) { return static_cast<std::uint32_t>(std::countr_zero(pow2)); }

}  // namespace mstep::model::coll_math
