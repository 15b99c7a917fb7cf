"""gpreempt.decode / analyze_log / queue_map: the CLI's --json documents as dicts, partial (not
raising) on truncated input, and equal to `gpreempt ... --json` on the real captures."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import BINARY_DIR

import gpreempt

SHARED = Path(os.environ.get("GPREEMPT_SHARED_DIR", ""))
needs_shared = pytest.mark.skipif(not (SHARED / "realdata").is_dir(),
                                  reason="../shared (real captures) is not beside this checkout")
DEBUGFS = SHARED / "realdata" / "debugfs"
MQDS = DEBUGFS / "03_mi308x_rocm702_mqds.txt"
HQDS = DEBUGFS / "01_mi308x_rocm702_hqds_full.txt"
LOG = SHARED / "realdata" / "amdlog" / "03_mi308x_rocm702_stream_priority_L4.log"


def cli_json(*args):
    out = subprocess.run([str(BINARY_DIR / "bin" / "gpreempt"), *args, "--json"],
                         capture_output=True, text=True).stdout
    return json.loads(out)


@needs_shared
def test_decode_equals_the_cli():
    doc = gpreempt.decode("mqds", MQDS.read_text(), name=str(MQDS))
    assert doc["complete"] is True
    assert doc == cli_json("decode", "mqds", str(MQDS))
    hqds = gpreempt.decode("hqds", HQDS.read_bytes(), name=str(HQDS))
    assert hqds == cli_json("decode", "hqds", str(HQDS))


@needs_shared
def test_queue_map_of_real_captures():
    m = gpreempt.queue_map(mqds=MQDS.read_text(), hqds=HQDS.read_text())
    assert m["complete"] is True
    assert len(m["queues"]) == 5
    for q in m["queues"]:
        assert (q["pid"], q["gpu_id"], q["type"]) == (94314, 0xf7bc, "compute")
        assert sorted(s["xcc"] for s in q["hw_slots"] if s["active"]) == [0, 1, 2, 3]
    assert m == cli_json("map", "--offline", "--mqds", str(MQDS), "--hqds", str(HQDS))
    assert gpreempt.queue_map(mqds=MQDS.read_text(), hqds=HQDS.read_text(), pid=1)["queues"] == []


@needs_shared
def test_truncated_mqds_gives_partial_result_naming_line():
    lines = MQDS.read_text().splitlines(keepends=True)
    cut = "".join(lines[:40]) + lines[40][:20]
    doc = gpreempt.decode("mqds", cut, name="pasted.txt")
    assert doc["complete"] is False
    first = doc["diagnostics"][0]
    assert first["file"] == "pasted.txt" and first["line"] > 0
    assert doc["processes"][0]["pid"] == 94314
    assert doc["processes"][0]["queues"][-1]["complete"] is False


@needs_shared
def test_analyze_log_equals_the_cli():
    doc = gpreempt.analyze_log(LOG.read_text(errors="replace"), name=str(LOG))
    assert doc["files"][0]["hw_queues"]
    assert doc == cli_json("log", "analyze", str(LOG))


def test_analyze_log_pid_filter():
    text = (":3:rocdevice.cpp:2768: 1 us: [pid:100 tid: 0x7f01] Created SWq=0x7f10 to map on "
            "HWq=0x7e000000 with size 1024 with priority 1, cooperative: 0\n"
            ":3:rocdevice.cpp:2768: 2 us: [pid:200 tid: 0x7f02] Created SWq=0x7f20 to map on "
            "HWq=0x7d000000 with size 1024 with priority 2, cooperative: 0\n")
    assert len(gpreempt.analyze_log(text)["files"][0]["hw_queues"]) == 2
    only = gpreempt.analyze_log(text, pid=200)["files"][0]["hw_queues"]
    assert [(q["hwq"], q["priority"]) for q in only] == [("0x7d000000", 2)]


def test_properties_by_key():
    doc = gpreempt.decode("properties", "simd_count 1216\nsimd_per_cu 4\ngfx_target_version 90010\n")
    assert doc["gpu"] is True and doc["compute_units"] == 304 and doc["gfx_target"] == "gfx90a"


def test_bad_arguments_raise_gpreempt_error():
    with pytest.raises(gpreempt.Error) as e:
        gpreempt.decode("mqd", "")
    assert e.value.errno == 22 and "mqd" in e.value.strerror
    with pytest.raises(gpreempt.Error):
        gpreempt.queue_map(rls="x")
