// MSTEP_BARRIER, MSTEP_BCAST, MSTEP_ALLREDUCE, MSTEP_ALLTOALL, MSTEP_GATHER, MSTEP_SCATTER,
// MSTEP_ALLGATHER, MSTEP_REDUCE, MSTEP_REDUCE_SCATTER and MSTEP_SCAN as read at MPI_Init, and the
// parameter file that auto and esssp need (interpose/substitute.hpp).
#include <cmath>
#include <fstream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "interpose/substitute.hpp"

namespace mstep {

SubstituteSettings parse_substitute_settings(const char* barrier, const char* bcast, const char* allreduce,
                                             const char* alltoall, const char* gather, const char* scatter,
                                             const char* allgather, const char* reduce,
                                             const char* reduce_scatter, const char* scan) {
  SubstituteSettings s;
  const std::string_view b = barrier ? barrier : "", c = bcast ? bcast : "", a = allreduce ? allreduce : "";
  const std::string_view t = alltoall ? alltoall : "", g = gather ? gather : "", sc = scatter ? scatter : "";
  const std::optional<BarrierName> bn = parse_barrier_name(b);
  const std::optional<BcastAlgo> cn = parse_bcast_name(c);
  const std::optional<AllreduceAlgo> an = parse_allreduce_name(a);
  const std::optional<AlltoallAlgo> tn = parse_alltoall_name(t);
  const std::string_view ag = allgather ? allgather : "";
  const std::optional<AllgatherAlgo> agn = parse_allgather_name(ag);
  const std::string_view rd = reduce ? reduce : "";
  const std::optional<ReduceAlgo> rdn = parse_reduce_name(rd);
  const std::optional<RootedAlgo> gn = parse_rooted_name(g), sn = parse_rooted_name(sc);
  const std::string_view rs = reduce_scatter ? reduce_scatter : "";
  const std::optional<ReduceScatterAlgo> rsn = parse_reduce_scatter_name(rs);
  const std::string_view sa = scan ? scan : "";
  const std::optional<RootedAlgo> san = parse_rooted_name(sa);
  if (!bn)
    s.error = fmt::format("MSTEP_BARRIER='{}' is not mpi, central, tree:N (2 <= N <= 255), dissemination or auto", b);
  else if (!cn)
    s.error = fmt::format("MSTEP_BCAST='{}' is not mpi, flat, binomial, esssp or auto", c);
  else if (!an)
    s.error = fmt::format("MSTEP_ALLREDUCE='{}' is not mpi, recursive_doubling, reduce_scatter_allgather or pt2pt", a);
  else if (!tn)
    s.error = fmt::format("MSTEP_ALLTOALL='{}' is not mpi, bruck, scattered, pairwise or pt2pt", t);
  else if (!agn)
    s.error = fmt::format("MSTEP_ALLGATHER='{}' is not mpi, recursive_doubling, bruck, ring or pt2pt", ag);
  else if (!rdn)
    s.error = fmt::format("MSTEP_REDUCE='{}' is not mpi, binomial, reduce_scatter_gather or pt2pt", rd);
  else if (!gn)
    s.error = fmt::format("MSTEP_GATHER='{}' is not mpi or pt2pt", g);
  else if (!sn)
    s.error = fmt::format("MSTEP_SCATTER='{}' is not mpi or pt2pt", sc);
  else if (!rsn)
    s.error = fmt::format("MSTEP_REDUCE_SCATTER='{}' is not mpi, recursive_halving, pairwise or pt2pt", rs);
  else if (!san)
    s.error = fmt::format("MSTEP_SCAN='{}' is not mpi or pt2pt", sa);
  else
    s.scan = *san, s.reduce_scatter = *rsn, s.barrier = bn->algo, s.tree_arity = bn->algo == BarrierAlgo::Tree ? bn->arity : s.tree_arity, s.bcast = *cn,
    s.allreduce = *an, s.alltoall = *tn, s.gather = *gn, s.scatter = *sn, s.allgather = *agn, s.reduce = *rdn;
  return s;
}

bool read_params_for(const std::string& path, const char* setting, bool full, SubstituteSettings& s) {
  std::ifstream in(path);
  if (!in) {
    s.error = fmt::format("{} needs calibrated parameters: cannot read {} (set MSTEP_PARAMS=FILE of mstep calibrate)",
                          setting, path.empty() ? std::string("~/.config/mstep/params.json") : path);
    return false;
  }
  const auto size = [](const nlohmann::json& v) {
    return v.is_null() ? model::kInfiniteBytes : v.get<std::uint64_t>();
  };
  try {
    const auto j = nlohmann::json::parse(in);
    model::LogGPSParams& p = s.loggps;
    p.L = j.at("L").get<double>(), p.o = j.at("o").get<double>(), p.g = j.at("g").get<double>();
    if (full) {
      p.Os = j.at("Os").get<double>(), p.Or = j.at("Or").get<double>();
      p.Gs = j.at("Gs").get<double>(), p.Gl = j.at("Gl").get<double>();
      p.s = size(j.at("s")), p.S = size(j.at("S"));
    }
    // MPICH's own collectives as calibrated (older parameter files have none, and a damaged entry
    // counts as none: auto then weighs their messages alone; `mstep report` names the damage).
    if (j.contains("collectives")) {
      try {
        for (auto& [op, times] : model::read_collective_times(j.at("collectives"), path))
          if (op == Op::Barrier || op == Op::Bcast) s.mpich.emplace(op, std::move(times));
      } catch (const std::exception&) {
        s.mpich.clear();
      }
    }
  } catch (const std::exception&) {
    s.error = fmt::format("{}: {} has no numbers {}", setting, path, full ? "L, o, Os, Or, g, Gs, Gl, s and S" : "L, o and g");
    return false;
  }
  const model::LogGPSParams& p = s.loggps;
  if (!(p.L >= 0 && p.o >= 0 && p.g >= 0 && std::isfinite(p.L + p.o + p.g))) {
    s.error = fmt::format("{}: L, o and g of {} must be finite and not negative", setting, path);
    return false;
  }
  return true;
}

}  // namespace mstep
