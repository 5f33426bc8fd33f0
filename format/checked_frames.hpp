// Frames already found whole in this process, by their compressed bytes: the report reads every
// rank file four times (three replays and the pass), and each reader checks the Steps frames it
// skips by decompressing them. A rank's M-steps of a world collective list every member, so that
// check cost ranks squared bytes a pass; the same compressed bytes decompress the same way, so a
// frame found whole once need not be decompressed again.
#pragma once

#include <cstdint>
#include <span>

namespace mstep {

// Whether a frame of `raw` bytes compressed as `compressed` was found whole before.
bool frame_known_whole(std::span<const std::uint8_t> compressed, std::uint32_t raw);
// Notes that it was (only frames that are worth it: a small one is checked again faster than
// looked up; at most a bounded number of them, so that memory does not grow with the trace).
void note_frame_whole(std::span<const std::uint8_t> compressed, std::uint32_t raw);

}  // namespace mstep
