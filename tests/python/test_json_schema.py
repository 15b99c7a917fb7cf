"""Every --json document (gpreempt, kfdsim) and every C ABI / Python inspection document validates
against its schema in schemas/, and the schemas themselves keep the conventions of docs/json.md:
snake_case keys, gpu_id an integer, addresses "0x…" strings, schema_version first.

Commands that need a GPU run on the simulated machine of this pytest run (kfdsim run); commands that
read files run on the real captures of ../shared and skip when it is absent."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema (scripts/install-deps.sh)")

from conftest import BINARY_DIR, SOURCE_DIR, needs_sim  # noqa: E402

import gpreempt  # noqa: E402

SCHEMAS = SOURCE_DIR / "schemas"
SHARED = Path(os.environ.get("GPREEMPT_SHARED_DIR", ""))
needs_shared = pytest.mark.skipif(not (SHARED / "realdata").is_dir(),
                                  reason="../shared (real captures) is not beside this checkout")
DEBUGFS = SHARED / "realdata" / "debugfs"
AMDLOG = SHARED / "realdata" / "amdlog"
GPREEMPT = str(BINARY_DIR / "bin" / "gpreempt")
KFDSIM = str(BINARY_DIR / "bin" / "kfdsim")

SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
ADDRESS = re.compile(r"^0x[0-9a-f]+$")
# Keys that hold an address (or a hex register value) wherever they appear.
ADDRESS_KEY = re.compile(r"(_address|_base|^hwq|^header|_status|_control|^quantum|^persistent_state)$")
# Objects whose keys are data (kernel names, log levels, the kernel's property names), not names.
MAP_KEYS = {"kernels", "levels", "properties"}


def load(name):
    return json.loads((SCHEMAS / (name + ".schema.json")).read_text())


def validator(name):
    schema = load(name)
    resolver = jsonschema.RefResolver(base_uri=SCHEMAS.as_uri() + "/", referrer=schema)
    return jsonschema.Draft202012Validator(schema, resolver=resolver)


def check_conventions(doc, path="$"):
    """What a schema cannot say once for all documents: names and value forms by key."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            where = f"{path}.{k}"
            assert SNAKE.match(k), f"{where}: key is not snake_case"
            if k == "gpu_id":
                assert isinstance(v, int) and not isinstance(v, bool), f"{where}: gpu_id must be an integer: {v!r}"
            if ADDRESS_KEY.search(k) and v is not None and not isinstance(v, (list, dict, bool)):
                assert isinstance(v, str) and ADDRESS.match(v), f"{where}: not a 0x… address: {v!r}"
            if k in MAP_KEYS and isinstance(v, dict):
                continue
            check_conventions(v, where)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            check_conventions(v, f"{path}[{i}]")


def valid(name, doc):
    """doc validates against schemas/<name>.schema.json and keeps the conventions."""
    errors = sorted(validator(name).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, f"{name}: " + "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    assert next(iter(doc)) == "schema_version", f"{name}: schema_version is not the first key"
    check_conventions(doc)
    return doc


def run(*argv, code=0, env=None):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run(list(argv), capture_output=True, text=True, timeout=120, env=e)
    assert r.returncode == code, f"{argv}: exit {r.returncode}, stderr: {r.stderr}"
    return r.stdout


def cli(*args, code=0):
    return json.loads(run(GPREEMPT, *args, "--json", code=code))


# ---- the schemas themselves ------------------------------------------------------------------

def schema_names():
    return sorted(p.name[: -len(".schema.json")] for p in SCHEMAS.glob("*.schema.json"))


def walk_properties(node, path=""):
    """(where, name, subschema) of every property a schema names, at any depth."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "properties" and isinstance(v, dict):
                for name, sub in v.items():
                    yield f"{path}.{name}", name, sub
                    yield from walk_properties(sub, f"{path}.{name}")
            else:
                yield from walk_properties(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk_properties(v, f"{path}[{i}]")


@pytest.mark.parametrize("name", schema_names())
def test_schema_is_valid_and_keeps_the_conventions(name):
    schema = load(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    for where, key, sub in walk_properties(schema):
        assert SNAKE.match(key), f"{name}{where}: property name is not snake_case"
        if key == "gpu_id":
            assert sub == {"$ref": "common.schema.json#/$defs/gpu_id"}, f"{name}{where}: gpu_id is not the integer id"
        if key == "schema_version":
            assert sub == {"$ref": "common.schema.json#/$defs/schema_version"}, f"{name}{where}"
    if name != "common":
        assert "schema_version" in schema["required"], name


def test_the_schemas_catch_a_rename():
    """additionalProperties: false is what turns a renamed key into a failure."""
    doc = {"schema_version": 2, "queues": [{"pid": 1, "queue_id": 1, "gpu_id": 1, "type": "compute", "aql": True,
                                            "ring_base": "0x1000", "ring_size_bytes": 4096, "rptr_address": "0x2080",
                                            "wptr_address": "0x2038", "priority": 7, "suspended": False}]}
    valid("kfdsim-queues", doc)
    renamed = json.loads(json.dumps(doc).replace('"ring_base"', '"ring_base_address"'))
    with pytest.raises(AssertionError, match="ring_base"):
        valid("kfdsim-queues", renamed)
    hex_id = json.loads(json.dumps(doc).replace('"gpu_id": 1', '"gpu_id": "f7bc"'))
    with pytest.raises(AssertionError, match="gpu_id"):
        valid("kfdsim-queues", hex_id)
    assert SNAKE.match("ring_base") and not SNAKE.match("ringBase") and not SNAKE.match("Ring_base")


def test_schema_version_is_the_one_of_the_code():
    header = (SOURCE_DIR / "lib/common/json_conventions.h").read_text()
    version = int(re.search(r"kSchemaVersion = (\d+);", header).group(1))
    assert load("common")["$defs"]["schema_version"] == {"const": version}


# ---- documents that need no GPU -------------------------------------------------------------

def test_usage_error_document():
    doc = valid("error", cli("bench", "preempt", "--pid", "1", "--cycles", "0", code=2))
    assert doc["error"]["code"] == "usage" and doc["error"]["errno"] is None
    # A parse error (CLI11's own: a bad number, an unknown option) is the same document.
    for args in (("queues", "--pid", "abc"), ("info", "--no-such-option")):
        doc = valid("error", cli(*args, code=2))
        assert doc["error"]["code"] == "usage", args


@needs_shared
def test_decode_on_real_captures():
    valid("decode-mqds", cli("decode", "mqds", str(DEBUGFS / "03_mi308x_rocm702_mqds.txt")))
    valid("decode-hqds", cli("decode", "hqds", str(DEBUGFS / "01_mi308x_rocm702_hqds_full.txt")))
    valid("decode-hqds", cli("decode", "hqds", str(DEBUGFS / "02_mi308x_rocm702_hqds_baseline_node2.txt")))


@needs_shared
def test_map_on_real_captures():
    doc = valid("map", cli("map", "--offline", "--mqds", str(DEBUGFS / "03_mi308x_rocm702_mqds.txt"),
                           "--hqds", str(DEBUGFS / "01_mi308x_rocm702_hqds_full.txt"),
                           "--log", str(AMDLOG / "03_mi308x_rocm702_stream_priority_L4.log")))
    assert doc["queues"]


@needs_shared
def test_log_analyze_has_one_shape_for_one_and_many_files(tmp_path):
    logs = sorted(str(p) for p in AMDLOG.glob("*.log"))
    one = valid("log-analyze", cli("log", "analyze", logs[0]))
    many = valid("log-analyze", cli("log", "analyze", *logs))
    assert len(one["files"]) == 1 and len(many["files"]) == len(logs)
    assert many["files"][0] == one["files"][0]
    cfg = valid("log-analyze", cli("log", "analyze", str(AMDLOG / "03_mi308x_rocm702_stream_priority_L4.log"),
                                   "--config", str(tmp_path)))
    assert cfg["config_files"]
    for f in cfg["config_files"]:
        valid("log-queue-config", json.loads(Path(f).read_text()))


@needs_shared
def test_log_compare():
    valid("log-compare", cli("log", "compare", str(AMDLOG / "03_mi308x_rocm702_stream_priority_L4.log"),
                             str(AMDLOG / "04_mi308x_rocm702_16streams_L3.log")))


@needs_shared
def test_c_abi_documents_through_python():
    mqds = (DEBUGFS / "03_mi308x_rocm702_mqds.txt").read_text()
    hqds = (DEBUGFS / "01_mi308x_rocm702_hqds_full.txt").read_text()
    log = (AMDLOG / "03_mi308x_rocm702_stream_priority_L4.log").read_text(errors="replace")
    valid("decode-mqds", gpreempt.decode("mqds", mqds))
    valid("decode-hqds", gpreempt.decode("hqds", hqds))
    valid("decode-mqds", gpreempt.decode("mqds", mqds[: len(mqds) // 2]))  # partial: same schema
    valid("log-analyze", gpreempt.analyze_log(log))
    valid("map", gpreempt.queue_map(mqds=mqds, hqds=hqds, log=log))


def test_c_abi_properties_through_python():
    text = "cpu_cores_count 0\nsimd_count 1216\narray_count 32\ngfx_target_version 90402\nnum_xcc 8\n"
    valid("decode-properties", gpreempt.decode("properties", text))


# ---- commands on the simulated machine ------------------------------------------------------

@needs_sim
def test_kfdsim_documents():
    valid("kfdsim-status", json.loads(run(KFDSIM, "status", "--json")))
    valid("kfdsim-queues", json.loads(run(KFDSIM, "queues", "--json")))
    valid("kfdsim-stats", json.loads(run(KFDSIM, "stats", "--json")))
    valid("kfdsim-files", json.loads(run(KFDSIM, "files", "--json")))


@needs_sim
def test_info_and_live_decoders():
    valid("info", cli("info"))
    valid("decode-properties", cli("decode", "properties", "/sys/class/kfd/kfd/topology/nodes/1/properties"))


@needs_sim
def has_cap_sys_ptrace():
    """CAP_SYS_PTRACE (bit 19) in this process's effective set, as doctor's cap_sys_ptrace check
    reads it: root has it, an ordinary user (CI may run as one) does not."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> 19 & 1)
    return False


def test_doctor():
    # On the simulator every check passes but cap_sys_ptrace, which only root (or the capability)
    # passes; without it the document says not ok and names that check alone.
    privileged = has_cap_sys_ptrace()
    doc = valid("doctor", cli("doctor", code=0 if privileged else 1))
    assert doc["simulated"] and doc["ok"] == privileged
    failed = [c["id"] for c in doc["checks"] if c["status"] == "fail"]
    assert failed == ([] if privileged else ["cap_sys_ptrace"]), failed
    # Off the simulator's device: the failure document is the same document, ok false.
    failed = valid("doctor", cli("doctor", "--device", "/nonexistent/kfd", code=1))
    assert not failed["ok"] and failed["error"]["code"] == "failed"


@needs_sim
def test_live_debugfs_decoders_and_map(target):
    valid("decode-mqds", cli("decode", "mqds"))
    valid("decode-hqds", cli("decode", "hqds"))
    rls = valid("decode-rls", cli("decode", "rls"))
    assert any(n["packets"] for n in rls["nodes"])
    doc = valid("map", cli("map", "--pid", str(target.pid)))
    assert doc["queues"]
    # The C ABI over the simulated machine's own debugfs text.
    valid("decode-rls", gpreempt.decode("rls", Path("/sys/kernel/debug/kfd/rls").read_text()))


@needs_sim
def test_queues_suspend_resume_bench(target):
    pid = str(target.pid)
    snap = valid("queues", cli("queues", "--pid", pid))
    sysfs = valid("queues", cli("queues", "--pid", pid, "--sysfs"))
    assert {q["type"] for q in snap["queues"]} == {q["type"] for q in sysfs["queues"]}
    valid("suspend", cli("suspend", "--pid", pid, "--for", "20", "--grace-us", "100"))
    valid("resume", cli("resume", "--pid", pid))
    bench = valid("bench-preempt", cli("bench", "preempt", "--pid", pid, "--cycles", "3"))
    assert bench["suspend"]["wall_us"]["count"] == 3


@needs_sim
def test_failure_documents(target):
    doc = valid("error", cli("queues", "--pid", "999999", code=1))
    assert doc["error"]["message"]
    failed = valid("resume", cli("resume", "--pid", str(target.pid), "--queues", "4242", code=1))
    assert failed["ok"] is False and failed["error"]["code"] == "failed"


@needs_sim
def test_ps_and_watch(target):
    doc = valid("ps", cli("ps"))
    assert any(p["pid"] == target.pid for p in doc["processes"])
    valid("ps-pid", cli("ps", "--container-pid-of", str(target.pid)))
    lines = run(GPREEMPT, "watch", "--json", "--count", "1").splitlines()
    assert lines
    for line in lines:
        valid("watch-event", json.loads(line))


@needs_sim
def test_experiment(tmp_path):
    workload = str(BINARY_DIR / "bin" / "gpreempt-workload")
    out = tmp_path / "exp"
    # The model must still run when the experiment's poll first sees it through the simulator:
    # 0.3 s was missed at a load average of 18; 3 s leaves room for a slow start.
    doc = valid("experiment-queue-ids", cli(
        "experiment", "queue-ids", "--runs", "1", "--poll", "0.01", "--out", str(out),
        "--model", f"{workload} offline --preset gemm2048 --duration 3"))
    assert doc["runs"]
    valid("experiment-queue-ids", json.loads((out / "result.json").read_text()))


@needs_sim
def test_demo():
    doc = valid("demo", cli("demo", "--requests", "6"))
    names = [s["name"] for s in doc["scenarios"]]
    assert names == ["online-alone", "offline-alone", "none", "gpreempt-hint", "gpreempt-early",
                     "gpreempt-transparent"]
    assert all("gpreemptd" in s for s in doc["scenarios"][3:]), "the daemon scenarios report it"


@needs_sim
def test_llm_serve_and_finetune():
    import sys
    env = {"PYTHONPATH": str(BINARY_DIR / "python")}
    serve = valid("serve", json.loads(run(sys.executable, "-m", "gpreempt.sim.serve", "--model", "llama-1b",
                                          "--num-prompts", "3", "--request-rate", "inf", "--no-progress", "--json",
                                          env=env)))
    assert serve["completed"] == 3 and len(serve["requests"]) == 3
    tune = valid("finetune", json.loads(run(sys.executable, "-m", "gpreempt.sim.finetune", "--model", "llama-1b",
                                            "--steps", "1", "--batch", "1", "--seq-len", "64", "--no-progress",
                                            "--json", env=env)))
    assert tune["iterations"] == 1 and tune["lora"] is None


def test_workload_documents():
    workload = str(BINARY_DIR / "bin" / "gpreempt-workload")
    presets = valid("workload-presets", json.loads(run(workload, "presets", "--json")))
    assert presets["presets"], "no presets listed"


@needs_sim
def test_workload_runs():
    workload = str(BINARY_DIR / "bin" / "gpreempt-workload")
    on = valid("workload-online", json.loads(run(workload, "online", "--preset", "cnn", "--duration", "0.3", "--json")))
    assert on["requests_completed"] > 0
    off = valid("workload-offline", json.loads(run(workload, "offline", "--preset", "toy-offline", "--duration", "0.3", "--json")))
    assert off["iterations"] > 0


def gpreemptd_request(sock_path, op):
    import socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(str(sock_path))
        s.sendall((json.dumps({"v": 1, "seq": 1, "op": op}) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


@needs_sim
def test_gpreemptd_status(tmp_path):
    import time
    sock = tmp_path / "gpreemptd.sock"
    workload = str(BINARY_DIR / "bin" / "gpreempt-workload")
    offline = subprocess.Popen([workload, "offline", "--preset", "cnn", "--duration", "60"],
                               env={**os.environ, "GPREEMPT_CLASS": "offline"}, stdout=subprocess.DEVNULL)
    daemon = subprocess.Popen([str(BINARY_DIR / "bin" / "gpreemptd"), "--socket", str(sock), "--metrics", "127.0.0.1:0"],
                              stderr=subprocess.DEVNULL)
    try:
        doc = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # a poll with a deadline: the daemon lists the workload
            try:
                reply = gpreemptd_request(sock, "status")
                doc = reply["result"]
                if any(p["pid"] == offline.pid for g in doc["gpus"] for p in g["processes"]):
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.02)
        assert doc is not None, "gpreemptd never answered"
        valid("gpreemptd-status", doc)
        assert any(p["pid"] == offline.pid and p["class"] == "offline" for g in doc["gpus"] for p in g["processes"])
    finally:
        daemon.terminate()
        assert daemon.wait(timeout=30) == 0
        offline.kill()
        offline.wait()


def test_des_result(tmp_path):
    """gpreempt-des (eval/des): its RESULT, byte-identical reruns, and spec errors naming the field."""
    des = str(BINARY_DIR / "bin" / "gpreempt-des")
    point = {"baseline": "gpreempt-hint", "seed": 3,
             "online": [{"name": "r18", "arrival": {"kind": "poisson", "rate_hz": 50}, "requests": 50,
                         "kernels": [{"name": "conv", "duration_us": 300, "cus": 80}]}],
             "offline": [{"name": "r50", "kernels": [{"name": "step", "duration_us": 5000, "rounds": 5}]}],
             "record": {"timeline": True}, "solo": True}
    spec = tmp_path / "point.json"
    spec.write_text(json.dumps(point))
    text = run(des, "--spec", str(spec), "--no-wall-clock")
    doc = valid("des-result", json.loads(text))
    assert doc["row"]["online_requests"] == 50
    assert doc["row"]["online_solo_p50_ms"] is not None
    assert doc["decisions"] and doc["timeline"]
    assert run(des, "--spec", str(spec), "--no-wall-clock") == text
    point["online"][0]["arrival"]["rate_hz"] = -1
    spec.write_text(json.dumps(point))
    err = valid("error", json.loads(run(des, "--spec", str(spec), "--json-errors", code=2)))
    assert "online[0].arrival.rate_hz" in err["error"]["message"]


def test_the_documented_status_example_follows_the_schema():
    """docs/gpreemptd.md's status document example is a real document: one schema owns its keys."""
    text = (SOURCE_DIR / "docs" / "gpreemptd.md").read_text()
    section = text[text.index("## The status document"):]
    block = section[section.index("```json") + len("```json"):]
    valid("gpreemptd-status", json.loads(block[:block.index("```")]))
