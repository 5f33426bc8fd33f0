// A trace as an OTF2 archive (the Open Trace Format 2 of Score-P, Scalasca, Vampir and Cube),
// written with Debian's libotf2, one rank at a time (a rank's records are read a frame at a time
// and its event writer closed before the next: memory holds one rank's buffer, not the trace).
//   - a location (CPU thread) per rank in a location group (process) per rank, under one system
//     tree node; a rank that made MPI calls from several threads gets a location per thread
//     (its first thread stands for the rank in MPI_COMM_WORLD's locations); MPI_COMM_WORLD's locations as the COMM_LOCATIONS group, every communicator as
//     a COMM_GROUP of world ranks and a Comm;
//   - a region per MPI function (paradigm MPI, role point-to-point, barrier or collective) and
//     one for mstep's trace flushes (paradigm measurement system), Enter/Leave around each call;
//   - MpiSend/MpiIsend at a send's entry, MpiRecv at a receive's exit, MpiIrecvRequest at an
//     Irecv and MpiIrecv/MpiIsendComplete at the Wait/Test that completed it; collectives as
//     MpiCollectiveBegin/End with their operation, communicator, root and bytes. Partners are
//     ranks in the record's communicator, as OTF2 wants.
//   - timestamps: nanoseconds (timer resolution 1e9) on the common timeline
//     (model/trace/timeline.hpp) after the earliest record, clock properties to match.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "format/rank_trace.hpp"

namespace mstep::model {

struct Otf2Summary {
  std::uint64_t events = 0;            // OTF2 event records written
  std::uint64_t calls = 0;             // MPI calls (Enter/Leave pairs), flushes included
  std::uint64_t sends = 0, receives = 0, collectives = 0;
  // Messages and collectives on intercommunicators, written as their calls' Enter/Leave alone
  // (OTF2's InterComm definitions are not written yet).
  std::uint64_t skipped = 0;
  std::vector<std::string> problems;   // damaged files met while reading (their records stop there)
};

// libotf2 refused (its error name and description), or a file could not be written.
class Otf2Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes the archive `directory`/traces.otf2 (with traces.def and traces/). `metas[r]` (null: no
// trace of rank r) holds rank r's definitions and clock samples (read_rank_metadata); its records
// are read from `files[r]` (a frame at a time; a rank of several threads whole).
Otf2Summary write_otf2(std::span<const RankTrace* const> metas, std::span<const std::string> files,
                       const std::string& directory);

}  // namespace mstep::model
