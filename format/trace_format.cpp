#include "format/trace_format.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>

namespace mstep {
namespace {

constexpr std::array<std::string_view, kOpCount> kOpNames = {
#define MSTEP_OP(name, role) #name,
#include "format/ops.def"
#undef MSTEP_OP
};

}  // namespace

std::string_view op_name(Op op) {
  const auto i = static_cast<std::size_t>(op);
  return i < kOpNames.size() ? kOpNames[i] : std::string_view{"?"};
}

std::string mpi_name(Op op) {
  if (op == Op::ToolFlush) return "mstep_flush";
  return "MPI_" + std::string(op_name(op));
}

Op blocking_collective(Op op) {
  switch (op) {
    case Op::Ibarrier: return Op::Barrier;
    case Op::Ibcast: return Op::Bcast;
    case Op::Iscatter: return Op::Scatter;
    case Op::Iscatterv: return Op::Scatterv;
    case Op::Ireduce: return Op::Reduce;
    case Op::Igather: return Op::Gather;
    case Op::Igatherv: return Op::Gatherv;
    case Op::Iallreduce: return Op::Allreduce;
    case Op::Iallgather: return Op::Allgather;
    case Op::Iallgatherv: return Op::Allgatherv;
    case Op::Ialltoall: return Op::Alltoall;
    case Op::Ialltoallv: return Op::Alltoallv;
    case Op::Ialltoallw: return Op::Alltoallw;
    case Op::Ireduce_scatter: return Op::Reduce_scatter;
    case Op::Ireduce_scatter_block: return Op::Reduce_scatter_block;
    case Op::Iscan: return Op::Scan;
    case Op::Iexscan: return Op::Exscan;
    case Op::Ineighbor_allgather: return Op::Neighbor_allgather;
    case Op::Ineighbor_allgatherv: return Op::Neighbor_allgatherv;
    case Op::Ineighbor_alltoall: return Op::Neighbor_alltoall;
    case Op::Ineighbor_alltoallv: return Op::Neighbor_alltoallv;
    case Op::Ineighbor_alltoallw: return Op::Neighbor_alltoallw;
    default: return op;
  }
}

bool is_nonblocking_collective(Op op) { return blocking_collective(op) != op; }

std::string rank_file_name(int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.mst", rank);
  return name;
}

bool is_rank_file_name(std::string_view name) {
  return name.size() >= 9 && name.substr(0, 5) == "rank-" && name.substr(name.size() - 4) == ".mst";
}

const CommDef* find_comm(std::span<const CommDef> comms, std::int64_t id) {
  const CommDef* def = nullptr;
  for (const CommDef& c : comms)
    if (c.id == id) def = &c;
  return def;
}

std::vector<std::int32_t> step_partners(const StepRecord& s, std::span<const CommDef> comms) {
  if (s.whole_comm == kNoWholeComm) return s.partners;
  const CommDef* def = find_comm(comms, s.whole_comm);
  if (!def) return s.partners;
  std::vector<std::int32_t> members;
  members.reserve(def->world_ranks.size());
  for (const std::int32_t m : def->world_ranks)
    if (m >= 0) members.push_back(m);
  std::sort(members.begin(), members.end());
  std::vector<std::int32_t> all;
  all.reserve(members.size() + s.partners.size());
  std::set_union(s.partners.begin(), s.partners.end(), members.begin(), members.end(), std::back_inserter(all));
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

}  // namespace mstep
