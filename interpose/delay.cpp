#include "interpose/delay.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
  if (const char* f = std::getenv("MSTEP_DELAY_NATIVE"); f && *f) s.native_file = f;
  return s;
}

bool read_native_network(const std::string& path, model::LogGPSParams& out, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read it";
    return false;
  }
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object()) {
    error = "not a JSON object (a parameter file of mstep calibrate)";
    return false;
  }
  model::LogGPSParams p;
  for (auto [key, field, required] : {std::tuple{"L", &p.L, true}, {"o", &p.o, true}, {"Os", &p.Os, false},
                                      {"Or", &p.Or, false}, {"g", &p.g, false}, {"Gs", &p.Gs, false},
                                      {"Gl", &p.Gl, false}, {"H", &p.H, false}}) {
    if (!j.contains(key)) {
      if (!required) continue;
      error = fmt::format("no \"{}\" (a parameter file of mstep calibrate)", key);
      return false;
    }
    const auto& v = j.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      error = fmt::format("\"{}\" must be a number of seconds (per byte for Os, Or, Gs, Gl), not negative", key);
      return false;
    }
    *field = v.get<double>();
  }
  for (auto [key, field] : {std::pair{"s", &p.s}, {"S", &p.S}}) {
    if (!j.contains(key) || j.at(key).is_null()) continue;
    if (!j.at(key).is_number_unsigned()) {
      error = fmt::format("\"{}\" must be a number of bytes or null", key);
      return false;
    }
    *field = j.at(key).get<std::uint64_t>();
  }
  if (j.contains("rendezvous")) {
    const auto& r = j.at("rendezvous");
    if (r == "delivered") p.rendezvous_model = model::RendezvousModel::Delivered;
    else if (r != "paper") {
      error = "\"rendezvous\" must be \"paper\" or \"delivered\"";
      return false;
    }
  }
  out = p;
  return true;
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
  if (!settings_.native_file.empty()) {
    std::string error;
    if (!read_native_network(settings_.native_file, native_, error)) {
      if (rank == 0)
        std::fprintf(stderr, "mstep: MSTEP_DELAY_NATIVE=%s: %s; no delay applied\n", settings_.native_file.c_str(),
                     error.c_str());
      settings_ = DelaySettings{};
      return;
    }
    native_set_ = true;
  }
  rank_ = rank;
  o_ns_ = settings_.o > 0 ? std::llround(settings_.o * 1e9) : 0;
  gap_ns_ = settings_.gap > 0 ? std::llround(settings_.gap * 1e9) : 0;
  L_ns_ = settings_.L > 0 ? std::llround(settings_.L * 1e9) : 0;
  per_byte_ns_ = settings_.per_byte > 0 ? settings_.per_byte * 1e9 : 0;
  rndv_bytes_ = settings_.rndv > 0 ? settings_.rndv : UINT64_MAX;
  // Even L=0 (or G=0): what carrying the times costs is then measurable. And G, which is wire
  // time: the receiver holds each message for its bytes.
  carry_time_ = settings_.L >= 0 || !pairs_.empty() || settings_.per_byte >= 0;
  to_rank0_ns_ = to_rank0_ns;
  // Every rank reads the same environment (the launcher passes it on), so all or none dup here.
  if (carry_time_) PMPI_Comm_dup(MPI_COMM_WORLD, &shadow_);
  on_ = true;
}

std::string DelayApparatus::json() const {
  if (!on_) return "null";
  std::string native = "null";
  if (native_set_) {
    const model::LogGPSParams& p = native_;
    const auto size = [](std::uint64_t v) { return v == model::kInfiniteBytes ? std::string("null") : std::to_string(v); };
    native = fmt::format(
        R"({{"L": {:.9g}, "o": {:.9g}, "Os": {:.9g}, "Or": {:.9g}, "g": {:.9g}, "Gs": {:.9g}, "Gl": {:.9g}, "s": {}, "S": {}, "H": {:.9g}, "rendezvous": "{}"}})",
        p.L, p.o, p.Os, p.Or, p.g, p.Gs, p.Gl, size(p.s), size(p.S), p.H,
        p.rendezvous_model == model::RendezvousModel::Delivered ? "delivered" : "paper");
  }
  return fmt::format(R"({{"L": {}, "o": {}, "g": {}, "G": {}, "rendezvous_bytes": {}, "pairs": {}, "native": {}}})",
                     json_seconds(settings_.L), json_seconds(settings_.o), json_seconds(settings_.gap),
                     json_seconds(settings_.per_byte), settings_.rndv > 0 ? std::to_string(settings_.rndv) : "null",
                     pairs_.empty() ? std::string("null") : pairs_.json(), native);
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
  // A rendezvous pays o three times at the sender (request, reply, data: T4, T5, T1).
  const auto cpu = rndv ? 3 * o_ns_ : o_ns_;
  if (cpu > 0) {
    spin_until(t + cpu);
    t = now_ns();
  }
  last_send_ns_ = t;
  // The bytes take k G on this rank's wire, after its earlier messages' bytes: the message
  // arrives that much later than the time it is sent.
  std::int64_t wire = 0;
  if (per_byte_ns_ > 0) {
    const auto k_g = static_cast<std::int64_t>(per_byte_ns_ * static_cast<double>(bytes));
    wire_free_ns_ = std::max(t, wire_free_ns_) + k_g;
    wire = wire_free_ns_ - t;
  }
  // Eager: the data crosses once. Rendezvous: request, reply and data cross; reply and data cross
  // after the receive is posted, however late. Either way the bytes take their k G on the way.
  const std::int64_t there = L_ns_ + pairs_.ns(rank_, peer), back = L_ns_ + pairs_.ns(peer, rank_);
  const std::int64_t latency = (rndv ? 2 * there + back : there) + wire;
  // What the message takes on the native network from here (a receiver already waiting), to
  // which the added latency adds; 0 without MSTEP_DELAY_NATIVE.
  const model::LogGPS net{native_};
  const auto native_ns = [](double s) { return static_cast<std::int64_t>(std::llround(s * 1e9)); };
  if (rndv) {  // for after_blocking_send, if this send is one
    delivered_ns_ = t + native_ns(net.send_time(bytes, 0, 0));
    added_ns_ = latency;
    late_ns_ = back + there + wire;
  } else {
    delivered_ns_ = INT64_MIN;
  }
  if (carry_time_) {
    // When the message would complete at a waiting receiver on the native network (rank 0's
    // clock), and what is added to that. 16 bytes are always eager: this never blocks.
    std::int64_t carried[2] = {t + native_ns(net.end_to_end(bytes, 0, 0)) + to_rank0_ns_, latency};
    PMPI_Send(carried, 2, MPI_INT64_T, peer, tag, shadow_);
  }
}

void DelayApparatus::after_blocking_send(std::int64_t returned_ns) {
  if (delivered_ns_ == INT64_MIN) return;
  spin_until(std::max(std::min(delivered_ns_, returned_ns) + added_ns_, returned_ns + late_ns_));
  delivered_ns_ = INT64_MIN;
}

void DelayApparatus::after_sendrecv(std::int32_t source, int tag, std::uint64_t bytes, bool sent) {
  const std::int64_t returned = now_ns();
  if (source >= 0) after_recv(source, tag, bytes);
  if (sent) after_blocking_send(returned);
}

std::int64_t DelayApparatus::take_send_hold() {
  if (delivered_ns_ == INT64_MIN) return INT64_MIN;
  const std::int64_t t = delivered_ns_ + added_ns_;
  delivered_ns_ = INT64_MIN;
  return t;
}

void DelayApparatus::after_recv(std::int32_t source, int tag, std::uint64_t bytes) {
  const bool rndv = bytes >= rndv_bytes_;
  if (carry_time_) {
    const std::int64_t returned = now_ns();  // the receive's natural completion, about
    std::int64_t carried[2] = {0, 0};
    PMPI_Recv(carried, 2, MPI_INT64_T, source, tag, shadow_, MPI_STATUS_IGNORE);
    // Its native completion: the natural one where the message came sooner than the native
    // network's estimate (a receiver that was waiting), else the estimate (one that came late).
    std::int64_t until = std::min(returned, carried[0] - to_rank0_ns_) + carried[1];
    // A rendezvous received late: its reply and data crossed after the receive was posted.
    if (rndv) {
      const auto wire = static_cast<std::int64_t>(per_byte_ns_ * static_cast<double>(bytes));
      until = std::max(until, returned + 2 * L_ns_ + pairs_.ns(rank_, source) + pairs_.ns(source, rank_) + wire);
    }
    spin_until(until);
  }
  // A rendezvous pays o three times at the receiver too (T4, T5, T3).
  const std::int64_t cpu = rndv ? 3 * o_ns_ : o_ns_;
  if (cpu > 0) spin_until(now_ns() + cpu);
}

}  // namespace mstep
