"""gpreempt.sim.workload: model workloads as the demo's sides — the same documents, request
notifications and start-up protocol as gpreempt-workload's presets."""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import BINARY_DIR, needs_sim

from gpreempt.sim import models


def runner(*argv):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BINARY_DIR / "python"),
                                                      env.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, "-m", "gpreempt.sim.workload"] + list(argv),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def finish(proc):
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    return json.loads(out)


def test_the_demo_offers_the_same_models_as_the_runner():
    out = subprocess.run([str(BINARY_DIR / "bin" / "gpreempt"), "demo", "--help"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    listed = {side: re.search(r"%s models: +(.*)" % side, out).group(1).split(", ")
              for side in ("online", "offline")}
    assert listed == {side: models.names(side) for side in ("online", "offline")}


def test_unknown_models_are_usage_errors_naming_the_valid_ones():
    r = runner("offline", "--model", "resnet18", "--duration", "1")
    _, err = r.communicate(timeout=60)
    assert r.returncode == 2
    assert "unknown offline model 'resnet18'" in err
    assert ", ".join(models.names("offline")) in err


@pytest.mark.parametrize("argv,message", [
    (["--expect"], "--expect needs --hint"),
    (["--hint", "/x.sock", "--notify", "/y.sock"], "--hint and --notify exclude each other"),
    (["--preprocess-us", "-1"], "--preprocess-us must not be negative"),
])
def test_hint_options_are_checked_before_anything_runs(argv, message):
    r = runner("online", "--model", "linear512", "--duration", "1", *argv)
    _, err = r.communicate(timeout=60)
    assert r.returncode == 2
    assert message in err


@needs_sim
def test_documents_follow_the_gpreempt_workload_schemas():
    pytest.importorskip("torch")
    from test_json_schema import valid

    on = valid("workload-online", finish(runner("online", "--model", "linear512", "--rate", "20",
                                                "--duration", "0.3", "--json")))
    assert on["preset"] == "linear512" and on["arrival"] == "fixed"
    assert on["requests_completed"] == on["latency_ms"]["count"] > 0
    assert on["kernels_per_request"] == 3  # addmm, relu, addmm
    off = valid("workload-offline", finish(runner("offline", "--model", "mm2048", "--duration",
                                                  "0.3", "--json")))
    assert off["iterations"] > 0 and off["kernels"] == off["iterations"] * off["kernels_per_iteration"]


def gpu_completed(pid):
    """Packets of `pid` the simulated GPU has completed (its own records)."""
    out = subprocess.run([str(BINARY_DIR / "bin" / "kfdsim"), "stats", "--json"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    return sum(q["completed"] for q in json.loads(out)["queues"] if q["pid"] == pid)


@needs_sim
def test_online_requests_are_announced_and_wait_for_the_controller(tmp_path):
    pytest.importorskip("torch")
    path = str(tmp_path / "controller.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    lines = []
    seen_on_gpu = []  # packets completed while each request waited for the reply

    def controller():
        conn, _ = server.accept()
        buf = b""
        while True:
            data = conn.recv(4096)
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                lines.append(line.decode().split())
                if lines[-1][0] == "start":
                    time.sleep(0.2)  # e.g. suspending the offline side
                    seen_on_gpu.append(gpu_completed(int(lines[-1][2])))
                    conn.sendall(b".")

    t = threading.Thread(target=controller, daemon=True)
    t.start()
    proc = runner("online", "--model", "linear512", "--rate", "10", "--duration", "0.5",
                  "--notify", path, "--notify-wait", "--json")
    doc = finish(proc)
    t.join(timeout=30)
    n = doc["requests_completed"]
    assert n > 0
    assert [(l[0], int(l[1]), int(l[2])) for l in lines] == \
        [(kind, i, proc.pid) for i in range(n) for kind in ("start", "end")]
    assert all(int(l[4]) > 0 for l in lines if l[0] == "end")
    # Until the reply came, none of the request's kernels had run: only the warm-up's and the
    # earlier requests' (3 kernels each: addmm, relu, addmm).
    k = doc["kernels_per_request"]
    assert seen_on_gpu == [k * (1 + i) for i in range(n)]


@needs_sim
def test_a_ready_file_holds_the_measured_run_until_removed(tmp_path):
    pytest.importorskip("torch")
    ready = tmp_path / "offline.ready"
    proc = runner("offline", "--model", "mm2048", "--duration", "0.3", "--ready-file", str(ready),
                  "--json")
    deadline = time.monotonic() + 240
    while not ready.exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the model never became ready"
        time.sleep(0.02)
    warm = gpu_completed(proc.pid)
    assert warm == 1  # the warm-up GEMM: its queue exists, the run has not started
    time.sleep(0.3)
    assert proc.poll() is None and gpu_completed(proc.pid) == warm
    ready.unlink()
    doc = finish(proc)
    assert doc["iterations"] > 0
