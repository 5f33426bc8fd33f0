// Integration tests: blocking and nonblocking point-to-point (p2p.c, nonblocking.c).
// (see harness.hpp; expected numbers come from the header comment of each test program)
#include "harness.hpp"

using namespace mstep_it;

// =============================================================================================
// Point to point

TEST_CASE("p2p: exact calls, bytes, peers and call sites of blocking point-to-point", "[p2p]") {
  const fs::path dir = test_dir() / "trace";
  const int n = 10;  // ping-pong round trips
  const Result rec = record(dir, 2, {prog("p2p"), std::to_string(n)});
  check_recorded(rec, 2);
  const int k = parse_int_after(rec.out, "iprobe_calls=");  // rank 0's Iprobe calls
  REQUIRE(k >= 1);

  const Stats s = stats(dir);
  check_complete(s, 2);
  CHECK(s.j.at("command") == std::vector<std::string>{prog("p2p"), std::to_string(n)});

  // Rank 0: ping-pong N x (Send 64 B, Recv 64 B); Ssend 64 B; Bsend 40 B; Barrier; Rsend 16 B;
  // Sendrecv 20/20 B; Sendrecv_replace 24/24 B; Send 28 B (probed by rank 1); K Iprobe; Recv 8 B.
  Expect r0;
  r0.add("MPI_Init", 1);
  r0.add("MPI_Send", n + 1, 64 * n + 28, 0);
  r0.add("MPI_Recv", n + 1, 0, 64 * n + 8);
  r0.add("MPI_Ssend", 1, 64, 0);
  r0.add("MPI_Bsend", 1, 40, 0);
  r0.add("MPI_Barrier", 1);
  r0.add("MPI_Rsend", 1, 16, 0);
  r0.add("MPI_Sendrecv", 1, 20, 20);
  r0.add("MPI_Sendrecv_replace", 1, 24, 24);
  r0.add("MPI_Iprobe", k);
  r0.add("MPI_Finalize", 1);
  check_rank(s.j, 0, r0);
  // Rank 1: N x (Recv 64 B, Send 64 B); Recv 64 B (Ssend); Recv 40 B (Bsend); Irecv, Barrier,
  // Wait 16 B (Rsend); Sendrecv; Sendrecv_replace; Probe, Recv 28 B; Send 8 B (for the Iprobe).
  Expect r1;
  r1.add("MPI_Init", 1);
  r1.add("MPI_Recv", n + 3, 0, 64 * n + 64 + 40 + 28);
  r1.add("MPI_Send", n + 1, 64 * n + 8, 0);
  r1.add("MPI_Irecv", 1);
  r1.add("MPI_Barrier", 1);
  r1.add("MPI_Wait", 1, 0, 16);
  r1.add("MPI_Sendrecv", 1, 20, 20);
  r1.add("MPI_Sendrecv_replace", 1, 24, 24);
  r1.add("MPI_Probe", 1);
  r1.add("MPI_Finalize", 1);
  check_rank(s.j, 1, r1);

  const json d0 = dump_rank(dir, 0), d1 = dump_rank(dir, 1);
  CHECK(d0.at("status") == "complete");

  {
    INFO("ping-pong records name the partner, tag and size");
    const auto sends = events_of(d0, "MPI_Send");
    REQUIRE(sends.size() == static_cast<std::size_t>(n + 1));
    for (int i = 0; i < n; ++i) {
      CHECK(sends[i].at("peer") == 1);
      CHECK(sends[i].at("tag") == 1);
      CHECK(sends[i].at("send_bytes") == 64);
      CHECK(sends[i].at("comm") == 0);
    }
    const auto recvs = events_of(d1, "MPI_Recv");
    REQUIRE(recvs.size() == static_cast<std::size_t>(n + 3));
    for (int i = 0; i < n; ++i) {
      CHECK(recvs[i].at("peer") == 0);
      CHECK(recvs[i].at("tag") == 1);
      CHECK(recvs[i].at("recv_bytes") == 64);
    }
  }
  {
    INFO("Probe and Iprobe record the matched source and tag");
    const auto probe = events_of(d1, "MPI_Probe");
    REQUIRE(probe.size() == 1);
    CHECK(probe[0].at("peer") == 0);  // posted with MPI_ANY_SOURCE, MPI_ANY_TAG
    CHECK(probe[0].at("tag") == 8);
    CHECK(probe[0].at("flags") == 0);
    const auto iprobes = events_of(d0, "MPI_Iprobe");
    REQUIRE(iprobes.size() == static_cast<std::size_t>(k));
    for (int i = 0; i + 1 < k; ++i) CHECK(iprobes[i].at("flags") == 8);  // found nothing
    CHECK(iprobes.back().at("flags") == 0);
    CHECK(iprobes.back().at("peer") == 1);
    CHECK(iprobes.back().at("tag") == 9);
  }
  {
    INFO("Sendrecv writes a send record and a receive continuation");
    for (const json* d : {&d0, &d1}) {
      const int other = d == &d0 ? 1 : 0;
      const auto sr = events_of(*d, "MPI_Sendrecv");
      REQUIRE(sr.size() == 2);
      CHECK(sr[0].at("flags") == 0);
      CHECK(sr[0].at("peer") == other);
      CHECK(sr[0].at("tag") == 6);
      CHECK(sr[0].at("send_bytes") == 20);
      CHECK(sr[0].at("recv_bytes") == 0);
      CHECK(sr[1].at("flags") == 3);  // continuation + receive half
      CHECK(sr[1].at("peer") == other);
      CHECK(sr[1].at("tag") == 6);
      CHECK(sr[1].at("send_bytes") == 0);
      CHECK(sr[1].at("recv_bytes") == 20);
      const auto rep = events_of(*d, "MPI_Sendrecv_replace");
      REQUIRE(rep.size() == 2);
      CHECK(rep[0].at("send_bytes") == 24);
      CHECK(rep[1].at("flags") == 3);
      CHECK(rep[1].at("recv_bytes") == 24);
      CHECK(rep[1].at("tag") == 7);
    }
  }
  {
    INFO("the Rsend's receive is tied to its Wait");
    const auto irecv = events_of(d1, "MPI_Irecv");
    const auto wait = events_of(d1, "MPI_Wait");
    REQUIRE(irecv.size() == 1);
    REQUIRE(wait.size() == 1);
    CHECK(irecv[0].at("request") != 0);
    CHECK(wait[0].at("request") == irecv[0].at("request"));
    CHECK(wait[0].at("flags") == 2);
    CHECK(wait[0].at("peer") == 0);
    CHECK(wait[0].at("tag") == 5);
    CHECK(wait[0].at("recv_bytes") == 16);
  }
  {
    INFO("M-steps: one per ping-pong round, then the later phases");
    // format/step_tracker.hpp: a send side after a receive closes the step at that receive; a
    // collective closes the step it is in; finish() splits off the work after the last receive.
    // Rank 0: N steps {Send, Recv}; {Ssend, Bsend, Barrier}; {Rsend, Sendrecv};
    //   {Sendrecv_replace}; {Send, Iprobe..., Recv}; {Finalize}                     = N + 5.
    // Rank 1: {Recv}; N-1 x {Send, Recv}; {Send, Recv, Recv}; {Irecv, Barrier}; {Wait};
    //   {Sendrecv}; {Sendrecv_replace, Probe, Recv}; {Send, Finalize}               = N + 6.
    for (int rank = 0; rank < 2; ++rank) {
      INFO("rank " << rank);
      const json& d = rank == 0 ? d0 : d1;
      const json& steps = d.at("steps");
      CHECK(steps.size() == static_cast<std::size_t>(n + (rank == 0 ? 5 : 6)));
      CHECK(s.j["per_rank"][rank].at("steps") == steps.size());
      std::uint64_t in = 0, out = 0, sent = 0, received = 0;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        CHECK(steps[i].at("index") == i + 1);
        CHECK(steps[i].at("begin_s").get<double>() <= steps[i].at("end_s").get<double>());
        if (i + 1 < steps.size()) CHECK(steps[i].at("end_s") == steps[i + 1].at("begin_s"));
        for (int p : steps[i].at("partners")) CHECK((p == 0 || p == 1));
        in += steps[i].at("bytes_in").get<std::uint64_t>();
        out += steps[i].at("bytes_out").get<std::uint64_t>();
      }
      for (const auto& [op, b] : s.j["per_rank"][rank].at("bytes_sent").items()) sent += b.get<std::uint64_t>();
      for (const auto& [op, b] : s.j["per_rank"][rank].at("bytes_received").items()) received += b.get<std::uint64_t>();
      CHECK(in == received);
      CHECK(out == sent);
      CHECK(out == (rank == 0 ? 64 * n + 192 : 64 * n + 8 + 20 + 24));
      // The ping-pong rounds.
      for (int i = 0; i < n; ++i) {
        INFO("step " << i + 1);
        const json& st = steps.at(i);
        CHECK(st.at("partners") == std::vector<int>{0, 1});
        CHECK(st.at("bytes_in") == 64);
        CHECK(st.at("msgs_in") == 1);
        const bool first_of_rank1 = rank == 1 && i == 0;  // rank 1 receives first
        CHECK(st.at("bytes_out") == (first_of_rank1 ? 0 : 64));
        CHECK(st.at("msgs_out") == (first_of_rank1 ? 0 : 1));
      }
      const json& after = steps.at(n);
      if (rank == 0) {  // Ssend 64 + Bsend 40, then the Barrier (no bytes, one message each way)
        CHECK(after.at("bytes_out") == 104);
        CHECK(after.at("msgs_out") == 3);
        CHECK(after.at("bytes_in") == 0);
      } else {  // the last pong out, the Ssend's and the Bsend's messages in
        CHECK(after.at("bytes_out") == 64);
        CHECK(after.at("bytes_in") == 104);
        CHECK(after.at("msgs_in") == 2);
      }
    }
  }
  {
    INFO("every call site resolves to p2p.c");
    check_all_callsites_in(d0, "p2p.c");
    check_all_callsites_in(d1, "p2p.c");
    // The Ssend is on its own line: its call site is a different one than the Bsend's.
    const auto ss = events_of(d0, "MPI_Ssend"), bs = events_of(d0, "MPI_Bsend");
    REQUIRE(ss.size() == 1);
    REQUIRE(bs.size() == 1);
    CHECK(ss[0].at("callsite") != bs[0].at("callsite"));
    CHECK(callsite_location(d0, ss[0].at("callsite")).rfind("main (p2p.c:", 0) == 0);
  }
}

TEST_CASE("nonblocking: Wait, Waitall, Waitany, Waitsome and the Test family", "[nonblocking]") {
  const fs::path dir = test_dir() / "trace";
  const Result rec = record(dir, 2, {prog("nonblocking")});
  check_recorded(rec, 2);
  const Stats s = stats(dir);
  check_complete(s, 2);

  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    // The program prints how often each polling loop called its function.
    const auto pos = rec.out.find("rank " + std::to_string(rank) + " waitsome=");
    REQUIRE(pos != std::string::npos);
    const std::string line = rec.out.substr(pos, rec.out.find('\n', pos) - pos);
    const int waitsome = parse_int_after(line, "waitsome="), test = parse_int_after(line, " test="),
              testall = parse_int_after(line, "testall="), testany = parse_int_after(line, "testany="),
              testsome = parse_int_after(line, "testsome=");
    REQUIRE(std::min({waitsome, test, testall, testany, testsome}) >= 1);
    CHECK(testany >= 2);  // Testany completes one request per successful call

    // Sends: A 4 + B 2x16 + C 8 + D 12 + E 4 + F 4 + G 4 + H 4 + I 20 + 24 = 116 B over 11 Isend.
    // Receives completed: Wait A 4 + J 4; Waitall B 32 + I 20 + 24; Waitany 8; Waitsome 12;
    // Test 4; Testall 4; Testany 4; Testsome 4.
    Expect e;
    e.add("MPI_Init", 1);
    e.add("MPI_Irecv", 12);
    e.add("MPI_Isend", 11, 116, 0);
    e.add("MPI_Issend", 1, 4, 0);
    e.add("MPI_Wait", 5, 0, 8);
    e.add("MPI_Waitall", 2, 0, 32 + 44);
    e.add("MPI_Waitany", 2, 0, 8);
    e.add("MPI_Waitsome", waitsome, 0, 12);
    e.add("MPI_Test", test, 0, 4);
    e.add("MPI_Testall", testall, 0, 4);
    e.add("MPI_Testany", testany, 0, 4);
    e.add("MPI_Testsome", testsome, 0, 4);
    e.add("MPI_Finalize", 1);
    check_rank(s.j, rank, e);

    const json d = dump_rank(dir, rank);
    check_requests_tied(d, false);
    check_all_callsites_in(d, "nonblocking.c");
    const int other = 1 - rank;

    // Waitall: one record per request, the first is the call, the others continuations.
    const auto wa = events_of(d, "MPI_Waitall");
    REQUIRE_FALSE(wa.empty());
    CHECK((wa[0].at("flags").get<int>() & 1) == 0);
    CHECK(std::count_if(wa.begin(), wa.end(), [](const json& x) { return (x.at("flags").get<int>() & 1) == 0; }) == 2);
    // B with statuses, then I with MPI_STATUSES_IGNORE and wildcard receives: the receive records
    // still carry the actual source, tag and size.
    std::vector<std::tuple<int, int, int>> got;  // tag, peer, bytes of the receive records
    for (const auto& e2 : wa)
      if (e2.at("flags").get<int>() & 2) got.emplace_back(e2.at("tag"), e2.at("peer"), e2.at("recv_bytes"));
    const std::vector<std::tuple<int, int, int>> want{
        {11, other, 16}, {12, other, 16}, {19, other, 20}, {20, other, 24}};
    CHECK(got == want);
    // The wildcard Irecvs were posted with MPI_ANY_SOURCE (-2) and MPI_ANY_TAG (-1).
    const auto irecv = events_of(d, "MPI_Irecv");
    REQUIRE(irecv.size() == 12);
    CHECK(irecv[9].at("peer") == -2);
    CHECK(irecv[10].at("peer") == -2);
    CHECK(irecv[9].at("tag") == -1);
    CHECK(irecv[0].at("peer") == other);

    // Test: every call but the last found nothing (flag 8); the last completed the receive.
    const auto tests = events_of(d, "MPI_Test");
    REQUIRE(tests.size() == static_cast<std::size_t>(test));
    for (int i = 0; i + 1 < test; ++i) CHECK(tests[i].at("flags") == 8);
    CHECK(tests.back().at("flags") == 2);
    CHECK(tests.back().at("tag") == 15);
    CHECK(tests.back().at("peer") == other);
    // Testall: the successful call completes both requests (2 records), the others are empty.
    const auto ta = events_of(d, "MPI_Testall");
    CHECK(ta.size() == static_cast<std::size_t>(testall + 1));
    CHECK(std::count_if(ta.begin(), ta.end(), [](const json& x) { return x.at("flags") == 8; }) ==
          testall - 1);
    // Testany/Testsome: the receive completion carries tags 17 and 18.
    for (const auto& [op, tag] : {std::pair<std::string, int>{"MPI_Testany", 17}, {"MPI_Testsome", 18},
                                  {"MPI_Waitany", 13}, {"MPI_Waitsome", 14}}) {
      INFO(op);
      int receives = 0;
      for (const auto& x : events_of(d, op))
        if (x.at("flags").get<int>() & 2) {
          ++receives;
          CHECK(x.at("tag") == tag);
          CHECK(x.at("peer") == other);
        }
      CHECK(receives == 1);
    }
  }
}

// MPICH hands out one shared handle (0x6c000001, a "lightweight" pre-completed request) for every
// Isend that completed at once. The recorder keeps the requests behind one handle in order; when
// it kept one per handle, a Waitall over two such Isends wrote one record for the two.
TEST_CASE("nonblocking: send requests are tied to their completions", "[nonblocking]") {
  const fs::path dir = test_dir() / "trace";
  check_recorded(record(dir, 2, {prog("nonblocking")}), 2);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    const json d = dump_rank(dir, rank);
    check_requests_tied(d, true);
    CHECK(events_of(d, "MPI_Waitall").size() == 8);  // 4 requests in each of the 2 calls
  }
}

// =============================================================================================
// Collectives
