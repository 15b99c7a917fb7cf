"""An LLM server on the simulated GPU, benchmarked as vLLM's serving benchmark does it.

    kfdsim run -- /usr/bin/python3 -m gpreempt.sim.serve --model llama-8b --num-prompts 200 \\
        --request-rate 4 [--json]

A vLLM-style engine (continuous batching, chunked prefill under a per-step token budget, a paged
KV cache with a block budget, a maximum batch size: gpreempt.sim.llm.scheduler) serves a synthetic
ShareGPT-like request stream (gpreempt.sim.llm.workload) with a Llama- or DeepSeek-shaped model of
random weights (nothing is downloaded). Every step's kernels run on this process's simulated GPU
(gpreempt.sim.llm.executor replays them per step shape, as a HIP graph). Per request: TTFT, TPOT
and end-to-end latency on the simulated GPU's clock; per run: tokens/s and the share of requests
that met both objectives (--ttft-slo-ms, --tpot-slo-ms). docs/llm.md explains it all.
Exit codes: 0 ok, 1 operational failure (no simulated GPU, no PyTorch), 2 usage.
"""
import argparse
import json
import math
import sys
import time

from .workload import SCHEMA_VERSION  # lib/common/json_conventions.h, as every document

# MI308X: the 191.98 GB PyTorch sees; vLLM's default gpu_memory_utilization.
GPU_MEMORY_GB = 191.98
GPU_MEMORY_UTILIZATION = 0.92
# With --hint, a request's token count goes to gpreemptd at its first token and then every this
# many tokens: enough for the daemon to see a decode falling behind its TPOT objective within a
# fraction of a second, at one message per request per 16 steps rather than one per step.
TOKEN_REPORT_EVERY = 16


def _models():
    from .llm import deepseek, llama

    return {"llama-8b": (llama.Llama, llama.LLAMA_8B, llama),
            "llama-1b": (llama.Llama, llama.LLAMA_1B, llama),
            "deepseek-v2-lite": (deepseek.DeepSeek, deepseek.DEEPSEEK_V2_LITE, deepseek)}


MODEL_HELP = ("llama-8b (Llama-3.1-8B shapes), llama-1b (Llama-3.2-1B), deepseek-v2-lite "
              "(DeepSeek-V2-Lite: MLA, 64 routed + 2 shared experts, top 6)")


def default_kv_blocks(config, module, block_size, memory_gb=GPU_MEMORY_GB,
                      utilization=GPU_MEMORY_UTILIZATION):
    """KV blocks vLLM would get: the memory it may use, less the bf16 weights, in blocks."""
    free = memory_gb * 1e9 * utilization - 2 * module.param_count(config)
    return max(0, int(free // (block_size * module.kv_bytes_per_token(config))))


def _parser():
    ap = argparse.ArgumentParser(
        prog="python3 -m gpreempt.sim.serve",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Serve LLM requests on the simulated GPU (run under `kfdsim run --`) and "
                    "report TTFT, TPOT, end-to-end latency, tokens/s and objective attainment.",
        epilog="""how a step is formed (vLLM V1's scheduler):
  running requests first (1 token per decode, the next prompt chunk for a prefill), then waiting
  ones in arrival order while the batch holds fewer than --max-num-seqs and the step's
  --max-num-batched-tokens budget lasts; a request waits while its KV blocks do not fit the
  --kv-blocks budget, and a running request that cannot grow preempts the newest one (recompute).

examples:
  kfdsim run -- /usr/bin/python3 -m gpreempt.sim.serve --num-prompts 100 --request-rate 4
  kfdsim run -- /usr/bin/python3 -m gpreempt.sim.serve --dataset fixed --input-len 1024 \\
      --output-len 128 --num-prompts 32 --request-rate inf --json
  # bursty arrivals, MLPerf's server objectives for Llama-3.1-8B, protected by gpreemptd:
  kfdsim run -- /usr/bin/python3 -m gpreempt.sim.serve --request-rate 8 --arrival-cv 3 \\
      --ttft-slo-ms 2000 --tpot-slo-ms 100 --hint""")
    ap.add_argument("--model", default="llama-8b", help=MODEL_HELP + "; default llama-8b")
    w = ap.add_argument_group("workload")
    w.add_argument("--num-prompts", type=int, default=100, help="requests to serve (default 100)")
    w.add_argument("--request-rate", type=float, default=4.0,
                   help="mean arrivals per second, or inf: all at once (default 4)")
    w.add_argument("--arrival-cv", type=float, default=1.0,
                   help="coefficient of variation of the gaps between arrivals: 1 Poisson "
                        "(default), > 1 bursty (gamma; vLLM's --burstiness is 1/cv^2)")
    w.add_argument("--dataset", choices=["sharegpt", "fixed"], default="sharegpt",
                   help="sharegpt: lognormal lengths fitted to ShareGPT (mean 230 prompt, 203 "
                        "output tokens, vLLM's filter); fixed: --input-len/--output-len")
    w.add_argument("--input-len", type=int, default=1024,
                   help="prompt tokens with --dataset fixed (default 1024)")
    w.add_argument("--output-len", type=int, default=128,
                   help="output tokens with --dataset fixed (default 128)")
    w.add_argument("--seed", type=int, default=0, help="seed of arrivals and lengths (default 0)")
    e = ap.add_argument_group("engine (defaults: vLLM's for a GPU of >= 70 GiB)")
    e.add_argument("--max-num-seqs", type=int, default=1024,
                   help="most requests in one step's batch (default 1024)")
    e.add_argument("--max-num-batched-tokens", type=int, default=8192,
                   help="token budget of one step, prefill chunks included (default 8192)")
    e.add_argument("--block-size", type=int, default=16, help="tokens per KV block (default 16)")
    e.add_argument("--kv-blocks", type=int,
                   help="KV cache budget in blocks (default: what %.2f GB x %.2f leaves after "
                        "the weights)" % (GPU_MEMORY_GB, GPU_MEMORY_UTILIZATION))
    e.add_argument("--decode-groups", type=int, default=4,
                   help="padded attention batches the decodes are cut into (default 4)")
    o = ap.add_argument_group("objectives and output")
    o.add_argument("--ttft-slo-ms", type=float, default=500.0,
                   help="time-to-first-token objective (default 500: MLPerf's interactive "
                        "Llama-3.1-8B)")
    o.add_argument("--tpot-slo-ms", type=float, default=30.0,
                   help="time-per-output-token objective (default 30: MLPerf's interactive)")
    o.add_argument("--hint", nargs="?", const="", metavar="SOCKET",
                   help="mark each request with gpreempt.online_request() from its arrival to "
                        "its last token, reporting its first token and output tokens (for "
                        "ttft_/tpot_ objectives), over SOCKET (default $GPREEMPT_SOCKET, else "
                        "/run/gpreempt/gpreemptd.sock); without a daemon requests run unprotected")
    o.add_argument("--priority", type=int, choices=[-1, 0, 1], default=0,
                   help="HIP stream priority: -1 high, 0 normal (default), 1 low")
    o.add_argument("--json", action="store_true",
                   help="one JSON document: the run's figures and every request's")
    o.add_argument("--no-progress", action="store_true",
                   help="no status line on a terminal (a parent that shares the terminal)")
    o.add_argument("--ready-file", metavar="PATH",
                   help="after the start-up captures create PATH and start serving only once "
                        "PATH has been removed (how gpreempt demo lines its sides up)")
    return ap


def _check(ap, a):
    if a.model not in _models():
        ap.error("unknown model %r (known: %s)" % (a.model, ", ".join(_models())))
    for name in ("num_prompts", "max_num_seqs", "max_num_batched_tokens", "block_size",
                 "decode_groups", "input_len", "output_len"):
        if getattr(a, name) < 1:
            ap.error("--%s must be at least 1" % name.replace("_", "-"))
    if not a.request_rate > 0:
        ap.error("--request-rate must be positive (or inf)")
    if not (a.arrival_cv > 0 and math.isfinite(a.arrival_cv)):
        ap.error("--arrival-cv must be a positive number")
    if a.kv_blocks is not None and a.kv_blocks < 1:
        ap.error("--kv-blocks must be at least 1")
    if a.ttft_slo_ms <= 0 or a.tpot_slo_ms <= 0:
        ap.error("the objectives must be positive")


class _Progress:
    """One self-overwriting status line on a terminal (stderr), nothing otherwise."""

    def __init__(self, total, stream=sys.stderr, on=True):
        self.total = total
        self.stream = stream
        self.on = on and stream.isatty()
        self.last = 0.0

    def update(self, sched, now, tokens):
        if not self.on or time.monotonic() - self.last < 0.2:
            return
        self.last = time.monotonic()
        self.stream.write("\r%6.1f s  done %d/%d  running %d  waiting %d  %.0f tok/s   "
                          % (now, len(sched.finished), self.total, len(sched.running),
                             len(sched.waiting), tokens / now if now > 0 else 0))
        self.stream.flush()

    def close(self):
        if self.on:
            self.stream.write("\n")


def report(a, reqs, elapsed, sched, totals):
    """The run's document (the figures --json prints)."""
    from .workload import _summary

    ms = lambda xs: _summary([x * 1e3 for x in xs if x is not None])  # noqa: E731
    out_tokens = sum(r.output_len for r in reqs)
    in_tokens = sum(r.prompt_len for r in reqs)
    good = sum(1 for r in reqs if r.meets(a.ttft_slo_ms / 1e3, a.tpot_slo_ms / 1e3))
    return {
        "schema_version": SCHEMA_VERSION, "model": a.model, "num_prompts": len(reqs),
        # null: every request at t = 0 (--request-rate inf; JSON has no infinity)
        "request_rate_per_s": a.request_rate if math.isfinite(a.request_rate) else None,
        "arrival_cv": a.arrival_cv, "dataset": a.dataset, "seed": a.seed,
        "engine": {"max_num_seqs": a.max_num_seqs,
                   "max_num_batched_tokens": a.max_num_batched_tokens,
                   "block_size": a.block_size, "kv_blocks": a.kv_blocks,
                   "decode_groups": a.decode_groups},
        "objectives": {"ttft_ms": a.ttft_slo_ms, "tpot_ms": a.tpot_slo_ms},
        "duration_s": round(elapsed, 6),
        "completed": sum(1 for r in reqs if r.done),
        "input_tokens": in_tokens, "output_tokens": out_tokens,
        "requests_per_s": round(len(reqs) / elapsed, 3),
        "output_tokens_per_s": round(out_tokens / elapsed, 3),
        "total_tokens_per_s": round((in_tokens + out_tokens) / elapsed, 3),
        "slo_attainment": round(good / len(reqs), 4),
        "ttft_ms": ms(r.ttft for r in reqs), "tpot_ms": ms(r.tpot for r in reqs),
        "e2e_ms": ms(r.e2e for r in reqs),
        "preemptions": sched.preemptions,
        "gpu": totals.as_dict(),
        "requests": [r.as_dict() for r in reqs],
    }


def _human(d):
    rate = d["request_rate_per_s"]
    s = ["%s: %d requests (%s) at %s req/s, cv %.2g, in %.2f s (simulated GPU clock)"
         % (d["model"], d["num_prompts"], d["dataset"], "inf" if rate is None else rate,
            d["arrival_cv"], d["duration_s"]),
         "throughput: %.2f req/s, %.1f output tokens/s, %.1f total tokens/s"
         % (d["requests_per_s"], d["output_tokens_per_s"], d["total_tokens_per_s"])]
    for k, name in (("ttft_ms", "TTFT"), ("tpot_ms", "TPOT"), ("e2e_ms", "E2E ")):
        v = d[k]
        s.append("%s ms  mean %9.2f  p50 %9.2f  p95 %9.2f  p99 %9.2f  max %9.2f"
                 % (name, v["mean"], v["p50"], v["p95"], v["p99"], v["max"]))
    s.append("objectives TTFT <= %g ms and TPOT <= %g ms: met by %.1f %% of requests"
             % (d["objectives"]["ttft_ms"], d["objectives"]["tpot_ms"], 100 * d["slo_attainment"]))
    g = d["gpu"]
    s.append("steps %d (%d step parts captured), %d kernels, %.1f ms of kernel time, %.1f ms of "
             "host CPU to issue them, %d preemptions"
             % (g["steps"], g["captures"], g["kernels"], g["busy_us"] / 1e3, g["host_us"] / 1e3,
                d["preemptions"]))
    return "\n".join(s)


def main(argv=None):
    ap = _parser()
    a = ap.parse_args(argv)
    _check(ap, a)
    from .workload import torch_missing

    err = torch_missing("gpreempt.sim.serve")
    if err:
        print(err, file=sys.stderr)
        return 1
    from .. import sim
    from .llm import executor, kv_blocks, scheduler, server, workload

    cls, config, module = _models()[a.model]
    if a.kv_blocks is None:
        a.kv_blocks = default_kv_blocks(config, module, a.block_size)
        if a.kv_blocks < 1:
            print("gpreempt.sim.serve: %s's weights leave no memory for a KV cache" % a.model,
                  file=sys.stderr)
            return 1
    reqs = workload.requests(a.num_prompts, a.request_rate, a.arrival_cv, a.dataset,
                             a.input_len, a.output_len, a.seed)
    sched = scheduler.Scheduler(kv_blocks.BlockBudget(a.kv_blocks, a.block_size),
                                a.max_num_seqs, a.max_num_batched_tokens)
    for r in reqs:
        need = sched.kv.blocks_for(r.prompt_len + r.output_len - 1)
        if need > a.kv_blocks:
            ap.error("request %d needs %d KV blocks (%d tokens), more than --kv-blocks %d"
                     % (r.id, need, r.prompt_len + r.output_len - 1, a.kv_blocks))
    hooks = {}
    if a.hint is not None:
        import gpreempt

        client = gpreempt.Client(a.hint or None)
        open_requests = {}

        def arrive(r):
            ctx = gpreempt.online_request(client)
            open_requests[r.id] = (ctx, ctx.__enter__())

        def token(r):
            # The first token (gpreemptd's TTFT), then the count every TOKEN_REPORT_EVERY tokens
            # (its decode pace, for the `late` protection of a TPOT objective: docs/llm.md).
            request = open_requests[r.id][1]
            if r.generated == 1 or r.generated % TOKEN_REPORT_EVERY == 0:
                request.token(r.generated)

        def finish(r):
            ctx, request = open_requests.pop(r.id)
            request.tokens = r.generated  # with the end: gpreemptd's TPOT
            ctx.__exit__(None, None, None)
        hooks = {"on_arrival": arrive, "on_finish": finish, "on_token": token}
    progress = _Progress(len(reqs), on=not a.no_progress)
    tokens = [0]

    def on_step(step, now):
        tokens[0] += step.tokens
        progress.update(sched, now, tokens[0])
    try:
        sim.device()
        model = cls(config, device="meta", decode_groups=a.decode_groups)
        run = executor.GraphExecutor(model, a.block_size)
        with sim.stream(sim.Stream(a.priority)):
            # Capture the first shapes before the clock starts, as vLLM captures its graphs
            # at start-up.
            run([(1, a.block_size - 1, True)])
            if a.ready_file:
                from .workload import _wait_for_go
                _wait_for_go(a.ready_file)
            start = sim.now_us()
            server.serve(sched, reqs, lambda step: run(step.seqs()),
                         lambda: sim.now_us() / 1e6, lambda s: time.sleep(max(0.0, s)),
                         on_step=on_step, **hooks)
            elapsed = (sim.now_us() - start) / 1e6
    except (sim.Unavailable, RuntimeError, OSError) as e:
        progress.close()
        print("gpreempt.sim.serve: %s" % e, file=sys.stderr)
        return 1
    progress.close()
    d = report(a, reqs, elapsed, sched, run.totals)
    if a.json:
        print(json.dumps(d, indent=2))
    else:
        print(_human(d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
