"""gpreempt.online_request() fails open: with no gpreemptd, or one that goes away and comes back on
the same socket under a running client, every request runs (unprotected while the daemon is away),
one warning says protection is lost and one that it is back, and client.stats() counts; requests
overlap across threads; require_daemon=True fails closed. Against the fake gpreemptd of
tests/client (fake_gpreemptd.py): no GPU is needed."""
import errno
import logging
import os
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client"))

import gpreempt  # noqa: E402  (conftest put the build's module on the path)
from fake_gpreemptd import FakeDaemon  # noqa: E402


@pytest.fixture
def socket_path(tmp_path, monkeypatch):
    """A socket path nothing serves yet, made the default client's, which each test starts without."""
    path = str(tmp_path / "gpreemptd.sock")
    monkeypatch.setenv("GPREEMPT_SOCKET", path)
    monkeypatch.setattr(gpreempt, "_default", None)
    return path


def warnings_with(caplog, part):
    return [r.getMessage() for r in caplog.records
            if r.name == "gpreempt" and r.levelno == logging.WARNING and part in r.getMessage()]


def hints(d):
    return [(m["op"], m.get("request")) for m in d.received()]


def test_without_a_daemon_requests_run_unprotected_with_one_warning(socket_path, caplog):
    caplog.set_level(logging.WARNING, logger="gpreempt")
    ran = 0
    for _ in range(5):
        gpreempt.expect_request(500)
        with gpreempt.online_request():
            ran += 1

    @gpreempt.online_request()
    def infer(x):
        return x + 1

    assert infer(1) == 2
    assert ran == 5
    stats = gpreempt.default_client().stats()
    assert stats["requests_unprotected"] == 6
    assert stats["requests_protected"] == 0
    assert stats["requests_open"] == 0
    assert stats["connected"] is False
    lost = warnings_with(caplog, "unprotected")
    assert len(lost) == 1, [r.getMessage() for r in caplog.records]
    assert socket_path in lost[0]
    assert len([r for r in caplog.records if r.name == "gpreempt"]) == 1


def test_first_token_and_tokens_without_a_daemon_fail_open(socket_path, caplog):
    caplog.set_level(logging.WARNING, logger="gpreempt")
    with gpreempt.online_request() as r:
        assert isinstance(r, int) and r > 0, "the request is still its id"
        r.first_token()
        r.token(17)
        r.tokens = 40
    client = gpreempt.default_client()
    client.token(12345)  # a request never begun: nothing to tell
    stats = client.stats()
    assert stats["requests_unprotected"] == 1
    assert stats["requests_open"] == 0
    assert len([x for x in caplog.records if x.name == "gpreempt"]) == 1, caplog.text


def test_first_token_and_tokens_reach_the_daemon(socket_path):
    with FakeDaemon(path=socket_path) as d:
        client = gpreempt.Client(socket_path)
        with gpreempt.online_request(client) as r:
            r.first_token()
            r.token(17)
            r.tokens = 40
        with gpreempt.online_request(client) as old:
            pass
        client.close()
        got = [(m["op"], m.get("request"), m.get("tokens")) for m in d.received()]
    assert got == [("begin", r, None), ("token", r, None), ("token", r, 17), ("end", r, 40),
                   ("begin", old, None), ("end", old, None)], got


def test_require_daemon_raises_and_the_body_does_not_run(socket_path):
    with pytest.raises(gpreempt.Error) as e:
        with gpreempt.online_request(require_daemon=True):
            pytest.fail("the body ran without the daemon it required")
    assert e.value.errno == errno.ENOENT
    assert socket_path in e.value.strerror
    with pytest.raises(gpreempt.Error) as e:
        gpreempt.Client(socket_path, require_daemon=True)
    assert e.value.errno == errno.ENOENT
    assert gpreempt.Client(socket_path).require_daemon is False


def test_a_daemon_restarted_under_a_running_client_loses_no_request(socket_path, caplog):
    caplog.set_level(logging.WARNING, logger="gpreempt")
    first = FakeDaemon(path=socket_path)
    client = gpreempt.Client(socket_path)
    marker = gpreempt.online_request(client)
    stop = threading.Event()
    bodies = []
    errors = []

    def serve():
        # A server loop: each request is a block; none may fail whatever the daemon does.
        try:
            while not stop.is_set():
                with marker as request_id:
                    bodies.append(request_id)
                time.sleep(0.001)
        except BaseException as e:  # noqa: BLE001 - any failure is the test's finding
            errors.append(e)

    server = threading.Thread(target=serve)
    server.start()
    try:
        deadline = time.monotonic() + 30
        while len(first.received()) < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        first.close()  # killed mid-run
        served = len(bodies)
        while len(bodies) < served + 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        second = FakeDaemon(path=socket_path)
        try:
            # Protected again: the new daemon sees begin and end (the backoff is at most 2 s).
            while time.monotonic() < deadline:
                ops = [op for op, _ in hints(second)]
                if "begin" in ops and "end" in ops:
                    break
                time.sleep(0.01)
            stop.set()
            server.join(30)
            assert errors == [], "a request failed: %r" % errors
            stats = client.stats()
            received = hints(second)
            client.close()
        finally:
            second.close()
    finally:
        stop.set()
        server.join(30)
    begun = {r for op, r in received if op == "begin"}
    ended = [r for op, r in received if op == "end"]
    assert begun and ended, "the restarted daemon never saw a whole request"
    assert set(ended) <= begun, "an end the new daemon never saw begin"
    assert stats["requests_protected"] + stats["requests_unprotected"] == len(bodies)
    assert stats["requests_unprotected"] >= 1  # the first request after the kill, at least
    assert stats["reconnects"] == 1
    assert stats["requests_open"] == 0
    assert len(warnings_with(caplog, "cannot be reached")) == 1, caplog.text
    assert len(warnings_with(caplog, "protected again")) == 1, caplog.text


def test_counts_across_a_restart(socket_path):
    first = FakeDaemon(path=socket_path)
    client = gpreempt.Client(socket_path)
    with gpreempt.online_request(client):
        pass
    first.close()
    for _ in range(3):
        with gpreempt.online_request(client):
            pass
    assert client.stats()["requests_unprotected"] == 3
    second = FakeDaemon(path=socket_path)
    try:
        deadline = time.monotonic() + 30
        while not client.stats()["connected"] and time.monotonic() < deadline:
            with gpreempt.online_request(client):
                pass
            time.sleep(0.01)
        stats = client.stats()
        assert stats["connected"]
        assert stats["reconnects"] == 1
        assert stats["requests_protected"] == 2  # the first, and the one that reconnected
        assert stats["requests_open"] == 0
        assert hints(second)[0][0] == "begin"
        client.close()
    finally:
        second.close()


def test_overlapping_requests_from_two_threads(socket_path):
    def overlap(client):
        # Both threads inside their blocks at once, leaving in the reverse order of entry.
        inside = threading.Barrier(2)
        first_left = threading.Event()
        ids = {}

        def work(name):
            with gpreempt.online_request(client) as request_id:
                ids[name] = request_id
                inside.wait(10)
                if name == "b":
                    first_left.wait(10)
            if name == "a":
                first_left.set()

        threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(ids) == 2 and ids["a"] != ids["b"]
        return ids

    # Without a daemon, both run (unprotected).
    lax = gpreempt.Client(socket_path)
    overlap(lax)
    assert lax.stats()["requests_unprotected"] == 2
    assert lax.stats()["requests_open"] == 0
    lax.close()
    # With one, it sees both open before either ends, and each end names its own begin.
    with FakeDaemon(path=socket_path) as d:
        c = gpreempt.Client(socket_path)
        ids = overlap(c)
        got = hints(d)
        c.close()
    assert sorted(got[:2]) == sorted([("begin", ids["a"]), ("begin", ids["b"])])
    assert got[2:] == [("end", ids["a"]), ("end", ids["b"])]
