"""The baseline demo script runs its three phases on simulated machines and reports them."""
import json
import os
import subprocess


def test_baseline_demo_reports_three_phases():
    src = os.environ["GPREEMPT_SOURCE_DIR"]
    build = os.environ["GPREEMPT_BINARY_DIR"]
    out = subprocess.run(["/usr/bin/python3", os.path.join(src, "sim/workloads/baseline_demo.py"),
                          "--build", build, "--online", "toy-online", "--offline", "gemm2048",
                          "--duration", "1.2", "--json"],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    j = json.loads(out)
    phases = {p["phase"]: p for p in j["phases"]}
    assert list(phases) == ["online alone", "offline alone", "both, no control"]
    # toy-online: a request every 500 ms -> arrivals at 0.5 and 1.0 s.
    assert phases["online alone"]["online"]["latency_ms"]["count"] == 2
    assert phases["online alone"]["offline"] is None
    assert phases["offline alone"]["offline"]["iterations"] > 0
    both = phases["both, no control"]
    assert both["online"]["requests_completed"] == both["online"]["requests_sent"] == 2
    assert both["offline"]["iterations_per_s"] > 0
