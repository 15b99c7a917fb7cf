"""The user's online toy service: Linear 512, batch 32, one request every 500 ms on the simulated GPU,
with each request's latency (submit until its result is on the host).

    kfdsim run -- python3 examples/python/toy_online.py --requests 20
"""
import argparse
import time

import torch

import gpreempt.sim as sim
from common import latency_summary, show_my_queues


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--interval", type=float, default=0.5, help="seconds between requests")
    ap.add_argument("--priority", type=int, default=-1, help="stream priority (-1 high, 0, 1 low)")
    a = ap.parse_args()
    model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512))
    model.eval()
    x = torch.randn(32, 512)
    lat = []
    next_t = time.monotonic()
    with torch.no_grad(), sim.torch_mode(compute=True), sim.stream(priority=a.priority):
        for i in range(a.requests):
            time.sleep(max(0.0, next_t - time.monotonic()))
            t0 = time.monotonic()
            y = model(x)
            y[0, 0].item()  # the answer goes back to the host: waits for the GPU
            lat.append((time.monotonic() - t0) * 1e3)
            if i == 0:
                show_my_queues()
            print("request %d: %.2f ms" % (i, lat[-1]), flush=True)
            next_t += a.interval
    print("online: " + latency_summary(lat))


if __name__ == "__main__":
    main()
