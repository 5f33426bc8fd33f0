// Another tool's OTF2 archive (Score-P, EZTrace 2, mstep export --otf2) as an mstep trace
// directory, so that every mstep command runs on it. Read with Debian's libotf2 one MPI rank
// (location) at a time and written by write_rank_trace, whose step tracker infers the M-steps and
// partner sets as libmstep does at run time.
//
// What becomes what:
//   - MPI ranks are the locations of the COMM_LOCATIONS group, in its order; other locations
//     (threads, devices, metrics) are skipped;
//   - an Enter/Leave pair of a region named like an MPI function mstep records (format/ops.def)
//     is one call; its MpiSend/MpiIsend/MpiRecv/MpiIrecv/MpiIrecvRequest/MpiIsendComplete and
//     MpiCollectiveEnd events become its records (a Sendrecv's send and receive, a Waitall's
//     completions), partners turned from communicator ranks into world ranks, OTF2's request ids
//     into the rank's own; an Irecv takes the source and tag of the message that completed it;
//   - communicators are the archive's Comm definitions whose group holds the rank, numbered per
//     rank in definition order with MPI_COMM_WORLD first;
//   - time: the archive's timestamps as nanoseconds (whatever its timer resolution); where its ranks' clocks disagree (a
//     collective of all ranks left by one before another entered it: EZTrace), each rank's clock
//     is aligned at those collectives (model/import/otf2_clocks.hpp) unless `keep_clocks`;
//   - a rank whose archive has no MPI_Init (MPI_Finalize) gets one ending at (starting at) its
//     first (last) event of any kind: EZTrace starts tracing inside MPI_Init.
// Everything else is counted by kind in `skipped`: regions that are not MPI calls mstep models
// (user functions, MPI_Comm_rank, ...), events of other kinds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mstep::model {

struct Otf2ImportSummary {
  int ranks = 0;
  std::uint64_t records = 0;
  std::string creator;
  double ticks_per_second = 0;  // the archive's timer resolution (the trace's ticks are ns)
  int synthesized = 0;          // MPI_Init/MPI_Finalize records added (the archive had none)
  std::string clocks;           // how the ranks' clocks were aligned (model/import/otf2_clocks.hpp); "" if not
  std::map<std::string, std::uint64_t> skipped;  // kind -> count
};

// `anchor`: the archive's .otf2 anchor file, or a directory holding exactly one. Writes rank files
// (and nothing else) into `out_dir`, which must exist. Throws Otf2Error (model/export/otf2.hpp) on
// an archive libotf2 cannot read or one without MPI ranks.
Otf2ImportSummary import_otf2(const std::string& anchor, const std::string& out_dir, bool keep_clocks = false);

// The anchor file `anchor` names (itself, or the one .otf2 file in that directory); throws
// Otf2Error when there is none or more than one.
std::string otf2_anchor(const std::string& anchor);

}  // namespace mstep::model
