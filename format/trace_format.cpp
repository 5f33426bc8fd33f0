#include "format/trace_format.hpp"

#include <array>
#include <cstdio>

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

bool op_valid(std::uint8_t code) { return code < kOpCount; }

std::string rank_file_name(int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.mst", rank);
  return name;
}

}  // namespace mstep
