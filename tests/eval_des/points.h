// Small DES points shared by the tests: one online ResNet-18-like client against one offline
// training-like job on one simulated MI308X, a few hundred requests (milliseconds of CPU).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "eval/des/spec.h"

namespace gpreempt::eval::des::testing {

inline nlohmann::ordered_json small_point(const std::string& baseline, uint64_t requests = 200,
                                          uint64_t seed = 7) {
  return nlohmann::ordered_json::parse(R"({
    "profile": "mi308x", "gpus": 1, "seed": )" + std::to_string(seed) + R"(,
    "baseline": ")" + baseline + R"(",
    "online": [{"name": "r18", "gpu": 0, "arrival": {"kind": "poisson", "rate_hz": 50},
                "requests": )" + std::to_string(requests) + R"(,
                "kernels": [{"name": "conv", "duration_us": 300, "cus": 80},
                            {"name": "body", "duration_us": 800, "cus": 60, "rounds": 4},
                            {"name": "fc", "duration_us": 100, "cus": 8}]}],
    "offline": [{"name": "r50", "gpu": 0,
                 "kernels": [{"name": "fwd", "duration_us": 6000, "cus": 80, "rounds": 6},
                             {"name": "bwd", "duration_us": 12000, "cus": 80, "rounds": 12}]}],
    "record": {"timeline": true}
  })");
}

inline Spec small_spec(const std::string& baseline, uint64_t requests = 200, uint64_t seed = 7) {
  return parse_spec(small_point(baseline, requests, seed));
}

}  // namespace gpreempt::eval::des::testing
