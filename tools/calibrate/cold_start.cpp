#include "tools/calibrate/cold_start.hpp"

namespace mstep::calib {
namespace {
constexpr int kTagCold = 41;
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
