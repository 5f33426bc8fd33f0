#include "model/trace/comm_ids.hpp"

#include <algorithm>
#include <compare>
#include <map>
#include <optional>
#include <set>

namespace mstep {
namespace {

using Group = std::vector<std::int32_t>;

Group sorted(Group g) {
  std::sort(g.begin(), g.end());
  return g;
}

// What every member of one communicator agrees on, whatever its local id there.
struct Identity {
  bool inter = false;
  // Intra: the members in rank order, `second` empty. Inter: the two groups as sorted sets,
  // smaller first, so that the two sides (each of which sees the other as remote) agree.
  Group first, second;
  auto operator<=>(const Identity&) const = default;
};

// One rank's definitions by local id; null where a definition is missing.
std::vector<const CommDef*> defs_by_id(const RankTrace& t) {
  std::vector<const CommDef*> def;
  for (const CommDef& c : t.comms) {
    if (c.id >= def.size()) def.resize(c.id + 1u, nullptr);
    def[c.id] = &c;
  }
  return def;
}

bool is_dup(Op op) { return op == Op::Comm_dup || op == Op::Comm_dup_with_info || op == Op::Comm_idup; }

// The local groups (sorted) of rank `r`'s intercommunicators, where its creator records tell them:
// Intercomm_create's comm is local_comm, whose group is the new local group, and a duplicate has
// its parent's groups. Elsewhere nullopt.
std::vector<std::optional<Group>> recorded_local_groups(const RankTrace& t, std::span<const CommDef* const> def,
                                                        std::int32_t r) {
  std::vector<std::optional<Group>> local(def.size());
  std::vector<std::pair<std::uint16_t, std::uint16_t>> dups;  // (new id, parent id)
  auto inter_def = [&](std::size_t id) { return id < def.size() && def[id] && def[id]->inter; };
  for (const Event& e : t.events) {
    // A creator record's peer is the new communicator's id, not a rank.
    if (e.peer < 0 || !inter_def(static_cast<std::size_t>(e.peer))) continue;
    const auto made = static_cast<std::uint16_t>(e.peer);
    if (e.op == Op::Intercomm_create) {
      if (e.comm >= def.size() || !def[e.comm] || def[e.comm]->inter) continue;
      const Group& g = def[e.comm]->world_ranks.vector();
      // A local group without this rank is a damaged or foreign trace: leave it to the fallback.
      if (std::find(g.begin(), g.end(), r) != g.end()) local[made] = sorted(g);
    } else if (is_dup(e.op) && e.comm < made && inter_def(e.comm)) {
      dups.emplace_back(made, e.comm);
    }
  }
  // By new id, so that a parent is resolved before its duplicates whatever thread recorded what.
  std::sort(dups.begin(), dups.end());
  for (const auto& [made, parent] : dups)
    if (!local[made] && local[parent] && def[parent]->world_ranks == def[made]->world_ranks) local[made] = local[parent];
  return local;
}

// Every rank's intercommunicators by remote group, for the ranks whose creator records do not
// tell an intercommunicator's local group.
class InterIndex {
 public:
  InterIndex(std::span<const std::vector<const CommDef*>> defs, std::span<const RankTrace* const> ranks)
      : remotes_(defs.size()), present_(ranks.size()) {
    for (std::size_t r = 0; r < defs.size(); ++r) {
      present_[r] = ranks[r] != nullptr;
      for (const CommDef* c : defs[r])
        if (c && c->inter) remotes_[r].insert(sorted(c->world_ranks.vector()));
    }
  }

  // The local group (sorted) of rank r's intercommunicator with remote group `remote` (sorted):
  // the one group G holding r, disjoint from `remote`, such that every member of `remote` has an
  // intercommunicator with remote group G and every member of G one with `remote`, as far as
  // their traces tell. Unique unless an intercommunicator's local group is nested in another's
  // with the same remote group; then nullopt: better unmatched than matched with the wrong one.
  std::optional<Group> local_group(std::int32_t r, const Group& remote) {
    auto [it, fresh] = candidates_.try_emplace(remote);
    if (fresh) it->second = consistent_groups(remote);
    const Group* found = nullptr;
    for (const Group& g : it->second) {
      if (!std::binary_search(g.begin(), g.end(), r)) continue;
      if (found) return std::nullopt;
      found = &g;
    }
    return found ? std::optional<Group>(*found) : std::nullopt;
  }

 private:
  bool present(std::int32_t r) const { return r >= 0 && static_cast<std::size_t>(r) < present_.size() && present_[r]; }

  // Every member of `members` with a trace has an intercommunicator with remote group `remote`.
  bool all_hold(const Group& members, const Group& remote) const {
    return std::all_of(members.begin(), members.end(), [&](std::int32_t m) {
      return !present(m) || remotes_[static_cast<std::size_t>(m)].count(remote) != 0;
    });
  }

  std::vector<Group> consistent_groups(const Group& remote) const {
    std::set<Group> out;
    for (std::int32_t q : remote) {
      if (!present(q)) continue;
      for (const Group& g : remotes_[static_cast<std::size_t>(q)]) {
        const bool disjoint = std::none_of(g.begin(), g.end(), [&](std::int32_t m) {
          return std::binary_search(remote.begin(), remote.end(), m);
        });
        if (disjoint && all_hold(remote, g) && all_hold(g, remote)) out.insert(g);
      }
    }
    return {out.begin(), out.end()};
  }

  std::vector<std::set<Group>> remotes_;
  std::vector<bool> present_;
  std::map<Group, std::vector<Group>> candidates_;  // remote group -> consistent_groups(remote)
};

}  // namespace

std::vector<std::vector<std::uint32_t>> global_comm_ids(std::span<const RankTrace* const> ranks) {
  std::vector<std::vector<const CommDef*>> defs(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r]) defs[r] = defs_by_id(*ranks[r]);
  InterIndex index(defs, ranks);

  std::map<std::pair<Identity, int>, std::uint32_t> global;
  std::vector<std::vector<std::uint32_t>> out(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r]) continue;
    const auto& def = defs[r];
    const auto me = static_cast<std::int32_t>(r);
    const auto recorded = recorded_local_groups(*ranks[r], def, me);
    std::map<Identity, int> seen;
    auto& ids = out[r];
    ids.resize(std::max<std::size_t>(def.size(), 1));
    ids[0] = 0;  // MPI_COMM_WORLD, on every rank
    for (std::size_t id = 1; id < def.size(); ++id) {
      const auto local_id = static_cast<std::uint16_t>(id);
      ids[id] = unknown_comm(r, local_id);
      if (!def[id]) continue;
      Identity key;
      key.inter = def[id]->inter;
      if (!key.inter) {
        key.first = def[id]->world_ranks.vector();
      } else {
        key.second = sorted(def[id]->world_ranks.vector());
        auto mine = recorded[id] ? recorded[id] : index.local_group(me, key.second);
        if (!mine) continue;  // no identity the other side would agree on: an id of its own
        key.first = std::move(*mine);
        if (key.second < key.first) std::swap(key.first, key.second);
      }
      const int k = seen[key]++;
      const auto [it, fresh] = global.try_emplace({std::move(key), k}, static_cast<std::uint32_t>(global.size() + 1));
      ids[id] = it->second;
    }
  }
  return out;
}

}  // namespace mstep
