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
  // zstd frames (a copy, a small part of the cost of compressing), compressed after the run by
  // `mstep record` or `mstep compress`. Auto: later where frames are written on the application's
  // thread and `mstep record` runs the job (it sets MSTEP_UNDER_RECORD), now otherwise.
  enum class Compress { Auto, Now, Later } compress = Compress::Auto;
  bool under_record = false;         // MSTEP_UNDER_RECORD=1: `mstep record` compresses after the job
  std::string error;                 // a setting that could not be read, in one line
};

Config read_config();

}  // namespace mstep
