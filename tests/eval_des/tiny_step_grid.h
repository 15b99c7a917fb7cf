// A step grid small enough to check by hand, for the DES's LLM server tests: prefill tokens
// {0, 16, 64} × decode sequences {0, 1, 2} × decode lengths {16, 64}, two layers of one kind.
// Each point's "mm" has FLOPs 1e9 × (prefill + decodes) and its "attn" bytes
// 1e6 × (decodes × length + prefill²), so interpolation can be checked by hand. With `tp` > 1 the
// grid is one GPU's shard's: the mm and the silu are each followed by a collective of
// kTinyGridBusBytes (the marks step_grid.py writes after those kernels).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace gpreempt::eval::des::testing {

constexpr double kTinyGridBusBytes = 4e6;

inline std::string write_tiny_step_grid(uint32_t tp) {
  using nlohmann::json;
  json points = json::array();
  for (int p : {0, 16, 64})
    for (int d : {0, 1, 2})
      for (int c : {16, 64}) {
        if (p == 0 && d == 0) continue;
        const json vec = {"norm", {65536}, {256}, 0, 1e6, "bf16", false};
        const json mark = {"all_reduce", {1, 1, 1}, {1, 1, 1}, 0, kTinyGridBusBytes, "bf16", false, "collective"};
        json layer = json::array({{"mm", {4096}, {256}, 1e9 * (p + d), 1e7, "bf16", true}});
        if (tp > 1) layer.push_back(mark);
        layer.push_back({"attn", {16384}, {256}, 0, 1e6 * (d * c + p * p), "bf16", false});
        layer.push_back({"silu", {16384}, {256}, 0, 1e6, "bf16", false});
        if (tp > 1) layer.push_back(mark);
        points.push_back({{"prefill_tokens", p}, {"decode_seqs", d}, {"decode_len", c}, {"head", {vec}},
                          {"layers", {{"0", layer}}}, {"tail", {vec}}});
      }
  const json doc = {{"schema", "gpreempt-llm-step-grid"}, {"version", 1}, {"model", "tiny"}, {"tp", tp},
                    {"block_size", 16}, {"decode_groups", 2}, {"layers", {{0, 2}}},
                    {"axes", {{"prefill_tokens", {0, 16, 64}}, {"decode_seqs", {0, 1, 2}}, {"decode_len", {16, 64}}}},
                    {"points", points}};
  char name[] = "/tmp/des_llm_grid_XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  ::close(fd);
  std::ofstream(name) << doc.dump();
  return name;
}

// The grid's file, removed with the test.
struct TinyGridFile {
  explicit TinyGridFile(uint32_t tp = 1) : path(write_tiny_step_grid(tp)) {}
  TinyGridFile(const TinyGridFile&) = delete;
  TinyGridFile& operator=(const TinyGridFile&) = delete;
  ~TinyGridFile() { std::remove(path.c_str()); }
  std::string path;
};

}  // namespace gpreempt::eval::des::testing
