// The analysis binaries (mstep's trace readers, the replay benchmark) allocate through mimalloc
// with its segments backed by transparent huge pages. A streamed report of many ranks holds many
// small per-rank buffers (windows, frames, channels), each touched once and kept: with 4 KiB pages
// every page of them is a fault (16 384 ranks: 38 000 faults, a quarter of the report's time on
// this project's VM, where a fault costs about 8 us); with 2 MiB pages a few hundred. README
// (Figures, "Stop 38") has the figures.
//
// mimalloc reads its options once, from the environment, before main() and before any static
// initializer of the program (its first allocation already follows them), so the setting has to
// be in the environment the program starts with: hence the exec. libmstep.so (inside the
// application) never links any of this: the recorder does not change the application's allocator.
#include "tools/allocator/large_pages.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace mstep {

void use_large_pages([[maybe_unused]] char** argv) {
#ifdef MSTEP_MIMALLOC
  constexpr const char* kSetting = "MIMALLOC_LARGE_OS_PAGES";
  constexpr const char* kMark = "MSTEP_LARGE_PAGES_SET";  // set by the exec below
  if (std::getenv(kMark) != nullptr) {
    ::unsetenv(kSetting);
    ::unsetenv(kMark);
    return;
  }
  if (std::getenv(kSetting) != nullptr) return;  // the user's choice, either way
  // Under valgrind the exec would leave the tool (and its malloc) behind.
  if (const char* preload = std::getenv("LD_PRELOAD"); preload != nullptr && std::strstr(preload, "vgpreload") != nullptr)
    return;
  ::setenv(kSetting, "1", 1);
  ::setenv(kMark, "1", 1);
  ::execv("/proc/self/exe", argv);
  ::unsetenv(kSetting);  // the exec failed: on as we are
  ::unsetenv(kMark);
#endif
}

}  // namespace mstep
