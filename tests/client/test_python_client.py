"""gpreempt.Client, online_request (context manager and decorator) and expect_request against a
fake gpreemptd (fake_gpreemptd.py)."""
import errno
import os
import sys
import threading
from pathlib import Path

import pytest

BINARY_DIR = Path(os.environ.get("GPREEMPT_BINARY_DIR", Path(__file__).resolve().parents[2] / "build"))
sys.path.insert(0, str(BINARY_DIR / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpreempt  # noqa: E402
from fake_gpreemptd import FakeDaemon, Raw, Refuse  # noqa: E402


@pytest.fixture
def daemon(monkeypatch):
    with FakeDaemon() as d:
        monkeypatch.setenv("GPREEMPT_SOCKET", d.path)
        # Each test starts without the module's default client (it is connected lazily).
        monkeypatch.setattr(gpreempt, "_default", None)
        yield d


def hints(d):
    return [(m["op"], m.get("request")) for m in d.received()]


def test_context_manager_sends_begin_then_end_with_one_id(daemon):
    with gpreempt.online_request() as request_id:
        assert hints(daemon) == [("begin", request_id)]
    assert hints(daemon) == [("begin", request_id), ("end", request_id)]


def test_context_manager_ends_the_request_when_the_body_raises(daemon):
    with pytest.raises(ZeroDivisionError):
        with gpreempt.online_request():
            1 / 0
    ops = hints(daemon)
    assert [op for op, _ in ops] == ["begin", "end"]
    assert ops[0][1] == ops[1][1]


def test_a_failing_end_does_not_hide_the_bodys_exception(daemon):
    daemon.handler = lambda m: Refuse("unknown_target", "no such request") if m["op"] == "end" else {}
    strict = gpreempt.Client(require_daemon=True)
    with pytest.raises(KeyError):
        with gpreempt.online_request(strict):
            raise KeyError("body")
    # Without an exception in the body, the refusal is the error.
    with pytest.raises(gpreempt.Error) as e:
        with gpreempt.online_request(strict):
            pass
    assert e.value.errno == errno.ESRCH
    assert "no such request" in str(e.value)


def test_decorator_wraps_each_call_and_keeps_the_return_value(daemon):
    @gpreempt.online_request()
    def infer(x):
        assert [op for op, _ in hints(daemon)][-1] == "begin"
        return x * 2

    assert infer(3) == 6
    assert infer(4) == 8
    ops = hints(daemon)
    assert [op for op, _ in ops] == ["begin", "end", "begin", "end"]
    assert ops[0][1] == ops[1][1] and ops[2][1] == ops[3][1]
    assert ops[0][1] != ops[2][1]


def test_decorator_ends_the_request_when_the_function_raises(daemon):
    @gpreempt.online_request()
    def infer():
        raise RuntimeError("model failed")

    with pytest.raises(RuntimeError):
        infer()
    assert [op for op, _ in hints(daemon)] == ["begin", "end"]


def test_nested_and_concurrent_requests_get_their_own_ids(daemon):
    marker = gpreempt.online_request()
    with marker as outer:
        with marker as inner:
            assert inner != outer
    ops = hints(daemon)
    assert ops == [("begin", outer), ("begin", inner), ("end", inner), ("end", outer)]

    # Four threads inside one shared marker at once, leaving in a chosen order: each must end its
    # own request, not the one another thread began last.
    barrier = threading.Barrier(4)
    leave = [threading.Event() for _ in range(4)]
    ids = [None] * 4

    def work(i):
        with marker as rid:
            ids[i] = rid
            barrier.wait(10)
            leave[i].wait(10)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for i in (2, 0, 3, 1):
        while len(daemon.received()) < 8:  # the four begins
            threading.Event().wait(0.01)
        leave[i].set()
        threads[i].join()
        assert hints(daemon)[-1] == ("end", ids[i])
    assert len(set(ids)) == 4


def test_expect_request_sends_the_delay(daemon):
    gpreempt.expect_request(1500)
    assert daemon.received()[-1]["op"] == "expect"
    assert daemon.received()[-1]["in_us"] == 1500


def test_the_default_client_connects_lazily_to_gpreempt_socket(daemon):
    assert gpreempt._default is None
    gpreempt.expect_request(10)
    assert gpreempt.default_client().socket == daemon.path
    assert gpreempt.default_client() is gpreempt.default_client()


def test_a_refused_hint_raises_eperm_with_the_daemons_reason(daemon):
    daemon.handler = lambda m: Refuse("not_permitted", 'class "offline" may not preempt')
    with pytest.raises(gpreempt.Error) as e:
        with gpreempt.online_request(require_daemon=True):
            pytest.fail("the body must not run when begin was refused")
    assert e.value.errno == errno.EPERM
    assert e.value.strerror == 'class "offline" may not preempt'


def test_no_daemon_names_the_socket(tmp_path, monkeypatch):
    path = str(tmp_path / "missing.sock")
    with pytest.raises(gpreempt.Error) as e:
        gpreempt.Client(path, require_daemon=True)
    assert e.value.errno == errno.ENOENT
    assert path in e.value.strerror and "gpreemptd" in e.value.strerror


def test_client_timeout_and_reconnect(daemon):
    daemon.handler = lambda m: None
    c = gpreempt.Client(daemon.path, timeout_ms=30, require_daemon=True)
    with pytest.raises(gpreempt.Error) as e:
        c.begin()
    assert e.value.errno == errno.ETIMEDOUT
    assert not c.connected
    # The next call connects again.
    daemon.handler = lambda m: {}
    c.expect(5)
    assert c.connected
    # Failing open, a silent daemon costs the request its protection, not the request.
    daemon.handler = lambda m: None
    lax = gpreempt.Client(daemon.path, timeout_ms=30)
    lax.end(lax.begin())
    assert lax.stats()["requests_unprotected"] == 1


def test_client_operator_calls_and_status(daemon):
    daemon.handler = lambda m: {"schema_version": 1, "gpus": []} if m["op"] == "status" else {"ok_op": m["op"]}
    with gpreempt.Client(daemon.path) as c:
        assert c.status() == {"schema_version": 1, "gpus": []}
        assert c.suspend(500, class_name="offline", gpu_id=7) == {"ok_op": "suspend"}
        c.resume(pid=1234)
        c.reload()
        with pytest.raises(gpreempt.Error) as e:
            c.suspend(500)
        assert e.value.errno == errno.EINVAL
    msgs = daemon.received()
    assert msgs[1] == {"v": 1, "seq": msgs[1]["seq"], "op": "suspend", "class": "offline", "gpu_id": 7,
                       "for_ms": 500}
    assert msgs[2]["pid"] == 1234 and "class" not in msgs[2]
    assert msgs[3]["op"] == "reload"


def test_a_daemon_that_dies_mid_reply(daemon):
    daemon.handler = lambda m: Raw(b'{"v":1,"seq":', close=True)
    c = gpreempt.Client(daemon.path)
    with pytest.raises(gpreempt.Error) as e:
        c.hello()
    assert e.value.errno == errno.ECONNRESET


def test_deferred_hint_replies_raise_a_refusal_at_flush(daemon):
    daemon.handler = lambda m: Refuse("not_permitted", "class offline") if m["op"] == "begin" else {}
    c = gpreempt.Client(hint_replies="deferred", require_daemon=True)
    assert c.hint_replies == "deferred"
    c.begin(7)  # returns once sent
    with pytest.raises(gpreempt.Error) as e:
        c.flush()
    assert e.value.errno == errno.EPERM
    assert "begin of request 7" in str(e.value) and "class offline" in str(e.value)
    c.expect(100)
    c.flush()
    assert hints(daemon) == [("begin", 7), ("expect", None)]
    c.close()


def test_hint_replies_default_and_bad_value(daemon, monkeypatch):
    assert gpreempt.Client().hint_replies == "wait"
    monkeypatch.setenv("GPREEMPT_HINT_REPLIES", "deferred")
    assert gpreempt.Client().hint_replies == "deferred"
    assert gpreempt.Client(hint_replies="wait").hint_replies == "wait"
    with pytest.raises(gpreempt.Error) as e:
        gpreempt.Client(hint_replies="sometimes")
    assert e.value.errno == errno.EINVAL
