// Pack files: many ranks' streams in one file, for runs too large for a file per rank
// (share/trace-format.md, "Packed trace directories"). A pack file `ranks-NNNNNN.msp` is the
// concatenation of complete rank streams, each exactly a rank file's bytes; `packs.idx` says where
// each rank's stream is. meta.json then has "packed" (and format_version 3 or later).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mstep {

// The first meta.json format_version whose directories may be packed.
inline constexpr std::uint16_t kPackedTraceVersion = 3;
inline constexpr const char* kPackIndexName = "packs.idx";

struct PackEntry {
  std::uint32_t pack = 0;    // which pack file (pack_file_name)
  std::uint64_t offset = 0;  // where the rank's stream starts in it
  std::uint64_t length = 0;  // its bytes
  friend bool operator==(const PackEntry&, const PackEntry&) = default;
};

std::string pack_file_name(std::uint32_t pack);  // "ranks-000003.msp"

// packs.idx: the 8 bytes "MSTPACK1", the number of ranks (u64), then per rank, in rank order,
// pack (u32), offset (u64) and length (u64); little endian. Throws TraceError when it cannot write.
void write_pack_index(const std::string& path, std::span<const PackEntry> entries);
// Throws TraceError (one line naming the file) when it is missing, cut short, not an index or
// not of `ranks` ranks.
std::vector<PackEntry> read_pack_index(const std::string& path, std::uint64_t ranks);

}  // namespace mstep
