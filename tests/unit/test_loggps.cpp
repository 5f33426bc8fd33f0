// LogGPS / LogGP / LogP point-to-point formulas (MODELS.md section 3) against hand-computed
// values on one machine: L = 5, o = 2, Os = 0.1, Or = 0.2, g = 1, Gs = 0.01, Gl = 0.005
// (microseconds and microseconds per byte), s = 100 B, S = 1000 B.
#include <catch2/catch.hpp>

#include "model/cost/loggps.hpp"

using namespace mstep::model;

namespace {

constexpr LogGPSParams kMachine{.L = 5, .o = 2, .Os = 0.1, .Or = 0.2, .g = 1, .Gs = 0.01,
                                .Gl = 0.005, .s = 100, .S = 1000, .P = 2};

}  // namespace

// The per-message functions are constexpr: usable at compile time, hence inline-able.
static_assert(LogGPS{kMachine}.T5() == 9.0);                 // o + L + o = 2 + 5 + 2
static_assert(LogGPS{kMachine}.T4(0, 20) == 22.0);           // max(2 + 5, 20) + 2
static_assert(LogGPS{kMachine}.protocol(1000) == Protocol::Rendezvous);

TEST_CASE("LogGPS protocol boundaries", "[loggps]") {
  const LogGPS m{kMachine};
  CHECK(m.protocol(0) == Protocol::Short);
  CHECK(m.protocol(99) == Protocol::Short);  // k < s
  CHECK(m.protocol(100) == Protocol::Eager);  // s <= k < S
  CHECK(m.protocol(999) == Protocol::Eager);
  CHECK(m.protocol(1000) == Protocol::Rendezvous);  // k >= S
  CHECK(LogGPS{as_loggp(kMachine)}.protocol(1'000'000'000) == Protocol::Eager);
  CHECK(to_string(Protocol::Rendezvous) == "rendezvous");
}

TEST_CASE("LogGPS T1..T5", "[loggps]") {
  const LogGPS m{kMachine};
  // k = 50 (short): T1 = 2 + 50*0.1 = 7; T2 = 5 + 50*0.01 = 5.5; T3 = 2 + 50*0.2 = 12.
  CHECK(m.T1(50) == Approx(7));
  CHECK(m.T2(50) == Approx(5.5));
  CHECK(m.T3(50) == Approx(12));
  // k = 100 = s: T2 = 5 + 100*0.01 + 0*0.005 = 6; k = 99: 5 + 0.99 = 5.99.
  CHECK(m.T2(100) == Approx(6));
  CHECK(m.T2(99) == Approx(5.99));
  // k = 2000: T1 = 2 + 200 = 202; T2 = 5 + 100*0.01 + 1900*0.005 = 5 + 1 + 9.5 = 15.5;
  // T3 = 2 + 400 = 402.
  CHECK(m.T1(2000) == Approx(202));
  CHECK(m.T2(2000) == Approx(15.5));
  CHECK(m.T3(2000) == Approx(402));
  // T4 = max(o + L, tr - ts) + o: receiver early -> 7 + 2 = 9; 20 late -> 20 + 2 = 22.
  CHECK(m.T4(0, -10) == Approx(9));
  CHECK(m.T4(100, 120) == Approx(22));
  CHECK(m.T5() == Approx(9));
}

TEST_CASE("Below S LogGPS and LogGP agree", "[loggps]") {
  const LogGPS gps{kMachine};
  const LogGPS gp{as_loggp(kMachine)};
  SECTION("by hand, k = 500 (eager), receive posted 10 after the send") {
    // T1 = 2 + 500*0.1 = 52; T2 = 5 + 100*0.01 + 400*0.005 = 8; T3 = 2 + 500*0.2 = 102.
    // end to end = 52 + 8 + 102 = 162; MPI_Send = T1 = 52;
    // MPI_Recv = max(52 + 8 - 10, 0) + 102 = 152; receiver waits 50, sender 0.
    for (const LogGPS& m : {gps, gp}) {
      CHECK(m.end_to_end(500, 0, 10) == Approx(162));
      CHECK(m.send_time(500, 0, 10) == Approx(52));
      CHECK(m.recv_time(500, 0, 10) == Approx(152));
      CHECK(m.receiver_wait(500, 0, 10) == Approx(50));
      CHECK(m.sender_wait(500, 0, 10) == 0);
    }
  }
  SECTION("every size below S, receiver early or late") {
    for (std::uint64_t k : {0, 1, 99, 100, 101, 512, 998, 999}) {
      for (double tr : {-50.0, 0.0, 3.0, 500.0}) {
        CHECK(gps.end_to_end(k, 0, tr) == gp.end_to_end(k, 0, tr));
        CHECK(gps.send_time(k, 0, tr) == gp.send_time(k, 0, tr));
        CHECK(gps.recv_time(k, 0, tr) == gp.recv_time(k, 0, tr));
        CHECK(gps.sender_wait(k, 0, tr) == 0);
      }
    }
  }
}

TEST_CASE("At and above S the send waits for a late receiver (rendezvous)", "[loggps]") {
  const LogGPS gps{kMachine};
  const LogGPS gp{as_loggp(kMachine)};
  SECTION("k = 2000, MPI_Send at ts = 100, MPI_Recv at tr = 120 (20 late)") {
    // T1 = 202, T2 = 15.5, T3 = 402 (above); T4 = max(7, 20) + 2 = 22; T5 = 9.
    // MPI_Send = T4 + T5 + T1 = 22 + 9 + 202 = 233, of which the wait is 20 - (2 + 5) = 13.
    CHECK(gps.send_time(2000, 100, 120) == Approx(233));
    CHECK(gps.sender_wait(2000, 100, 120) == Approx(13));
    // MPI_Recv = max(7 - 20, 0) + 2 + 9 + 202 + 15.5 + 402 = 630.5; no receiver wait.
    CHECK(gps.recv_time(2000, 100, 120) == Approx(630.5));
    CHECK(gps.receiver_wait(2000, 100, 120) == 0);
    // end to end = 22 + 9 + 202 + 15.5 + 402 = 650.5 (= tr - ts + MPI_Recv = 20 + 630.5).
    CHECK(gps.end_to_end(2000, 100, 120) == Approx(650.5));
    // LogGP sends eagerly: MPI_Send = T1 = 202, no sender wait, end to end 202+15.5+402 = 619.5,
    // MPI_Recv = max(202 + 15.5 - 20, 0) + 402 = 599.5.
    CHECK(gp.send_time(2000, 100, 120) == Approx(202));
    CHECK(gp.sender_wait(2000, 100, 120) == 0);
    CHECK(gp.end_to_end(2000, 100, 120) == Approx(619.5));
    CHECK(gp.recv_time(2000, 100, 120) == Approx(599.5));
  }
  SECTION("k = S = 1000, receive posted 10 before the send") {
    // T1 = 2 + 100 = 102; T2 = 5 + 1 + 900*0.005 = 10.5; T3 = 2 + 200 = 202;
    // T4 = max(7, -10) + 2 = 9. MPI_Send = 9 + 9 + 102 = 120, sender wait max(0, -10-7) = 0.
    // MPI_Recv = max(7 - (-10), 0) + 2 + 9 + 102 + 10.5 + 202 = 17 + 325.5 = 342.5.
    // end to end = 9 + 9 + 102 + 10.5 + 202 = 332.5.
    CHECK(gps.send_time(1000, 0, -10) == Approx(120));
    CHECK(gps.sender_wait(1000, 0, -10) == 0);
    CHECK(gps.recv_time(1000, 0, -10) == Approx(342.5));
    CHECK(gps.receiver_wait(1000, 0, -10) == Approx(17));
    CHECK(gps.end_to_end(1000, 0, -10) == Approx(332.5));
    // LogGP: MPI_Send = 102; end to end = 102 + 10.5 + 202 = 314.5;
    // MPI_Recv = max(102 + 10.5 + 10, 0) + 202 = 324.5.
    CHECK(gp.send_time(1000, 0, -10) == Approx(102));
    CHECK(gp.end_to_end(1000, 0, -10) == Approx(314.5));
    CHECK(gp.recv_time(1000, 0, -10) == Approx(324.5));
  }
}

TEST_CASE("The receiver waits for a late sender", "[loggps]") {
  const LogGPS m{kMachine};
  // Eager k = 500, receive posted at 0, send starts at 30: wait = max(52 + 8 - (0 - 30), 0) = 90,
  // MPI_Recv = 90 + 102 = 192.
  CHECK(m.receiver_wait(500, 30, 0) == Approx(90));
  CHECK(m.recv_time(500, 30, 0) == Approx(192));
  // Short k = 50 whose receive comes 100 after the send: the data is there, wait
  // max(7 + 5.5 - 100, 0) = 0, MPI_Recv = T3 = 12.
  CHECK(m.receiver_wait(50, 0, 100) == 0);
  CHECK(m.recv_time(50, 0, 100) == Approx(12));
  // Rendezvous k = 2000, receive at 0, send at 50: wait = max(7 - (0 - 50), 0) = 57;
  // MPI_Recv = 57 + 2 + 9 + 202 + 15.5 + 402 = 687.5; the sender does not wait:
  // max(0, -50 - 7) = 0, MPI_Send = (max(7, -50) + 2) + 9 + 202 = 220.
  CHECK(m.receiver_wait(2000, 50, 0) == Approx(57));
  CHECK(m.recv_time(2000, 50, 0) == Approx(687.5));
  CHECK(m.sender_wait(2000, 50, 0) == 0);
  CHECK(m.send_time(2000, 50, 0) == Approx(220));
}

TEST_CASE("LogP: no per-byte terms, every message costs o + L + o", "[loggps]") {
  const LogGPS m{as_logp(kMachine)};
  // 2 + 5 + 2 = 9 whatever the size; MPI_Send = o = 2.
  CHECK(m.end_to_end(1, 0, 0) == Approx(9));
  CHECK(m.end_to_end(5'000'000, 0, 0) == Approx(9));
  CHECK(m.send_time(5'000'000, 0, 0) == Approx(2));
  // s is kept, so a long message is still "eager", but with Gs = Gl = 0 that costs nothing.
  CHECK(m.protocol(5'000'000) == Protocol::Eager);
  CHECK(m.T2(5'000'000) == Approx(5));
}

TEST_CASE("Consecutive sends are g apart", "[loggps]") {
  CHECK(LogGPS{kMachine}.earliest_next_send(10) == Approx(11));  // 10 + g = 10 + 1
}

TEST_CASE("The delivered rendezvous and H (calibrated, beyond MODELS.md)", "[loggps]") {
  LogGPSParams p = kMachine;
  p.H = 30;
  p.rendezvous_model = RendezvousModel::Delivered;
  const LogGPS m{p};
  SECTION("below S nothing changes") {
    const LogGPS paper{kMachine};
    for (std::uint64_t k : {0, 50, 100, 500, 999}) {
      CHECK(m.T1(k) == paper.T1(k));
      CHECK(m.T2(k) == paper.T2(k));
      CHECK(m.T3(k) == paper.T3(k));
      CHECK(m.send_time(k, 0, 10) == paper.send_time(k, 0, 10));
      CHECK(m.recv_time(k, 0, 10) == paper.recv_time(k, 0, 10));
    }
  }
  SECTION("k = 2000, MPI_Send at ts = 100, MPI_Recv at tr = 120 (20 late)") {
    // T1 = o = 2, T3 = o = 2 (no Os, Or); T2 = L + k Gl = 5 + 2000*0.005 = 15 (every byte at Gl);
    // T4 = max(7, 20) + 2 = 22; T5 = 2 + 5 + 2 + H = 39.
    CHECK(m.T1(2000) == Approx(2));
    CHECK(m.T2(2000) == Approx(15));
    CHECK(m.T3(2000) == Approx(2));
    CHECK(m.T5() == Approx(39));
    // MPI_Send returns when the data is delivered: T4 + T5 + T1 + T2 = 22 + 39 + 2 + 15 = 78.
    CHECK(m.send_time(2000, 100, 120) == Approx(78));
    CHECK(m.synchronous_arrival(2000, 100, 120) == Approx(78));
    // The wait for the late receiver is still (tr - ts) - (o + L) = 13.
    CHECK(m.sender_wait(2000, 100, 120) == Approx(13));
    // MPI_Recv = max(7 - 20, 0) + o + T5 + T1 + T2 + T3 = 0 + 2 + 39 + 2 + 15 + 2 = 60;
    // end to end 22 + 39 + 2 + 15 + 2 = 80 = 20 + 60.
    CHECK(m.recv_time(2000, 100, 120) == Approx(60));
    CHECK(m.end_to_end(2000, 100, 120) == Approx(80));
  }
  SECTION("an MPI_Ssend below S waits for its receive and its delivery too") {
    // k = 500: T1 = 52, T2 = 8 (below S: the paper's); T4 = 22, T5 = 39: 22 + 39 + 52 + 8 = 121.
    CHECK(m.synchronous_send_time(500, 100, 120) == Approx(121));
    CHECK(LogGPS{kMachine}.synchronous_send_time(500, 100, 120) == Approx(22 + 9 + 52));  // paper: no T2, no H
  }
  SECTION("H alone, paper formulas otherwise: T5 = 9 + 30") {
    LogGPSParams q = kMachine;
    q.H = 30;
    CHECK(LogGPS{q}.send_time(2000, 100, 120) == Approx(233 + 30));
  }
}
