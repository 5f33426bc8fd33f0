// The recorder's clock: the TSC where it is invariant (about 11 ns a read here), otherwise
// CLOCK_MONOTONIC in nanoseconds (about 25 ns). Ticks become seconds offline, from ClockSync pairs.
#pragma once

#include <cstdint>
#include <ctime>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define MSTEP_HAVE_TSC 1
#endif

namespace mstep {

enum class ClockKind : std::uint8_t { Tsc = 0, Monotonic = 1 };

// Chosen once at load time; read on every event, so it is a plain global, not a function call.
extern ClockKind g_clock_kind;

inline std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

inline std::uint64_t now_ticks() {
#ifdef MSTEP_HAVE_TSC
  if (g_clock_kind == ClockKind::Tsc) return __rdtsc();
#endif
  return static_cast<std::uint64_t>(monotonic_ns());
}

// Picks the TSC if the CPU says it is invariant (constant rate, runs in deep sleep).
ClockKind detect_clock();
// Ticks per second, measured against CLOCK_MONOTONIC over `spin_ns` nanoseconds.
double measure_tick_rate(std::int64_t spin_ns);

}  // namespace mstep
