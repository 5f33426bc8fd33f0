#include "model/import/otf2_archive.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "model/export/otf2.hpp"

namespace mstep::model::otf2 {
namespace {

OTF2_ErrorCode quiet(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char*, va_list) { return code; }

}  // namespace

void check(OTF2_ErrorCode code, const char* what) {
  if (code != OTF2_SUCCESS) throw Otf2Error(fmt::format("OTF2 {}: {}: {}", what, OTF2_Error_GetName(code), OTF2_Error_GetDescription(code)));
}

ReaderPtr open(const std::string& anchor, Definitions& defs) {
  OTF2_Error_RegisterCallback(quiet, nullptr);
  ReaderPtr reader(OTF2_Reader_Open(anchor.c_str()));
  if (!reader) throw Otf2Error(fmt::format("{} is not an OTF2 archive libotf2 can open", anchor));
  check(OTF2_Reader_SetSerialCollectiveCallbacks(reader.get()), "SetSerialCollectiveCallbacks");
  {
    char* creator = nullptr;
    if (OTF2_Reader_GetCreator(reader.get(), &creator) == OTF2_SUCCESS && creator) defs.creator = creator, std::free(creator);
  }
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(reader.get());
  if (!gdr) throw Otf2Error(fmt::format("{}: no global definitions", anchor));
  OTF2_GlobalDefReaderCallbacks* gcb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(gcb, [](void* d, OTF2_StringRef self, const char* s) {
    static_cast<Definitions*>(d)->strings[self] = s ? s : "";
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(gcb, [](void* d, uint64_t resolution, uint64_t, uint64_t, uint64_t) {
    if (resolution) static_cast<Definitions*>(d)->resolution = resolution;
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(gcb, [](void* d, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef,
                                                          OTF2_StringRef, OTF2_RegionRole, OTF2_Paradigm, OTF2_RegionFlag,
                                                          OTF2_StringRef, uint32_t, uint32_t) {
    static_cast<Definitions*>(d)->region_name[self] = name;
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(gcb, [](void* d, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
                                                         OTF2_Paradigm paradigm, OTF2_GroupFlag, uint32_t n, const uint64_t* members) {
    auto& known = *static_cast<Definitions*>(d);
    known.groups[self] = {type, std::vector<std::uint64_t>(members, members + n)};
    if (type == OTF2_GROUP_TYPE_COMM_LOCATIONS && paradigm == OTF2_PARADIGM_MPI) known.mpi_locations.assign(members, members + n);
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(gcb, [](void* d, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group,
                                                        OTF2_CommRef, OTF2_CommFlag) {
    static_cast<Definitions*>(d)->comms.emplace_back(self, group);
    return OTF2_CALLBACK_SUCCESS;
  });
  check(OTF2_Reader_RegisterGlobalDefCallbacks(reader.get(), gdr, gcb, &defs), "RegisterGlobalDefCallbacks");
  OTF2_GlobalDefReaderCallbacks_Delete(gcb);
  std::uint64_t read = 0;
  check(OTF2_Reader_ReadAllGlobalDefinitions(reader.get(), gdr, &read), "ReadAllGlobalDefinitions");
  OTF2_Reader_CloseGlobalDefReader(reader.get(), gdr);
  if (defs.mpi_locations.empty())
    throw Otf2Error(fmt::format("{} has no MPI ranks (no COMM_LOCATIONS group of paradigm MPI)", anchor));

  return reader;
}

std::vector<std::int32_t> members(const Definitions& defs, OTF2_GroupRef group, std::int32_t rank) {
  std::vector<std::int32_t> out;
  const auto it = defs.groups.find(group);
  if (it == defs.groups.end()) return out;
  if (it->second.type == OTF2_GROUP_TYPE_COMM_SELF) return {rank};
  for (const std::uint64_t m : it->second.members) out.push_back(static_cast<std::int32_t>(m));
  return out;
}

std::optional<OTF2_CommRef> world_comm(const Definitions& defs) {
  const auto P = static_cast<std::int32_t>(defs.mpi_locations.size());
  for (const auto& [comm, group] : defs.comms) {
    const std::vector<std::int32_t> m = members(defs, group, 0);
    if (static_cast<std::int32_t>(m.size()) == P && std::is_sorted(m.begin(), m.end()) && (m.empty() || (m.front() == 0 && m.back() == P - 1)))
      return comm;
  }
  return std::nullopt;
}

void read_ranks(OTF2_Reader* reader, const Definitions& defs, const std::string& anchor, OTF2_EvtReaderCallbacks* callbacks,
                const std::function<void*(int rank)>& begin, const std::function<void(int rank, std::uint64_t events)>& end) {
  for (const std::uint64_t loc : defs.mpi_locations) check(OTF2_Reader_SelectLocation(reader, loc), "SelectLocation");
  const bool local_defs = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  check(OTF2_Reader_OpenEvtFiles(reader), "OpenEvtFiles");
  for (std::size_t rank = 0; rank < defs.mpi_locations.size(); ++rank) {
    const std::uint64_t loc = defs.mpi_locations[rank];
    if (local_defs) {
      // Mapping tables of the local definitions (Score-P), applied by libotf2 to the events.
      if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader, loc)) {
        std::uint64_t n = 0;
        OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &n);
        OTF2_Reader_CloseDefReader(reader, dr);
      }
    }
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader, loc);
    if (!er) throw Otf2Error(fmt::format("{}: no events of rank {} (location {})", anchor, rank, loc));
    check(OTF2_Reader_RegisterEvtCallbacks(reader, er, callbacks, begin(static_cast<int>(rank))), "RegisterEvtCallbacks");
    std::uint64_t n = 0;
    check(OTF2_Reader_ReadAllLocalEvents(reader, er, &n), "ReadAllLocalEvents");
    OTF2_Reader_CloseEvtReader(reader, er);
    end(static_cast<int>(rank), n);
  }
  OTF2_Reader_CloseEvtFiles(reader);
  if (local_defs) OTF2_Reader_CloseDefFiles(reader);
}

}  // namespace mstep::model::otf2
