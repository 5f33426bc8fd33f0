// The cold start of a shared-memory channel: the first messages one process sends another cost
// far more than the rest. Measured here (MPICH ch4:ucx, UCX's mm transport): the first 64 eager
// messages from one rank to another (UCX_MM_FIFO_SIZE, 64 by default) take ~45 us each instead of
// ~1 us, because each lands in a receive buffer that neither process has touched yet; short
// messages travel inside the FIFO element and rendezvous data is copied directly, so only the
// eager range [s, S) pays. The ring example's first 70 iterations are 20x slower than the rest.
//
// This is not in the papers' models. mstep adds it, calibrated, to the event-driven replays
// (LogGP and LogGPS alike, since it is the machine's, not the protocol model's): a message
// of k bytes with from <= k < to that is among the first `messages` such messages its sender
// sends to that destination costs `send` more in the sender's T1 (and arrives that much later)
// and `recv` more in the receiver's T3. Counting is per directed pair of ranks, in the sender's
// order; at 2 ranks that is exactly UCX's per-receiver FIFO, beyond 2 it is an assumption.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "model/cost/loggps.hpp"

namespace mstep::model {

// The measured cold start; messages == 0 means none (the default: the models as the papers
// state them).
struct ColdStart {
  std::uint32_t messages = 0;         // per directed pair of ranks
  double send = 0;                    // extra seconds in the sender's overhead
  double recv = 0;                    // extra seconds in the receiver's overhead
  std::uint64_t from = 0;             // the sizes that pay: from <= k < to
  std::uint64_t to = kInfiniteBytes;
  std::uint64_t bytes = 0;            // the message size it was measured with
  // Fresh buffers: a rendezvous transfer (k >= fresh_from, the machine's S) into memory the
  // transport has not moved before costs fresh_per_byte x k more (here ~1 ns/B against ~0.1
  // warm: a 4 MiB message sent once is 10x slower than the calibration's reused buffers). The
  // trace has no buffer addresses, so "fresh" is approximated as a size the receiving rank has
  // not received before: right for programs that send each buffer once (FFT, PSRS, Gaussian
  // elimination's shrinking rows) and for ones that reuse one buffer per size (halo, ring).
  double fresh_per_byte = 0;
  std::uint64_t fresh_from = kInfiniteBytes;

  constexpr bool applies(std::uint64_t k) const noexcept { return messages > 0 && k >= from && k < to; }
  constexpr bool fresh_applies(std::uint64_t k) const noexcept { return fresh_per_byte > 0 && k >= fresh_from; }
  constexpr bool any() const noexcept { return messages > 0 || fresh_per_byte > 0; }
};

// Fits the cold start from a fresh pair's first n round trips of `bytes`-byte messages answered
// by empty ones: rtt[i] the i-th round trip, send[i] the time inside its MPI_Send. The warm cost
// is the median of the last quarter; a message is cold when its round trip exceeds
// max(3 x warm, warm + 2 us). `messages` is the prefix in which cold messages outnumber warm
// ones the most (the longest such); `send` and `recv` are the median extra costs over it
// (the empty reply is never cold, so the round trip's extra beyond the send's is the receive's).
// Fewer than 4 cold messages, or fewer than 16 samples, mean no cold start.
ColdStart fit_cold_start(std::span<const double> rtt, std::span<const double> send, std::uint64_t bytes);

// The smallest size that pays the cold start, from the calibration's fits: the short-protocol
// boundary s where the gap curve has one (s < S, and s at most the measured size: below it messages
// travel inside the FIFO element and do not pay), else 0; but never at or below `small_bytes` when
// a fresh pair's first messages of that size were measured and did not pay (the fit of s finds
// the break in some calibrations and not in others; what was measured decides).
std::uint64_t cold_start_from(std::uint64_t s, std::uint64_t S, std::uint64_t measured_bytes,
                              std::optional<std::uint64_t> small_bytes_that_did_not_pay);

}  // namespace mstep::model
