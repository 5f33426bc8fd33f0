// The one grammar of substitute collective names (format/collective_substitutes.hpp), read back as
// written, and what it refuses.
#include <catch2/catch.hpp>

#include "format/collective_substitutes.hpp"

using namespace mstep;

TEST_CASE("substitute names: every name reads back as written", "[substitute]") {
  for (const char* name : {"mpi", "central", "tree:2", "tree:255", "dissemination", "auto"}) {
    const auto b = parse_barrier_name(name);
    REQUIRE(b);
    CHECK(barrier_name(*b) == name);
  }
  for (const char* name : {"mpi", "flat", "binomial", "esssp", "auto"}) {
    const auto c = parse_bcast_name(name);
    REQUIRE(c);
    CHECK(std::string(bcast_name(*c)) == name);
  }
  CHECK(parse_barrier_name("")->algo == BarrierAlgo::Mpi);
  CHECK(parse_barrier_name("tree:16")->arity == 16);
  CHECK(*parse_bcast_name("") == BcastAlgo::Mpi);
  for (const char* name : {"mpi", "recursive_doubling", "reduce_scatter_allgather", "pt2pt"}) {
    const auto a = parse_allreduce_name(name);
    REQUIRE(a);
    CHECK(std::string(allreduce_name(*a)) == name);
  }
  CHECK(*parse_allreduce_name("") == AllreduceAlgo::Mpi);
  CHECK(*parse_allreduce_name("pt2pt") == AllreduceAlgo::Pt2pt);
  for (const char* name : {"mpi", "recursive_doubling", "bruck", "ring", "pt2pt"}) {
    const auto a = parse_allgather_name(name);
    REQUIRE(a);
    CHECK(std::string(allgather_name(*a)) == name);
  }
  for (const char* name : {"mpi", "binomial", "reduce_scatter_gather", "pt2pt"}) {
    const auto r = parse_reduce_name(name);
    REQUIRE(r);
    CHECK(std::string(reduce_name(*r)) == name);
  }
  for (const char* name : {"mpi", "pt2pt"}) {
    const auto r = parse_rooted_name(name);
    REQUIRE(r);
    CHECK(std::string(rooted_name(*r)) == name);
  }
  CHECK(*parse_allgather_name("") == AllgatherAlgo::Mpi);
  CHECK(*parse_reduce_name("") == ReduceAlgo::Mpi);
  CHECK(*parse_rooted_name("") == RootedAlgo::Mpi);
  for (const char* name : {"mpi", "recursive_halving", "pairwise", "pt2pt"}) {
    const auto r = parse_reduce_scatter_name(name);
    REQUIRE(r);
    CHECK(std::string(reduce_scatter_name(*r)) == name);
  }
  CHECK(*parse_reduce_scatter_name("") == ReduceScatterAlgo::Mpi);
}

TEST_CASE("substitute names: what is not in the grammar", "[substitute]") {
  for (const char* name : {"tree:1", "tree:256", "tree:", "tree:4x", "tree:0004", "Central", "dissemination "})
    CHECK_FALSE(parse_barrier_name(name));
  for (const char* name : {"Auto", "essp", "FLAT"}) CHECK_FALSE(parse_bcast_name(name));
  for (const char* name : {"auto", "rabenseifner", "Pt2pt", "recursive-doubling"}) CHECK_FALSE(parse_allreduce_name(name));
  for (const char* name : {"auto", "rd", "scattered", "Ring"}) CHECK_FALSE(parse_allgather_name(name));
  for (const char* name : {"rabenseifner", "tree", "Binomial"}) CHECK_FALSE(parse_reduce_name(name));
  for (const char* name : {"binomial", "linear", "PT2PT", " pt2pt"}) CHECK_FALSE(parse_rooted_name(name));
  for (const char* name : {"halving", "recursive_doubling", "Pairwise", "noncommutative"})
    CHECK_FALSE(parse_reduce_scatter_name(name));
}
