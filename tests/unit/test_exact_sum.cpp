// ExactSeconds (model/analysis/exact_sum.hpp): sums that do not depend on the order of the terms.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/analysis/exact_sum.hpp"

using mstep::model::ExactSeconds;

namespace {
double sum_of(const std::vector<double>& terms) {
  ExactSeconds s;
  for (double t : terms) s.add(t);
  return s.value();
}
}  // namespace

TEST_CASE("ExactSeconds: the same sum, to the bit, in any order of the terms", "[exact_sum]") {
  std::vector<double> terms{0.1, 1e-9, 3.7e-7, 123.456, 1e-12, 0.3, 2.5e-6, 7.0, 9e-3, 1e-15, 4.25};
  const double forward = sum_of(terms);
  std::reverse(terms.begin(), terms.end());
  CHECK(sum_of(terms) == forward);
  std::rotate(terms.begin(), terms.begin() + 4, terms.end());
  CHECK(sum_of(terms) == forward);
  CHECK(forward == Approx(0.1 + 1e-9 + 3.7e-7 + 123.456 + 1e-12 + 0.3 + 2.5e-6 + 7.0 + 9e-3 + 1e-15 + 4.25).epsilon(1e-15));
}

TEST_CASE("ExactSeconds: terms are rounded to 2^-60 s, halves away from zero", "[exact_sum]") {
  CHECK(sum_of({0.5, 0.25}) == 0.75);
  CHECK(sum_of({-0.25, 0.25}) == 0.0);
  // 1e-18 s is 1.15 units of 2^-60 s: each term counts one unit.
  CHECK(sum_of(std::vector<double>(1000, 1e-18)) == 1000 * 0x1p-60);
  CHECK(sum_of({1.5 * 0x1p-60}) == 2 * 0x1p-60);
  CHECK(sum_of({-1.5 * 0x1p-60}) == -2 * 0x1p-60);
}

TEST_CASE("ExactSeconds: terms of 4 s and more (the 128-bit path) stay exact", "[exact_sum]") {
  CHECK(sum_of({8.0, 0.5}) == 8.5);
  CHECK(sum_of({1e8, 1e8, -3.0}) == 2e8 - 3.0);
  CHECK(sum_of({0x1p29, 0x1p29}) == 0x1p30);
  CHECK(sum_of({-5.0, 0.125}) == -4.875);
}

TEST_CASE("ExactSeconds: a NaN, an infinity or a term of 2^30 s or more makes the sum NaN", "[exact_sum]") {
  CHECK(std::isnan(sum_of({1.0, std::nan("")})));
  CHECK(std::isnan(sum_of({1.0, HUGE_VAL})));
  CHECK(std::isnan(sum_of({-HUGE_VAL})));
  CHECK(std::isnan(sum_of({0x1p30})));
  CHECK(std::isnan(sum_of({-1e300, 1.0})));
  // No sum stays no sum, whatever comes after (-2^127, wrapping around as terms are added).
  CHECK(std::isnan(sum_of({std::nan(""), 0x1p29, 0x1p29, -5.0})));
  CHECK(std::isnan(sum_of({HUGE_VAL, -0x1p29, -0x1p29, -0x1p29})));
  std::vector<double> after(10000, -0x1p29);
  after.insert(after.begin(), std::nan(""));
  CHECK(std::isnan(sum_of(after)));
  after.assign(10000, 0x1p29);
  after.insert(after.begin() + 5000, HUGE_VAL);
  CHECK(std::isnan(sum_of(after)));
  // A true sum of the largest terms, far from the bound.
  CHECK(sum_of(std::vector<double>(10000, -0x1p29)) == -10000 * 0x1p29);
  CHECK(sum_of({}) == 0.0);
}
