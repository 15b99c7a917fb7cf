"""The offline GEMM loops of the user's notes: torch.mm of 4000x4000 (or --size 2048) matrices, back to
back on the simulated GPU; iterations per second.

    kfdsim run -- python3 examples/python/mm_loop.py --duration 10
"""
import argparse
import time

import torch

import gpreempt.sim as sim
from common import show_my_queues


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=4000)
    ap.add_argument("--duration", type=float, default=10.0)
    a = ap.parse_args()
    a_mat = torch.randn(a.size, a.size, device="meta")
    b_mat = torch.randn(a.size, a.size, device="meta")
    n = 0
    with sim.torch_mode():
        torch.mm(a_mat, b_mat)
        show_my_queues()
        start = time.monotonic()
        while time.monotonic() - start < a.duration:
            for _ in range(16):
                torch.mm(a_mat, b_mat)
            n += 16
            sim.synchronize()
        el = time.monotonic() - start
    print("torch.mm %dx%d: %d iterations in %.2f s, %.1f it/s" % (a.size, a.size, n, el, n / el))


if __name__ == "__main__":
    main()
