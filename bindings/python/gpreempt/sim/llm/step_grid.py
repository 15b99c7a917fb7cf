"""The DES's step grid: what one serving step launches, recorded with the real model code under
torch_mode over a grid of batch shapes, for gpreempt-des's LLM server (docs/llm.md, "The DES form").

    /usr/bin/python3 -m gpreempt.sim.llm.step_grid --model llama-8b --out llama-8b-steps.json
    /usr/bin/python3 -m gpreempt.sim.llm.step_grid --model deepseek-v3 --tp 8 --out v3-tp8.json

A step's kernels depend on its batch: the tokens being prefilled, the sequences decoding and how
much context they read. Each grid point is a step of one prefill chunk of `prefill_tokens` tokens
(at context 0) and `decode_seqs` decodes whose attention reads `decode_len` cached tokens each,
every sequence sampling; the executor's parts give its kernels (executor.GraphExecutor.parts): the
head (embedding rows), one layer per layer kind, the tail (final norm, LM head, sampling). Kernels
are kept as torch_mode priced them, before timing (name, grid, workgroup, FLOPs, bytes, math type,
matrix cores), so that gpreempt-des times them on the profile it simulates with the same roofline
(sim/gpu/roofline.h) and interpolates FLOPs and bytes between grid points (eval/des/llm/step_grid.h).

With --tp N the grid is one GPU's shard of a model split over N (tensor_parallel.py): every kernel
is the shard's, and a kernel after which the shards exchange results carries that collective's
bus bytes (an eighth field, "collective", on a mark after it); the document says "tp": N.

No GPU is needed: the executor records into a list instead of dispatching.
"""
import argparse
import json
import sys

SCHEMA = "gpreempt-llm-step-grid"
VERSION = 1

# The axes: token counts up to vLLM's default max_num_batched_tokens (8192), decode batches up to
# 256 (every size below 5 exactly: the number of attention groups changes there), padded decode
# lengths in 16-token KV blocks up to the ShareGPT filter's 2048-token maximum.
AXES = {"prefill_tokens": [0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192],
        "decode_seqs": [0, 1, 2, 3, 4, 8, 16, 32, 64, 128, 256],
        "decode_len": [16, 128, 256, 512, 1024, 2048]}
QUICK_AXES = {"prefill_tokens": [0, 16, 256, 2048], "decode_seqs": [0, 1, 2, 3, 4, 32],
              "decode_len": [16, 512, 2048]}


def _ops(kernels):
    # A tensor-parallel shard's collective keeps its eighth field, "collective": the DES folds it
    # into the kernel before it (eval/des/llm/step_grid.h).
    return [[k[0], list(k[1]), list(k[2]), float(k[3]), float(k[4]), k[5], bool(k[6])] + list(k[7:])
            for k in kernels]


def _segments(model):
    """The layers as [[kind, count], ...] runs, in order."""
    out = []
    for i in range(len(model.layers)):
        kind = model.layer_kind(i)
        if out and out[-1][0] == kind:
            out[-1][1] += 1
        else:
            out.append([kind, 1])
    return out


def grid(model, axes=None, block_size=16, progress=None):
    # model.tp > 1: the shard's kernels and collective marks (the document's "tp" says so).
    """The grid document for `model` (a llama.Llama or deepseek.DeepSeek)."""
    from .executor import GraphExecutor

    axes = axes or AXES
    ex = GraphExecutor(model, block_size)
    points = []
    total = len(axes["prefill_tokens"]) * len(axes["decode_seqs"]) * len(axes["decode_len"])
    for p in axes["prefill_tokens"]:
        for d in axes["decode_seqs"]:
            for c in axes["decode_len"]:
                if progress:
                    progress(len(points), total)
                if p == 0 and d == 0:
                    continue  # no step is empty
                seqs = [(1, c - 1, True)] * d + ([(p, 0, True)] if p else [])
                head, layers, tail = ex.parts(seqs)
                points.append({"prefill_tokens": p, "decode_seqs": d, "decode_len": c,
                               "head": _ops(head),
                               "layers": {str(k): _ops(v) for k, v in layers.items()},
                               "tail": _ops(tail)})
    return {"schema": SCHEMA, "version": VERSION, "model": model.config.name, "tp": model.tp,
            "block_size": block_size, "decode_groups": model.decode_groups,
            "layers": _segments(model), "axes": axes, "points": points}


def _grid_models():
    """serve's models, and DeepSeek-V3, which only a node holds (--tp 8)."""
    from ..serve import _models
    from . import deepseek

    return dict(_models(), **{"deepseek-v3": (deepseek.DeepSeek, deepseek.DEEPSEEK_V3, deepseek)})


def main(argv=None):
    from ..serve import MODEL_HELP
    from . import deepseek, tensor_parallel

    ap = argparse.ArgumentParser(prog="python3 -m gpreempt.sim.llm.step_grid",
                                 description="Record the kernels of LLM serving steps over a grid "
                                             "of batch shapes, for gpreempt-des's LLM server.")
    ap.add_argument("--model", default="llama-8b",
                    help=MODEL_HELP + ", deepseek-v3 (DeepSeek-V3: 671 B, for --tp 8)")
    ap.add_argument("--tp", type=int, default=1,
                    help="record one GPU's shard of the model split over this many GPUs, as vLLM's "
                         "tensor parallelism splits it (DeepSeek models only; default 1)")
    ap.add_argument("--out", required=True, help="the grid (JSON) to write")
    ap.add_argument("--block-size", type=int, default=16)
    ap.add_argument("--decode-groups", type=int, default=4)
    ap.add_argument("--quick", action="store_true", help="a coarse grid (tests)")
    a = ap.parse_args(argv)
    models = _grid_models()
    if a.model not in models:
        ap.error("unknown model %r (%s)" % (a.model, ", ".join(models)))
    cls, config, _ = models[a.model]
    if a.tp < 1:
        ap.error("--tp must be at least 1")
    if a.tp == 1:
        model = cls(config, decode_groups=a.decode_groups)
    elif cls is not deepseek.DeepSeek:
        ap.error("--tp: only the DeepSeek models are split (tensor_parallel.py)")
    else:
        try:
            model = cls(tensor_parallel.shard(config, a.tp), decode_groups=a.decode_groups, tp=a.tp)
        except ValueError as e:
            ap.error("--tp: %s" % e)

    def progress(i, n):
        if sys.stderr.isatty():
            sys.stderr.write("\rstep grid: %d/%d points" % (i, n))
    doc = grid(model, QUICK_AXES if a.quick else AXES, a.block_size, progress)
    with open(a.out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
