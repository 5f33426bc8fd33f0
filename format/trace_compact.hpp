// Compressing, after the run, the frames a recorder stored uncompressed (MSTEP_COMPRESS=later,
// format/zstd_stored.hpp). Each stored frame becomes what the recorder would have written had it
// compressed at once (the same zstd settings on the same payload: the same bytes); every other byte
// of the file is copied as it is, a damaged or partial tail included, so that a reader finds the
// same frames and gives the same verdict on the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mstep {

struct CompressOutcome {
  std::size_t frames = 0;             // stored frames compressed
  std::uint64_t bytes_before = 0;     // the file's size before
  std::uint64_t bytes_after = 0;      // and after (the same when no frame was stored)
};

// Compresses the stored frames of the rank file `path` in place: a new file beside it, renamed over
// it at the end, so that the original stays whole until then. A file without stored frames is only
// read (frame headers), not rewritten. Throws TraceError naming the file when it cannot be read or
// the new one cannot be written (the original then stays as it was, and no temporary file is left).
CompressOutcome compress_stored_frames(const std::string& path, int zstd_level = 1);

}  // namespace mstep
