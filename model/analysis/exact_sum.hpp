// A sum of seconds that does not depend on the order of its terms: each term is rounded to the
// nearest multiple of 2^-60 s (about 1e-18 s; exact from 2^-7 s up) and added as an integer. The streaming pass hands records,
// messages and waits over in an order that follows its reading (model/trace/stream_pass.cpp), not
// the ranks' order, and a sum of doubles then came out different in its last digits from one
// order to another (and from the in-memory report's).
#pragma once

#include <cmath>

namespace mstep::model {

class ExactSeconds {
 public:
  void add(double s) {
    if (std::isnan(s)) nan_ = true;
    else {
      // Scaling by a power of two is exact; below 2^52 the half added rounds, above it x is whole.
      const double x = std::ldexp(s, kFractionBits);
      sum_ += static_cast<Exact>(x >= 0 ? x + 0.5 : x - 0.5);
    }
  }
  double value() const { return nan_ ? std::nan("") : std::ldexp(static_cast<double>(sum_), -kFractionBits); }

 private:
  static constexpr int kFractionBits = 60;
  __extension__ using Exact = __int128;  // GCC's and Clang's; -Wpedantic would name it
  Exact sum_ = 0;
  bool nan_ = false;
};

}  // namespace mstep::model
