"""`gpreempt top --once --json` against a fake gpreemptd (NDJSON on a Unix socket) validates
against schemas/top.schema.json."""
import json
import os
import socket
import tempfile
import threading
import subprocess
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema (scripts/install-deps.sh)")

SOURCE = Path(os.environ["GPREEMPT_SOURCE_DIR"])
GPREEMPT = Path(os.environ["GPREEMPT_BINARY_DIR"]) / "bin" / "gpreempt"
STATUS = {
    "schema_version": 2,
    "daemon": {"pid": 5, "version": "0.1.0", "config_path": None, "socket_path": "/run/x.sock", "uptime_s": 4.0},
    "classes": [{"name": "online", "priority": 10, "triggers": ["hint"]}],
    "gpus": [{"gpu_id": 63420, "can_suspend": True, "reason": None, "suspended_now": 0,
              "suspensions_total": 2, "suspended_s_total": 1.0, "grace_us": 100,
              "processes": [{"pid": 9, "start_time_ticks": 1, "class": None, "cmdline": "x",
                             "queues": 1, "suspended": False, "open_requests": 0}],
              "online_request_latency_ms": {"count": 0, "p50": None, "p99": None}}],
}


def serve(sock):
    conn, _ = sock.accept()
    with conn:
        f = conn.makefile("rw")
        for line in f:
            msg = json.loads(line)
            f.write(json.dumps({"v": 1, "seq": msg["seq"], "ok": True, "result": STATUS}) + "\n")
            f.flush()


def test_top_json_matches_its_schema():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "gpreemptd.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(path)
        sock.listen(1)
        t = threading.Thread(target=serve, args=(sock,), daemon=True)
        t.start()
        r = subprocess.run([str(GPREEMPT), "top", "--once", "--json", "--socket", path],
                           capture_output=True, text=True, timeout=60)
        sock.close()
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    schema = json.loads((SOURCE / "schemas/top.schema.json").read_text())
    resolver = jsonschema.RefResolver(base_uri=(SOURCE / "schemas").as_uri() + "/", referrer=schema)
    errors = list(jsonschema.Draft202012Validator(schema, resolver=resolver).iter_errors(doc))
    assert not errors, [e.message for e in errors[:5]]
    assert next(iter(doc)) == "schema_version"
    assert doc["gpus"][0]["suspensions_per_s"] == 0.5
