// Run-time settings, all from environment variables (README.md lists them).
#pragma once

#include <cstddef>
#include <string>

namespace mstep {

struct Config {
  bool enabled = true;               // MSTEP_ENABLE=0 turns recording off (wrappers pass through)
  std::string dir;                   // MSTEP_DIR; empty: rank 0 picks mstep.<program>.<pid>
  int stack_depth = 1;               // MSTEP_STACK_DEPTH: frames kept per call site
  std::size_t buffer_bytes = 1 << 20;  // MSTEP_BUFFER: per-thread event buffer (k/M suffixes)
  int zstd_level = 1;                // MSTEP_ZSTD_LEVEL
  // MSTEP_WRITER: who encodes and writes full buffers. Auto: a thread of the recorder's own where
  // the node has a core to spare for it (more usable cores than ranks on the node), else inline.
  enum class Writer { Auto, Thread, Inline } writer = Writer::Auto;
  // MSTEP_COMPRESS: when frames are compressed. Now: as they are written. Later: written as stored
  // zstd frames (a copy, a small part of the cost of compressing), each rank compressing its own
  // file in MPI_Finalize (`mstep record` or `mstep compress` those of ranks that died). Auto: later
  // where the frames are written on the application's thread, now with the writer thread.
  enum class Compress { Auto, Now, Later } compress = Compress::Auto;
  std::string error;                 // a setting that could not be read, in one line
};

Config read_config();

}  // namespace mstep
