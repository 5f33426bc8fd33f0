#include "tools/calibrate/cold_start.hpp"

#include <algorithm>
#include <memory>

#include "model/params/fit.hpp"

namespace mstep::calib {
namespace {
constexpr int kTagCold = 41;
constexpr int kTagFresh = 42;

// One k-byte transfer answered by an empty message; the round trip on the first rank.
double transfer(const Comm& pair, char* buf, std::uint64_t k) {
  const int peer = 1 - pair.rank();
  if (pair.rank() != 0) {
    recv(buf, k, peer, kTagFresh, pair.get());
    send(buf, 0, peer, kTagFresh, pair.get());
    return 0;
  }
  const double t0 = now();
  send(buf, k, peer, kTagFresh, pair.get());
  recv(buf, 0, peer, kTagFresh, pair.get());
  return now() - t0;
}
}  // namespace

double measure_fresh_per_byte(const Comm& pair, const std::vector<std::uint64_t>& sizes, int reps) {
  std::vector<double> per_byte;
  for (const std::uint64_t k : sizes) {
    // Kept until the size is done, so that no transfer reuses a freed buffer's pages.
    std::vector<std::unique_ptr<char[]>> fresh;
    std::vector<double> cold, warm;
    for (int r = 0; r < reps; ++r) {
      // The sender writes its data; the receiver receives into memory it has not touched, as a
      // program that allocates the buffer for a message does (page faults are part of the cost).
      fresh.push_back(std::make_unique_for_overwrite<char[]>(k));
      if (pair.rank() == 0) std::fill_n(fresh.back().get(), k, 'f');
      cold.push_back(transfer(pair, fresh.back().get(), k));
    }
    char* reused = fresh.back().get();
    transfer(pair, reused, k);
    for (int r = 0; r < reps; ++r) warm.push_back(transfer(pair, reused, k));
    per_byte.push_back((model::median(cold) - model::median(warm)) / static_cast<double>(k));
  }
  return pair.rank() == 0 ? std::max(0.0, model::median(per_byte)) : 0.0;
}

ColdStartSamples measure_cold_start(const Comm& pair, char* send_buf, char* recv_buf, std::uint64_t bytes, int count) {
  ColdStartSamples out;
  out.bytes = bytes;
  const bool first = pair.rank() == 0;
  const int peer = 1 - pair.rank();
  if (!first) {
    for (int i = 0; i < count; ++i) {
      recv(recv_buf, bytes, peer, kTagCold, pair.get());
      send(send_buf, 0, peer, kTagCold, pair.get());
    }
    return out;
  }
  out.rtt.reserve(static_cast<std::size_t>(count));
  out.send.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const double t0 = now();
    send(send_buf, bytes, peer, kTagCold, pair.get());
    const double t1 = now();
    recv(recv_buf, 0, peer, kTagCold, pair.get());
    out.rtt.push_back(now() - t0);
    out.send.push_back(t1 - t0);
  }
  return out;
}

}  // namespace mstep::calib
