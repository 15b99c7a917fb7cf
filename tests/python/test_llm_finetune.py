"""`python3 -m gpreempt.sim.finetune` and its model (gpreempt.sim.llm.training): a training step's
FLOPs against a hand count, LoRA's frozen base, the 8B LoRA run's host memory, the command's
document, progress line and usage errors, and batch inference's name for serve
(docs/llm.md, "Fine-tuning")."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BINARY_DIR, needs_sim

torch = pytest.importorskip("torch")

from gpreempt.sim.llm import llama, lora, training  # noqa: E402


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BINARY_DIR / "python"),
                                                    e.get("PYTHONPATH")]))
    return e


def run(module, *argv, timeout=240):
    return subprocess.run([sys.executable, "-m", module] + list(argv), capture_output=True,
                          text=True, env=env(), timeout=timeout)


def forward_gemms(c, B, S, rank=None):
    """The hand count of a forward pass's GEMM FLOPs (2 per multiply-add), split as
    (per layer: dense, attention, adapters; LM head), for B sequences of S tokens (T = B·S):
      dense     QKV 2·T·D·(H+2K)·d, output 2·T·H·d·D, gate+up 2·T·D·2F, down 2·T·F·D
      attention scores 2·B·H·S·S·d and P·V 2·B·H·S·S·d (the whole S×S, masked or not)
      adapters  x·[A_q A_k A_v] 2·T·D·3r, then ·B_q, ·B_k, ·B_v 2·T·r·(H+2K)·d,
                o·A_o 2·T·H·d·r, ·B_o 2·T·r·D
      LM head   2·T·D·V."""
    D, H, K, d, F, V = c.hidden, c.heads, c.kv_heads, c.head_dim, c.ffn, c.vocab
    T = B * S
    dense = 2 * T * (D * (H + 2 * K) * d + H * d * D + 2 * D * F + F * D)
    attn = 4 * B * H * S * S * d
    adapters = 0 if rank is None else 2 * T * rank * (3 * D + (H + 2 * K) * d + H * d + D)
    return dense, attn, adapters, 2 * T * D * V


def step_stats(model, B, S):
    import gpreempt.sim as sim

    opt = training.optimizer(model)
    tokens, labels = training.batch(model.config, B, S)
    with sim.torch_mode() as mode:
        training.step(model, opt, tokens, labels)
        sim.synchronize()
        return mode.stats()


@needs_sim
def test_a_full_fine_tuning_step_is_three_forwards_of_2_params_tokens_plus_attention():
    c = llama.LLAMA_1B
    B, S = 2, 128
    s = step_stats(training.CausalLM(c, "full", max_seq=S), B, S)
    # Forward: every weight but the norms in one GEMM per token (the tied embedding as the LM
    # head; its lookup is a gather), 2·params·tokens, plus attention. Backward: the gradient of
    # each GEMM's two operands, twice the forward.
    norms = (2 * c.layers + 1) * c.hidden
    attention = c.layers * forward_gemms(c, B, S)[1]
    assert s["matrix_flops"] == 3 * (2 * (llama.param_count(c) - norms) * B * S + attention)
    dense, attn, _, head = forward_gemms(c, B, S)
    assert s["matrix_flops"] == 3 * (c.layers * (dense + attn) + head)
    # the rest (norms, rotary, softmax, the loss, AdamW) is small beside the GEMMs
    assert s["matrix_flops"] < s["flops"] < 1.02 * s["matrix_flops"]


@needs_sim
def test_a_lora_step_computes_no_gradient_of_the_frozen_weights():
    c = llama.LLAMA_8B
    B, S, r = 1, 128, 8
    s = step_stats(training.CausalLM(c, "lora", lora.LoraConfig(r, 16), max_seq=S), B, S)
    dense, attn, adapters, head = forward_gemms(c, B, S, r)
    T, D = B * S, c.hidden
    # Frozen GEMMs: forward, then the gradient of their input only (2×); layer 0's QKV input is
    # the frozen embedding's output, which needs none (1×). Attention and the adapters: both
    # operands (3×), but layer 0's x·A needs no gradient of x (2×).
    frozen = 2 * (c.layers * dense + head) - 2 * T * D * (c.heads + 2 * c.kv_heads) * c.head_dim
    trained = 3 * c.layers * (attn + adapters) - 2 * T * D * 3 * r
    assert s["matrix_flops"] == frozen + trained
    full = 3 * (c.layers * dense + head)
    assert 0.6 * full < s["matrix_flops"] < 0.7 * full  # about 2/3 of full fine-tuning's


@needs_sim
def test_lora_trains_only_the_adapters():
    import gpreempt.sim as sim

    c = llama.LLAMA_1B._replace(layers=2)
    m = training.CausalLM(c, "lora", max_seq=64)
    names = {id(p): n for n, p in m.named_parameters()}
    adapters = {id(p) for n, p in m.named_parameters() if lora.is_adapter(n)}
    assert len(adapters) == c.layers * (4 + 2)  # A and B_q, B_k, B_v; A_o and B_o
    assert {id(p) for p in m.trainable()} == adapters
    opt = training.optimizer(m)
    tokens, labels = training.batch(c, 1, 64)
    with sim.torch_mode():
        m(tokens, labels).backward()
        with_grad = {id(p) for p in m.parameters() if p.grad is not None}
        opt.step()
    assert with_grad == adapters, "gradients of %s" % sorted(names[i] for i in with_grad - adapters)
    assert {id(p) for p in opt.state} == adapters, "only the adapters have AdamW state"
    # full fine-tuning, for contrast: every weight
    f = training.CausalLM(c, "full", max_seq=64)
    assert len(f.trainable()) == len(list(f.parameters())) == 1 + 1 + 6 * c.layers


def test_lora_adapters_start_as_the_base_model():
    # B starts at zero: the adapted model's loss is the base model's (real weights on the CPU).
    c = llama.LLAMA_1B._replace(layers=2, vocab=500, hidden=64, heads=4, kv_heads=2, head_dim=16,
                                ffn=128)
    torch.manual_seed(0)
    full = training.CausalLM(c, "full", device="cpu", dtype=torch.float32, max_seq=32)
    adapted = training.CausalLM(c, "lora", device="cpu", dtype=torch.float32, max_seq=32)
    missing, unexpected = adapted.load_state_dict(full.state_dict(), strict=False)
    assert missing and all(lora.is_adapter(n) for n in missing) and not unexpected
    tokens, labels = training.batch(c, 2, 16)
    assert torch.allclose(full(tokens, labels), adapted(tokens, labels))
    opt = training.optimizer(adapted, lr=1e-2)
    training.step(adapted, opt, tokens, labels)
    assert adapted(tokens, labels) < full(tokens, labels)  # the adapters learn


def rss_script(argv):
    return textwrap.dedent("""
        import contextlib, io, json, resource
        from gpreempt.sim import finetune
        with contextlib.redirect_stdout(io.StringIO()):
            rc = finetune.main(%r)
        print(json.dumps({"rc": rc,
                          "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
        """ % (argv,))


@needs_sim
def test_the_8b_lora_run_stays_under_2_gib_of_host_memory():
    argv = ["--model", "llama-8b", "--method", "lora", "--batch", "2", "--seq-len", "1024",
            "--steps", "1"]
    out = subprocess.run([sys.executable, "-c", rss_script(argv)], capture_output=True,
                         text=True, env=env(), timeout=240)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout.strip().splitlines()[-1])
    assert d["rc"] == 0, out.stderr
    rss = d["maxrss_kib"] * 1024
    assert rss <= 2 << 30, "the 8B LoRA run peaked at %.0f MiB" % (rss / 2**20)


@needs_sim
def test_a_short_run_reports_iterations_and_tokens_per_second():
    r = run("gpreempt.sim.finetune", "--batch", "2", "--seq-len", "64", "--steps", "2", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["model"] == "llama-1b" and d["method"] == "full" and d["lora"] is None
    assert d["iterations"] == 2 and d["tokens_per_iteration"] == 128
    assert d["iterations_per_s"] > 0
    assert d["tokens_per_s"] == pytest.approx(d["iterations_per_s"] * 128, rel=1e-3)
    assert d["trainable_parameters"] == d["parameters"] == llama.param_count(llama.LLAMA_1B)
    assert d["matrix_flops_per_iteration"] > 0 and d["gpu_busy_ms_per_iteration"] > 0
    assert r.stderr == ""  # no progress line when stderr is not a terminal


@needs_sim
def test_the_replayed_step_dispatches_what_an_eager_step_does():
    # The measured steps replay one captured step's kernels; --eager prices every step anew.
    docs = []
    for extra in ([], ["--eager"]):
        r = run("gpreempt.sim.finetune", "--batch", "1", "--seq-len", "64", "--steps", "2",
                "--json", *extra)
        assert r.returncode == 0, r.stderr
        docs.append(json.loads(r.stdout))
    replayed, eager = docs
    for k in ("kernels_per_iteration", "flops_per_iteration", "matrix_flops_per_iteration",
              "bytes_per_iteration", "gpu_busy_ms_per_iteration"):
        assert replayed[k] == pytest.approx(eager[k], rel=1e-9), k
    assert replayed["kernels_per_iteration"] > 1000


@needs_sim
def test_a_terminal_gets_a_progress_line():
    import pty

    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "gpreempt.sim.finetune", "--batch", "1",
                          "--seq-len", "64", "--duration", "1"],
                         stdout=subprocess.PIPE, stderr=slave, env=env())
    os.close(slave)
    out, _ = p.communicate(timeout=240)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    assert p.returncode == 0
    assert b"it/s" in err and b"tok/s" in err and b"\r" in err
    assert b"iterations/s" in out


@pytest.mark.parametrize("argv,message", [
    (["--lora-rank", "8"], "--lora-rank and --lora-alpha apply to --method lora only"),
    (["--method", "lora", "--lora-rank", "0"], "--lora-rank must be at least 1"),
    (["--batch", "0"], "--batch must be at least 1"),
    (["--seq-len", "0"], "--seq-len must be at least 1"),
    (["--seq-len", "200000"], "exceeds the model's 131072 positions"),
    (["--steps", "0"], "--steps must be at least 1"),
    (["--duration", "0"], "--duration must be positive"),
    (["--steps", "2", "--duration", "3"], "not allowed with argument"),
    (["--model", "llama-70b"], "invalid choice: 'llama-70b'"),
    (["--lr", "0"], "--lr and --lora-alpha must be positive"),
])
def test_bad_options_are_usage_errors(argv, message):
    r = run("gpreempt.sim.finetune", *argv, timeout=60)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("option", ["--request-rate", "--hint", "--arrival-cv"])
def test_batch_inference_refuses_an_online_services_options(option):
    r = run("gpreempt.sim.batch_infer", option, "4", timeout=60)
    assert r.returncode == 2
    assert "%s is an online service's option" % option in r.stderr


@needs_sim
def test_batch_inference_is_serve_with_every_request_at_once():
    r = run("gpreempt.sim.batch_infer", "--model", "llama-1b", "--num-prompts", "4", "--dataset",
            "fixed", "--input-len", "32", "--output-len", "4", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["request_rate_per_s"] is None  # inf
    assert d["completed"] == 4 and d["output_tokens_per_s"] > 0
    assert all(q["arrival_s"] == 0 for q in d["requests"])
