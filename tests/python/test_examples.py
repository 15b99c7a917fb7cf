"""The examples run as documented (C ABI, Python module, ctypes with libgpreempt_poc.so)."""
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
    assert "has 0 KFD queue(s)" in r.stdout  # gpreempt_print_my_queues of the controller
    assert "suspended 2 of 2 queue(s)" in r.stdout
    assert "resumed 2 of 2 queue(s)" in r.stdout
    assert not any(suspended_in_device(target.pid).values())


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
