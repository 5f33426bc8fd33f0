// Integration tests: communicator creators (comms.c) at 2 and 4 ranks: the trace defines each new
// communicator with its world-rank members, traffic on it names world ranks, `mstep report` pairs
// every message, and `mstep stats` counts the creators.
// (see harness.hpp; expected numbers come from the header comment of comms.c)
#include "harness.hpp"

using namespace mstep_it;

namespace {

int mod(int a, int m) { return ((a % m) + m) % m; }

std::vector<int> range(int first, int step, int count, int n) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(mod(first + step * i, n));
  return v;
}

// comms.c's merged communicator: the even world ranks, then the odd ones.
int merged_world(int m, int n) { return m < n / 2 ? 2 * m : 2 * (m - n / 2) + 1; }
int merged_rank(int w, int n) { return w % 2 == 0 ? w / 2 : n / 2 + w / 2; }

// Calls and logical bytes of world rank w (share/trace-format.md's byte conventions).
Expect comms_expect(int n, int w, bool inter_p2p) {
  const std::uint64_t o = n - 1;
  const int rot = mod(w - 1, n);
  Expect e;
  e.add("MPI_Init", 1);
  e.add("MPI_Comm_split", 2);
  e.add("MPI_Cart_create", 3);
  e.add("MPI_Cart_sub", 1);
  e.add("MPI_Comm_split_type", 2);
  e.add("MPI_Comm_create_group", 1);
  e.add("MPI_Dist_graph_create_adjacent", 1);
  e.add("MPI_Graph_create", 1);
  e.add("MPI_Dist_graph_create", 1);
  e.add("MPI_Comm_dup_with_info", 1);
  e.add("MPI_Intercomm_create", 1);
  e.add("MPI_Intercomm_merge", 1);
  e.add("MPI_Comm_idup", 2);
  e.add("MPI_Waitall", 1);
  const std::uint64_t sr = 64 + 32 + 12 + 28 + (inter_p2p ? 8 + 8 : 0);
  e.add("MPI_Sendrecv", inter_p2p ? 6 : 4, sr, sr);
  e.add("MPI_Bcast", 1, w == n - 1 ? 32 * o : 0, w == n - 1 ? 0 : 32);
  e.add("MPI_Send", rot % 2 == 0 ? 2 : 1, 20 + (rot % 2 == 0 ? 24 : 0), 0);
  e.add("MPI_Recv", rot % 2 == 1 ? 2 : 1, 0, 20 + (rot % 2 == 1 ? 24 : 0));
  e.add("MPI_Allreduce", 2, 4 * o + 8 * o, 4 * o + 8 * o);
  e.add("MPI_Barrier", 1);
  e.add("MPI_Comm_free", 17 - (w % 2) - (w == n - 1 ? 1 : 0));
  e.add("MPI_Finalize", 1);
  return e;
}

// The ids of the communicators the records of `op` created (their peer field), in call order.
std::vector<int> created_by(const json& d, const std::string& op) {
  std::vector<int> ids;
  for (const auto& e : events_of(d, op)) ids.push_back(e.at("peer").get<int>());
  return ids;
}

struct CommDefJ {
  bool inter = false;
  std::vector<int> members;
};

// Records of `op` on `comm`: the first record of each call, then its receive half if any.
std::vector<json> on_comm(const json& d, const std::string& op, int comm) {
  std::vector<json> v;
  for (const auto& e : events_of(d, op))
    if (e.at("comm") == comm) v.push_back(e);
  return v;
}

// One Sendrecv on `comm`: its send record to `to` and receive record from `from`, `bytes` each way.
void check_sendrecv(const json& d, int comm, int to, int from, int tag, int bytes) {
  const auto recs = on_comm(d, "MPI_Sendrecv", comm);
  INFO("Sendrecv on communicator " << comm);
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].at("flags") == 0);
  CHECK(recs[0].at("peer") == to);
  CHECK(recs[0].at("tag") == tag);
  CHECK(recs[0].at("send_bytes") == bytes);
  CHECK(recs[1].at("flags") == 3);  // continuation + receive half
  CHECK(recs[1].at("peer") == from);
  CHECK(recs[1].at("tag") == tag);
  CHECK(recs[1].at("recv_bytes") == bytes);
}

// `mstep report DIR --format json` of a trace without problems: exit 0, nothing on stderr.
json report_json(const fs::path& dir) {
  // No parameter file anywhere: the report still matches messages, it only leaves the models out.
  const fs::path home = dir.parent_path();
  const Result r = run({kMstep, "report", dir.string(), "--format", "json"},
                       {{"HOME", home.string()}, {"MSTEP_PARAMS", ""}});
  CHECK(r.code == 0);
  CHECK(lines_of(r.err).empty());
  json j = parse_json(r.out);
  REQUIRE(j.is_object());
  return j;
}

// Everything the test knows about a recording of comms.c at n ranks.
void check_comms_run(const fs::path& dir, const Result& rec, int n, bool inter_p2p) {
  check_recorded(rec, n);
  CHECK(rec.out.find("comms: " + std::to_string(n) + " ranks, ok") != std::string::npos);
  const Stats s = stats(dir);
  check_complete(s, n);
  for (int w = 0; w < n; ++w) check_rank(s.j, w, comms_expect(n, w, inter_p2p));

  {
    INFO("the text of mstep stats names every creator");
    const Result text = run({kMstep, "stats", dir.string()});
    CHECK(text.code == 0);
    for (const char* op : {"MPI_Cart_create", "MPI_Cart_sub", "MPI_Comm_split_type", "MPI_Comm_create_group",
                           "MPI_Graph_create", "MPI_Dist_graph_create_adjacent", "MPI_Dist_graph_create ",
                           "MPI_Intercomm_create", "MPI_Intercomm_merge", "MPI_Comm_dup_with_info",
                           "MPI_Comm_idup"}) {
      INFO(op);
      CHECK(text.out.find(op) != std::string::npos);
    }
  }

  const std::vector<int> reversed = range(n - 1, -1, n, n), identity = range(0, 1, n, n);
  for (int w = 0; w < n; ++w) {
    INFO("rank " << w);
    const json d = dump_rank(dir, w);
    std::map<int, CommDefJ> comms;
    for (const auto& c : d.at("comms"))
      comms[c.at("id")] = {c.at("inter").get<bool>(), c.at("world_ranks").get<std::vector<int>>()};
    auto members = [&](int id) {
      INFO("communicator " << id);
      REQUIRE(comms.count(id) == 1);
      return comms[id].members;
    };
    auto intra = [&](int id) {
      INFO("communicator " << id);
      CHECK_FALSE(comms[id].inter);
    };

    // The creators, in program order; each record's comm is the parent.
    const auto split = created_by(d, "MPI_Comm_split");
    REQUIRE(split.size() == 2);
    const int rev = split[0], half = split[1];
    CHECK(members(rev) == reversed);
    CHECK(members(half) == range(w % 2, 2, n / 2, n));

    const auto cart = created_by(d, "MPI_Cart_create");
    REQUIRE(cart.size() == 3);
    const int ring = cart[0], small = cart[1], grid = cart[2];
    CHECK(events_of(d, "MPI_Cart_create")[0].at("comm") == rev);
    CHECK(members(ring) == reversed);
    if (w == n - 1) {
      CHECK(small == -1);  // MPI_COMM_NULL: outside the n-1 grid
    } else {
      CHECK(members(small) == range(0, 1, n - 1, n));
    }
    CHECK(members(grid) == identity);

    const auto sub = created_by(d, "MPI_Cart_sub");
    REQUIRE(sub.size() == 1);
    const int col = sub[0];
    CHECK(events_of(d, "MPI_Cart_sub")[0].at("comm") == grid);
    CHECK(members(col) == range(w % (n / 2), n / 2, 2, n));

    const auto st = created_by(d, "MPI_Comm_split_type");
    REQUIRE(st.size() == 2);
    const int shared = st[0], evens = st[1];
    CHECK(members(shared) == reversed);
    if (w % 2 == 1) {
      CHECK(evens == -1);  // MPI_UNDEFINED
    } else {
      CHECK(members(evens) == range(0, 2, n / 2, n));
    }

    const auto cg = created_by(d, "MPI_Comm_create_group");
    REQUIRE(cg.size() == 1);
    const int rot = cg[0];
    CHECK(members(rot) == range(1, 1, n, n));

    const auto dga = created_by(d, "MPI_Dist_graph_create_adjacent");
    REQUIRE(dga.size() == 1);
    const int dgraph = dga[0];
    CHECK(events_of(d, "MPI_Dist_graph_create_adjacent")[0].at("comm") == rev);
    CHECK(members(dgraph) == reversed);

    const auto gc = created_by(d, "MPI_Graph_create");
    const auto dgc = created_by(d, "MPI_Dist_graph_create");
    REQUIRE(gc.size() == 1);
    REQUIRE(dgc.size() == 1);
    const int graph = gc[0], dist = dgc[0];
    CHECK(members(graph) == identity);
    CHECK(members(dist) == identity);

    const auto dwi = created_by(d, "MPI_Comm_dup_with_info");
    REQUIRE(dwi.size() == 1);
    const int ringdup = dwi[0];
    CHECK(events_of(d, "MPI_Comm_dup_with_info")[0].at("comm") == ring);
    CHECK(members(ringdup) == reversed);

    const auto ic = created_by(d, "MPI_Intercomm_create");
    REQUIRE(ic.size() == 1);
    const int inter = ic[0];
    CHECK(events_of(d, "MPI_Intercomm_create")[0].at("comm") == half);
    CHECK(comms[inter].inter);
    CHECK(members(inter) == range(1 - w % 2, 2, n / 2, n));  // the remote group

    const auto im = created_by(d, "MPI_Intercomm_merge");
    REQUIRE(im.size() == 1);
    const int merged = im[0];
    CHECK(events_of(d, "MPI_Intercomm_merge")[0].at("comm") == inter);
    std::vector<int> merged_members;
    for (int m = 0; m < n; ++m) merged_members.push_back(merged_world(m, n));
    CHECK(members(merged) == merged_members);

    // Comm_idup: defined at the call, with the parent's groups; the Waitall completes both.
    const auto idup = events_of(d, "MPI_Comm_idup");
    REQUIRE(idup.size() == 2);
    const int rotdup = idup[0].at("peer"), interdup = idup[1].at("peer");
    CHECK(idup[0].at("comm") == rot);
    CHECK(idup[1].at("comm") == inter);
    CHECK(members(rotdup) == range(1, 1, n, n));
    CHECK(comms[interdup].inter);
    CHECK(members(interdup) == range(1 - w % 2, 2, n / 2, n));
    {
      INFO("each Comm_idup's request is completed by the Waitall, in order");
      const auto wa = events_of(d, "MPI_Waitall");
      REQUIRE(wa.size() == 2);
      CHECK(wa[0].at("flags") == 0);
      CHECK(wa[1].at("flags") == 1);  // continuation
      for (int i = 0; i < 2; ++i) {
        CHECK(idup[i].at("request") != 0);
        CHECK(wa[i].at("request") == idup[i].at("request"));
      }
    }

    {
      INFO("every new communicator has an id of its own");
      std::set<int> ids{0};
      int expected = 1;
      for (int id : {rev, half, ring, small, grid, col, shared, evens, rot, dgraph, graph, dist, ringdup, inter, merged,
                     rotdup, interdup}) {
        if (id == -1) continue;
        ids.insert(id);
        ++expected;
      }
      CHECK(ids.size() == static_cast<std::size_t>(expected));
      CHECK(comms.size() == ids.size());
      for (int id : {rev, half, ring, grid, col, shared, rot, dgraph, graph, dist, ringdup, merged, rotdup}) intra(id);
    }

    {
      INFO("traffic on the new communicators names world ranks");
      check_sendrecv(d, ring, mod(w - 1, n), mod(w + 1, n), 11, 64);
      check_sendrecv(d, col, mod(w + n / 2, n), mod(w + n / 2, n), 12, 32);
      const int m = merged_rank(w, n);
      check_sendrecv(d, merged, merged_world(mod(m + 1, n), n), merged_world(mod(m - 1, n), n), 18, 12);
      check_sendrecv(d, rotdup, mod(w + 1, n), mod(w - 1, n), 19, 28);
      if (inter_p2p) {
        // Remote rank w/2 of the other parity: world w^1 (a communicator rank would be w/2).
        check_sendrecv(d, inter, w ^ 1, w ^ 1, 17, 8);
        check_sendrecv(d, interdup, w ^ 1, w ^ 1, 20, 8);
      } else {
        CHECK(on_comm(d, "MPI_Sendrecv", inter).empty());
        CHECK(on_comm(d, "MPI_Sendrecv", interdup).empty());
      }

      const auto bc = events_of(d, "MPI_Bcast");
      REQUIRE(bc.size() == 1);
      CHECK(bc[0].at("comm") == shared);
      CHECK(bc[0].at("peer") == n - 1);  // the root: rank 0 of shared
      CHECK(bc[0].at("flags") == (w == n - 1 ? 4 : 0));

      // rot: even rot ranks send to the next one; dgraph: everybody sends to rev's next rank.
      const int r = mod(w - 1, n);
      const auto rot_send = on_comm(d, "MPI_Send", rot), rot_recv = on_comm(d, "MPI_Recv", rot);
      REQUIRE(rot_send.size() == (r % 2 == 0 ? 1u : 0u));
      REQUIRE(rot_recv.size() == (r % 2 == 1 ? 1u : 0u));
      if (r % 2 == 0) {
        CHECK(rot_send[0].at("peer") == mod(w + 1, n));
        CHECK(rot_send[0].at("tag") == 14);
        CHECK(rot_send[0].at("send_bytes") == 24);
      } else {
        CHECK(rot_recv[0].at("peer") == mod(w - 1, n));
        CHECK(rot_recv[0].at("tag") == 14);
        CHECK(rot_recv[0].at("recv_bytes") == 24);
      }
      const auto dg_send = on_comm(d, "MPI_Send", dgraph), dg_recv = on_comm(d, "MPI_Recv", dgraph);
      REQUIRE(dg_send.size() == 1);
      REQUIRE(dg_recv.size() == 1);
      CHECK(dg_send[0].at("peer") == mod(w - 1, n));
      CHECK(dg_send[0].at("send_bytes") == 20);
      CHECK(dg_recv[0].at("peer") == mod(w + 1, n));
      CHECK(dg_recv[0].at("recv_bytes") == 20);

      const auto ar = events_of(d, "MPI_Allreduce");
      REQUIRE(ar.size() == 2);
      CHECK(ar[0].at("comm") == graph);
      CHECK(ar[1].at("comm") == ringdup);
      const auto ba = events_of(d, "MPI_Barrier");
      REQUIRE(ba.size() == 1);
      CHECK(ba[0].at("comm") == dist);
    }

    {
      INFO("Comm_free names each communicator this rank got, in the program's order");
      std::vector<int> freed, expected;
      for (const auto& e : events_of(d, "MPI_Comm_free")) freed.push_back(e.at("comm").get<int>());
      for (int id : {rev, ring, small, grid, col, shared, evens, rot, dgraph, graph, dist, ringdup, half, inter, merged,
                     rotdup, interdup})
        if (id != -1) expected.push_back(id);
      CHECK(freed == expected);
    }

    {
      INFO("M-step partners are world ranks of this run");
      for (const auto& step : d.at("steps"))
        for (int p : step.at("partners")) CHECK((p >= 0 && p < n));
    }
  }

  {
    INFO("mstep report pairs the messages of every new communicator");
    const json rep = report_json(dir);
    // Per rank: Sendrecv on ring, col, merged and rotdup (4), dgraph's ring (1), and with
    // inter-p2p the Sendrecv over inter and over interdup (2); rot's n/2 messages over all.
    const int messages = (inter_p2p ? 7 : 5) * n + n / 2;
    CHECK(rep.at("messages") == messages);
    CHECK(rep.at("problems").empty());
  }
}

}  // namespace

TEST_CASE("comms at 2 ranks: topology, split_type, create_group and intercommunicator creators", "[comms]") {
  const fs::path dir = test_dir() / "trace";
  const Result rec = record(dir, 2, {prog("comms")});
  check_comms_run(dir, rec, 2, false);
}

TEST_CASE("comms at 4 ranks: members and peers are world ranks, also on an intercommunicator", "[comms][4ranks]") {
  const fs::path dir = test_dir() / "trace";
  // Stacked after libmstep.so: blocking calls yield instead of spinning (4 ranks, 2 cores).
  const Result rec = record(dir, 4, {prog("comms"), "inter-p2p"}, {{"LD_PRELOAD", kShim}});
  check_comms_run(dir, rec, 4, true);
}
