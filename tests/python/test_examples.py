"""The examples run as documented (C ABI, Python module, ctypes with libgpreempt_poc.so)."""
import json
import os
import subprocess
import sys

from conftest import BINARY_DIR, SOURCE_DIR, needs_sim, suspended_in_device


def run(argv, **env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run(argv, capture_output=True, text=True, env=e, timeout=60)


@needs_sim
def test_ctypes_example_with_the_compatibility_library_name(target):
    r = run([sys.executable, str(SOURCE_DIR / "examples/ctypes_suspend.py"), str(target.pid),
             "--hold-ms", "50", "--grace-us", "100"],
            LD_LIBRARY_PATH=str(BINARY_DIR / "lib"))
    assert r.returncode == 0, r.stderr
    assert "has no KFD queues yet" in r.stdout  # gpreempt_print_my_queues of the controller
    assert "suspended 2 of 2 queue(s)" in r.stdout
    assert "resumed 2 of 2 queue(s)" in r.stdout
    assert not any(suspended_in_device(target).values())


@needs_sim
def test_python_example(target):
    r = run([sys.executable, str(SOURCE_DIR / "examples/python_suspend.py"), str(target.pid),
             "--hold-ms", "50", "--grace-us", "100"],
            PYTHONPATH=str(BINARY_DIR / "python"))
    assert r.returncode == 0, r.stderr
    assert "suspended 2 queue(s)" in r.stdout
    assert "resumed" in r.stdout


@needs_sim
def test_c_example(target):
    r = run([str(BINARY_DIR / "bin" / "gpreempt_example_suspend"), str(target.pid), "50"])
    assert r.returncode == 0, r.stderr
    assert "suspended 2 queue(s)" in r.stdout
    assert "resumed 2 queue(s)" in r.stdout


def run_online_against(controller_argv, sock, **env):
    """Start a controller example, then an online service that reports its requests to it."""
    e = dict(os.environ)
    e.update(env)
    ctl = subprocess.Popen(controller_argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    first = ctl.stdout.readline()  # "controlling pid ...": the socket is listening
    assert first.startswith("controlling pid"), first + ctl.stderr.read()
    online = run([str(BINARY_DIR / "bin" / "gpreempt-workload"), "online", "--preset", "toy-online",
                  "--duration", "1", "--rate", "20", "--arrival", "fixed",
                  "--notify", sock, "--notify-wait", "--json"])
    assert online.returncode == 0, online.stderr
    out, err = ctl.communicate(timeout=30)
    assert ctl.returncode == 0, err
    return json.loads(online.stdout), out


def check_controlled(result, out, target):
    completed = result["requests_completed"]
    assert completed > 0
    last = out.strip().splitlines()[-1]
    assert last.startswith("online requests %d, suspensions " % completed), last
    suspensions = int(last.split("suspensions ")[1].split(",")[0])
    assert 0 < suspensions <= completed
    assert not any(suspended_in_device(target).values()), "controller left queues suspended"


@needs_sim
def test_c_online_controller(target, tmp_path):
    sock = str(tmp_path / "c.sock")
    result, out = run_online_against(
        [str(BINARY_DIR / "bin" / "gpreempt_example_online_controller"), str(target.pid), sock], sock)
    check_controlled(result, out, target)


@needs_sim
def test_python_online_controller(target, tmp_path):
    sock = str(tmp_path / "py.sock")
    result, out = run_online_against(
        [sys.executable, str(SOURCE_DIR / "examples/online_controller.py"), str(target.pid), sock], sock,
        PYTHONPATH=str(BINARY_DIR / "python"))
    check_controlled(result, out, target)
