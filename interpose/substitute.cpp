#include "interpose/substitute.hpp"

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "interpose/substitute_allreduce.hpp"
#include "interpose/substitute_wire.hpp"
#include "interpose/wrap_common.hpp"
#include "model/cost/bcast_plan.hpp"
#include "model/cost/collectives.hpp"

namespace mstep {

Substitutes g_substitutes;

namespace {

// MPIR_Bcast_intra_binomial's schedule on relative ranks: receive from the parent at the lowest
// set bit of rel, then send to rel + mask for the masks below it (the root: below n rounded up).
int binomial_bcast(const Wire& w, void* buf, int count, MPI_Datatype type, int root, int me, int n) {
  Rc rc;
  const int rel = (me - root + n) % n;
  int mask = 1;
  while (mask < n) {
    if (rel & mask) {
      rc(w.recv(buf, count, type, (rel - mask + root) % n));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (rel + mask < n) rc(w.send(buf, count, type, (rel + mask + root) % n));
  return rc.rc;
}

int central_barrier(const Wire& w, int me, int n) {
  Rc rc;
  char token = 0;
  if (me != 0) {
    rc(w.send(&token, 0, MPI_BYTE, 0));
    rc(w.recv(&token, 0, MPI_BYTE, 0));
    return rc.rc;
  }
  for (int i = 1; i < n; ++i) rc(w.recv(&token, 0, MPI_BYTE, MPI_ANY_SOURCE));
  for (int i = 1; i < n; ++i) rc(w.send(&token, 0, MPI_BYTE, i));
  return rc.rc;
}

int tree_barrier(const Wire& w, int me, int n, int arity) {
  Rc rc;
  char token = 0;
  const long first = static_cast<long>(arity) * me + 1;
  for (long c = first; c < first + arity && c < n; ++c) rc(w.recv(&token, 0, MPI_BYTE, static_cast<int>(c)));
  if (me != 0) rc(w.send(&token, 0, MPI_BYTE, (me - 1) / arity));
  rc(binomial_bcast(w, &token, 0, MPI_BYTE, 0, me, n));
  return rc.rc;
}

int dissemination_barrier(const Wire& w, int me, int n) {
  Rc rc;
  for (int d = 1; d < n; d <<= 1) rc(w.exchange((me + d) % n, (me - d + n) % n));
  return rc.rc;
}

// One member's part of a broadcast schedule (model/cost/collectives.hpp's trees): whom it
// receives from and whom it sends to, in order. `kind` says which schedule it is.
struct TreePlan {
  enum Kind : std::uint8_t { Mpich, Binomial, Tree } kind = Mpich;
  int parent = -1;
  std::vector<int> children;
  static TreePlan of(Kind k) {
    TreePlan p;
    p.kind = k;
    return p;
  }
};

// The plans a thread made, in a small table indexed by communicator, root and size: a loop that
// broadcasts from the same roots (one, or every member in turn) on one communicator plans once per
// root and size; planning (the network, then the flat, binomial and E-SSSP trees) costs about a
// microsecond even at 2 ranks, more than the broadcast. Every member computes the same plan from
// the same inputs (the parameters, the pairs, the communicator's members, the root and the size).
// Forgotten when any private communicator is freed (g_freed_privates moves on), since a later one
// may reuse the handle.
std::atomic<std::uint64_t> g_freed_privates{0};
struct PlanCache {
  std::uint64_t freed = ~std::uint64_t{0};
  MPI_Comm pc = MPI_COMM_NULL;
  int root = -1;
  std::uint64_t bytes = 0;
  BcastAlgo algo = BcastAlgo::Mpi;
  TreePlan plan;
};
constexpr std::size_t kPlanSlots = 256;  // a power of two
constexpr std::size_t kPlanWays = 4;    // slots searched per key
thread_local std::array<PlanCache, kPlanSlots> g_plans;
thread_local std::uint32_t g_plan_victim = 0;
// The cached plan of these inputs, else the slot to plan them into. Four ways: with one, two keys
// of a rotating root that hash alike evicted each other on every call (a plan is an E-SSSP tree
// on the communicator: measured +0.8 us a broadcast at 16 ranks against MPICH's own).
PlanCache& plan_slot(MPI_Comm pc, int root, std::uint64_t bytes, std::uint64_t freed, BcastAlgo algo, bool& hit) {
  std::uint64_t h = static_cast<std::uint32_t>(pc) * 0x9E3779B97F4A7C15ull;
  h ^= static_cast<std::uint64_t>(static_cast<std::uint32_t>(root)) + 0x7F4A7C15ull + (h << 6) + (h >> 2);
  h ^= bytes + 0x165667B1ull + (h << 6) + (h >> 2);
  PlanCache* stale = nullptr;
  for (std::size_t i = 0; i < kPlanWays; ++i) {
    PlanCache& s = g_plans[(h + i) & (kPlanSlots - 1)];
    if (s.freed == freed && s.pc == pc && s.root == root && s.bytes == bytes && s.algo == algo) {
      hit = true;
      return s;
    }
    if (!stale && (s.freed != freed || s.pc == MPI_COMM_NULL)) stale = &s;
  }
  hit = false;
  return stale ? *stale : g_plans[(h + (g_plan_victim++ % kPlanWays)) & (kPlanSlots - 1)];
}

TreePlan member_plan(const model::BroadcastTree& tree, TreePlan::Kind kind, int me) {
  TreePlan p;
  p.kind = kind;
  const auto um = static_cast<std::size_t>(me);
  p.parent = tree.parent[um] == model::kNoParent ? -1 : static_cast<int>(tree.parent[um]);
  for (const std::uint32_t c : tree.children[um]) p.children.push_back(static_cast<int>(c));
  return p;
}

// model::plan_substitute_broadcast's choice for this member (the replay charges the same one):
// esssp, Mateescu and Taylor's E-SSSP tree with its labeling (the binomial tree where it does not
// reach every member); auto, model::auto_broadcast's choice, MPICH's own where it sees no clear
// gain, except under the delay apparatus, which MPICH's own collectives bypass: there libmstep's
// binomial tree (MPICH's schedule) runs, so that the choice is measured on the delayed network.
TreePlan plan_broadcast(BcastAlgo algo, const model::LogGPSParams& loggps, const model::CollectiveTable& mpich,
                        const CommInfo& comm, int root, int me, int n, std::uint64_t bytes) {
  const auto un = static_cast<std::uint32_t>(n);
  model::BroadcastNetwork net;
  if (model::substitute_broadcast_needs_network(algo, un, g_delay.on(), &mpich)) {
    std::vector<std::int32_t> world(un);
    for (int u = 0; u < n; ++u) world[static_cast<std::size_t>(u)] = comm.world_rank(u);
    net = model::substitute_network(loggps, world, g_delay.pairs(), bytes);
  }
  const model::SubstituteBroadcast plan =
      model::plan_substitute_broadcast(algo, net, un, static_cast<std::uint32_t>(root), bytes, g_delay.on(), &mpich);
  switch (plan.kind) {
    case model::SubstituteBroadcast::Tree: return member_plan(plan.tree, TreePlan::Tree, me);
    case model::SubstituteBroadcast::Binomial: return TreePlan::of(TreePlan::Binomial);
    case model::SubstituteBroadcast::Mpich: break;
  }
  return TreePlan::of(TreePlan::Mpich);
}

int tree_bcast(const Wire& w, const TreePlan& plan, void* buf, int count, MPI_Datatype type) {
  Rc rc;
  if (plan.parent >= 0) rc(w.recv(buf, count, type, plan.parent));
  for (const int c : plan.children) rc(w.send(buf, count, type, c));
  return rc.rc;
}

// The attribute's value packs the duplicate's handle (an int in the MPICH ABI) with the barrier
// chosen for it, so nothing is allocated: bits 0-31 the handle, 32-39 the algorithm, 40-47 the
// tree's arity.
void* as_value(MPI_Comm c, BarrierAlgo a, int arity) {
  const std::uint64_t v = static_cast<std::uint32_t>(c) | (std::uint64_t{static_cast<std::uint8_t>(a)} << 32) |
                          (std::uint64_t{static_cast<std::uint8_t>(arity)} << 40);
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(v));
}
MPI_Comm as_comm(void* v) {
  return static_cast<MPI_Comm>(static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(v) & 0xffffffffu));
}
BarrierAlgo algo_of(void* v) { return static_cast<BarrierAlgo>((reinterpret_cast<std::uintptr_t>(v) >> 32) & 0xff); }
int arity_of(void* v) { return static_cast<int>((reinterpret_cast<std::uintptr_t>(v) >> 40) & 0xff); }

int delete_private(MPI_Comm, int, void* value, void*) {
  MPI_Comm pc = as_comm(value);
  g_freed_privates.fetch_add(1, std::memory_order_relaxed);
  PMPI_Comm_free(&pc);
  return MPI_SUCCESS;
}

}  // namespace

void Substitutes::start(int world_rank, bool on_rank0_host) {
  settings_ = parse_substitute_settings(std::getenv("MSTEP_BARRIER"), std::getenv("MSTEP_BCAST"), std::getenv("MSTEP_ALLREDUCE"),
                                        std::getenv("MSTEP_ALLTOALL"), std::getenv("MSTEP_GATHER"), std::getenv("MSTEP_SCATTER"),
                                        std::getenv("MSTEP_ALLGATHER"), std::getenv("MSTEP_REDUCE"),
                                        std::getenv("MSTEP_REDUCE_SCATTER"), std::getenv("MSTEP_SCAN"));
  // MPICH's MPI_Scan composes a scan within each node with one across the nodes' roots: libmstep's
  // runs the one-node case alone, and Exscan goes with it so that one setting means one thing.
  // Asked only where it is set (every rank reads the same settings: a substitute's private
  // communicator is made collectively too), so no other run pays a collective at MPI_Init.
  if (scan_on()) {
    int here = on_rank0_host ? 1 : 0, everywhere = 0;
    PMPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!everywhere) {
      settings_.scan = RootedAlgo::Mpi;
      if (world_rank == 0)
        std::fprintf(stderr, "mstep: MSTEP_SCAN=pt2pt runs on one host only; MPICH's own MPI_Scan and MPI_Exscan run\n");
    }
  }
  const bool auto_barrier = settings_.barrier == BarrierAlgo::Auto;
  const bool esssp = settings_.bcast == BcastAlgo::Esssp || settings_.bcast == BcastAlgo::Auto;  // full LogGPS
  if (auto_barrier || esssp) {
    std::string path;
    if (const char* p = std::getenv("MSTEP_PARAMS"); p && *p) path = p;
    else if (const char* home = std::getenv("HOME"); home && *home) path = std::string(home) + "/.config/mstep/params.json";
    if (!read_params_for(path, auto_barrier ? "MSTEP_BARRIER=auto" : settings_.bcast == BcastAlgo::Auto ? "MSTEP_BCAST=auto" : "MSTEP_BCAST=esssp", esssp, settings_)) {
      std::string error = std::move(settings_.error);
      settings_ = SubstituteSettings{};
      settings_.error = std::move(error);
    }
  }
  if (!settings_.error.empty() && world_rank == 0)
    std::fprintf(stderr, "mstep: %s; MPICH's own collectives run\n", settings_.error.c_str());
  if (any_on() && keyval_ == MPI_KEYVAL_INVALID)
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_private, &keyval_, nullptr);
}

std::string Substitutes::json() const {
  std::string logp;
  if (settings_.barrier == BarrierAlgo::Auto)
    logp = fmt::format(R"(, "logp": {{"L": {:.9g}, "o": {:.9g}, "g": {:.9g}, "native_mpich": true}})",
                       settings_.loggps.L, settings_.loggps.o, settings_.loggps.g);
  if (settings_.bcast == BcastAlgo::Esssp || settings_.bcast == BcastAlgo::Auto) {
    const model::LogGPSParams& p = settings_.loggps;
    const auto size = [](std::uint64_t v) { return v == model::kInfiniteBytes ? std::string("null") : std::to_string(v); };
    logp += fmt::format(
        R"(, "loggps": {{"L": {:.9g}, "o": {:.9g}, "Os": {:.9g}, "Or": {:.9g}, "g": {:.9g}, "Gs": {:.9g}, "Gl": {:.9g}, "s": {}, "S": {}}})",
        p.L, p.o, p.Os, p.Or, p.g, p.Gs, p.Gl, size(p.s), size(p.S));
    // auto_broadcast's rule on a tie of E-SSSP with the copy of the binomial tree (the replay
    // of an older libmstep's trace, without this key, keeps E-SSSP there).
    if (settings_.bcast == BcastAlgo::Auto) logp += R"(, "bcast_tie": "binomial")";
  }
  // What auto weighed MPICH's own collectives at, so that a report makes the same choices.
  if ((settings_.barrier == BarrierAlgo::Auto || settings_.bcast == BcastAlgo::Auto) && !settings_.mpich.empty())
    logp += fmt::format(R"(, "mpich": {})", model::collective_times_json(settings_.mpich).dump());
  return fmt::format(
      R"({{"barrier": "{}", "bcast": "{}", "allreduce": "{}", "alltoall": "{}", "allgather": "{}", "reduce": "{}", "gather": "{}", "scatter": "{}", "reduce_scatter": "{}", "scan": "{}"{}}})",
      barrier_name({settings_.barrier, settings_.tree_arity}), bcast_name(settings_.bcast),
      allreduce_name(settings_.allreduce), alltoall_name(settings_.alltoall), allgather_name(settings_.allgather),
      reduce_name(settings_.reduce), rooted_name(settings_.gather), rooted_name(settings_.scatter),
      reduce_scatter_name(settings_.reduce_scatter), rooted_name(settings_.scan), logp);
}

Substitutes::Private Substitutes::private_comm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL || keyval_ == MPI_KEYVAL_INVALID) return {};
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return {};
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, keyval_, &value, &found) != MPI_SUCCESS) return {};
  if (found) return {as_comm(value), algo_of(value), arity_of(value)};
  Private p{MPI_COMM_NULL, settings_.barrier, settings_.tree_arity};
  if (PMPI_Comm_dup(comm, &p.pc) != MPI_SUCCESS) return {};
  if (p.barrier == BarrierAlgo::Auto) {
    int n = 1;
    PMPI_Comm_size(p.pc, &n);
    const BarrierName a =
        model::auto_barrier_runs({settings_.loggps.L, settings_.loggps.o, settings_.loggps.o, settings_.loggps.g},
                                 static_cast<std::uint32_t>(n), g_delay.on(), true, mpich_barrier_round_s(settings_.mpich));
    p.barrier = a.algo;
    p.arity = a.arity;
  }
  if (PMPI_Comm_set_attr(comm, keyval_, as_value(p.pc, p.barrier, p.arity)) != MPI_SUCCESS) {
    PMPI_Comm_free(&p.pc);
    return {};
  }
  return p;  // the duplicate is freed with `comm`, by delete_private
}

std::optional<Substitutes::Member> Substitutes::member_of(MPI_Comm comm) {
  const MPI_Comm pc = private_comm(comm).pc;
  if (pc == MPI_COMM_NULL) return std::nullopt;
  int me = 0, n = 1;
  PMPI_Comm_rank(pc, &me);
  PMPI_Comm_size(pc, &n);
  if (n == 1) return std::nullopt;
  return Member{Wire{pc, g_delay.on() ? &g_recorder.comm(comm) : nullptr}, me, n};
}

std::optional<Substitutes::Place> Substitutes::place_of(MPI_Comm comm, int root) {
  Place p;
  int inter = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
      PMPI_Comm_rank(comm, &p.me) != MPI_SUCCESS || PMPI_Comm_size(comm, &p.n) != MPI_SUCCESS || root < 0 ||
      root >= p.n)
    return std::nullopt;
  return p;
}

int Substitutes::barrier(MPI_Comm comm) {
  const Private p = barrier_on() ? private_comm(comm) : Private{};
  if (p.pc == MPI_COMM_NULL) return PMPI_Barrier(comm);
  int me = 0, n = 1;
  PMPI_Comm_rank(p.pc, &me);
  PMPI_Comm_size(p.pc, &n);
  if (n == 1) return MPI_SUCCESS;
  const Wire w{p.pc, g_delay.on() ? &g_recorder.comm(comm) : nullptr};
  switch (p.barrier) {
    case BarrierAlgo::Central: return central_barrier(w, me, n);
    case BarrierAlgo::Tree: return tree_barrier(w, me, n, p.arity);
    case BarrierAlgo::Dissemination: return dissemination_barrier(w, me, n);
    case BarrierAlgo::Mpi:
    case BarrierAlgo::Auto: break;
  }
  return PMPI_Barrier(comm);
}

int Substitutes::bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (!bcast_on()) return PMPI_Bcast(buf, count, type, root, comm);
  // auto on two ranks: every tree is the one message MPICH sends too; MPICH's own, without the
  // lookups of a plan (about 100 ns, a third of a short broadcast here), unless MPICH's broadcast
  // was calibrated (it may cost more than that message). Not under the delay apparatus, which
  // MPICH's own messages would bypass.
  if (settings_.bcast == BcastAlgo::Auto && !g_delay.on() && !settings_.mpich.contains(Op::Bcast)) {
    int size = 0, inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter && PMPI_Comm_size(comm, &size) == MPI_SUCCESS &&
        size <= 2)
      return PMPI_Bcast(buf, count, type, root, comm);
  }
  const MPI_Comm pc = private_comm(comm).pc;
  if (pc == MPI_COMM_NULL) return PMPI_Bcast(buf, count, type, root, comm);
  int me = 0, n = 1;
  PMPI_Comm_rank(pc, &me);
  PMPI_Comm_size(pc, &n);
  // A bad root or count is MPICH's to report, with its own error.
  if (root < 0 || root >= n || count < 0) return PMPI_Bcast(buf, count, type, root, comm);
  if (n == 1) return MPI_SUCCESS;
  const bool planned = settings_.bcast == BcastAlgo::Esssp || settings_.bcast == BcastAlgo::Auto;
  // Above kEssspMaxRanks: esssp runs the binomial tree, auto MPICH's own.
  if (planned && n > static_cast<int>(model::kEssspMaxRanks) && settings_.bcast == BcastAlgo::Auto) return PMPI_Bcast(buf, count, type, root, comm);
  const bool plan = planned && n <= static_cast<int>(model::kEssspMaxRanks);
  const CommInfo* info = g_delay.on() || plan ? &g_recorder.comm(comm) : nullptr;
  const Wire w{pc, g_delay.on() ? info : nullptr};
  if (plan) {
    const std::uint64_t bytes = bytes_of(count, type);
    const std::uint64_t freed = g_freed_privates.load(std::memory_order_relaxed);
    bool hit = false;
    PlanCache& slot = plan_slot(pc, root, bytes, freed, settings_.bcast, hit);
    if (!hit)
      slot = {freed, pc, root, bytes, settings_.bcast, plan_broadcast(settings_.bcast, settings_.loggps, settings_.mpich, *info, root, me, n, bytes)};
    switch (slot.plan.kind) {
      case TreePlan::Mpich: return PMPI_Bcast(buf, count, type, root, comm);
      case TreePlan::Binomial: return binomial_bcast(w, buf, count, type, root, me, n);
      case TreePlan::Tree: return tree_bcast(w, slot.plan, buf, count, type);
    }
  }
  if (settings_.bcast != BcastAlgo::Flat) return binomial_bcast(w, buf, count, type, root, me, n);
  Rc rc;
  if (me != root) {
    rc(w.recv(buf, count, type, root));
  } else {
    for (int k = 1; k < n; ++k) rc(w.send(buf, count, type, (root + k) % n));
  }
  return rc.rc;
}

int Substitutes::allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                           MPI_Comm comm) {
  // What MPI would reject, or where MPICH has nothing to send, is MPICH's to answer.
  if (!allreduce_on() || count <= 0 || op == MPI_OP_NULL || type == MPI_DATATYPE_NULL || sendbuf == recvbuf)
    return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  const std::optional<Member> m = member_of(comm);
  if (!m) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  return substitute_allreduce(m->w, settings_.allreduce, sendbuf, recvbuf, count, type, op, m->me, m->n);
}

}  // namespace mstep
