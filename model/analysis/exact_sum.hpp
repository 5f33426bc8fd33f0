// A sum of seconds that does not depend on the order of its terms: each term is rounded to the
// nearest multiple of 2^-60 s (about 1e-18 s; a term of 2^-8 s or more is one already) and added as
// an integer. The streaming pass hands records, messages and waits over in an order that follows
// its reading (model/trace/stream_pass.cpp), not the ranks' order, and a sum of doubles then came
// out different in its last digits from one order to another (and from the in-memory report's).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mstep::model {

class ExactSeconds {
 public:
  // Called once a record by the streaming pass: the common term (below 4 s) converts through a
  // 64-bit integer with no library call; ldexp and the 128-bit conversion were 10% of the pass.
  void add(double s) {
    // Scaling by a power of two is exact; below 2^52 the half added rounds, above it x is whole.
    const double x = s * kScale;
    if (x < 0x1p62 && x > -0x1p62) bump(static_cast<std::int64_t>(x >= 0 ? x + 0.5 : x - 0.5));
    else if (x < kLimit && x > -kLimit) bump(static_cast<Exact>(x));
    else set(kNoSum);  // NaN, infinite, or a term of 2^30 s (34 years) or more: no sum
  }
  double value() const {
    const Exact v = get();
    return v >= kSumBound || v <= -kSumBound ? std::nan("") : static_cast<double>(v) / kScale;
  }

 private:
  static constexpr double kScale = 0x1p60;
  __extension__ using Exact = __int128;  // GCC's and Clang's; -Wpedantic would name it
  __extension__ using Unsigned = unsigned __int128;
  // "No sum" is -2^127, and stays 2^126 or more away from 0 whatever is added after it (sums wrap
  // around, as unsigned numbers): terms below 2^90 (2^30 s), 2^36 of them, cannot move it that
  // far, nor make a true sum that large. So add() needs no test of its own (a flag beside the
  // words made the sum 24 bytes, and the wait analysis keeps two a call site of every rank:
  // 65 536 ranks, 130 000 sites; a test of the words was 1% of the streaming pass).
  static constexpr double kLimit = 0x1p90;
  static constexpr Exact kNoSum = static_cast<Exact>(Unsigned{1} << 127);
  static constexpr Exact kSumBound = Exact{1} << 126;
  // Kept as two 64-bit words: an __int128 member would align the sum to 16 bytes.
  Exact get() const {
    Exact v;
    std::memcpy(&v, words_, sizeof v);
    return v;
  }
  void set(Exact v) { std::memcpy(words_, &v, sizeof v); }
  void bump(Exact term) { set(static_cast<Exact>(static_cast<Unsigned>(get()) + static_cast<Unsigned>(term))); }
  std::uint64_t words_[2] = {0, 0};
};
static_assert(sizeof(ExactSeconds) == 16);

}  // namespace mstep::model
