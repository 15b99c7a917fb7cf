"""Host cost of gpreempt.sim: µs per simulated dispatch, and host time / simulated GPU time of model
steps (target for a ResNet-50 batch-64 training step: <= 0.2, the simulated GPU must be the
bottleneck, not Python).

    kfdsim run -- /usr/bin/python3 bench/python/bench_sim_torch.py [--json]

Host time is this process's CPU time (time.process_time), so a loaded machine does not inflate it;
wall time is printed next to it. Simulated GPU time is the sum of the kernels' durations alone on
the device (roofline busy time + the CP's packet overhead), i.e. the step time on an idle GPU.
"""
import argparse
import json
import time

import torch
import torchvision

import gpreempt.sim as sim


def dispatch_cost(n):
    q = sim.device().create_queue(ring_packets=1 << 16)
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(n):
        q.dispatch_op("bench", [1 << 20], [256], 1e6, 1e6, "fp32", False)
    c1, w1 = time.process_time(), time.perf_counter()
    q.synchronize()
    return {"dispatches": n, "host_cpu_us_per_dispatch": (c1 - c0) / n * 1e6,
            "host_wall_us_per_dispatch": (w1 - w0) / n * 1e6}


def model_step(name, batch, train, steps):
    if name == "transformer":
        layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072)
        model = torch.nn.TransformerEncoder(layer, num_layers=12)
        x = torch.randn(128, batch, 768)
    else:
        model = getattr(torchvision.models, name)(weights=None)
        x = torch.randn(batch, 3, 224, 224)
    if not train:
        model.eval()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    overhead_us = sim.device().profile["packet_overhead_ns"] / 1e3
    rows = []
    for i in range(steps + 1):
        with sim.torch_mode() as m:
            c0, w0 = time.process_time(), time.perf_counter()
            if train:
                model(x).float().mean().backward()
                opt.step()
                opt.zero_grad()
            else:
                with torch.no_grad():
                    model(x)
            c1, w1 = time.process_time(), time.perf_counter()
            sim.synchronize()
            w2 = time.perf_counter()
        st = m.stats()
        gpu_us = st["busy_us"] + st["dispatches"] * overhead_us
        if i:  # the first step warms caches (optimizer state, meta twins)
            rows.append({"host_cpu_ms": (c1 - c0) * 1e3, "host_wall_ms": (w1 - w0) * 1e3,
                         "sim_gpu_ms": gpu_us / 1e3, "step_wall_ms": (w2 - w0) * 1e3,
                         "dispatches": st["dispatches"], "tflop": st["flops"] / 1e12})
    best = min(rows, key=lambda r: r["host_cpu_ms"])
    best["ratio_host_cpu_to_sim_gpu"] = best["host_cpu_ms"] / best["sim_gpu_ms"]
    best["host_cpu_us_per_dispatch"] = best["host_cpu_ms"] * 1e3 / best["dispatches"]
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--steps", type=int, default=3)
    a = ap.parse_args()
    res = {"profile": sim.device().profile["name"], "raw_dispatch": dispatch_cost(20000)}
    for label, name, batch, train in [("resnet50_train_b64", "resnet50", 64, True),
                                      ("resnet50_train_b256", "resnet50", 256, True),
                                      ("resnet18_infer_b1", "resnet18", 1, False),
                                      ("transformer_train_b8", "transformer", 8, True)]:
        res[label] = model_step(name, batch, train, a.steps)
    if a.json:
        print(json.dumps(res, indent=1))
        return
    r = res["raw_dispatch"]
    print("profile %s" % res["profile"])
    print("raw dispatch: %.2f µs host CPU (%.2f µs wall) per dispatch"
          % (r["host_cpu_us_per_dispatch"], r["host_wall_us_per_dispatch"]))
    for k, v in res.items():
        if isinstance(v, dict) and "sim_gpu_ms" in v:
            print("%-22s %5d dispatches %7.3f TFLOP  host %7.1f ms CPU (%7.1f wall)  "
                  "simulated GPU %8.2f ms  host/GPU %.3f  (%.1f µs/dispatch)"
                  % (k, v["dispatches"], v["tflop"], v["host_cpu_ms"], v["host_wall_ms"],
                     v["sim_gpu_ms"], v["ratio_host_cpu_to_sim_gpu"],
                     v["host_cpu_us_per_dispatch"]))


if __name__ == "__main__":
    main()
