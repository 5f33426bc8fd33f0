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

// One rank's collectives of all ranks, in call order.
struct Scan {
  OTF2_CommRef world = 0;
  OTF2_TimeStamp entered = 0;
  bool in_one = false;
  std::vector<Call> calls;
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
    scan_of(d).entered = t;
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
    if (s.in_one) s.calls.push_back({s.entered, t}), s.in_one = false;
    return OTF2_CALLBACK_SUCCESS;
  });
  // Rank r's offset d (added to its clock, rank 0's is 0) must let every member leave each such
  // collective after the last one entered it: d >= enter0 - exit_r and d <= exit0 - enter_r, for
  // every instance k (the k-th on every member). Each rank is compared with rank 0 as it is read,
  // so only rank 0's list is kept.
  constexpr double kNone = std::numeric_limits<double>::infinity();
  std::vector<double> lo(P, -kNone), hi(P, kNone);
  Scan rank0, other;
  bool missing = false;
  otf2::read_ranks(
      reader.get(), defs, anchor, cb,
      [&](int rank) -> void* {
        Scan& s = rank == 0 ? rank0 : other;
        s = Scan{};
        s.world = *world;
        return &s;
      },
      [&](int rank, std::uint64_t) {
        if (rank == 0) {
          missing = missing || rank0.calls.empty();
          return;
        }
        const std::size_t n = std::min(rank0.calls.size(), other.calls.size());
        missing = missing || n == 0;
        for (std::size_t k = 0; k < n; ++k) {
          const Call &a = rank0.calls[k], &b = other.calls[k];
          lo[static_cast<std::size_t>(rank)] = std::max(lo[static_cast<std::size_t>(rank)], static_cast<double>(a.enter) - static_cast<double>(b.exit));
          hi[static_cast<std::size_t>(rank)] = std::min(hi[static_cast<std::size_t>(rank)], static_cast<double>(a.exit) - static_cast<double>(b.enter));
        }
      });
  OTF2_EvtReaderCallbacks_Delete(cb);
  if (missing) return out;  // a rank without one: nothing to tell the clocks by
  std::size_t worst = 0;
  double worst_gap = 0;  // ticks by which the archive's own clocks break the rule
  for (std::size_t r = 1; r < P; ++r) {
    const double gap = std::max(lo[r], -hi[r]);
    if (gap > worst_gap) worst_gap = gap, worst = r;
  }
  if (worst_gap <= 0) return out;
  // The middle of each rank's interval (of the bounds' middle, should the intervals cross: the
  // clocks drift, or the archive's collectives overlap).
  const double ns_per_tick = 1e9 / static_cast<double>(defs.resolution);
  out.aligned = true;
  out.samples.resize(P);
  for (std::size_t r = 0; r < P; ++r) {
    const double offset_ticks = r == 0 ? 0.0 : (lo[r] + hi[r]) / 2;
    out.samples[r].push_back(ClockSync{ClockSync::AtInit, 0, 0, static_cast<std::int64_t>(std::llround(offset_ticks * ns_per_tick)), 0});
  }
  out.why = fmt::format("the archive's clocks disagree (by {:.3g} us between ranks 0 and {} at a collective of all ranks, "
                        "left by one before the other entered it): each rank's clock is moved to the middle of what its "
                        "collectives with rank 0 allow ({:.3g} us wide for rank {})",
                        worst_gap * ns_per_tick * 1e-3, worst, (hi[worst] - lo[worst]) * ns_per_tick * 1e-3, worst);
  return out;
}

}  // namespace mstep::model
