#include "interpose/delay.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

namespace mstep {

DelayApparatus g_delay;

namespace {

void read_one(const char* name, bool per_byte, double& out, std::string& error) {
  const char* v = std::getenv(name);
  if (!v) return;
  const bool ok = per_byte ? parse_delay_per_byte(v, out) : parse_delay_time(v, out);
  if (!ok && error.empty())
    error = fmt::format("{}='{}' is not {}", name, v,
                        per_byte ? "a time per byte (e.g. 2ns/B)" : "a time (e.g. 5us)");
}

std::string json_seconds(double v) { return v < 0 ? "null" : fmt::format("{:.9g}", v); }

}  // namespace


DelaySettings read_delay_settings() {
  DelaySettings s;
  read_one("MSTEP_DELAY_L", false, s.L, s.error);
  read_one("MSTEP_DELAY_O", false, s.o, s.error);
  read_one("MSTEP_DELAY_GAP", false, s.gap, s.error);
  read_one("MSTEP_DELAY_PER_BYTE", true, s.per_byte, s.error);
  if (const char* v = std::getenv("MSTEP_DELAY_RNDV"); v && *v) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long bytes = std::strtoull(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || bytes == 0 || v[0] == '-') {
      if (s.error.empty()) s.error = fmt::format("MSTEP_DELAY_RNDV='{}' is not a number of bytes of 1 or more", v);
    } else {
      s.rndv = bytes;
    }
  }
  if (const char* f = std::getenv("MSTEP_DELAY_PAIRS"); f && *f) s.pairs_file = f;
  return s;
}

void DelayApparatus::start(int rank, std::int64_t to_rank0_ns) {
  settings_ = read_delay_settings();
  if (!settings_.error.empty()) {
    if (rank == 0) std::fprintf(stderr, "mstep: %s; no delay applied\n", settings_.error.c_str());
    settings_ = DelaySettings{};
    return;
  }
  if (!settings_.any()) return;
  if (!settings_.pairs_file.empty()) {
    int world = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &world);
    std::string error;
    pairs_ = PairLatency::read(settings_.pairs_file, world, error);
    if (!error.empty()) {
      if (rank == 0)
        std::fprintf(stderr, "mstep: MSTEP_DELAY_PAIRS=%s: %s; no delay applied\n", settings_.pairs_file.c_str(),
                     error.c_str());
      settings_ = DelaySettings{};
      return;
    }
  }
  rank_ = rank;
  o_ns_ = settings_.o > 0 ? std::llround(settings_.o * 1e9) : 0;
  gap_ns_ = settings_.gap > 0 ? std::llround(settings_.gap * 1e9) : 0;
  L_ns_ = settings_.L > 0 ? std::llround(settings_.L * 1e9) : 0;
  per_byte_ns_ = settings_.per_byte > 0 ? settings_.per_byte * 1e9 : 0;
  rndv_bytes_ = settings_.rndv > 0 ? settings_.rndv : UINT64_MAX;
  // Even L=0: what carrying the times costs is then measurable.
  // And a rendezvous's k G, which is wire time: the receiver holds the message for it.
  carry_time_ = settings_.L >= 0 || !pairs_.empty() || (settings_.per_byte > 0 && settings_.rndv > 0);
  to_rank0_ns_ = to_rank0_ns;
  // Every rank reads the same environment (the launcher passes it on), so all or none dup here.
  if (carry_time_) PMPI_Comm_dup(MPI_COMM_WORLD, &shadow_);
  on_ = true;
}

std::string DelayApparatus::json() const {
  if (!on_) return "null";
  return fmt::format(R"({{"L": {}, "o": {}, "g": {}, "G": {}, "rendezvous_bytes": {}, "pairs": {}}})",
                     json_seconds(settings_.L), json_seconds(settings_.o), json_seconds(settings_.gap),
                     json_seconds(settings_.per_byte), settings_.rndv > 0 ? std::to_string(settings_.rndv) : "null",
                     pairs_.empty() ? std::string("null") : pairs_.json());
}

std::int64_t DelayApparatus::now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void DelayApparatus::spin_until(std::int64_t t_ns) {
  while (now_ns() < t_ns) {
  }
}

void DelayApparatus::before_send(std::int32_t peer, int tag, std::uint64_t bytes) {
  const bool rndv = bytes >= rndv_bytes_;
  std::int64_t t = now_ns();
  if (gap_ns_ > 0 && t < last_send_ns_ + gap_ns_) {
    spin_until(last_send_ns_ + gap_ns_);
    t = now_ns();
  }
  // A rendezvous pays o three times at the sender (request, reply, data: T4, T5, T1); its bytes
  // go on the wire below, not on the CPU.
  const std::int64_t wire = static_cast<std::int64_t>(per_byte_ns_ * static_cast<double>(bytes));
  const auto cpu = rndv ? 3 * o_ns_ : o_ns_ + wire;
  if (cpu > 0) {
    spin_until(t + cpu);
    t = now_ns();
  }
  last_send_ns_ = t;
  // Eager: the data crosses once. Rendezvous: request, reply and data cross, and the bytes take
  // their k G on the way.
  const std::int64_t latency = rndv ? 2 * (L_ns_ + pairs_.ns(rank_, peer)) + L_ns_ + pairs_.ns(peer, rank_) + wire
                                    : L_ns_ + pairs_.ns(rank_, peer);
  delivered_ns_ = rndv ? t + latency : INT64_MIN;  // for after_blocking_send, if this send is one
  if (carry_time_) {
    // When the message may complete at its receiver, on rank 0's clock. 8 bytes are always
    // eager: this never blocks.
    std::int64_t not_before = t + latency + to_rank0_ns_;
    PMPI_Send(&not_before, 1, MPI_INT64_T, peer, tag, shadow_);
  }
}

void DelayApparatus::after_blocking_send() {
  if (delivered_ns_ == INT64_MIN) return;
  spin_until(delivered_ns_);
  delivered_ns_ = INT64_MIN;
}

void DelayApparatus::after_recv(std::int32_t source, int tag, std::uint64_t bytes) {
  if (carry_time_) {
    std::int64_t not_before = 0;
    PMPI_Recv(&not_before, 1, MPI_INT64_T, source, tag, shadow_, MPI_STATUS_IGNORE);
    spin_until(not_before - to_rank0_ns_);
  }
  // A rendezvous pays o three times at the receiver too (T4, T5, T3).
  const std::int64_t cpu = bytes >= rndv_bytes_ ? 3 * o_ns_ : o_ns_;
  if (cpu > 0) spin_until(now_ns() + cpu);
}

}  // namespace mstep
