// LogP, LogGP and LogGPS point-to-point costs (Ino, Fujimoto, Hagihara; MODELS.md section 3).
//
// Everything here is constexpr and header-defined: the replay evaluates these per message, so
// they must inline and must not allocate. LogGP is LogGPS with S infinite (no send ever waits
// for its receiver); LogP is LogGP without per-byte terms.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>

namespace mstep::model {

// A message size no message reaches: S = kInfiniteBytes turns LogGPS into LogGP.
inline constexpr std::uint64_t kInfiniteBytes = std::numeric_limits<std::uint64_t>::max();

// How a rendezvous (k >= S) is charged.
//   Paper:     MODELS.md section 3 as written: T1 and T3 carry Os and Or for every byte, and
//              MPI_Send returns at T4 + T5 + T1, before its data is on the wire.
//   Delivered: what MPICH ch4:ucx measures on both of this machine's transports (shared memory
//              and TCP; `mstep calibrate`'s notes): a rendezvous moves all its bytes once, at the
//              long messages' per-byte gap, with no copy overhead beside it (T1 = T3 = o,
//              T2 = L + k Gl), and MPI_Send returns when the data is delivered (T4 + T5 + T1 + T2).
// Either way T5 carries H, the calibrated handshake time beyond o + L + o.
enum class RendezvousModel : std::uint8_t { Paper, Delivered };

// Times in seconds, per-byte costs in seconds per byte, sizes in bytes.
struct LogGPSParams {
  double L = 0;    // latency
  double o = 0;    // fixed CPU overhead per message (the paper's o')
  double Os = 0;   // per-byte CPU overhead of a send
  double Or = 0;   // per-byte CPU overhead of a receive
  double g = 0;    // gap between consecutive messages of one process
  double Gs = 0;   // per-byte gap of bytes below s
  double Gl = 0;   // per-byte gap of bytes from s on
  std::uint64_t s = kInfiniteBytes;  // short/eager boundary: short is k < s
  std::uint64_t S = kInfiniteBytes;  // rendezvous (synchronous send) from k >= S on
  std::uint32_t P = 2;               // processes
  // Not in MODELS.md (0 and Paper reproduce it exactly): measured by `mstep calibrate`.
  double H = 0;  // rendezvous handshake beyond T4 + T5's o + L + o (UCX over TCP: ~30 us)
  RendezvousModel rendezvous_model = RendezvousModel::Paper;
  // Delivered only, for the replay: the sender moves the data itself, so after the clear-to-send
  // it leaves only once the sender is inside MPI (UCX over TCP; over shared memory the receiver
  // copies it alone). Either way the receiver answers the request-to-send only inside MPI.
  bool rendezvous_push = false;
};

// The same machine seen by LogGP: S = infinity, every send is asynchronous.
constexpr LogGPSParams as_loggp(LogGPSParams p) noexcept {
  p.S = kInfiniteBytes;
  return p;
}

// The same machine seen by LogP: LogGP with G = 0, and (LogP knowing one fixed message size)
// without the per-byte overheads Os and Or either, so every message costs o + L + o end to end.
constexpr LogGPSParams as_logp(LogGPSParams p) noexcept {
  p = as_loggp(p);
  p.Gs = p.Gl = p.Os = p.Or = 0;
  return p;
}

// MPICH's protocols (Ino et al., Table 1): short k < s, eager s <= k < S, rendezvous k >= S.
// The rendezvous test comes first, so S <= s means no eager range at all.
enum class Protocol : std::uint8_t { Short, Eager, Rendezvous };

std::string_view to_string(Protocol p) noexcept;

// The formulas of MODELS.md section 3 for one k-byte message whose MPI_Send starts at ts and
// whose matching MPI_Recv starts at tr (both on one clock, seconds).
struct LogGPS {
  LogGPSParams p;

  constexpr Protocol protocol(std::uint64_t k) const noexcept {
    if (k >= p.S) return Protocol::Rendezvous;
    return k < p.s ? Protocol::Short : Protocol::Eager;
  }
  // Synchronous send: the sender needs the receiver's clear-to-send before the data moves.
  constexpr bool rendezvous(std::uint64_t k) const noexcept { return k >= p.S; }

  // Paper formulas, or an eager message: Os, Or and Gs apply. A delivered rendezvous: Gl alone.
  constexpr bool copies(std::uint64_t k) const noexcept {
    return p.rendezvous_model == RendezvousModel::Paper || !rendezvous(k);
  }
  // T1: send overhead.
  constexpr double T1(std::uint64_t k) const noexcept { return p.o + (copies(k) ? bytes(k) * p.Os : 0.0); }
  // T2: time on the wire; bytes beyond s move at Gl.
  constexpr double T2(std::uint64_t k) const noexcept {
    if (!copies(k)) return p.L + bytes(k) * p.Gl;  // a delivered rendezvous: every byte at Gl
    if (k < p.s) return p.L + bytes(k) * p.Gs;
    return p.L + bytes(p.s) * p.Gs + bytes(k - p.s) * p.Gl;
  }
  // T3: receive overhead.
  constexpr double T3(std::uint64_t k) const noexcept { return p.o + (copies(k) ? bytes(k) * p.Or : 0.0); }
  // T4: the request-to-send reaches a posted receive (not before o + L after the send starts).
  constexpr double T4(double ts, double tr) const noexcept {
    return std::max(p.o + p.L, tr - ts) + p.o;
  }
  // T5: the clear-to-send travels back (H: the calibrated rest of the handshake).
  constexpr double T5() const noexcept { return p.o + p.L + p.o + p.H; }

  // From the start of MPI_Send to the end of the matching MPI_Recv. Below S this is the
  // paper's fixed T1 + T2 + T3 (a receive posted late is accounted for in recv_time instead).
  constexpr double end_to_end(std::uint64_t k, double ts, double tr) const noexcept {
    if (!rendezvous(k)) return T1(k) + T2(k) + T3(k);
    return T4(ts, tr) + T5() + T1(k) + T2(k) + T3(k);
  }
  // Duration of MPI_Send.
  constexpr double send_time(std::uint64_t k, double ts, double tr) const noexcept {
    return rendezvous(k) ? synchronous_send_time(k, ts, tr) : T1(k);
  }
  // A send that waits for its receive (k >= S, or MPI_Ssend at any size): its duration, and when
  // its data is at the receiver, both from the send's start.
  constexpr double synchronous_send_time(std::uint64_t k, double ts, double tr) const noexcept {
    return T4(ts, tr) + T5() + T1(k) + (p.rendezvous_model == RendezvousModel::Delivered ? T2(k) : 0.0);
  }
  constexpr double synchronous_arrival(std::uint64_t k, double ts, double tr) const noexcept {
    return T4(ts, tr) + T5() + T1(k) + T2(k);
  }
  // Duration of MPI_Recv (from tr).
  constexpr double recv_time(std::uint64_t k, double ts, double tr) const noexcept {
    if (!rendezvous(k)) return receiver_wait(k, ts, tr) + T3(k);
    return receiver_wait(k, ts, tr) + p.o + T5() + T1(k) + T2(k) + T3(k);
  }
  // Time MPI_Send spends waiting for a receiver that posted late; only a rendezvous waits.
  constexpr double sender_wait(std::uint64_t k, double ts, double tr) const noexcept {
    if (!rendezvous(k)) return 0.0;
    return std::max(0.0, (tr - ts) - (p.o + p.L));
  }
  // Time MPI_Recv spends waiting for a sender that started late: the max{...} term of recv_time.
  constexpr double receiver_wait(std::uint64_t k, double ts, double tr) const noexcept {
    if (!rendezvous(k)) return std::max(T1(k) + T2(k) - (tr - ts), 0.0);
    return std::max(p.o + p.L - (tr - ts), 0.0);
  }
  // Consecutive sends of one process start at least g apart.
  constexpr double earliest_next_send(double previous_send_start) const noexcept {
    return previous_send_start + p.g;
  }

 private:
  static constexpr double bytes(std::uint64_t k) noexcept { return static_cast<double>(k); }
};

}  // namespace mstep::model
