#include "model/analysis/collective_spans.hpp"

#include <algorithm>
#include <limits>

namespace mstep::model {

std::optional<double> instance_span(Op op, std::span<const SpanMember> members) {
  if (members.empty()) return std::nullopt;
  constexpr double lowest = std::numeric_limits<double>::lowest();
  if (op == Op::Barrier) {
    double last_enter = lowest, last_exit = lowest;
    for (const SpanMember& m : members) last_enter = std::max(last_enter, m.enter_s), last_exit = std::max(last_exit, m.exit_s);
    return std::max(0.0, last_exit - last_enter);
  }
  if (op != Op::Bcast) return std::nullopt;
  const auto root = std::find_if(members.begin(), members.end(), [](const SpanMember& m) { return m.root; });
  if (root == members.end()) return std::nullopt;
  double span = 0;
  for (const SpanMember& m : members) span = std::max(span, m.exit_s - std::max(m.enter_s, root->enter_s));
  return span;
}

void SpanStats::add(double span_s) {
  ++count_;
  sum_ += span_s;
  if (sample_.size() < kSpanSample) {
    sample_.push_back(span_s);
    return;
  }
  // Reservoir sampling: the count_-th span replaces a kept one with probability kSpanSample / count_.
  state_ ^= state_ << 13, state_ ^= state_ >> 7, state_ ^= state_ << 17;
  const std::uint64_t j = state_ % count_;
  if (j < kSpanSample) sample_[j] = span_s;
}

double SpanStats::median_s() const {
  if (sample_.empty()) return 0;
  std::vector<double> v = sample_;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2) return v[mid];
  const double upper = v[mid];
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

}  // namespace mstep::model
