// A zstd frame that keeps its content as it is: raw blocks (RFC 8878, 3.1.1.2) and zstd's content
// checksum. The recorder writes these when compression is left until after the run
// (MSTEP_COMPRESS=later): copying a payload costs a small part of compressing it, and it is on the
// application's thread when no core is free for a writer thread. Every zstd decoder reads such a
// frame and checks its checksum, so the trace's readers need not know about it; each rank then
// compresses its file in MPI_Finalize (format/trace_compact.hpp) into what compressing the frames
// at once gives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace mstep {

// The largest frame write_stored_frame makes of `content_bytes` bytes.
std::size_t stored_frame_bound(std::size_t content_bytes);

// Writes `content` as a stored zstd frame at `out` (stored_frame_bound(content.size()) bytes at
// least) and returns its size.
std::size_t write_stored_frame(std::span<const std::uint8_t> content, std::uint8_t* out);

// The bytes of a frame's start that tell a stored frame from a compressed one (zstd's magic, then
// the frame header and window descriptors write_stored_frame writes).
inline constexpr std::size_t kStoredFramePrefix = 6;
// Whether `start` (kStoredFramePrefix bytes at least) begins a frame as write_stored_frame writes
// them: a cheap first look, before is_stored_frame checks the whole frame.
bool starts_stored_frame(std::span<const std::uint8_t> start);

// Whether `frame` is exactly one frame write_stored_frame wrote: its header, raw blocks whose sizes
// add up to the content size it declares, and the checksum's four bytes. The checksum itself is
// left to the decoder.
bool is_stored_frame(std::span<const std::uint8_t> frame);

}  // namespace mstep
