"""gpreempt.sim traces (torch_mode(trace=...), Device.trace_to): whole JSON lines only, complete
when the block exits or synchronize() returns, whole but for a last line cut at a page boundary
when a SIGKILL lands inside its write, and a new file per block unless asked to append."""
import json
import os
import signal
import subprocess
import textwrap
import time

import pytest

from conftest import needs_sim

torch = pytest.importorskip("torch")

import gpreempt.sim as sim  # noqa: E402

PYTHON = "/usr/bin/python3"


def read_trace(path):
    """Every line of the trace, parsed; fails on a cut last line or any line that is not JSON."""
    text = path.read_text()
    assert text == "" or text.endswith("\n"), "the trace ends in a cut line: %r" % text[-300:]
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture
def cpu_load():
    """A busy loop per core: the traced process, the simulated machine and the reader compete
    for the CPU, as on a loaded machine (the report of a cut trace came from a 2-core one)."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "KFDSIM_DIR")}
    procs = [subprocess.Popen([PYTHON, "-c", "while True: pass"], env=env)
             for _ in range(2 * (os.cpu_count() or 2))]
    yield
    for p in procs:
        p.kill()
        p.wait()


def mlp(width, depth):
    """Linear layers on the meta device: kernels of real size, no memory."""
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width, device="meta"), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers)


@needs_sim
def test_the_trace_is_complete_when_the_block_exits(tmp_path, cpu_load):
    # Each GEMM takes the simulated GPU far longer than the host takes to queue it, so the
    # block ends with most of its kernels still queued: their lines must still be in the file.
    model, x = mlp(2048, 12), torch.randn(4096, 2048, device="meta")
    path = tmp_path / "trace.jsonl"
    for _ in range(20):
        with sim.torch_mode(trace=path) as m:
            model(x)
        records = read_trace(path)
        assert len(records) == m.stats()["dispatches"] > 0
        assert [r["name"] for r in records].count("aten.addmm.default") == 12


@needs_sim
def test_the_file_is_final_once_the_block_has_exited(tmp_path):
    path = tmp_path / "trace.jsonl"
    with sim.torch_mode(trace=path):
        mlp(64, 2)(torch.randn(8, 64, device="meta"))
    before = path.read_text()
    sim.current_stream().queue.dispatch_op("after_the_block", [1 << 16], [256], 1e9, 1e8)
    assert sim.synchronize()
    sim.device().trace_to(None)  # closes whatever trace is still open, writing what it holds
    assert path.read_text() == before


@needs_sim
def test_every_line_is_written_when_synchronize_returns(tmp_path, cpu_load):
    # The simulated CP moves a queue's read index before it decrements the completion signal:
    # a synchronize that stopped at an idle queue could miss the last line, now and then.
    path = tmp_path / "trace.jsonl"
    dev = sim.device()
    q = sim.default_stream().queue
    trace = dev.trace_to(str(path))
    try:
        for i in range(1, 2001):
            q.dispatch_op("kernel_%d" % i, [1 << 16], [256], 1e9, 1e8)
            assert sim.synchronize()
            if i <= 10 or i % 100 == 0:
                assert [r["name"] for r in read_trace(path)] == ["kernel_%d" % k for k in range(1, i + 1)]
            assert (trace.lines, trace.pending) == (i, 0), "after kernel_%d" % i
    finally:
        dev.trace_to(None)


TRACING_CHILD = """
import sys, torch, gpreempt.sim as sim
layers = []
for _ in range(8):
    layers += [torch.nn.Linear(256, 256), torch.nn.ReLU()]
model, x = torch.nn.Sequential(*layers), torch.randn(64, 256)
with sim.torch_mode(trace=sys.argv[1]):
    while True:
        model(x)
"""


def read_killed_trace(path):
    """The lines of a trace whose writer was SIGKILLed, parsed, and whether its last line is cut.
    Linux copies a write(2) into the file a page at a time and stops between two pages for a
    fatal signal, so the kill can cut the one line being written when it straddles a page
    boundary: then, and only then, the file ends mid-line, exactly at a page boundary."""
    text = path.read_text()
    whole, _, tail = text.rpartition("\n")
    if tail:
        assert len(text.encode()) % os.sysconf("SC_PAGE_SIZE") == 0, \
            "a line is cut away from a page boundary: %r" % text[-300:]
        assert tail.startswith('{"'), "the cut line is not the start of a record: %r" % tail
    return [json.loads(line) for line in whole.splitlines()], bool(tail)


@needs_sim
def test_a_trace_cut_short_by_sigkill_keeps_every_line_but_one_cut_at_a_page_boundary(tmp_path):
    cut = []
    for n, kill_after in enumerate([20_000, 80_000, 150_000]):
        path = tmp_path / ("killed-%d.jsonl" % n)
        child = subprocess.Popen([PYTHON, "-c", textwrap.dedent(TRACING_CHILD), str(path)],
                                 stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 120
            while not path.exists() or path.stat().st_size < kill_after:
                assert child.poll() is None, "the tracing child exited: " + child.stderr.read()
                assert time.monotonic() < deadline, "the child's trace did not grow"
                time.sleep(0.01)
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.kill()
            child.wait()
            child.stderr.close()
        records, was_cut = read_killed_trace(path)
        cut.append(was_cut)
        assert len(records) > 50
        assert all(r["pid"] == child.pid for r in records)
    # A buffered writer (stdio's 4 KiB buffer) leaves a cut line at a page boundary after nearly
    # every kill; a write per line only when the kill lands inside the copy of a straddling line.
    assert not all(cut), "every kill left a cut line: the writer buffers whole pages"


@needs_sim
def test_a_block_starts_its_trace_afresh_unless_asked_to_append(tmp_path):
    model, x = mlp(64, 2), torch.randn(8, 64, device="meta")
    path = tmp_path / "trace.jsonl"
    path.write_text('{"name": "a line of an earlier run"}\n')
    with sim.torch_mode(trace=path) as first:
        model(x)
    n = first.stats()["dispatches"]
    assert n > 0 and len(read_trace(path)) == n
    with sim.torch_mode(trace=path) as again:  # the same script run twice: not twice the FLOPs
        model(x)
    records = read_trace(path)
    assert len(records) == n
    assert sum(r["flops"] for r in records) == again.stats()["flops"]
    with sim.torch_mode(trace=path, append=True):
        model(x)
    assert len(read_trace(path)) == 2 * n


@needs_sim
def test_appending_to_a_file_cut_mid_line_starts_a_new_line(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_text('{"name": "whole"}\n{"name": "cut sh')
    with sim.torch_mode(trace=path, append=True) as m:
        mlp(64, 1)(torch.randn(8, 64, device="meta"))
    lines = path.read_text().splitlines()
    assert lines[:2] == ['{"name": "whole"}', '{"name": "cut sh']
    assert len([json.loads(line) for line in lines[2:]]) == m.stats()["dispatches"]


@needs_sim
def test_a_trace_still_being_written_is_refused_unless_appended_to(tmp_path):
    path = tmp_path / "trace.jsonl"
    dev = sim.device()
    held = dev.trace_to(str(path))  # the process's trace, still open
    try:
        with pytest.raises(ValueError, match="still being written by this process.*append=True"):
            with sim.torch_mode(trace=path):
                pass
        assert dev.trace is held
        with sim.torch_mode(trace=path, append=True) as m:
            mlp(64, 2)(torch.randn(8, 64, device="meta"))
        assert dev.trace is held  # the block gave the trace back
        assert len(read_trace(path)) == held.lines == m.stats()["dispatches"]
    finally:
        dev.trace_to(None)
