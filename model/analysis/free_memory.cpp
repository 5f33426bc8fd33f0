#include "model/analysis/free_memory.hpp"

#include <malloc.h>

// mimalloc's, where the binary links it (the analysis binaries do; the tests need not).
extern "C" void mi_collect(bool force) __attribute__((weak));

namespace mstep::model {

void return_free_memory() {
  if (mi_collect != nullptr) mi_collect(true);
  else malloc_trim(0);
}

}  // namespace mstep::model
