// A trace's problems on stderr: ten lines of a kind in their place, then one line for the rest.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "model/trace/problem_lines.hpp"

using namespace mstep;

TEST_CASE("problems that differ only in their numbers are told ten times, then counted", "[problems]") {
  std::vector<std::string> problems{"pk/ranks-000001.msp@725840+355: frame 0 at byte 33: cut short"};
  for (int r = 0; r < 2047; ++r)
    problems.push_back(fmt::format("pk/ranks-000001.msp@{}+35{}: too short to be an mstep trace", 726195 + 353 * r, r % 10));
  problems.push_back("rank 3: no clock samples in its trace");
  const auto lines = problem_lines(problems);
  // The cut frame, ten of the short ranks, the clock line, then the count with the last as example.
  REQUIRE(lines.size() == 13);
  CHECK(lines[0] == problems[0]);
  for (std::size_t i = 1; i <= 10; ++i) CHECK(lines[i] == problems[i]);
  CHECK(lines[11] == "rank 3: no clock samples in its trace");
  CHECK(lines[12] == "2037 more problems of the same kind, the last: " + problems[2047]);
}

TEST_CASE("fewer than ten of a kind, or different words, are all told as they are", "[problems]") {
  const std::vector<std::string> problems{"rank 1: truncated", "rank 2: truncated", "rank 2: corrupt",
                                          "a.mst: cannot open", "b.mst: cannot open"};
  CHECK(problem_lines(problems) == problems);
  CHECK(problem_lines(std::vector<std::string>{}).empty());
  // One more than the limit: the line for it says "problem", not "problems".
  std::vector<std::string> eleven;
  for (int r = 0; r < 11; ++r) eleven.push_back(fmt::format("rank {}: unfinished", r));
  const auto lines = problem_lines(eleven);
  REQUIRE(lines.size() == 11);
  CHECK(lines.back() == "1 more problem of the same kind, the last: rank 10: unfinished");
}
