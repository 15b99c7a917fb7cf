"""`python3 -m gpreempt.sim.serve`: a short real run on the simulated GPU, its document, its
usage errors (docs/llm.md, "Running it")."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BINARY_DIR, needs_sim


def serve(*argv, timeout=240):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BINARY_DIR / "python"),
                                                      env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "gpreempt.sim.serve"] + list(argv),
                          capture_output=True, text=True, env=env, timeout=timeout)


SHORT = ["--model", "llama-1b", "--num-prompts", "6", "--request-rate", "inf", "--dataset",
         "fixed", "--input-len", "40", "--output-len", "5", "--kv-blocks", "9", "--json"]


@needs_sim
def test_a_short_run_serves_every_request_and_reports_it():
    r = serve(*SHORT)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["completed"] == 6 and len(d["requests"]) == 6
    assert d["output_tokens"] == 30 and d["input_tokens"] == 240
    # 44 tokens need 3 blocks: the 9-block cache runs three requests at a time, the rest wait
    firsts = sorted(q["ttft_ms"] for q in d["requests"])
    assert firsts[3] > firsts[2]
    for q in d["requests"]:
        assert 0 < q["ttft_ms"] <= q["e2e_ms"] and q["tpot_ms"] > 0
    assert d["ttft_ms"]["count"] == 6 and d["tpot_ms"]["count"] == 6
    assert 0 <= d["slo_attainment"] <= 1
    assert d["request_rate_per_s"] is None  # inf: JSON has no infinity
    assert d["requests_per_s"] > 0 and d["output_tokens_per_s"] > 0
    assert d["gpu"]["steps"] > 5 and d["gpu"]["kernels"] > 0 and d["gpu"]["busy_us"] > 0
    assert r.stderr == ""  # no progress line when stderr is not a terminal


@needs_sim
def test_a_terminal_gets_a_progress_line():
    import pty

    master, slave = pty.openpty()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BINARY_DIR / "python"),
                                                      env.get("PYTHONPATH")]))
    p = subprocess.Popen([sys.executable, "-m", "gpreempt.sim.serve"] + SHORT,
                         stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    out, _ = p.communicate(timeout=240)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal's other end is closed
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    assert p.returncode == 0
    assert json.loads(out)["completed"] == 6  # the document stays clean
    assert b"\r" in err and b"done 0/6" in err and b"running" in err


@needs_sim
def test_hinted_requests_run_unprotected_without_a_daemon():
    r = serve(*SHORT, "--hint", "/nonexistent/gpreemptd.sock")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["completed"] == 6


@needs_sim
def test_hinted_requests_report_their_first_token_and_tokens(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client"))
    from fake_gpreemptd import FakeDaemon

    path = str(tmp_path / "gpreemptd.sock")
    with FakeDaemon(path=path) as d:
        r = serve(*SHORT, "--output-len", "20", "--hint", path)
        got = d.received()
    assert r.returncode == 0, r.stderr
    by_request = {}
    for m in got:
        by_request.setdefault(m["request"], []).append((m["op"], m.get("tokens")))
    assert len(by_request) == 6
    for ops in by_request.values():
        # Its first token, the count at the 16th (gpreempt.sim.serve's TOKEN_REPORT_EVERY), its
        # end with its 20 output tokens: what gpreemptd measures TTFT and TPOT from.
        assert ops == [("begin", None), ("token", None), ("token", 16), ("end", 20)], ops


@pytest.mark.parametrize("argv,message", [
    (["--request-rate", "0"], "--request-rate must be positive"),
    (["--model", "gpt-5"], "unknown model 'gpt-5'"),
    (["--max-num-seqs", "0"], "--max-num-seqs must be at least 1"),
    (["--kv-blocks", "2", "--dataset", "fixed", "--input-len", "100", "--output-len", "29"],
     "request 0 needs 8 KV blocks"),
])
def test_bad_options_are_usage_errors(argv, message):
    r = serve(*argv, timeout=60)
    assert r.returncode == 2
    assert message in r.stderr


def test_help_explains_the_scheduler_and_the_objectives():
    out = serve("--help", timeout=60).stdout
    for text in ("--max-num-batched-tokens", "--kv-blocks", "--ttft-slo-ms", "--tpot-slo-ms",
                 "--arrival-cv", "preempts the newest", "kfdsim run"):
        assert text in out
