// A trace's problems as lines for a terminal. A damaged pack of 4096 ranks, or a run killed at
// 65 536 ranks, gave one line a rank: thousands of lines that say the same thing. Lines that differ
// only in their numbers (rank, offset, byte) are one kind; the first few of each kind are kept in
// their place, and one line at the end says how many more of that kind there were, with the last as
// an example (its numbers show the range). JSON output keeps every problem; this is for stderr.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace mstep {

inline constexpr std::size_t kProblemLinesPerKind = 10;

std::vector<std::string> problem_lines(std::span<const std::string> problems,
                                       std::size_t per_kind = kProblemLinesPerKind);

}  // namespace mstep
