"""`gpreempt ctl` against a fake gpreemptd (fake_gpreemptd.py): what it sends, what it prints, and
its exit codes (0 ok, 1 refused or unreachable with the daemon's reason, 2 usage)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BINARY_DIR = Path(os.environ.get("GPREEMPT_BINARY_DIR", Path(__file__).resolve().parents[2] / "build"))
SOURCE_DIR = Path(os.environ.get("GPREEMPT_SOURCE_DIR", Path(__file__).resolve().parents[2])).resolve()
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_gpreemptd import FakeDaemon, Refuse  # noqa: E402

GPREEMPT = str(BINARY_DIR / "bin" / "gpreempt")

# A whole status document, as gpreemptd sends it (it must validate against
# schemas/gpreemptd-status.schema.json, the one schema of that document).
LAT_NONE = {"count": 0, "p50": 0.0, "p99": 0.0, "max": 0.0}  # as the daemon sends an empty histogram


def _stats(**kw):
    return {"suspensions": 0, "forced_resumes": 0, "failed_actuations": 0, "timed_out_actuations": 0,
            "suspended_s": 0.0, "operator_suspensions": 0, "operator_suspended_s": 0.0,
            "requests_ignored": 0, "requests_aborted": 0, "request_latency_ms": LAT_NONE, **kw}


def _proc(pid, cls, cmdline, queues, suspended, open_requests, rule=None, inherited=None):
    return {"pid": pid, "start_time_ticks": pid - 4877, "class": cls, "class_rule": rule,
            "class_inherited_from": inherited, "cmdline": cmdline, "queues": queues,
            "suspended": suspended, "state": "suspended" if suspended else ("running" if cls else "unmanaged"),
            "open_requests": open_requests, "operator_hold_s": None}


STATUS = {
    "schema_version": 2,
    "daemon": {"pid": 4100, "version": "0.3.0", "config_path": "/etc/gpreempt/gpreemptd.toml",
               "socket_path": "/run/gpreempt/gpreemptd.sock", "uptime_s": 12.5, "kfd_version": "1.16",
               "shutting_down": False, "reloads": 0, "failed_reloads": 0, "unknown_requests": 0,
               "hint_to_suspend_us": LAT_NONE,
               "core_notices": {}, "hints_refused": 0, "metrics_endpoint": None,
               "poll_interval_us": 200, "transparent_watched": 1},
    "classes": [{"name": "online", "priority": 10, "triggers": ["hint", "transparent"],
                 "match": ["cmdline=*serve*"],
                 "stats": _stats(request_latency_ms={"count": 1000, "p50": 2.5, "p99": 3.75, "max": 4.0})},
                {"name": "offline", "priority": 0, "triggers": [], "match": ["env=GPREEMPT_CLASS=offline"],
                 "stats": _stats(suspensions=37, suspended_s=1.25)}],
    "gpus": [{"gpu_id": 63420, "name": "AMD Instinct MI308X", "can_suspend": True, "reason": None,
              "suspended_now": True, "suspended_processes": 1, "suspensions_total": 37,
              "suspended_s_total": 1.25, "grace_us": 100, "in_flight": False,
              "processes": [
                  _proc(5001, "online", "python3 serve.py", 2, False, 1, rule="cmdline=*serve*"),
                  _proc(5002, "offline", "python3 train.py", 4, True, 0, rule="env=GPREEMPT_CLASS=offline",
                        inherited={"pid": 4990, "start_time_ticks": 113}),
                  _proc(5003, None, "rocminfo", 1, False, 0)],
              "online_request_latency_ms": {"count": 1000, "p50": 2.5, "p99": 3.75, "max": 4.0}},
             {"gpu_id": 12345, "name": None, "can_suspend": False, "reason": "KFD 1.12 has no debug-trap suspend",
              "suspended_now": False, "suspended_processes": 0, "suspensions_total": 0, "suspended_s_total": 0.0,
              "grace_us": 0, "in_flight": False, "processes": [], "online_request_latency_ms": LAT_NONE}],
}


def ctl(*args, env_socket=None):
    env = dict(os.environ)
    env.pop("GPREEMPT_SOCKET", None)
    if env_socket:
        env["GPREEMPT_SOCKET"] = env_socket
    return subprocess.run([GPREEMPT, "ctl", *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture
def daemon():
    with FakeDaemon(lambda m: STATUS if m["op"] == "status" else {}) as d:
        yield d


def test_status_prints_a_table_per_gpu(daemon):
    r = ctl("status", "--socket", daemon.path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "gpreemptd 0.3.0  pid 4100" in out
    assert "/etc/gpreempt/gpreemptd.toml" in out
    assert "online   10        hint,transparent" in out
    assert "GPU 63420 (f7bc): can suspend; suspended now: yes" in out
    assert "suspensions 37, suspended 1.250 s in total, grace 100 us" in out
    assert "online requests 1000, latency p50 2.500 ms, p99 3.750 ms" in out
    assert "python3 train.py" in out
    lines = {l.split()[0]: l.split() for l in out.splitlines() if l.strip().startswith("500")}
    assert lines["5002"][1:5] == ["offline", "4", "yes", "0"]
    assert lines["5003"][1] == "-"  # no class
    assert "GPU 12345 (3039): cannot suspend (KFD 1.12 has no debug-trap suspend)" in out
    assert "no GPU processes" in out
    assert daemon.ops() == ["status"]


def test_status_json_is_the_daemons_document(daemon):
    r = ctl("status", "--json", env_socket=daemon.path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == STATUS


def test_suspend_sends_the_target_and_duration(daemon):
    r = ctl("suspend", "--class", "offline", "--for", "500ms", "--socket", daemon.path)
    assert r.returncode == 0, r.stderr
    assert "suspended class offline for 500 ms" in r.stdout
    r = ctl("suspend", "--pid", "5002", "--gpu", "0xf7bc", "--for", "2s", "--socket", daemon.path, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["op"] == "suspend" and doc["for_ms"] == 2000
    assert doc["target"] == {"class": None, "pid": 5002, "gpu_id": 63420}
    r = ctl("suspend", "--class", "offline", "--for", "1500us", "--socket", daemon.path)
    assert r.returncode == 0, r.stderr
    sent = [m for m in daemon.received() if m["op"] == "suspend"]
    assert sent[0]["class"] == "offline" and sent[0]["for_ms"] == 500 and "gpu_id" not in sent[0]
    assert sent[1]["pid"] == 5002 and sent[1]["gpu_id"] == 63420 and sent[1]["for_ms"] == 2000
    assert sent[2]["for_ms"] == 2  # 1.5 ms rounded up


def test_resume_and_reload(daemon):
    assert ctl("resume", "--class", "offline", "--socket", daemon.path).returncode == 0
    r = ctl("reload", "--socket", daemon.path)
    assert r.returncode == 0 and "reloaded" in r.stdout
    assert daemon.ops() == ["resume", "reload"]


def test_a_refusal_prints_the_daemons_reason_and_exits_1(daemon):
    daemon.handler = lambda m: Refuse("not_permitted", "uid 1000 is not root and not in group gpreempt")
    r = ctl("suspend", "--class", "offline", "--for", "500ms", "--socket", daemon.path)
    assert r.returncode == 1
    assert "uid 1000 is not root and not in group gpreempt" in r.stderr
    r = ctl("reload", "--socket", daemon.path, "--json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["error"]["code"] == "EPERM"


def test_an_unknown_class_is_esrch(daemon):
    daemon.handler = lambda m: Refuse("unknown_target", 'no class "offlien" in /etc/gpreempt/gpreemptd.toml')
    r = ctl("resume", "--class", "offlien", "--socket", daemon.path, "--json")
    assert r.returncode == 1
    assert 'no class "offlien"' in r.stderr
    assert json.loads(r.stdout)["error"]["code"] == "ESRCH"


@pytest.mark.parametrize("args", [
    ["suspend", "--for", "500ms"],                                  # no target
    ["suspend", "--class", "offline", "--pid", "3", "--for", "1s"],  # two targets
    ["suspend", "--class", "offline", "--for", "500"],              # no unit
    ["suspend", "--class", "offline", "--for", "0ms"],
    ["suspend", "--class", "offline"],                              # no --for
    ["suspend", "--class", "offline", "--gpu", "f7bc", "--for", "1s"],
    ["resume"],
    ["explode"],
])
def test_usage_errors_exit_2_and_send_nothing(daemon, args):
    r = ctl(*args, "--socket", daemon.path)
    assert r.returncode == 2, (args, r.stdout, r.stderr)
    assert daemon.received() == []


def test_no_daemon_names_the_socket_and_exits_1(tmp_path):
    path = str(tmp_path / "nothing.sock")
    r = ctl("status", "--socket", path)
    assert r.returncode == 1
    assert path in r.stderr and "gpreemptd running" in r.stderr


def test_json_outputs_follow_their_schemas(daemon):
    jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema (scripts/install-deps.sh)")
    schemas = SOURCE_DIR / "schemas"

    def check(name, doc):
        schema = json.loads((schemas / (name + ".schema.json")).read_text())
        resolver = jsonschema.RefResolver(base_uri=schemas.as_uri() + "/", referrer=schema)
        jsonschema.Draft202012Validator(schema, resolver=resolver).validate(doc)

    check("gpreemptd-status", json.loads(ctl("status", "--json", "--socket", daemon.path).stdout))
    for args in (["suspend", "--class", "offline", "--for", "1s"], ["resume", "--pid", "4"], ["reload"]):
        check("ctl-command", json.loads(ctl(*args, "--json", "--socket", daemon.path).stdout))
