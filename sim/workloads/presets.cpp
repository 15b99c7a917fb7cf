#include "presets.h"

namespace gpreempt::workloads {

namespace {

// A 1-D kernel of `items` work-items in workgroups of `wg` (the grid shapes PyTorch's
// elementwise and GEMM kernels use on gfx942 are 1-D or 2-D; only the workgroup count matters).
simrt::Kernel k(const char* name, uint32_t items, uint16_t wg, uint64_t wg_cost_ns) {
  simrt::Kernel kk;
  kk.name = name;
  kk.grid = {items, 1, 1};
  kk.workgroup = {wg, 1, 1};
  kk.wg_cost_ns = wg_cost_ns;
  return kk;
}

std::vector<simrt::Kernel> repeat(std::vector<simrt::Kernel> layer, int times) {
  std::vector<simrt::Kernel> out;
  for (int i = 0; i < times; ++i) out.insert(out.end(), layer.begin(), layer.end());
  return out;
}

std::vector<Preset> build() {
  std::vector<Preset> v;
  {
    // Case-A: CNN inference, large grids (262,144 work-items per convolution).
    Preset p;
    p.name = "cnn";
    p.description = "Case-A CNN: 8 convolutions of 262,144 work-items, pooling, classifier";
    p.online_request = repeat({k("conv2d_fwd", 262144, 256, 40'000), k("relu_fwd", 262144, 256, 4'000)}, 8);
    p.online_request.push_back(k("avgpool_fwd", 65536, 256, 10'000));
    p.online_request.push_back(k("linear_fwd", 4096, 256, 20'000));
    p.online_rate_hz = 20;
    // Decoding and resizing the input image on the host: the time an early hint has to act.
    p.online_preprocess_us = 2000;
    p.offline_iteration = repeat({k("conv2d_fwd", 262144, 256, 40'000)}, 8);
    auto bwd = repeat({k("conv2d_bwd_data", 262144, 256, 50'000),
                       k("conv2d_bwd_weight", 262144, 256, 60'000)}, 8);
    p.offline_iteration.insert(p.offline_iteration.end(), bwd.begin(), bwd.end());
    p.offline_iteration.push_back(k("sgd_update", 1 << 20, 256, 5'000));
    v.push_back(p);
  }
  {
    // Case-B: Transformer, many small kernels (512 work-items).
    Preset p;
    p.name = "transformer";
    p.description = "Case-B Transformer: 12 layers x 6 kernels of 512 work-items";
    p.online_request = repeat({k("qkv_gemm", 512, 256, 30'000), k("attn_softmax", 512, 256, 10'000),
                               k("attn_gemm", 512, 256, 30'000), k("out_proj", 512, 256, 20'000),
                               k("mlp_gemm", 512, 256, 40'000), k("layernorm", 512, 256, 8'000)},
                              12);
    p.online_rate_hz = 20;
    p.offline_iteration = p.online_request;
    auto bwd = repeat({k("mlp_gemm_bwd", 512, 256, 80'000), k("attn_bwd", 512, 256, 60'000),
                       k("qkv_gemm_bwd", 512, 256, 60'000)},
                      12);
    p.offline_iteration.insert(p.offline_iteration.end(), bwd.begin(), bwd.end());
    v.push_back(p);
  }
  {
    // The notes' online model: Linear(512,512)-ReLU-Linear(512,512), batch 32, every 500 ms.
    Preset p;
    p.name = "toy-online";
    p.description = "seed 000 model A: Linear 512 x2, batch 32, one request every 500 ms";
    p.online_request = {k("linear_512_fwd", 32 * 512, 256, 12'000), k("relu_fwd", 32 * 512, 256, 3'000),
                        k("linear_512_fwd", 32 * 512, 256, 12'000)};
    p.online_rate_hz = 2;
    p.poisson = false;
    p.offline_iteration = p.online_request;
    v.push_back(p);
  }
  {
    // The notes' offline model: Linear 1024->2048->2048->1024 training, batch 64, SGD.
    Preset p;
    p.name = "toy-offline";
    p.description = "seed 000 model B: Linear 1024->2048->2048->1024 training, batch 64, SGD";
    const std::vector<simrt::Kernel> fwd = {
        k("linear_1024x2048_fwd", 64 * 2048, 256, 60'000), k("relu_fwd", 64 * 2048, 256, 4'000),
        k("linear_2048x2048_fwd", 64 * 2048, 256, 110'000), k("relu_fwd", 64 * 2048, 256, 4'000),
        k("linear_2048x1024_fwd", 64 * 1024, 256, 110'000)};
    p.online_request = fwd;
    p.online_rate_hz = 2;
    p.poisson = false;
    p.offline_iteration = fwd;
    const std::vector<simrt::Kernel> rest = {
        k("sum_loss", 64, 64, 5'000),
        k("linear_2048x1024_bwd_data", 64 * 2048, 256, 110'000),
        k("linear_2048x1024_bwd_weight", 2048 * 1024, 256, 8'000),
        k("relu_bwd", 64 * 2048, 256, 4'000),
        k("linear_2048x2048_bwd_data", 64 * 2048, 256, 110'000),
        k("linear_2048x2048_bwd_weight", 2048 * 2048, 256, 8'000),
        k("relu_bwd", 64 * 2048, 256, 4'000),
        k("linear_1024x2048_bwd_weight", 1024 * 2048, 256, 8'000),
        k("sgd_update", 2048 * 1024, 256, 3'000),
        k("sgd_update", 2048 * 2048, 256, 3'000),
        k("sgd_update", 1024 * 2048, 256, 3'000)};
    p.offline_iteration.insert(p.offline_iteration.end(), rest.begin(), rest.end());
    v.push_back(p);
  }
  {
    // test_simple_gemm_3min.py: a 2048x2048 fp32 GEMM in a loop (64x64 tiles -> 1024 workgroups);
    // the real run did 127,644 iterations in 3 minutes, 1.41 ms each: two rounds of ~700 us.
    Preset p;
    p.name = "gemm2048";
    p.description = "2048x2048 fp32 GEMM (1024 workgroups of 256), ~1.4 ms per GEMM";
    p.online_request = {k("sgemm_2048", 1024 * 256, 256, 700'000)};
    p.online_rate_hz = 10;
    p.offline_iteration = p.online_request;
    v.push_back(p);
  }
  return v;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = build();
  return all;
}

std::optional<Preset> find_preset(std::string_view name) {
  for (const auto& p : presets())
    if (p.name == name) return p;
  return std::nullopt;
}

uint64_t work_items(const simrt::Kernel& kk) {
  return static_cast<uint64_t>(kk.grid[0]) * kk.grid[1] * kk.grid[2];
}

}  // namespace gpreempt::workloads
