#include "model/params/cold_start.hpp"

#include "model/params/fit.hpp"

#include <algorithm>
#include <vector>

namespace mstep::model {

ColdStart fit_cold_start(std::span<const double> rtt, std::span<const double> send, std::uint64_t bytes) {
  ColdStart c;
  c.bytes = bytes;
  const std::size_t n = std::min(rtt.size(), send.size());
  if (n < 16) return c;
  const std::size_t tail = n - n / 4;
  const double warm = median({rtt.begin() + static_cast<std::ptrdiff_t>(tail), rtt.begin() + static_cast<std::ptrdiff_t>(n)});
  const double warm_send =
      median({send.begin() + static_cast<std::ptrdiff_t>(tail), send.begin() + static_cast<std::ptrdiff_t>(n)});
  const double threshold = std::max(3 * warm, warm + 2e-6);

  // The prefix where cold messages outnumber warm ones the most: +1 per cold, -1 per warm.
  long score = 0, best = 0;
  std::size_t prefix = 0;
  for (std::size_t i = 0; i < tail; ++i) {
    score += rtt[i] > threshold ? 1 : -1;
    if (score >= best && score > 0) best = score, prefix = i + 1;
  }
  if (prefix < 4) return c;
  std::vector<double> send_extra, recv_extra;
  for (std::size_t i = 0; i < prefix; ++i) {
    const double s = std::max(0.0, send[i] - warm_send);
    send_extra.push_back(s);
    recv_extra.push_back(std::max(0.0, rtt[i] - warm - s));
  }
  c.messages = static_cast<std::uint32_t>(prefix);
  c.send = median(std::move(send_extra));
  c.recv = median(std::move(recv_extra));
  return c;
}

std::uint64_t cold_start_from(std::uint64_t s, std::uint64_t S, std::uint64_t measured_bytes,
                              std::optional<std::uint64_t> small_bytes_that_did_not_pay) {
  std::uint64_t from = s < S && s <= measured_bytes ? s : 0;
  if (small_bytes_that_did_not_pay) from = std::max(from, *small_bytes_that_did_not_pay + 1);
  return from;
}

}  // namespace mstep::model
