#include "model/import/otf2_clocks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "model/import/otf2_archive.hpp"

namespace mstep::model {
namespace {

bool all_to_all(OTF2_CollectiveOp op) {
  switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER: case OTF2_COLLECTIVE_OP_ALLGATHER: case OTF2_COLLECTIVE_OP_ALLGATHERV:
    case OTF2_COLLECTIVE_OP_ALLTOALL: case OTF2_COLLECTIVE_OP_ALLTOALLV: case OTF2_COLLECTIVE_OP_ALLTOALLW:
    case OTF2_COLLECTIVE_OP_ALLREDUCE: case OTF2_COLLECTIVE_OP_REDUCE_SCATTER:
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK:
      return true;
    default: return false;
  }
}

struct Call {
  OTF2_TimeStamp enter = 0, exit = 0;
};

// One rank's collectives of all ranks: the first and the last, and how many.
struct Scan {
  OTF2_CommRef world = 0;
  OTF2_TimeStamp entered = 0;
  bool in_one = false;
  std::optional<Call> first, last;
  std::uint64_t count = 0;
  OTF2_TimeStamp begin = std::numeric_limits<OTF2_TimeStamp>::max(), end = 0;  // the rank's first and last Enter/Leave
};

Scan& scan_of(void* d) { return *static_cast<Scan*>(d); }

}  // namespace

Otf2Clocks check_otf2_clocks(const std::string& anchor) {
  Otf2Clocks out;
  otf2::Definitions defs;
  const otf2::ReaderPtr reader = otf2::open(anchor, defs);
  const std::optional<OTF2_CommRef> world = otf2::world_comm(defs);
  const std::size_t P = defs.mpi_locations.size();
  if (!world || P < 2) return out;
  OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetEnterCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* d, OTF2_AttributeList*, OTF2_RegionRef) {
    Scan& s = scan_of(d);
    s.entered = t;
    s.begin = std::min(s.begin, t);
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d,
                                                             OTF2_AttributeList*, OTF2_CollectiveOp op, OTF2_CommRef c,
                                                             uint32_t, uint64_t, uint64_t) {
    Scan& s = scan_of(d);
    s.in_one = c == s.world && all_to_all(op);
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* d, OTF2_AttributeList*, OTF2_RegionRef) {
    Scan& s = scan_of(d);
    s.end = std::max(s.end, t);
    if (!s.in_one) return OTF2_CALLBACK_SUCCESS;
    s.in_one = false;
    const Call call{s.entered, t};
    if (!s.first) s.first = call;
    s.last = call;
    ++s.count;
    return OTF2_CALLBACK_SUCCESS;
  });
  std::vector<Scan> scans(P);
  otf2::read_ranks(
      reader.get(), defs, anchor, cb,
      [&](int rank) -> void* {
        scans[static_cast<std::size_t>(rank)].world = *world;
        return &scans[static_cast<std::size_t>(rank)];
      },
      [](int, std::uint64_t) {});
  OTF2_EvtReaderCallbacks_Delete(cb);
  for (const Scan& s : scans)
    if (!s.first) return out;  // a rank without one: nothing to tell the clocks by

  // The clocks disagree where a member left a collective before another entered it.
  auto disagreement = [&](bool last) {
    OTF2_TimeStamp latest_entry = 0, earliest_exit = std::numeric_limits<OTF2_TimeStamp>::max();
    std::size_t late = 0, early = 0;
    for (std::size_t r = 0; r < P; ++r) {
      const Call& c = last ? *scans[r].last : *scans[r].first;
      if (c.enter >= latest_entry) latest_entry = c.enter, late = r;
      if (c.exit < earliest_exit) earliest_exit = c.exit, early = r;
    }
    return std::make_tuple(latest_entry > earliest_exit ? latest_entry - earliest_exit : 0, early, late);
  };
  const bool same_count = std::all_of(scans.begin(), scans.end(), [&](const Scan& s) { return s.count == scans[0].count; });
  const auto [gap, early, late] = disagreement(false);
  const auto [gap_last, early_last, late_last] = same_count ? disagreement(true) : std::make_tuple(OTF2_TimeStamp{0}, std::size_t{0}, std::size_t{0});
  if (gap == 0 && gap_last == 0) return out;

  const double ns_per_tick = 1e9 / static_cast<double>(defs.resolution);
  auto ns = [&](OTF2_TimeStamp t) { return static_cast<std::int64_t>(std::llround(static_cast<double>(t) * ns_per_tick)); };
  out.aligned = true;
  out.samples.resize(P);
  auto align_at = [&](bool last, ClockSync::When when) {
    OTF2_TimeStamp ref = 0;
    for (const Scan& s : scans) ref = std::max(ref, (last ? *s.last : *s.first).exit);
    for (std::size_t r = 0; r < P; ++r) {
      const OTF2_TimeStamp exit = (last ? *scans[r].last : *scans[r].first).exit;
      out.samples[r].push_back(ClockSync{when, exit, ns(exit), ns(ref) - ns(exit), 0});
    }
  };
  align_at(false, ClockSync::AtInit);
  // A drift only from collectives far apart: two close together (the end of a run) would
  // extrapolate their noise over the whole run.
  const bool two = same_count && scans[0].count > 1 && std::all_of(scans.begin(), scans.end(), [](const Scan& s) {
    return 2 * (s.last->exit - s.first->exit) >= s.end - s.begin;
  });
  if (two) align_at(true, ClockSync::AtFinalize);
  const auto [shown_gap, shown_early, shown_late] = gap >= gap_last ? std::make_tuple(gap, early, late)
                                                                   : std::make_tuple(gap_last, early_last, late_last);
  out.why = fmt::format("the archive's clocks disagree (rank {} left a collective of all ranks {:.3g} us before rank {} "
                        "entered it): each rank's clock is moved so that all leave the first{} together",
                        shown_early, static_cast<double>(shown_gap) * ns_per_tick * 1e-3, shown_late,
                        two ? " and the last" : "");
  return out;
}

}  // namespace mstep::model
