#include "interpose/clock.hpp"

#include <cstdlib>
#include <cstring>

#ifdef MSTEP_HAVE_TSC
#include <cpuid.h>
#endif

namespace mstep {

ClockKind g_clock_kind = detect_clock();

ClockKind detect_clock() {
  if (const char* force = std::getenv("MSTEP_CLOCK"); force && std::strcmp(force, "monotonic") == 0)
    return ClockKind::Monotonic;
#ifdef MSTEP_HAVE_TSC
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) && eax >= 0x80000007u &&
      __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) && (edx & (1u << 8)))
    return ClockKind::Tsc;
#endif
  return ClockKind::Monotonic;
}

double measure_tick_rate(std::int64_t spin_ns) {
  if (g_clock_kind == ClockKind::Monotonic) return 1e9;
  const std::int64_t ns0 = monotonic_ns();
  const std::uint64_t t0 = now_ticks();
  std::int64_t ns1 = ns0;
  while (ns1 - ns0 < spin_ns) ns1 = monotonic_ns();
  const std::uint64_t t1 = now_ticks();
  return static_cast<double>(t1 - t0) * 1e9 / static_cast<double>(ns1 - ns0);
}

}  // namespace mstep
