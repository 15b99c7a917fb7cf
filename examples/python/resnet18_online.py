"""Case A/B online side: ResNet-18, batch 1, requests at 20/s (Poisson or fixed), on the simulated GPU;
latency per request from its arrival until the result is on the host, P50/P95/P99.

    kfdsim run -- python3 examples/python/resnet18_online.py --duration 10
"""
import argparse
import random
import time

import torch
import torchvision

import gpreempt.sim as sim
from common import latency_summary, show_my_queues


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=10.0, help="seconds of requests")
    ap.add_argument("--rate", type=float, default=20.0, help="requests per second")
    ap.add_argument("--arrival", choices=["poisson", "fixed"], default="poisson")
    ap.add_argument("--priority", type=int, default=-1, help="stream priority (-1 high, 0, 1 low)")
    ap.add_argument("--trace", help="write the kernel trace (JSON Lines) here")
    a = ap.parse_args()
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    rng = random.Random(1)
    lat = []
    with torch.no_grad(), sim.torch_mode(trace=a.trace), sim.stream(priority=a.priority):
        model(x)[0, 0].item()  # warm-up: creates the queue
        show_my_queues()
        start = time.monotonic()
        arrival = start
        while arrival - start < a.duration:
            time.sleep(max(0.0, arrival - time.monotonic()))
            model(x)[0, 0].item()
            lat.append((time.monotonic() - arrival) * 1e3)
            arrival += rng.expovariate(a.rate) if a.arrival == "poisson" else 1.0 / a.rate
    print("online resnet18: " + latency_summary(lat))


if __name__ == "__main__":
    main()
