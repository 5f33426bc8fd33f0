// Internal to the replay (model/replay/replay.cpp): the cost models the replay loop is instantiated
// with. Each answers, for a k-byte message, what the loop asks: the sender's CPU time, when the
// data is there, whether the send is a rendezvous, and the machine terms (ColdStart).
#pragma once

#include <algorithm>
#include <cstdint>

#include "model/params/cold_start.hpp"
#include "model/cost/linear.hpp"
#include "model/cost/loggps.hpp"
#include "model/replay/replay.hpp"

namespace mstep::model::detail {

struct LogGPSCost {
  LogGPS m;
  ColdStart cold_start;
  RendezvousWatch* watch = nullptr;  // told when a message first reaches S (ReplayInput)
  // Whether any message this replay charged reached S. Every size the engine asks about passes
  // through one of the functions below, so while this stays false the replay took every branch
  // the same replay with S infinite (LogGP) would have: the two predictions are equal. S enters
  // their answers through rendezvous(k) and, in the delivered model only, through the copies that
  // sizes from S on do not make (LogGPS::copies); the paper's model skips the check elsewhere
  // (3% of the replay's instructions on 64 ranks' allreduce when every function made it).
  mutable bool reached_S = false;
  const ColdStart& cold() const { return cold_start; }
  void saw(std::uint64_t k) const {
    if (k >= m.p.S && !reached_S) [[unlikely]]
      first_reach();
  }
  void saw_copy(std::uint64_t k) const {
    if (m.p.rendezvous_model != RendezvousModel::Paper) saw(k);
  }
  [[gnu::cold, gnu::noinline]] void first_reach() const {
    reached_S = true;
    if (watch) watch->reached();
  }
  static constexpr bool kSynchronousSends = true;  // MPI_Ssend waits for its receive whatever S is
  // A receiver answers a request-to-send only inside MPI (measured, MODELS.md has no progress).
  bool progress_in_mpi() const { return m.p.rendezvous_model == RendezvousModel::Delivered; }
  bool push() const { return progress_in_mpi() && m.p.rendezvous_push; }
  // When the clear-to-send is back at the sender: the data may leave.
  double cts_back(double ts, double tr) const { return ts + m.T4(ts, tr) + m.T5(); }
  double gap() const { return m.p.g; }
  bool rendezvous(std::uint64_t k) const {
    const bool r = m.rendezvous(k);  // the one comparison, for the answer and the note
    if (r && !reached_S) [[unlikely]]
      first_reach();
    return r;
  }
  double send_cpu(std::uint64_t k) const { return saw_copy(k), m.T1(k); }
  double recv_cpu(std::uint64_t k) const { return saw_copy(k), m.T3(k); }
  double eager_arrival(std::uint64_t k, double ts) const { return saw_copy(k), ts + m.T1(k) + m.T2(k); }
  double rts_arrival(double ts) const { return ts + m.p.o + m.p.L; }
  double rndv_sender_done(std::uint64_t k, double ts, double tr) const {
    return saw_copy(k), ts + m.synchronous_send_time(k, ts, tr);
  }
  double rndv_arrival(std::uint64_t k, double ts, double tr) const {
    return saw_copy(k), ts + m.synchronous_arrival(k, ts, tr);
  }
  bool reached_rendezvous() const { return reached_S; }
};

struct LinearModelCost {
  TwoRegimeLinearModel lm;
  ColdStart cold_start;
  const ColdStart& cold() const { return cold_start; }
  static constexpr bool kSynchronousSends = false;
  bool progress_in_mpi() const { return false; }
  bool push() const { return false; }
  double cts_back(double ts, double) const { return ts; }
  const LinearCost& line(std::uint64_t k) const { return k < lm.boundary ? lm.below : lm.above; }
  double gap() const { return 0; }
  bool rendezvous(std::uint64_t) const { return false; }
  double send_cpu(std::uint64_t k) const { return std::max(0.0, static_cast<double>(k) / line(k).B); }
  double recv_cpu(std::uint64_t) const { return 0; }
  double eager_arrival(std::uint64_t k, double ts) const { return ts + std::max(0.0, lm.time(k)); }
  double rts_arrival(double ts) const { return ts; }
  double rndv_sender_done(std::uint64_t k, double ts, double) const { return ts + send_cpu(k); }
  double rndv_arrival(std::uint64_t k, double ts, double) const { return eager_arrival(k, ts); }
  bool reached_rendezvous() const { return false; }
};

}  // namespace mstep::model::detail
