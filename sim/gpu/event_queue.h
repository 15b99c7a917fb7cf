// The GPU model's pending events, taken in (time, seq) order: the order of one priority queue,
// at less cost. About half of a contended run's events are due at the instant being processed
// (the dispatch that follows every cohort end). Those wait in a FIFO, in seq order at O(1) each
// way, instead of climbing to the top of the heap and sifting back down. Taking the smaller head
// of the two sorted sources keeps the one order: the FIFO only ever holds events of one instant,
// appended in seq order. The heap is 4-ary: half the depth of a binary heap, and the four
// children of a node share a cache line or two. Internal to sim/gpu.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace gpreempt::sim::gpu {

template <typename Event, typename Time>
class EventQueue {
 public:
  // `now`: the instant being processed. An event due then joins the FIFO when it holds that
  // instant's events (or none); any other goes to the heap.
  void push(const Event& e, Time now) {
    if (e.t == now && (head_ == fifo_.size() || fifo_.back().t == e.t)) fifo_.push_back(e);
    else heap_push(e);
  }
  bool empty() const { return head_ == fifo_.size() && heap_.empty(); }
  const Event& top() const { return from_fifo() ? fifo_[head_] : heap_.front(); }
  void pop() {
    if (!from_fifo()) {
      heap_pop();
      return;
    }
    if (++head_ == fifo_.size()) {  // drained: reuse the storage
      fifo_.clear();
      head_ = 0;
    }
  }

 private:
  static constexpr std::size_t kArity = 4;

  bool from_fifo() const {
    if (head_ == fifo_.size()) return false;
    return heap_.empty() || heap_.front() > fifo_[head_];
  }
  void heap_push(const Event& e) {
    std::size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!(heap_[parent] > e)) break;
      heap_[i] = std::move(heap_[parent]);
      i = parent;
    }
    heap_[i] = e;
  }
  void heap_pop() {
    Event last = std::move(heap_.back());
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = i * kArity + 1;
      if (first >= n) break;
      std::size_t least = first;
      const std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c)
        if (heap_[least] > heap_[c]) least = c;
      if (!(last > heap_[least])) break;
      heap_[i] = std::move(heap_[least]);
      i = least;
    }
    heap_[i] = std::move(last);
  }

  std::vector<Event> heap_;  // a 4-ary min-heap by (t, seq)
  std::vector<Event> fifo_;
  std::size_t head_ = 0;
};

}  // namespace gpreempt::sim::gpu
