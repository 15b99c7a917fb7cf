"""The plainly written Llama decode step of issue 24's one measured reference, on the simulated GPU.

Two 8B-sized layers (hidden 4096, 32 query and 8 KV heads of 128, SwiGLU 14336), batch 32, context
1024, fp16, written as the reference was: the KV cache concatenated with the new token's keys and
values every step (torch.cat), grouped-query attention by expanding and reshaping the keys and
values to every query head, attention written out (matmul, softmax, matmul). On an NVIDIA H200
(4.8 TB/s) that step took 2.21 ms of GPU kernel time; bandwidth-bound, it should take about
2.21 × 4.8 / 5.3 = 2.0 ms on the MI308X profile (docs/llm.md, *Calibration against a measured
step*).

    kfdsim run --profile mi308x -- /usr/bin/python3 bench/python/plain_decode_step.py [--json]

Prints the step's simulated kernel time (the sum of its kernels' durations on the simulated GPU,
as a profiler's kernel time sums them), bytes and FLOPs, per ATen operator.
"""
import argparse
import collections
import json
import os
import sys
import tempfile

import torch

import gpreempt.sim as sim

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN = 4096, 32, 8, 128, 14336
BATCH, CONTEXT, LAYERS = 32, 1024, 2
H200_MS, H200_TBS, MI308X_TBS = 2.21, 4.8, 5.3


def rms_norm(x, w, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    a, b = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-b, a), dim=-1)


def repeat_kv(x, n):
    # The reference's GQA: every KV head expanded to the query heads it serves, then reshaped, which
    # copies (the expanded tensor is not contiguous).
    b, h, s, d = x.shape
    return x[:, :, None, :, :].expand(b, h, n, s, d).reshape(b, h * n, s, d)


class PlainLayer(torch.nn.Module):
    def __init__(self, device, dtype):
        super().__init__()
        p = lambda *s: torch.nn.Parameter(torch.empty(*s, device=device, dtype=dtype))
        self.wq = p(HEADS * HEAD_DIM, HIDDEN)
        self.wk, self.wv = p(KV_HEADS * HEAD_DIM, HIDDEN), p(KV_HEADS * HEAD_DIM, HIDDEN)
        self.wo = p(HIDDEN, HEADS * HEAD_DIM)
        self.w1, self.w3, self.w2 = p(FFN, HIDDEN), p(FFN, HIDDEN), p(HIDDEN, FFN)
        self.n1, self.n2 = p(HIDDEN), p(HIDDEN)

    def forward(self, x, cos, sin, past_k, past_v):
        b, s, _ = x.shape
        h = rms_norm(x, self.n1)
        q = torch.nn.functional.linear(h, self.wq).view(b, s, HEADS, HEAD_DIM).transpose(1, 2)
        k = torch.nn.functional.linear(h, self.wk).view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = torch.nn.functional.linear(h, self.wv).view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        kr, vr = repeat_kv(k, HEADS // KV_HEADS), repeat_kv(v, HEADS // KV_HEADS)
        att = torch.matmul(q, kr.transpose(2, 3)) / HEAD_DIM ** 0.5
        att = torch.softmax(att.float(), dim=-1).to(q.dtype)
        o = torch.matmul(att, vr).transpose(1, 2).reshape(b, s, HEADS * HEAD_DIM)
        x = x + torch.nn.functional.linear(o, self.wo)
        h = rms_norm(x, self.n2)
        m = torch.nn.functional.silu(torch.nn.functional.linear(h, self.w1)) * torch.nn.functional.linear(h, self.w3)
        return x + torch.nn.functional.linear(m, self.w2), k, v


def step_kernels():
    """The step's dispatches under torch_mode, each a trace line (name, flops, bytes, start, end)."""
    dev, dt = "meta", torch.float16
    layers = [PlainLayer(dev, dt) for _ in range(LAYERS)]
    x = torch.empty(BATCH, 1, HIDDEN, device=dev, dtype=dt)
    cos = torch.empty(1, 1, 1, HEAD_DIM, device=dev, dtype=dt)
    sin = torch.empty(1, 1, 1, HEAD_DIM, device=dev, dtype=dt)
    past = [(torch.empty(BATCH, KV_HEADS, CONTEXT, HEAD_DIM, device=dev, dtype=dt),
             torch.empty(BATCH, KV_HEADS, CONTEXT, HEAD_DIM, device=dev, dtype=dt)) for _ in range(LAYERS)]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "step.jsonl")
        with torch.no_grad(), sim.torch_mode(trace=path):
            for layer, (pk, pv) in zip(layers, past):
                x, _, _ = layer(x, cos, sin, pk, pv)
        with open(path) as f:
            return [json.loads(line) for line in f]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    a = ap.parse_args(argv)
    ks = step_kernels()
    by = collections.OrderedDict()
    for k in ks:
        e = by.setdefault(k["name"], {"kernels": 0, "us": 0.0, "bytes": 0, "flops": 0})
        e["kernels"] += 1
        e["us"] += k["end_us"] - k["start_us"]
        e["bytes"] += k["bytes"]
        e["flops"] += k["flops"]
    total_ms = sum(e["us"] for e in by.values()) / 1e3
    res = {"profile": sim.device().profile["name"], "kernel_ms": round(total_ms, 3),
           "bytes": sum(e["bytes"] for e in by.values()), "flops": sum(e["flops"] for e in by.values()),
           "expected_ms": round(H200_MS * H200_TBS / MI308X_TBS, 3), "ops": by}
    if a.json:
        json.dump(res, sys.stdout, indent=1)
        print()
        return 0
    print(f"{res['profile']}: plain decode step, {LAYERS} layers, batch {BATCH}, context {CONTEXT}, fp16")
    print(f"{'operator':<28}{'kernels':>8}{'ms':>9}{'GB':>9}{'GFLOP':>9}")
    for name, e in sorted(by.items(), key=lambda kv: -kv[1]["us"]):
        print(f"{name:<28}{e['kernels']:>8}{e['us'] / 1e3:>9.3f}{e['bytes'] / 1e9:>9.3f}{e['flops'] / 1e9:>9.2f}")
    print(f"{'total':<28}{len(ks):>8}{total_ms:>9.3f}{res['bytes'] / 1e9:>9.3f}{res['flops'] / 1e9:>9.2f}")
    print(f"expected from the H200 reference scaled by HBM bandwidth: {res['expected_ms']:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
