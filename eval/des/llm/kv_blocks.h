// The paged KV cache's budget as vLLM's KVCacheManager keeps it without prefix caching: a fixed
// number of blocks of `block_size` tokens, held per request. Port of
// bindings/python/gpreempt/sim/llm/kv_blocks.py (the live server's), kept equal to it by
// tests/python/test_llm_des_parity.py.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <unordered_map>

namespace gpreempt::eval::des::llm {

class KvBlocks {
 public:
  KvBlocks(uint64_t blocks, uint32_t block_size) : blocks_(blocks), block_size_(block_size), free_(blocks) {
    if (blocks < 1 || block_size < 1) throw std::invalid_argument("the KV cache needs at least one block of one token");
  }
  uint64_t blocks() const { return blocks_; }
  uint32_t block_size() const { return block_size_; }
  uint64_t free() const { return free_; }
  uint64_t used() const { return blocks_ - free_; }
  uint64_t blocks_for(uint64_t tokens) const { return (tokens + block_size_ - 1) / block_size_; }
  uint64_t held(uint32_t owner) const {
    auto it = held_.find(owner);
    return it == held_.end() ? 0 : it->second;
  }
  // Make `owner` hold enough blocks for `tokens` tokens; false (and nothing taken) when the free
  // blocks do not suffice.
  bool grow(uint32_t owner, uint64_t tokens) {
    const uint64_t want = blocks_for(tokens), have = held(owner);
    if (want <= have) return true;
    if (want - have > free_) return false;
    free_ -= want - have;
    held_[owner] = want;
    return true;
  }
  void release(uint32_t owner) {
    auto it = held_.find(owner);
    if (it == held_.end()) return;
    free_ += it->second;
    held_.erase(it);
  }

 private:
  uint64_t blocks_;
  uint32_t block_size_;
  uint64_t free_;
  std::unordered_map<uint32_t, uint64_t> held_;
};

}  // namespace gpreempt::eval::des::llm
