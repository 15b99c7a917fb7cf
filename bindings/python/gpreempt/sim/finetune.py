"""Fine-tuning of a Llama-style model on the simulated GPU: the offline LLM job beside a server.

    kfdsim run -- /usr/bin/python3 -m gpreempt.sim.finetune --steps 10 [--json]
    kfdsim run -- /usr/bin/python3 -m gpreempt.sim.finetune --model llama-8b --method lora

Full fine-tuning (every weight, AdamW) or LoRA (frozen base, rank-r adapters on the attention
projections) of gpreempt.sim.llm.training's causal LM, on random token batches of --batch ×
--seq-len (nothing is downloaded). The model is built on the meta device and every step runs
under gpreempt.sim.torch_mode, so its kernels run on this process's simulated GPU queue (and
gpreempt suspends them like any GPU process's) while the host allocates no weight. Reports
iterations/s and training tokens/s over the measured run (after one untimed warm-up step; the
measured steps replay the kernels of a step captured under torch_mode, as a HIP graph would,
unless --eager);
docs/llm.md, "Fine-tuning", explains what a step costs.
Exit codes: 0 ok, 1 operational failure (no simulated GPU, no PyTorch), 2 usage.
"""
import argparse
import json
import os
import sys
import time

MODELS = ("llama-1b", "llama-8b")
# What each model fine-tunes by default: the 1B model fits a full fine-tune's bf16 weights,
# gradients and AdamW state many times over; the 8B model is the one people adapt with LoRA.
DEFAULT_METHOD = {"llama-1b": "full", "llama-8b": "lora"}


def _config(name):
    from .llm import llama

    return {"llama-1b": llama.LLAMA_1B, "llama-8b": llama.LLAMA_8B}[name]


def _parser():
    ap = argparse.ArgumentParser(
        prog="python3 -m gpreempt.sim.finetune",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Fine-tune a Llama-style model on the simulated GPU (run under `kfdsim run "
                    "--`) and report iterations/s and tokens/s.",
        epilog="""one step: the causal-LM cross-entropy of --batch random sequences of --seq-len
tokens (every position predicts the next), backward, then AdamW (foreach) over the trainable
weights. Its FLOPs are about 3 x 2 x params x tokens for full fine-tuning (forward, then the
gradients of activations and of weights) plus attention's 12 x batch x heads x seq-len^2 x
head-dim per layer; LoRA computes no gradient of the frozen weights, about 2/3 of that.

examples:
  kfdsim run -- /usr/bin/python3 -m gpreempt.sim.finetune --steps 10
  kfdsim run -- /usr/bin/python3 -m gpreempt.sim.finetune --model llama-8b --batch 2 \\
      --seq-len 2048 --lora-rank 16 --duration 60 --json
  # the demo's offline side: gpreempt demo --online llm-serve --offline llm-finetune""")
    ap.add_argument("--model", default="llama-1b", choices=MODELS,
                    help="llama-1b (Llama-3.2-1B shapes, default) or llama-8b (Llama-3.1-8B)")
    ap.add_argument("--method", choices=["full", "lora"],
                    help="full: every weight trains; lora: frozen base, adapters on the "
                         "attention's q, k, v and output projections (default: full for "
                         "llama-1b, lora for llama-8b)")
    ap.add_argument("--lora-rank", type=int, help="adapter rank r with --method lora (default 16)")
    ap.add_argument("--lora-alpha", type=float,
                    help="adapter scale numerator: the delta is scaled by alpha/r (default 32)")
    ap.add_argument("--batch", type=int, default=4, help="sequences per step (default 4)")
    ap.add_argument("--seq-len", type=int, default=1024, help="tokens per sequence (default 1024)")
    ap.add_argument("--lr", type=float, default=2e-5, help="AdamW learning rate (default 2e-5)")
    run = ap.add_mutually_exclusive_group()
    run.add_argument("--steps", type=int, help="measured steps (default 10 unless --duration)")
    run.add_argument("--duration", type=float,
                     help="run steps back to back for this many seconds instead of --steps")
    ap.add_argument("--seed", type=int, default=0, help="seed of the token batches (default 0)")
    ap.add_argument("--priority", type=int, choices=[-1, 0, 1], default=0,
                    help="HIP stream priority: -1 high, 0 normal (default), 1 low")
    ap.add_argument("--eager", action="store_true",
                    help="run every step through torch_mode (about 200 ms of host CPU per "
                         "llama-1b step) instead of replaying the step captured after the warm-up")
    ap.add_argument("--no-progress", action="store_true",
                    help="no status line on a terminal (a parent that shares the terminal)")
    ap.add_argument("--ready-file", help="after the warm-up create this file and wait until it "
                    "is removed before the measured run (how gpreempt demo lines sides up)")
    ap.add_argument("--json", action="store_true", help="one JSON document with the run's figures")
    return ap


def _check(ap, a):
    a.method = a.method or DEFAULT_METHOD[a.model]
    if a.method == "full" and (a.lora_rank is not None or a.lora_alpha is not None):
        ap.error("--lora-rank and --lora-alpha apply to --method lora only")
    a.lora_rank = 16 if a.lora_rank is None else a.lora_rank
    a.lora_alpha = 32.0 if a.lora_alpha is None else a.lora_alpha
    for name in ("batch", "seq_len", "lora_rank"):
        if getattr(a, name) < 1:
            ap.error("--%s must be at least 1" % name.replace("_", "-"))
    if a.seq_len > 131072:
        ap.error("--seq-len %d exceeds the model's 131072 positions" % a.seq_len)
    if not a.lr > 0 or not a.lora_alpha > 0:
        ap.error("--lr and --lora-alpha must be positive")
    if a.steps is not None and a.steps < 1:
        ap.error("--steps must be at least 1")
    if a.duration is not None and not a.duration > 0:
        ap.error("--duration must be positive")
    if a.steps is None and a.duration is None:
        a.steps = 10


class _Progress:
    """One self-overwriting status line on a terminal (stderr), nothing otherwise."""

    def __init__(self, a, tokens_per_step, stream=sys.stderr):
        self.a = a
        self.tokens = tokens_per_step
        self.stream = stream
        self.on = not a.no_progress and stream.isatty()
        self.last = 0.0

    def update(self, done, elapsed):
        if not self.on or time.monotonic() - self.last < 0.2 or elapsed <= 0:
            return
        self.last = time.monotonic()
        goal = "/%d" % self.a.steps if self.a.steps else " of %.0f s" % self.a.duration
        self.stream.write("\r%6.1f s  step %d%s  %.2f it/s  %.0f tok/s   "
                          % (elapsed, done, goal, done / elapsed, done * self.tokens / elapsed))
        self.stream.flush()

    def close(self):
        if self.on:
            self.stream.write("\n")


class _Step:
    """One training step on the simulated GPU. By default the step's kernels are captured once
    under torch_mode (after the warm-up) and replayed straight to the queue, as serve's executor
    replays its steps and a CUDA/HIP graph would: pricing a llama-1b step's ~1,900 operators
    through torch_mode costs ~200 ms of host CPU, and on a shared host that CPU, not the GPU,
    would set the rate. eager: every step runs through torch_mode."""

    def __init__(self, sim, run, eager):
        from .llm.executor import _Recorder

        self.sim, self.run = sim, run
        self.kernels = None
        if not eager:
            rec = _Recorder()
            with sim.stream(rec):
                run()
            self.kernels = rec.kernels
        self.totals = {"dispatches": 0, "flops": 0.0, "matrix_flops": 0.0, "bytes": 0.0,
                       "busy_us": 0.0}

    def __call__(self, mode):
        t = self.totals
        if self.kernels is None:
            before = mode.stats()
            self.run()
            after = mode.stats()
            for k in t:
                t[k] += after[k] - before[k]
            return
        q = self.sim.current_stream().queue
        busy = 0
        for k in self.kernels:
            busy += q.dispatch_op(*k)
            t["flops"] += k[3]
            t["bytes"] += k[4]
            if k[6]:
                t["matrix_flops"] += k[3]
        t["busy_us"] += busy / 1e3
        t["dispatches"] += len(self.kernels)


def _measure(a, step, sim, mode, progress):
    """Steps back to back (one in flight, as a training loop that logs its loss), until --steps
    or --duration; returns (iterations, elapsed seconds, the totals of what they dispatched)."""
    done = 0
    cpu = time.process_time()
    start = time.monotonic()
    last = start
    while (done < a.steps) if a.steps else (last - start < a.duration):
        step(mode)
        sim.current_stream().synchronize()
        done += 1
        last = time.monotonic()
        progress.update(done, last - start)
    stats = dict(step.totals)
    stats["host_cpu_s"] = time.process_time() - cpu
    return done, last - start, stats


def report(a, config, model, iterations, elapsed, stats):
    """The run's document (what --json prints)."""
    from .workload import SCHEMA_VERSION

    tokens = a.batch * a.seq_len
    per = lambda v: v / iterations  # noqa: E731
    return {
        "schema_version": SCHEMA_VERSION, "mode": "offline", "preset": "llm-finetune",
        "pid": os.getpid(), "model": a.model, "method": a.method,
        "lora": {"rank": a.lora_rank, "alpha": a.lora_alpha} if a.method == "lora" else None,
        "batch": a.batch, "seq_len": a.seq_len, "tokens_per_iteration": tokens,
        "parameters": sum(p.numel() for p in model.parameters()),
        "trainable_parameters": sum(p.numel() for p in model.trainable()),
        "priority": a.kfd_priority,
        "duration_s": a.duration, "elapsed_s": round(elapsed, 6), "iterations": iterations,
        "iterations_per_s": round(iterations / elapsed, 4) if elapsed > 0 else 0,
        "tokens_per_s": round(iterations * tokens / elapsed, 1) if elapsed > 0 else 0,
        "kernels_per_iteration": round(per(stats["dispatches"])),
        "flops_per_iteration": per(stats["flops"]),
        "matrix_flops_per_iteration": per(stats["matrix_flops"]),
        "bytes_per_iteration": per(stats["bytes"]),
        # the kernels' modelled time alone on the device: the step's floor on this GPU
        "gpu_busy_ms_per_iteration": round(per(stats["busy_us"]) / 1e3, 3),
        "achieved_tflops": round(stats["flops"] / elapsed / 1e12, 2) if elapsed > 0 else 0,
        # this process's CPU to form and issue a step (torch_mode prices every operator)
        "host_cpu_ms_per_iteration": round(per(stats["host_cpu_s"]) * 1e3, 3),
    }


def _human(d):
    lora = " (rank %d, alpha %g)" % (d["lora"]["rank"], d["lora"]["alpha"]) if d["lora"] else ""
    return "\n".join([
        "%s %s fine-tuning%s: batch %d x %d tokens, %.3g B parameters, %.2f M trainable"
        % (d["model"], d["method"], lora, d["batch"], d["seq_len"], d["parameters"] / 1e9,
           d["trainable_parameters"] / 1e6),
        "%d iterations in %.2f s: %.3f iterations/s, %.0f tokens/s, %.1f TFLOPS achieved"
        % (d["iterations"], d["elapsed_s"], d["iterations_per_s"], d["tokens_per_s"],
           d["achieved_tflops"]),
        "per iteration: %.2f TFLOP (%.2f in GEMMs), %.1f GB moved, %d kernels, %.1f ms of kernel "
        "time alone on the GPU, %.1f ms of host CPU to issue them"
        % (d["flops_per_iteration"] / 1e12, d["matrix_flops_per_iteration"] / 1e12,
           d["bytes_per_iteration"] / 1e9, d["kernels_per_iteration"],
           d["gpu_busy_ms_per_iteration"], d["host_cpu_ms_per_iteration"])])


def main(argv=None):
    ap = _parser()
    a = ap.parse_args(argv)
    _check(ap, a)
    from .workload import torch_missing

    err = torch_missing("gpreempt.sim.finetune")
    if err:
        print(err, file=sys.stderr)
        return 1
    from .. import sim
    from .llm import lora, training
    from .workload import _wait_for_go

    config = _config(a.model)
    model = training.CausalLM(config, a.method, lora.LoraConfig(a.lora_rank, a.lora_alpha),
                              max_seq=a.seq_len)
    opt = training.optimizer(model, lr=a.lr)
    tokens, labels = training.batch(config, a.batch, a.seq_len, a.seed)
    progress = _Progress(a, a.batch * a.seq_len)
    try:
        sim.device()
        stream = sim.Stream(a.priority)
        a.kfd_priority = sim.KFD_PRIORITY[stream.level]
        with sim.torch_mode() as mode, sim.stream(stream):
            def one_step():
                training.step(model, opt, tokens, labels)
            one_step()  # warm-up: creates the queue and AdamW's state, fills the cost caches
            sim.synchronize()
            step = _Step(sim, one_step, a.eager)
            if a.ready_file:
                _wait_for_go(a.ready_file)
            iterations, elapsed, stats = _measure(a, step, sim, mode, progress)
    except (sim.Unavailable, RuntimeError, OSError) as e:
        progress.close()
        print("gpreempt.sim.finetune: %s" % e, file=sys.stderr)
        return 1
    progress.close()
    d = report(a, config, model, iterations, elapsed, stats)
    print(json.dumps(d, indent=2) if a.json else _human(d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
