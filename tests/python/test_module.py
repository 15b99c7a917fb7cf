"""The gpreempt Python module: classes, context managers, errors, the stub."""
import ast
import errno
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import gpreempt
from conftest import SOURCE_DIR, needs_sim, suspended_in_device


def test_version_and_grace_conversion():
    # One source of the version: project(VERSION) in the top-level CMakeLists.txt.
    cmake = (SOURCE_DIR / "CMakeLists.txt").read_text()
    assert re.search(r"project\(gpreempt VERSION ([0-9.]+)", cmake).group(1) == gpreempt.__version__
    assert gpreempt.grace_from_us(100, 2100) == 210
    assert gpreempt.grace_from_us(0, 2100) == 1
    assert gpreempt.grace_from_us(5, 0) == gpreempt.GRACE_DEFAULT


def test_error_is_an_oserror_with_the_detail_message():
    with pytest.raises(gpreempt.Error) as info:
        gpreempt.Context(device_path="/nonexistent/kfd")
    assert isinstance(info.value, OSError)
    assert info.value.errno == errno.ENOENT
    assert "/nonexistent/kfd" in info.value.strerror


def test_stub_declares_every_public_name():
    stub = ast.parse((SOURCE_DIR / "bindings/python/gpreempt/__init__.pyi").read_text())
    declared = {n.name for n in stub.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    declared |= {t.id for n in stub.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    missing = set(gpreempt.__all__) - declared
    assert not missing, "names missing from __init__.pyi: %s" % sorted(missing)


def test_every_public_callable_has_a_docstring():
    for name in gpreempt.__all__:
        obj = getattr(gpreempt, name)
        if callable(obj):
            assert (obj.__doc__ or "").strip(), name


@needs_sim
def test_suspension_context_manager_suspends_and_resumes(target):
    with gpreempt.Context() as ctx:
        assert ctx.kfd_version[0] == 1 and ctx.kfd_version[1] >= 13
        with ctx.attach(target.pid) as t:
            queues = t.queues()
            assert sorted(q.queue_id for q in queues) == sorted(target.queue_ids)
            assert queues[0].type == 2  # compute AQL
            with t.suspended() as s:
                assert s.result.count == 2 and s.result.all_done
                assert all(suspended_in_device(target).values())
            assert not any(suspended_in_device(target).values())


@needs_sim
def test_exception_inside_the_block_still_resumes(target):
    with gpreempt.Context() as ctx, ctx.attach(target.pid) as t:
        with pytest.raises(KeyboardInterrupt):
            with t.suspended():
                raise KeyboardInterrupt
        assert not any(suspended_in_device(target).values())


@needs_sim
def test_strict_suspension_refuses_a_partial_result(target):
    with gpreempt.Context() as ctx, ctx.attach(target.pid) as t:
        with pytest.raises(gpreempt.Error) as info:
            with t.suspended(ids=[target.queue_ids[0], 99]):
                pass
        assert "99" in info.value.strerror
        assert not any(suspended_in_device(target).values())
        r = t.suspend([target.queue_ids[0], 99])  # non-strict call: reported, not hidden
        assert r.count == 1 and not r.all_done
        assert dict(r.queues)[99] == "invalid"
        t.resume()


@needs_sim
def test_errors_carry_errno_and_detail(target):
    with gpreempt.Context() as ctx:
        with pytest.raises(gpreempt.Error) as info:
            ctx.attach(999999)
        assert info.value.errno == errno.ESRCH
        t = ctx.attach(target.pid)
        with pytest.raises(gpreempt.Error) as info:
            ctx.attach(target.pid)
        assert info.value.errno == errno.EALREADY
    with pytest.raises(gpreempt.Error) as info:
        t.queues()
    assert info.value.errno == errno.EBADF


@needs_sim
def test_sysfs_discovery_without_a_session(target):
    qs = gpreempt.find_queues_by_process(target.pid)
    assert sorted(q.queue_id for q in qs) == sorted(target.queue_ids)
    with pytest.raises(gpreempt.Error) as info:
        gpreempt.find_queues_by_process(999999)
    assert info.value.errno == errno.ESRCH


@needs_sim
def test_calls_from_several_python_threads(target):
    errors = []
    with gpreempt.Context() as ctx, ctx.attach(target.pid) as t:
        def worker(qid):
            try:
                for _ in range(20):
                    t.suspend([qid])
                    t.resume([qid])
            except Exception as e:  # noqa: BLE001 - collected and asserted below
                errors.append(e)
        threads = [threading.Thread(target=worker, args=(q,)) for q in target.queue_ids]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors
        assert ctx.stats()["suspend_calls"] == 40


@needs_sim
def test_own_child_exit_status_is_left_to_the_parent(target):
    """A controller that launched its job itself still gets the job's exit status."""
    import signal
    import time
    with gpreempt.Context() as ctx:
        ctx.attach(target.pid)
        target.proc.send_signal(signal.SIGKILL)
        deadline = time.monotonic() + 10
        noticed = False
        while not noticed and time.monotonic() < deadline:
            noticed = any("exited" in m for _, m in ctx.take_notices())
            if not noticed:
                time.sleep(0.01)  # polling the notices; the deadline bounds the wait
        assert noticed, "the context never reported the target's exit"
        assert target.proc.wait(timeout=10) == -signal.SIGKILL


def test_print_my_queues_without_queues_says_so():
    # A fresh interpreter that has not touched the GPU: one line, not silence.
    code = "import gpreempt, sys; n = gpreempt.print_my_queues(); sys.exit(0 if n == 0 else 1)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"gpreempt: process \d+ has no KFD queues yet \(queues appear when the GPU "
                        r"runtime first uses the GPU\)\n", r.stdout), r.stdout
    assert r.stdout.count("\n") == 1


@needs_sim
def test_print_my_queues_with_kfd_open_but_no_queues(capsys):
    with gpreempt.Context():  # opens /dev/kfd: a KFD process without queues
        assert gpreempt.print_my_queues() == 0
    out = capsys.readouterr().out
    assert out == ("gpreempt: process %d has no KFD queues yet (queues appear when the GPU runtime "
                   "first uses the GPU)\n" % os.getpid())


@needs_sim
def test_watchdog_zero_is_off_and_the_default_is_30_s():
    with gpreempt.Context(watchdog_ms=0) as ctx:
        assert ctx.stats()["watchdog_ms"] == 0
    with gpreempt.Context() as ctx:
        assert ctx.stats()["watchdog_ms"] == 30000
    with gpreempt.Context(watchdog_ms=250) as ctx:
        assert ctx.stats()["watchdog_ms"] == 250
