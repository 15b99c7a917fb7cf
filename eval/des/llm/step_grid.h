// What one LLM serving step launches, as a function of its batch: the step grid written by
// bindings/python/gpreempt/sim/llm/step_grid.py (the real model code under torch_mode), read here
// and turned into the step's kernel program for the DES (docs/llm.md, "The DES form").
//
// A step is placed on the grid by three numbers (StepShape): the tokens it prefills, the sequences
// it decodes and the padded context those decodes read. Between grid points every kernel's FLOPs
// and bytes are interpolated linearly on each axis (beyond the last point: extrapolated from the
// last two), then timed on the simulated profile with the roofline torch_mode uses
// (sim/gpu/roofline.h), so that the grid does not depend on the profile. Where the corners around a
// shape launch different kernels (another number of attention groups), the step takes the kernels
// of the grid point at or above it on every axis instead.
//
// A grid recorded with --tp N is one GPU's shard of a model split over N GPUs (its "tp"): each
// kernel after which the shards exchange results carries that collective's bus bytes (the bytes
// each GPU sends), interpolated as FLOPs and bytes are, and the step's program gives it a time
// (CollectiveCost) and makes what follows wait for it (docs/llm.md, "Tensor parallel").
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "eval/des/llm/scheduler.h"
#include "eval/des/program.h"
#include "sim/gpu/profile.h"
#include "sim/gpu/roofline.h"

namespace gpreempt::eval::des::llm {

// A kernel as torch_mode priced it, before timing.
struct Op {
  std::string name;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> workgroup{1, 1, 1};
  double flops = 0;
  double bytes = 0;
  sim::gpu::MathType math = sim::gpu::MathType::kBf16;
  bool matrix = false;
  double collective_bytes = 0;  // bus bytes of the shards' collective after this kernel (0: none)
};

// A collective's time: a fixed part (launch and link latency) plus its bus bytes at the bus
// bandwidth, the cost model of a ring all-reduce (rccl-tests' busbw convention).
struct CollectiveCost {
  double latency_us = 0;
  double bus_gbps = 0;  // 0: the bytes cost nothing
  sim::gpu::SimTime ns(double bus_bytes) const;
};

struct StepShape {
  uint32_t prefill_tokens = 0;  // tokens of the step's prefill chunks
  uint32_t decode_seqs = 0;     // sequences decoding one token
  double decode_len = 0;        // mean padded length their attention reads (tokens)
};

// The shape of `b` as the model's attention plans it (attention.plan_groups): one-token sequences
// are decodes, sorted by context and cut into at most `decode_groups` groups, each padded to its
// longest context rounded up to whole blocks; everything else is a prefill chunk. Approximations:
// several prefill chunks count as one of their total length, and a chunk's earlier context is not
// read (attention over a continuing chunk costs more than the grid charges).
StepShape step_shape(const Batch& b, uint32_t block_size, uint32_t decode_groups);

class StepGrid {
 public:
  // Throws SpecError naming `spec_path` for an unreadable or malformed grid.
  static std::shared_ptr<const StepGrid> load(const std::string& file, const std::string& spec_path);

  const std::string& model() const { return model_; }
  uint32_t block_size() const { return block_size_; }
  uint32_t decode_groups() const { return decode_groups_; }
  uint32_t tp() const { return tp_; }  // GPUs the model is split over (1: the whole model)
  // The step's kernels, one queue, in launch order (the host launches them all and reads the
  // sampled tokens when the last one ends).
  // merge_vector_runs: each run of consecutive vector (non-matrix) kernels becomes one kernel
  // lasting what they did together, packet overheads included (step_grid.cpp says why).
  // A kernel followed by a collective ends its run and gets the collective's time from `coll`.
  Program program(const StepShape& s, const sim::gpu::GpuProfile& p, bool merge_vector_runs = true,
                  const CollectiveCost& coll = {}) const;
  // The interpolated kernels of one step (head, every layer, tail), before timing.
  std::vector<Op> ops(const StepShape& s) const;

 private:
  struct Point {
    std::vector<Op> head, tail;
    std::map<int, std::vector<Op>> layers;  // by layer kind
    std::vector<Op> expanded(const std::vector<std::pair<int, uint32_t>>& segments) const;
  };
  const Point* at(std::size_t p, std::size_t d, std::size_t c) const;

  std::string model_;
  uint32_t block_size_ = 16;
  uint32_t decode_groups_ = 4;
  uint32_t tp_ = 1;
  std::vector<std::pair<int, uint32_t>> segments_;  // layer kinds in order: (kind, repeat)
  std::array<std::vector<double>, 3> axes_;          // prefill tokens, decode seqs, decode len
  std::map<std::array<std::size_t, 3>, Point> points_;
};

}  // namespace gpreempt::eval::des::llm
