// What the streaming pass (model/trace/stream_pass.cpp) keeps of one rank between its records:
// the Irecvs it posted and has not completed, and the calls completing several receives that are
// not yet resolved. Both are flat vectors in record order that keep their memory from one
// message to the next: a node-based map allocated and freed once per Irecv and once per Waitall
// (three allocations in every four records of a ring of Irecv/Isend/Waitall).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "format/trace_format.hpp"

namespace mstep {

// A rank's open Irecvs, in posting order: found by request id (at the completion) and by age
// (receives posted after the oldest open one wait for it). Request ids the recorder gives
// increase with the posts, so a lookup is a binary search; ids out of order (reused, imported)
// make it a scan of the open posts until none is open.
class OpenIrecvs {
 public:
  struct Post {
    std::uint32_t index = 0, request = 0;  // the Irecv's record index, its request id
    Event e;                               // the Irecv record
    bool open = false;
  };

  bool empty() const { return open_ == 0; }
  // The oldest open post (not empty()).
  const Post& oldest() { return first_open(); }
  // Posts an Irecv. A post of the same request id still open is dropped first: the id was reused,
  // so that Irecv was never completed.
  void post(std::uint32_t index, std::uint32_t request, const Event& e) {
    if (Post* same = find(request)) close(*same);
    if (!posts_.empty() && request <= posts_.back().request) ordered_ = false;
    posts_.push_back({index, request, e, true});
    ++open_;
  }
  // The open post of `request`, taken out (false: none).
  bool take(std::uint32_t request, Post& out) {
    Post* p = find(request);
    if (!p) return false;
    out = *p;
    close(*p);
    return true;
  }
  // Takes the oldest open post out (not empty()).
  void drop_oldest() { close(first_open()); }
  void clear() {
    posts_.clear();
    head_ = open_ = 0;
    ordered_ = true;
  }

 private:
  Post& first_open() {
    while (!posts_[head_].open) ++head_;
    return posts_[head_];
  }
  Post* find(std::uint32_t request) {
    if (open_ == 0) return nullptr;
    const auto first = posts_.begin() + static_cast<std::ptrdiff_t>(head_);
    if (ordered_) {
      const auto it = std::lower_bound(first, posts_.end(), request,
                                       [](const Post& p, std::uint32_t r) { return p.request < r; });
      return it != posts_.end() && it->request == request && it->open ? &*it : nullptr;
    }
    for (auto it = first; it != posts_.end(); ++it)
      if (it->open && it->request == request) return &*it;
    return nullptr;
  }
  // Closed posts stay in place (the order of the rest holds) until the oldest open one passes
  // them, or until they are most of the vector: an Irecv never completed must not keep every
  // later one.
  void close(Post& p) {
    p.open = false;
    if (--open_ == 0) return clear();
    if (posts_.size() - head_ > 2 * open_ + 16) {
      posts_.erase(std::remove_if(posts_.begin(), posts_.end(), [](const Post& q) { return !q.open; }), posts_.end());
      head_ = 0;
    } else if (head_ > 64 && 2 * head_ > posts_.size()) {
      posts_.erase(posts_.begin(), posts_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  std::vector<Post> posts_;
  std::size_t head_ = 0;  // posts before it are all closed
  std::size_t open_ = 0;
  bool ordered_ = true;   // request ids increase along posts_
};

// A rank's calls that complete several receives (Waitall, say), until each of their receives is
// matched or known never to be: how many (known once the call's last record is read), how many
// are resolved. In the order of the calls (their record index), few at a time.
class ReceivingCalls {
 public:
  struct Call {
    std::uint32_t call = 0, receives = 0, resolved = 0;
    bool closed = false;
  };

  bool empty() const { return calls_.empty(); }
  // The entry of `call`, made if need be (calls come in increasing order).
  Call& at(std::uint32_t call) {
    if (calls_.empty() || calls_.back().call < call) return calls_.push_back({call}), calls_.back();
    const auto it = std::lower_bound(calls_.begin(), calls_.end(), call,
                                     [](const Call& c, std::uint32_t k) { return c.call < k; });
    return it != calls_.end() && it->call == call ? *it : *calls_.insert(it, Call{call});
  }
  Call* find(std::uint32_t call) {
    const auto it = std::lower_bound(calls_.begin(), calls_.end(), call,
                                     [](const Call& c, std::uint32_t k) { return c.call < k; });
    return it != calls_.end() && it->call == call ? &*it : nullptr;
  }
  void erase(const Call& c) { calls_.erase(calls_.begin() + (&c - calls_.data())); }
  // The calls left, in order.
  const std::vector<Call>& all() const { return calls_; }
  void clear() { calls_.clear(); }

 private:
  std::vector<Call> calls_;
};

}  // namespace mstep
