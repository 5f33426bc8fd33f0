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
    if (x < 0x1p62 && x > -0x1p62) set(get() + static_cast<std::int64_t>(x >= 0 ? x + 0.5 : x - 0.5));
    else if (x < kLimit && x > -kLimit) set(get() + static_cast<Exact>(x));
    else nan_ = true;  // NaN, infinite, or a term of 2^30 s (34 years) or more: no sum
  }
  double value() const { return nan_ ? std::nan("") : static_cast<double>(get()) / kScale; }

 private:
  static constexpr double kScale = 0x1p60;
  // Terms below 2^90 / 2^60 s: 2^37 of them cannot overflow the 128-bit sum.
  static constexpr double kLimit = 0x1p90;
  __extension__ using Exact = __int128;  // GCC's and Clang's; -Wpedantic would name it
  // Kept as two 64-bit words: an __int128 member aligns the sum to 16 bytes, 32 in all, and the
  // wait analysis keeps two a call site of every rank (65 536 ranks: 200 000 sites).
  Exact get() const {
    Exact v;
    std::memcpy(&v, words_, sizeof v);
    return v;
  }
  void set(Exact v) { std::memcpy(words_, &v, sizeof v); }
  std::uint64_t words_[2] = {0, 0};
  bool nan_ = false;
};
static_assert(sizeof(ExactSeconds) == 24);

}  // namespace mstep::model
