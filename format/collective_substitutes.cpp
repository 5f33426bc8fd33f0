#include "format/collective_substitutes.hpp"

#include <array>

#include <fmt/format.h>

namespace mstep {

namespace {

// Each algorithm's name at its enumerator's value ("mpi", 0, first: the empty name is "mpi" too).
constexpr std::array<const char*, 5> kBcastNames{"mpi", "flat", "binomial", "esssp", "auto"};
constexpr std::array<const char*, 4> kAllreduceNames{"mpi", "recursive_doubling", "reduce_scatter_allgather", "pt2pt"};
constexpr std::array<const char*, 5> kAlltoallNames{"mpi", "bruck", "scattered", "pairwise", "pt2pt"};
constexpr std::array<const char*, 5> kAllgatherNames{"mpi", "recursive_doubling", "bruck", "ring", "pt2pt"};
constexpr std::array<const char*, 4> kReduceNames{"mpi", "binomial", "reduce_scatter_gather", "pt2pt"};
constexpr std::array<const char*, 2> kRootedNames{"mpi", "pt2pt"};
constexpr std::array<const char*, 4> kReduceScatterNames{"mpi", "recursive_halving", "pairwise", "pt2pt"};
static_assert(static_cast<std::size_t>(BcastAlgo::Auto) + 1 == kBcastNames.size());
static_assert(static_cast<std::size_t>(AllreduceAlgo::Pt2pt) + 1 == kAllreduceNames.size());
static_assert(static_cast<std::size_t>(AlltoallAlgo::Pt2pt) + 1 == kAlltoallNames.size());
static_assert(static_cast<std::size_t>(AllgatherAlgo::Pt2pt) + 1 == kAllgatherNames.size());
static_assert(static_cast<std::size_t>(ReduceAlgo::Pt2pt) + 1 == kReduceNames.size());
static_assert(static_cast<std::size_t>(RootedAlgo::Pt2pt) + 1 == kRootedNames.size());
static_assert(static_cast<std::size_t>(ReduceScatterAlgo::Pt2pt) + 1 == kReduceScatterNames.size());

template <class Algo, std::size_t N>
std::optional<Algo> parse_in(const std::array<const char*, N>& names, std::string_view name) {
  if (name.empty()) return Algo{};
  for (std::size_t i = 0; i < N; ++i)
    if (name == names[i]) return static_cast<Algo>(i);
  return std::nullopt;
}

template <class Algo, std::size_t N>
const char* name_in(const std::array<const char*, N>& names, Algo a) {
  const auto i = static_cast<std::size_t>(a);
  return i < N ? names[i] : "mpi";
}

}  // namespace

std::optional<BcastAlgo> parse_bcast_name(std::string_view name) { return parse_in<BcastAlgo>(kBcastNames, name); }
std::optional<AllreduceAlgo> parse_allreduce_name(std::string_view name) {
  return parse_in<AllreduceAlgo>(kAllreduceNames, name);
}
std::optional<AlltoallAlgo> parse_alltoall_name(std::string_view name) {
  return parse_in<AlltoallAlgo>(kAlltoallNames, name);
}
std::optional<AllgatherAlgo> parse_allgather_name(std::string_view name) {
  return parse_in<AllgatherAlgo>(kAllgatherNames, name);
}
std::optional<ReduceAlgo> parse_reduce_name(std::string_view name) { return parse_in<ReduceAlgo>(kReduceNames, name); }
std::optional<RootedAlgo> parse_rooted_name(std::string_view name) { return parse_in<RootedAlgo>(kRootedNames, name); }
std::optional<ReduceScatterAlgo> parse_reduce_scatter_name(std::string_view name) {
  return parse_in<ReduceScatterAlgo>(kReduceScatterNames, name);
}

std::optional<BarrierName> parse_barrier_name(std::string_view name) {
  if (name.empty() || name == "mpi") return BarrierName{BarrierAlgo::Mpi, 0};
  if (name == "central") return BarrierName{BarrierAlgo::Central, 0};
  if (name == "dissemination") return BarrierName{BarrierAlgo::Dissemination, 0};
  if (name == "auto") return BarrierName{BarrierAlgo::Auto, 0};
  if (!name.starts_with("tree:")) return std::nullopt;
  const std::string_view digits = name.substr(5);
  if (digits.empty() || digits.size() > 3) return std::nullopt;
  int v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  // At most 255: libmstep packs the arity in 8 bits beside the private communicator.
  if (v < 2 || v > 255) return std::nullopt;
  return BarrierName{BarrierAlgo::Tree, v};
}

std::string barrier_name(BarrierName b) {
  switch (b.algo) {
    case BarrierAlgo::Mpi: return "mpi";
    case BarrierAlgo::Central: return "central";
    case BarrierAlgo::Tree: return fmt::format("tree:{}", b.arity);
    case BarrierAlgo::Dissemination: return "dissemination";
    case BarrierAlgo::Auto: return "auto";
  }
  return "mpi";
}

const char* bcast_name(BcastAlgo a) { return name_in(kBcastNames, a); }
const char* allreduce_name(AllreduceAlgo a) { return name_in(kAllreduceNames, a); }
const char* alltoall_name(AlltoallAlgo a) { return name_in(kAlltoallNames, a); }
const char* allgather_name(AllgatherAlgo a) { return name_in(kAllgatherNames, a); }
const char* reduce_name(ReduceAlgo a) { return name_in(kReduceNames, a); }
const char* rooted_name(RootedAlgo a) { return name_in(kRootedNames, a); }
const char* reduce_scatter_name(ReduceScatterAlgo a) { return name_in(kReduceScatterNames, a); }

}  // namespace mstep
