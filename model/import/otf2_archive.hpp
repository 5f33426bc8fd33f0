// Reading an OTF2 archive with libotf2 (model/import's own): its global definitions, and every MPI
// rank's events one location at a time. Used by the importer and by its clock check.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <otf2/otf2.h>

namespace mstep::model::otf2 {

// Throws Otf2Error naming `what` and libotf2's error.
void check(OTF2_ErrorCode code, const char* what);

struct ReaderCloser {
  void operator()(OTF2_Reader* r) const noexcept { OTF2_Reader_Close(r); }
};
using ReaderPtr = std::unique_ptr<OTF2_Reader, ReaderCloser>;

// What the global definitions say.
struct Definitions {
  std::unordered_map<OTF2_StringRef, std::string> strings;
  std::unordered_map<OTF2_RegionRef, OTF2_StringRef> region_name;
  struct Group {
    OTF2_GroupType type{};
    std::vector<std::uint64_t> members;
  };
  std::unordered_map<OTF2_GroupRef, Group> groups;
  std::vector<std::pair<OTF2_CommRef, OTF2_GroupRef>> comms;  // in definition order
  std::vector<std::uint64_t> mpi_locations;                    // world rank -> location
  std::uint64_t resolution = 1'000'000'000;
  std::string creator;
};

// Opens the archive `anchor` (libotf2's own error printing silenced) and reads its definitions;
// Otf2Error when it cannot, or when the archive has no MPI ranks.
ReaderPtr open(const std::string& anchor, Definitions& defs);

// The world ranks of a communicator's group, in communicator rank order ({rank} for COMM_SELF).
std::vector<std::int32_t> members(const Definitions& defs, OTF2_GroupRef group, std::int32_t rank);
// MPI_COMM_WORLD: the first communicator whose members are all ranks in order.
std::optional<OTF2_CommRef> world_comm(const Definitions& defs);

// Reads every MPI rank's events in rank order, one location at a time, with `callbacks`: `begin`
// gives the user data for a rank's callbacks, `end` is told how many events were read.
void read_ranks(OTF2_Reader* reader, const Definitions& defs, const std::string& anchor, OTF2_EvtReaderCallbacks* callbacks,
                const std::function<void*(int rank)>& begin, const std::function<void(int rank, std::uint64_t events)>& end);

}  // namespace mstep::model::otf2
