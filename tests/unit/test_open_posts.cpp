// The streaming pass's per-rank bookkeeping (model/trace/open_posts.hpp): open Irecvs by request
// id and by age, and the calls completing several receives.
#include <catch2/catch.hpp>

#include "model/trace/open_posts.hpp"

using mstep::Event;
using mstep::OpenIrecvs;
using mstep::ReceivingCalls;

namespace {
Event irecv_at(std::uint64_t t) {
  Event e;
  e.op = mstep::Op::Irecv;
  e.t_enter = t;
  return e;
}
}  // namespace

TEST_CASE("OpenIrecvs: found by request id, the oldest open one first in line") {
  OpenIrecvs posts;
  CHECK(posts.empty());
  posts.post(3, 1, irecv_at(30));
  posts.post(5, 2, irecv_at(50));
  posts.post(9, 3, irecv_at(90));
  CHECK(posts.oldest().index == 3);
  OpenIrecvs::Post p;
  // Completed out of order: the oldest stays first until it completes.
  REQUIRE(posts.take(2, p));
  CHECK(p.index == 5);
  CHECK(p.e.t_enter == 50);
  CHECK_FALSE(posts.take(2, p));  // taken once
  CHECK(posts.oldest().index == 3);
  REQUIRE(posts.take(1, p));
  CHECK(posts.oldest().index == 9);
  CHECK_FALSE(posts.take(7, p));  // never posted
  REQUIRE(posts.take(3, p));
  CHECK(posts.empty());
}

TEST_CASE("OpenIrecvs: a reused request id drops the post it named, ids out of order are still found") {
  OpenIrecvs posts;
  posts.post(1, 10, irecv_at(1));
  posts.post(2, 11, irecv_at(2));
  posts.post(3, 10, irecv_at(3));  // id 10 again: the Irecv at 1 was never completed
  CHECK(posts.oldest().index == 2);
  OpenIrecvs::Post p;
  REQUIRE(posts.take(10, p));
  CHECK(p.index == 3);
  posts.post(4, 5, irecv_at(4));  // a smaller id than any before
  REQUIRE(posts.take(5, p));
  CHECK(p.index == 4);
  REQUIRE(posts.take(11, p));
  CHECK(p.index == 2);
  CHECK(posts.empty());
}

TEST_CASE("OpenIrecvs: one Irecv never completed does not keep the thousands completed after it") {
  OpenIrecvs posts;
  posts.post(0, 1, irecv_at(0));  // never completed
  OpenIrecvs::Post p;
  for (std::uint32_t i = 1; i <= 100000; ++i) {
    posts.post(i, i + 1, irecv_at(i));
    REQUIRE(posts.take(i + 1, p));
    REQUIRE(p.index == i);
  }
  CHECK(posts.oldest().index == 0);
  // The oldest given up (the pass does so after kMaxOpenPost records): nothing is open.
  posts.drop_oldest();
  CHECK(posts.empty());
  posts.post(7, 8, irecv_at(7));
  CHECK(posts.oldest().index == 7);
}

TEST_CASE("ReceivingCalls: calls in order, each found and erased on its own") {
  ReceivingCalls calls;
  CHECK(calls.empty());
  calls.at(4).receives = 2;
  calls.at(9).receives = 3;
  ++calls.at(9).receives;
  CHECK(calls.find(9)->receives == 4);
  CHECK(calls.find(5) == nullptr);
  calls.erase(*calls.find(4));
  REQUIRE(calls.all().size() == 1);
  CHECK(calls.all().front().call == 9);
  calls.at(2).receives = 1;  // an earlier call still goes in its place
  REQUIRE(calls.all().size() == 2);
  CHECK(calls.all().front().call == 2);
  CHECK(calls.all().back().call == 9);
}
