"""gpreempt.eval: the experiment registry, statistics, results.json against its schema, figures,
report and `gpreempt eval` exit codes — on tests/eval/fake_des.py (the engine contract, no model)
and, where built, one --quick run of the real gpreempt-des."""
import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

from gpreempt.eval import experiments, result_store, runner, stats, workloads
from gpreempt.eval import report as report_mod
from gpreempt.eval.engines import EngineError

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = pathlib.Path(os.environ.get("GPREEMPT_SOURCE_DIR", HERE.parent.parent))
BIN = pathlib.Path(os.environ.get("GPREEMPT_BIN_DIR", SOURCE / "build" / "bin"))
FAKE = str(HERE / "fake_des.py")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

ISSUE_EXPERIMENTS = {
    "tc1-basic", "tc2-periodic", "tc3-edge", "suspend-resume-100", "offline-loss", "random-1h",
    "online-10ms-vs-10-offline-queues", "matmul-two-model", "resnet18-vs-resnet50-train", "sweep-load",
    "sweep-kernel-length", "sweep-grace", "sweep-hysteresis", "sweep-poll", "sweep-model-costs", "node-8gpu",
    "resume-defer", "flap-coalescing", "llm-serving-vs-finetune", "llm-moe-tp8"}


def fake_traces(d):
    """Small torch_mode-shaped traces, so the headline builds without recording (record_trace reuses them),
    and a stand-in step grid for the LLM experiment (reused the same way)."""
    (d / "llama-8b-steps.json").write_text('{"schema": "gpreempt-llm-step-grid"}\n')
    (d / "deepseek-v3-tp8-steps.json").write_text('{"schema": "gpreempt-llm-step-grid", "tp": 8}\n')
    for name in workloads.TRACES:
        with open(d / f"{name}.jsonl", "w") as f:
            for i in range(3):
                f.write(json.dumps({"pid": 1, "queue_id": 0, "name": f"k{i}", "grid": [65536, 1, 1],
                                    "workgroup": [256, 1, 1], "flops": 1, "bytes": 1, "submit_us": i,
                                    "start_us": 10.0 * i, "end_us": 10.0 * i + 5}) + "\n")


def opts(tmp_path, **kw):
    fake_traces(tmp_path)
    o = experiments.Options(trace_dir=str(tmp_path), **kw)
    return o


# ---- registry ------------------------------------------------------------------------------------
def test_registry_has_every_experiment_of_the_issue():
    assert set(experiments.EXPERIMENTS) == ISSUE_EXPERIMENTS


def test_every_experiment_builds_valid_points(tmp_path):
    for quick in (False, True):
        o = opts(tmp_path, quick=quick)
        for name, e in experiments.EXPERIMENTS.items():
            pts = e.points(o)
            assert pts, name
            labels = [p["point"] for p in pts]
            assert len(labels) == len(set(labels)), f"{name}: duplicate point labels"
            for p in pts:
                s = p["spec"]
                assert s["baseline"] in experiments.ALL_BASELINES, (name, s["baseline"])
                assert s["online"] or s["offline"], (name, p["point"])
                assert s["duration_s"] > 0
                for t in s["online"] + s["offline"]:
                    assert all(0 <= g < s["gpus"] for g in experiments.task_gpus(t)), (name, p["point"], t["name"])
                    if "llm" in t:  # an LLM server: its steps from a grid, a length per request
                        assert os.path.isabs(t["llm"]["steps"]) and len(t["llm"]["lengths"]) >= t["requests"], (name, p["point"])
                    elif "trace" in t:  # the engine refuses queues with a trace (it brings its own)
                        assert "queues" not in t and os.path.isabs(t["trace"]) and workloads.trace_kernels(t["trace"]), (name, p["point"])
                    else:
                        assert t["kernels"] and all(k["duration_us"] > 0 and 1 <= k["cus"] <= 80 and k["rounds"] >= 1
                                                    for k in t["kernels"]), (name, p["point"])
                for t in s["online"]:
                    # The arrivals must fit the simulated duration, or requests would be cut off.
                    a = t["arrival"]
                    gap_s = (1 / a["rate_hz"] if a["kind"] != "uniform"
                             else (a["min_interval_ms"] + a["max_interval_ms"]) / 2000)
                    assert t["requests"] * gap_s <= s["duration_s"] + 1e-9, (name, p["point"])


def test_points_without_a_set_duration_have_1000_requests(tmp_path):
    o = opts(tmp_path)
    for name in ("tc1-basic", "matmul-two-model", "resnet18-vs-resnet50-train", "sweep-load", "sweep-grace"):
        for p in experiments.EXPERIMENTS[name].points(o):
            if p["spec"]["online"]:
                assert sum(t["requests"] for t in p["spec"]["online"]) >= 1000, (name, p["point"])


def test_headline_runs_every_baseline(tmp_path):
    pts = experiments.EXPERIMENTS["resnet18-vs-resnet50-train"].points(opts(tmp_path))
    assert {p["spec"]["baseline"] for p in pts} == set(experiments.ALL_BASELINES)


# ---- statistics ----------------------------------------------------------------------------------
def test_percentile_interpolates_like_latency_summary():
    v = [float(x) for x in range(1, 11)]
    assert stats.percentile(v, 50) == pytest.approx(5.5)
    assert stats.percentile(v, 99) == pytest.approx(9.91)
    assert stats.percentile([3.0], 99) == 3.0


def test_tail_is_the_p99_only_from_1000_samples():
    few = stats.summarize(list(range(999)))
    assert few["tail_kind"] == "max" and few["tail"] == 998
    many = stats.summarize(list(range(1000)))
    assert many["tail_kind"] == "p99" and many["tail"] == pytest.approx(989.01)
    assert stats.summarize([])["tail"] is None


def test_spread_ignores_unmeasured_seeds():
    s = stats.spread([3, None, 1, 2])
    assert {k: s[k] for k in ("min", "median", "max", "mean", "n")} == {"min": 1.0, "median": 2.0, "max": 3.0,
                                                                        "mean": 2.0, "n": 3}
    assert stats.spread([None]) == {"min": None, "median": None, "max": None, "mean": None, "stdev": None,
                                    "ci95": None, "n": 0}


def test_spread_mean_stdev_and_student_t_interval():
    # 1..5: mean 3, sample stdev sqrt(2.5), t(0.975, 4 df) = 2.776 -> half-width 2.776 * sqrt(2.5 / 5).
    s = stats.spread([5, 1, 4, 2, 3])
    assert s["median"] == 3.0 and s["mean"] == 3.0
    assert s["stdev"] == pytest.approx(math.sqrt(2.5))
    assert s["ci95"] == pytest.approx(2.776 * math.sqrt(2.5 / 5), rel=1e-6)
    # Two seeds: 1 degree of freedom, t = 12.706 (the normal 1.96 would claim 6x the certainty).
    assert stats.spread([1.0, 3.0])["ci95"] == pytest.approx(12.706 * math.sqrt(2) / math.sqrt(2), rel=1e-6)
    # One seed: no spread to speak of.
    one = stats.spread([4.2])
    assert one["mean"] == 4.2 and one["stdev"] is None and one["ci95"] is None
    # Identical seeds (periodic arrivals): zero width, not None.
    assert stats.spread([2.0, 2.0, 2.0])["ci95"] == 0.0
    # Many seeds: the normal quantile.
    many = stats.spread(list(range(40)))
    assert many["ci95"] == pytest.approx(1.96 * many["stdev"] / math.sqrt(40))
    assert [stats.t975(df) for df in (1, 4, 9, 30, 31)] == [12.706, 2.776, 2.262, 2.042, 1.96]


# ---- workloads -----------------------------------------------------------------------------------
def test_preset_table_matches_gpreempt_workload():
    prog = BIN / "gpreempt-workload"
    if not prog.exists():
        pytest.skip(f"{prog} not built")
    doc = json.loads(subprocess.run([str(prog), "presets", "--json"], check=True, stdout=subprocess.PIPE).stdout)
    got = {p["name"]: p for p in doc["presets"]}
    assert set(got) == set(workloads.PRESETS)
    for name, p in workloads.PRESETS.items():
        for role in ("online", "offline"):
            assert len(p[role]) == got[name][f"{role}_kernels"], (name, role)
            assert max(k[1] for k in p[role]) == got[name][f"{role}_max_work_items"], (name, role)
        assert p["rate_hz"] == got[name]["online_rate_hz"]


def test_kernel_geometry_of_the_calibrated_gemm():
    # 1024 workgroups of 256 on 4 XCCs x 20 CUs x 8 workgroups: 2 rounds of 700 us (docs/sim-model.md §9).
    # The engine makes cus x 8 x rounds workgroups of duration/rounds each: 64 x 8 x 2 = 1024 of 700 us.
    assert workloads.preset_kernels("gemm2048", "offline") == [
        {"name": "sgemm_2048", "duration_us": 1400.0, "cus": 64, "rounds": 2, "waves_per_workgroup": 4}]
    # A grid smaller than one CU's worth rounds up to one CU.
    assert workloads.kernel("small", 512, 256, 30000) == {"name": "small", "duration_us": 30.0, "cus": 1, "rounds": 1,
                                                          "waves_per_workgroup": 4}


def test_trace_kernels_in_gpu_order_and_bad_lines_named(tmp_path):
    t = tmp_path / "t.jsonl"
    t.write_text(json.dumps({"name": "b", "grid": [512, 1, 1], "workgroup": [256, 1, 1], "start_us": 20, "end_us": 30}) + "\n"
                 + json.dumps({"name": "a", "grid": [1 << 20, 1, 1], "workgroup": [256, 1, 1], "start_us": 0, "end_us": 15}) + "\n")
    assert workloads.trace_kernels(t) == [{"name": "a", "duration_us": 15.0, "cus": 80},
                                          {"name": "b", "duration_us": 10.0, "cus": 2}]
    t.write_text(t.read_text() + "{not json\n")
    with pytest.raises(ValueError, match=r"t.jsonl:3"):
        workloads.trace_kernels(t)


def test_host_gaps_are_removed_from_recorded_traces(tmp_path):
    src, dst = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    recs = [{"name": "k0", "grid": [256, 1, 1], "workgroup": [256, 1, 1], "submit_us": 0, "start_us": 5, "end_us": 10},
            {"name": "k1", "grid": [256, 1, 1], "workgroup": [256, 1, 1], "submit_us": 40, "start_us": 41, "end_us": 50},
            {"name": "k2", "grid": [256, 1, 1], "workgroup": [256, 1, 1], "submit_us": 45, "start_us": 50, "end_us": 60}]
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    workloads.without_host_gaps(str(src), str(dst))
    out = [json.loads(line) for line in dst.read_text().splitlines()]
    assert [r["submit_us"] for r in out] == [0, 10, 45]  # k1 waited 30 us for the host: no longer
    assert [(r["start_us"], r["end_us"]) for r in out] == [(5, 10), (41, 50), (50, 60)]


def test_matmul_case_is_calibrated_to_the_measured_alone_numbers():
    high, low = workloads.matmul_two_model()
    assert workloads.total_us(high) / 1000 == pytest.approx(6.36)
    assert 1e6 / workloads.total_us(low) == pytest.approx(3.88, rel=1e-4)


# ---- the runner on the fake engine -----------------------------------------------------------------
def schema_validator():
    jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema (scripts/install-deps.sh)")
    d = SOURCE / "schemas"
    schema = json.loads((d / "eval-results.schema.json").read_text())
    resolver = jsonschema.RefResolver(base_uri=d.as_uri() + "/", referrer=schema)
    return jsonschema.Draft202012Validator(schema, resolver=resolver)


def test_run_writes_valid_results_figures_and_report(tmp_path):
    out = tmp_path / "out"
    doc = runner.run("tc1-basic", out_dir=str(out), options=opts(tmp_path, seeds=[1, 2], requests=1000), des=FAKE)
    on_disk = json.loads((out / "results.json").read_text())
    errors = list(schema_validator().iter_errors(on_disk))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    assert next(iter(on_disk)) == "schema_version"
    assert len(on_disk["rows"]) == 2 * len(on_disk["points"])
    for r in on_disk["rows"]:
        for k in ("baseline", "online_requests", "online_p50_ms", "online_p99_ms", "offline_iterations_per_s",
                  "suspensions", "seed", "params"):
            assert k in r
    kinds = {f["kind"] for f in doc["figures"]}
    assert kinds == {"cdf", "bars", "timeline"}
    for f in doc["figures"]:
        data = (out / f["file"]).read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 5000, f["file"]
    report = (out / "report.md").read_text()
    assert "| gpreempt-hint | gpreempt-hint | 1000 |" in report
    assert "PASS" in report and "![cdf](latency_cdf.png)" in report
    # 1000 samples per seed: a real P99, not the maximum.
    assert {p["tail_kind"] for p in doc["points"] if p["metrics"]["online_requests"]["median"]} == {"p99"}


def test_committed_results_validate_and_the_readme_shows_the_headline():
    """docs/eval-results/ holds the full runs the docs quote: each still validates (a schema change
    that orphans them fails here), aggregates exactly its rows, and the README's headline table is
    the committed headline's, digit for digit."""
    committed = sorted((SOURCE / "docs" / "eval-results").glob("*/results.json"))
    if not committed:
        pytest.skip("no committed results (docs/eval-results/)")
    v = schema_validator()
    for f in committed:
        doc = json.loads(f.read_text())
        errors = list(v.iter_errors(doc))
        assert not errors, (f, [f"{list(e.path)}: {e.message}" for e in errors[:3]])
        assert doc["experiment"] == f.parent.name and len(doc["options"]["seeds"]) >= 5, f
        for p in doc["points"]:
            rows = [r for r in doc["rows"] if r["point"] == p["point"]]
            assert p["metrics"]["online_p99_ms"] == stats.spread([r["online_p99_ms"] for r in rows]), (f, p["point"])
    head = json.loads((SOURCE / "docs" / "eval-results" / "resnet18-vs-resnet50-train" / "results.json").read_text())
    assert report_mod.points_table(head) in (SOURCE / "README.md").read_text()


def test_x_runs_only_those_sweep_points_and_the_points_off_the_axis(tmp_path):
    llm = experiments.EXPERIMENTS["llm-serving-vs-finetune"]
    full = runner.selected_points(llm, opts(tmp_path))
    part = [p["point"] for p in runner.selected_points(llm, opts(tmp_path, only_x=[1, 2]))]
    assert part == [p["point"] for p in full if p.get("x") in (None, 1, 2)]
    assert "offline-alone" in part and any(p.startswith("online-alone@1/") for p in part)
    assert not any(p.endswith("@4/s") for p in part) and len(part) < len(full)
    out = tmp_path / "part"
    doc = runner.run("flap-coalescing", out_dir=str(out), des=FAKE,
                     options=opts(tmp_path, seeds=[1], requests=50, only_x=[20, 160]))
    assert {p["x"] for p in doc["points"]} == {20, 160}
    on_disk = json.loads((out / "results.json").read_text())
    assert on_disk["options"]["only_x"] == [20, 160]
    assert not list(schema_validator().iter_errors(on_disk))
    with pytest.raises(runner.UsageProblem, match=r"--x 3: llm-serving-vs-finetune has no point there .*1, 2, 4"):
        runner.selected_points(experiments.EXPERIMENTS["llm-serving-vs-finetune"], opts(tmp_path, only_x=[1, 3]))
    r = gpreempt("eval", "run", "tc1-basic", "--x", "1,1", "--des", FAKE, "--out", str(tmp_path / "bad"))
    assert r.returncode == 2 and "--x" in r.stderr


def test_points_runs_only_the_named_points(tmp_path):
    tp8 = experiments.EXPERIMENTS["llm-moe-tp8"]
    names = [p["point"] for p in runner.selected_points(tp8, opts(tmp_path, only_points=["gpreempt-slo", "online-alone"]))]
    assert names == [p["point"] for p in tp8.points(opts(tmp_path)) if p["point"] in ("online-alone", "gpreempt-slo")]
    with pytest.raises(runner.UsageProblem, match=r"--points nothing: llm-moe-tp8 has no such point .*gpreempt-slo"):
        runner.selected_points(tp8, opts(tmp_path, only_points=["online-alone", "nothing"]))
    out = tmp_path / "part"
    doc = runner.run("tc1-basic", out_dir=str(out), des=FAKE,
                     options=opts(tmp_path, seeds=[1], requests=50, only_points=["gpreempt-hint"]))
    assert [p["point"] for p in doc["points"]] == ["gpreempt-hint"]
    on_disk = json.loads((out / "results.json").read_text())
    assert on_disk["options"]["only_points"] == ["gpreempt-hint"]
    assert not list(schema_validator().iter_errors(on_disk))
    r = gpreempt("eval", "run", "tc1-basic", "--points", "none,none", "--des", FAKE, "--out", str(tmp_path / "bad"))
    assert r.returncode == 2 and "--points" in r.stderr
    # A point the checks compare against, left out: they are reported as not measured, naming it.
    r = gpreempt("eval", "run", "tc1-basic", "--points", "oracle", "--seed", "1", "--requests", "50", "--strict",
                 "--des", FAKE, "--out", str(tmp_path / "oracle-only"))
    assert r.returncode == 0, r.stderr
    assert "0/1 checks pass, 1 not measured" in r.stdout
    (c,) = json.loads((tmp_path / "oracle-only" / "results.json").read_text())["checks"]
    assert c["passed"] is None and "'gpreempt-hint'" in c["name"]


def test_a_stopped_run_resumes_from_the_results_it_kept(tmp_path, monkeypatch):
    out = tmp_path / "out"
    first = runner.run("tc1-basic", out_dir=str(out), options=opts(tmp_path, seeds=[1, 2], requests=100), des=FAKE)
    kept = sorted((out / "points").glob("*.json"))
    assert len(kept) == 2 * len(first["points"]) and first["reused_results"] == 0
    assert not list((out / "points").glob("*.part"))
    # The same command again, with an engine that would fail: every result comes from what was
    # kept, and the document is the same but for the run's own cost and time.
    monkeypatch.setenv("FAKE_DES_FAIL", "1")
    again = runner.run("tc1-basic", out_dir=str(out), options=opts(tmp_path, seeds=[1, 2], requests=100), des=FAKE)
    assert again["reused_results"] == len(kept)
    assert again["rows"] == first["rows"] and again["points"] == first["points"]
    assert not list(schema_validator().iter_errors(json.loads((out / "results.json").read_text())))
    # Anything that would change a result runs the point again (and the failing engine says so):
    # another spec, another engine binary, another input file, or --fresh.
    with pytest.raises(EngineError, match="failing as asked"):
        runner.run("tc1-basic", out_dir=str(out), options=opts(tmp_path, seeds=[1, 2], requests=101), des=FAKE)
    other = tmp_path / "fake_des_copy.py"
    other.write_text(pathlib.Path(FAKE).read_text() + "# another build\n")
    other.chmod(0o755)
    with pytest.raises(EngineError, match="failing as asked"):
        runner.run("tc1-basic", out_dir=str(out), options=opts(tmp_path, seeds=[1, 2], requests=100), des=str(other))
    with pytest.raises(EngineError, match="failing as asked"):
        runner.run("tc1-basic", out_dir=str(out), options=opts(tmp_path, seeds=[1, 2], requests=100, fresh=True),
                   des=FAKE)
    # A file the spec names (a trace, a step grid) is part of the key by its contents.
    trace = tmp_path / "resnet18-b1-infer.jsonl"
    spec = {"seed": 1, "online": [{"trace": str(trace)}], "offline": [{"llm": {"steps": str(out / "none")}}]}
    assert result_store.named_files(spec) == [str(out / "none"), str(trace)]  # keys in sorted order
    before = result_store.ResultStore(str(tmp_path / "k"), FAKE).key(spec)
    assert result_store.ResultStore(str(tmp_path / "k"), FAKE).key(spec) == before
    trace.write_text(trace.read_text().replace('"k0"', '"k0-changed"'))
    assert result_store.ResultStore(str(tmp_path / "k"), FAKE).key(spec) != before


def test_fewer_than_1000_requests_report_the_maximum(tmp_path):
    doc = runner.run("tc1-basic", out_dir=str(tmp_path / "o"), options=opts(tmp_path, seeds=[1], requests=200), des=FAKE)
    p = next(p for p in doc["points"] if p["point"] == "none")
    assert p["tail_kind"] == "max"
    assert p["metrics"]["online_tail_ms"]["median"] == p["metrics"]["online_max_ms"]["median"]
    assert "†" in (tmp_path / "o" / "report.md").read_text()


def test_spread_across_seeds_is_reported(tmp_path):
    doc = runner.run("tc1-basic", out_dir=str(tmp_path / "o"), options=opts(tmp_path, seeds=[1, 2, 3]), des=FAKE)
    m = next(p for p in doc["points"] if p["point"] == "none")["metrics"]["online_p50_ms"]
    assert m["n"] == 3 and m["min"] < m["max"]


def test_each_point_aggregates_exactly_its_own_seeds_rows(tmp_path):
    seeds = [3, 7, 11, 19, 23]
    doc = runner.run("tc1-basic", out_dir=str(tmp_path / "o"), options=opts(tmp_path, seeds=seeds), des=FAKE)
    assert doc["options"]["seeds"] == seeds
    for p in doc["points"]:
        rows = [r for r in doc["rows"] if r["point"] == p["point"]]
        assert sorted(r["seed"] for r in rows) == sorted(p["seeds"]) == sorted(seeds), p["point"]
        for k in runner.METRICS:
            want = stats.spread([r.get(k) for r in rows])
            assert p["metrics"][k] == pytest.approx(want, nan_ok=True), (p["point"], k)
    # The seeds differ in what they produce (otherwise the spread would be vacuous).
    none = next(p for p in doc["points"] if p["point"] == "none")["metrics"]["online_tail_ms"]
    assert none["ci95"] > 0 and none["min"] < none["mean"] < none["max"]


def test_report_gives_mean_and_95_percent_interval_across_seeds(tmp_path):
    doc = runner.run("tc1-basic", out_dir=str(tmp_path / "o"), options=opts(tmp_path, seeds=[1, 2, 3]), des=FAKE)
    report = (tmp_path / "o" / "report.md").read_text()
    assert "## Spread across seeds" in report and "Student's t" in report
    m = next(p for p in doc["points"] if p["point"] == "none")["metrics"]["online_p50_ms"]
    assert f"| none | 3 | {report_mod.fmt(m['mean'])} ± {report_mod.fmt(m['ci95'])} |" in report
    # The cells are the mean and the half-width, not the median (skewed seeds tell them apart).
    skew = {"min": 1.0, "median": 1.0, "max": 4.0, "mean": 2.0, "stdev": 1.732, "ci95": 4.3, "n": 3}
    point = {"point": "p", "seeds": [1, 2, 3], "metrics": {"online_p50_ms": skew}}
    assert "| p | 3 | 2.00 ± 4.30 | – | – |" in report_mod.seeds_table({"points": [point]})
    # One seed: no interval to report, no section.
    runner.run("tc1-basic", out_dir=str(tmp_path / "one"), options=opts(tmp_path, seeds=[1]), des=FAKE)
    assert "Spread across seeds" not in (tmp_path / "one" / "report.md").read_text()


def test_a_threshold_breach_fails_its_check(tmp_path):
    # The fake's none baseline is 3x slower than alone: with a limit below that the check must fail.
    pts = [{"point": "x", "metrics": {"online_tail_ms": {"min": 1, "median": 2, "max": 60.0, "n": 3}}}]
    (c,) = experiments.online_limit_check(pts, "x")
    assert c["passed"] is False and c["value"] == 60.0
    pts = [{"point": "offline-alone", "metrics": {"offline_iterations_per_s": {"min": 100, "median": 100, "max": 100, "n": 1}}},
           {"point": "g", "metrics": {"offline_iterations_per_s": {"min": 89.0, "median": 95, "max": 96, "n": 3}}}]
    (c,) = experiments.loss_check(pts, "g")
    assert c["passed"] is False and c["value"] == pytest.approx(11.0)


def test_engine_failure_and_bad_result_are_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_DES_FAIL", "1")
    with pytest.raises(EngineError, match="failing as asked"):
        runner.run("suspend-resume-100", out_dir=str(tmp_path / "a"), options=opts(tmp_path, seeds=[1]), des=FAKE)
    monkeypatch.delenv("FAKE_DES_FAIL")
    monkeypatch.setenv("FAKE_DES_BAD", "norow")
    with pytest.raises(EngineError, match="no \"row\""):
        runner.run("suspend-resume-100", out_dir=str(tmp_path / "b"), options=opts(tmp_path, seeds=[1]), des=FAKE)
    monkeypatch.setenv("FAKE_DES_BAD", "nop99")
    with pytest.raises(EngineError, match="lacks online_p99_ms"):
        runner.run("suspend-resume-100", out_dir=str(tmp_path / "c"), options=opts(tmp_path, seeds=[1]), des=FAKE)


def test_multi_gpu_decisions_per_gpu(tmp_path):
    doc = runner.run("node-8gpu", out_dir=str(tmp_path / "o"), options=opts(tmp_path, seeds=[1], requests=100), des=FAKE)
    p = next(p for p in doc["points"] if p["point"] == "tp4-gpus0-3-vs-offline-gpus4-7/gpreempt-hint")
    assert [d["gpu"] for d in p["decisions_per_gpu"]] == list(range(8))
    # Online on 0-3, offline on 4-7: nothing shares a GPU, nothing to suspend anywhere.
    assert all(d["suspensions"] == 0 for d in p["decisions_per_gpu"])
    q = next(p for p in doc["points"] if p["point"] == "online-gpu0-vs-offline8/gpreempt-hint")
    assert [d["suspensions"] > 0 for d in q["decisions_per_gpu"]] == [True] + [False] * 7
    tp8 = next(p for p in doc["points"] if p["point"] == "tp8-vs-offline8/gpreempt-hint")
    assert all(d["suspensions"] == 100 for d in tp8["decisions_per_gpu"])
    # Offline on GPU 7 only: the tensor-parallel request is suspended for there alone, and its
    # shards all-reduce (the spec carries the collective to the engine).
    tp8_7 = next(p for p in doc["points"] if p["point"] == "tp8-vs-offline-gpu7/gpreempt-hint")
    assert [d["suspensions"] > 0 for d in tp8_7["decisions_per_gpu"]] == [False] * 7 + [True]
    assert tp8_7["spec"]["online"][0]["allreduce"] == {"every": 2, "us": 25.0}
    assert any(f["kind"] == "per_gpu" for f in doc["figures"])


def test_actuation_latency_is_decision_to_window_edge():
    decisions = [{"t_us": 100.0, "gpu": 1, "action": "suspend"}, {"t_us": 900.0, "gpu": 1, "action": "resume"},
                 {"t_us": 2000.0, "gpu": 0, "action": "suspend"}]
    timeline = [{"gpu": 1, "kind": "suspended", "who": "x", "start_us": 600.0, "end_us": 1000.0},
                {"gpu": 0, "kind": "kernel", "who": "y", "start_us": 0.0, "end_us": 5000.0},
                {"gpu": 0, "kind": "suspended", "who": "x", "start_us": 2250.0, "end_us": 3000.0}]
    assert runner.actuation_latencies(decisions, timeline) == {"suspend": [0.5, 0.25], "resume": [0.1]}


def test_suspend_resume_100_judges_every_cycle(tmp_path):
    doc = runner.run("suspend-resume-100", out_dir=str(tmp_path / "o"), options=opts(tmp_path, seeds=[1]), des=FAKE)
    m = doc["points"][0]["metrics"]
    assert m["suspend_latency_max_ms"]["max"] == pytest.approx(0.4)
    assert m["resume_latency_max_ms"]["max"] == pytest.approx(0.03)
    assert [c["passed"] for c in doc["checks"]] == [True, True, True, True]
    # A calibration scale reaches every point's model.
    o = opts(tmp_path, seeds=[1], cwsr_save_scale=2.0)
    doc = runner.run("suspend-resume-100", out_dir=str(tmp_path / "c"), options=o, des=FAKE)
    assert doc["points"][0]["metrics"]["suspend_latency_max_ms"]["max"] == pytest.approx(0.8)
    # So does the cost band (the fake engine doubles its save at "high", halves it at "low").
    o = opts(tmp_path, seeds=[1], cost_band="high")
    doc = runner.run("suspend-resume-100", out_dir=str(tmp_path / "b"), options=o, des=FAKE)
    assert doc["options"]["cost_band"] == "high"
    assert doc["points"][0]["metrics"]["suspend_latency_max_ms"]["max"] == pytest.approx(0.8)


def test_sweep_model_costs_spans_the_band_whatever_the_run_band(tmp_path):
    o = opts(tmp_path, seeds=[1], cost_band="low")
    doc = runner.run("sweep-model-costs", out_dir=str(tmp_path / "o"), options=o, des=FAKE)
    hint = {p["point"]: p for p in doc["points"] if p["point"].startswith("gpreempt-hint@")}
    assert set(hint) == {"gpreempt-hint@low", "gpreempt-hint@central", "gpreempt-hint@high"}
    assert [hint[f"gpreempt-hint@{b}"]["x"] for b in ("low", "central", "high")] == [0, 1, 2]
    with pytest.raises(runner.UsageProblem):
        runner.run("tc1-basic", out_dir=str(tmp_path / "u"), options=opts(tmp_path, cost_band="medium"), des=FAKE)


# ---- the command line ------------------------------------------------------------------------------
def gpreempt(*args, env=None):
    prog = BIN / "gpreempt"
    if not prog.exists():
        pytest.skip(f"{prog} not built")
    e = dict(os.environ, **(env or {}))
    return subprocess.run([str(prog), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                          timeout=240)


def test_cli_list_and_usage_exit_codes(tmp_path):
    r = gpreempt("eval", "list")
    assert r.returncode == 0 and "resnet18-vs-resnet50-train" in r.stdout
    doc = json.loads(gpreempt("eval", "list", "--json").stdout)
    assert {e["name"] for e in doc["experiments"]} == ISSUE_EXPERIMENTS
    assert gpreempt("eval", "run", "no-such-experiment", "--des", FAKE, "--out", str(tmp_path)).returncode == 2
    assert gpreempt("eval", "run", "tc1-basic", "--requests", "0").returncode == 2
    assert gpreempt("eval", "run", "tc1-basic", "--seeds", "2", "--seed", "1").returncode == 2
    for bad in ("1,1", "1,x", ""):
        r = gpreempt("eval", "run", "tc1-basic", "--seed", bad, "--des", FAKE, "--out", str(tmp_path / "bad"))
        assert r.returncode == 2 and "--seed" in r.stderr, bad
    assert gpreempt("eval", "run", "tc3-edge", "--engine", "live", "--out", str(tmp_path)).returncode == 2
    assert gpreempt("eval").returncode == 2
    h = gpreempt("eval", "run", "--help")
    assert h.returncode == 0 and "--engine" in h.stdout


def test_cli_run_ok_and_operational_failures(tmp_path):
    r = gpreempt("eval", "run", "tc1-basic", "--quick", "--seeds", "1", "--requests", "100", "--des", FAKE,
                 "--out", str(tmp_path / "ok"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ok" / "results.json").exists() and "checks pass" in r.stdout
    r = gpreempt("eval", "--bin-dir", str(BIN), "run", "tc1-basic", "--quick", "--seed", "4,9", "--requests", "100",
                 "--des", FAKE, "--out", str(tmp_path / "list"))
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "list" / "results.json").read_text())
    assert doc["options"]["seeds"] == [4, 9] and {r["seed"] for r in doc["rows"]} == {4, 9}
    assert str(BIN) not in doc["command"] and "--seed 4,9" in doc["command"]
    assert doc["run_wall_seconds"] >= 0 and doc["run_cpu_seconds"] > 0  # the fake engine's processes ran
    t = gpreempt("eval", "table", str(tmp_path / "ok" / "results.json"))
    assert t.returncode == 0 and t.stdout.startswith("| point | baseline |")
    (tmp_path / "junk.json").write_text("[1]")
    assert gpreempt("eval", "table", str(tmp_path / "junk.json")).returncode == 1
    r = gpreempt("eval", "run", "tc1-basic", "--seeds", "1", "--des", FAKE, "--out", str(tmp_path / "f"),
                 env={"FAKE_DES_FAIL": "1"})
    assert r.returncode == 1 and "failing as asked" in r.stderr
    r = gpreempt("eval", "run", "tc1-basic", "--seeds", "1", "--des", str(tmp_path / "missing"),
                 "--out", str(tmp_path / "m"))
    assert r.returncode == 1 and "missing" in r.stderr


# ---- the real engine -------------------------------------------------------------------------------
def test_real_des_quick_run(tmp_path):
    des = BIN / "gpreempt-des"
    if not des.exists():
        pytest.skip(f"{des} not built (the discrete-event engine, branch des)")
    out = tmp_path / "real"
    doc = runner.run("tc1-basic", out_dir=str(out), options=opts(tmp_path, seeds=[1], requests=300, quick=True),
                     des=str(des))
    assert not list(schema_validator().iter_errors(json.loads((out / "results.json").read_text())))
    by = {p["point"]: p for p in doc["points"]}
    alone = by["online-alone"]["metrics"]["online_p50_ms"]["median"]
    assert by["none"]["metrics"]["online_requests"]["median"] == 300
    assert by["gpreempt-hint"]["metrics"]["suspensions"]["median"] > 0
    # Sharing without control cannot beat the online service alone; the oracle cannot be beaten.
    assert by["none"]["metrics"]["online_p50_ms"]["median"] >= alone - 1e-9
    assert by["oracle"]["metrics"]["online_p50_ms"]["median"] <= by["gpreempt-hint"]["metrics"]["online_p50_ms"]["median"] + 1e-9
    assert all(math.isfinite(r["online_p50_ms"]) for r in doc["rows"] if r["online_requests"])


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


FAKE_DEMO = r'''#!/usr/bin/python3
import json, os, sys
args = sys.argv[1:]
assert args[:2] == ["demo", "--json"], args
with open(os.environ["FAKE_DEMO_ARGS"], "w") as f:
    json.dump(args, f)
opt = {a: args[i + 1] for i, a in enumerate(args) if a.startswith("--") and i + 1 < len(args)}
n = int(opt["--requests"])
lat = {"count": n, "mean": 5.0, "std": 1.0, "min": 3.0, "p50": 5.0, "p95": 7.0, "p99": 8.0, "max": 9.0}
scen = []
for name in opt["--scenarios"].split(","):
    s = {"name": name}
    if name != "offline-alone":
        s.update(online_latency_ms=lat, online_requests=n)
    if name != "online-alone":
        s["offline_iterations_per_s"] = 3.5
    if name in ("gpreempt-hint", "gpreempt-early", "gpreempt-transparent"):
        s["gpreemptd"] = {"trigger": "transparent" if name == "gpreempt-transparent" else "hint", "exit_code": 0,
                          "suspensions": n, "suspended_s": 0.5, "hint_to_suspend_us": {"count": n, "p50": 80, "p99": 200, "max": 300},
                          "online_class": {}, "suspend_ms": None}
    scen.append(s)
print(json.dumps({"schema_version": 2, "machine": {"simulated": True, "description": "fake", "gpus": []},
                  "requests": n, "rate_hz": float(opt["--rate"]), "duration_s": n / float(opt["--rate"]),
                  "online_preset": opt["--online"], "offline_preset": opt["--offline"], "scenarios": scen}))
'''


def test_every_live_form_names_its_scenarios_as_des_points(tmp_path):
    from gpreempt.eval.engines import LiveEngine
    live = {n: e for n, e in experiments.EXPERIMENTS.items() if e.live}
    assert {"tc1-basic", "resnet18-vs-resnet50-train", "matmul-two-model"} <= set(live)
    for name, e in live.items():
        des_points = {p["point"] for p in e.points(opts(tmp_path, seeds=[1], requests=100))}
        for scen in e.live.get("scenarios", LiveEngine.DEFAULT_SCENARIOS):
            point = e.live.get("points", {}).get(scen, scen)
            assert point in des_points, f"{name}: live scenario {scen} has no des point {point}"


def test_live_engine_runs_the_demo_and_compares_with_des(tmp_path, monkeypatch):
    fake = tmp_path / "gpreempt"
    fake.write_text(FAKE_DEMO)
    fake.chmod(0o755)
    monkeypatch.setenv("FAKE_DEMO_ARGS", str(tmp_path / "args.json"))
    doc = runner.run("matmul-two-model", engine="live", out_dir=str(tmp_path / "o"),
                     options=opts(tmp_path, seeds=[1], requests=100), des=FAKE, gpreempt=str(fake),
                     live_duration_s=3.0)
    args = json.loads((tmp_path / "args.json").read_text())
    # 3 s at the live form's 10 req/s, the user's two matmul models, the default scenarios.
    assert args[args.index("--requests") + 1] == "30" and args[args.index("--rate") + 1] == "10"
    assert args[args.index("--online") + 1] == "mm4096" and args[args.index("--offline") + 1] == "mm8192x5"
    assert args[args.index("--scenarios") + 1] == "online-alone,offline-alone,none,gpreempt-hint"
    cmp = {r["point"]: r for r in doc["live_vs_des"]}
    assert set(cmp) == {"high_alone", "low_alone", "none", "gpreempt-hint"}
    assert cmp["gpreempt-hint"]["live_suspensions"] == 30 and cmp["none"]["live_suspensions"] == 0
    assert cmp["high_alone"]["live_online_p50_ms"] == 5.0 and cmp["high_alone"]["des_online_p50_ms"] is not None


def test_live_report_compares_the_measured_numbers_with_the_des_not_with_live():
    from gpreempt.eval import report
    pt = lambda name, p50: {"point": name, "metrics": {"online_p50_ms": {"median": p50, "min": p50, "max": p50, "n": 1}}}
    doc = {"engine": "live", "reference": {"high_alone": {"online_p50_ms": 6.36}},
           "points": [pt("high_alone", 9.7), pt("high_alone (des)", 6.4)]}
    row = next(l for l in report.reference_table(doc).splitlines() if l.startswith("| high_alone"))
    assert "6.40" in row and "9.70" not in row
    doc = {"engine": "des", "reference": doc["reference"], "points": [pt("high_alone", 6.4)]}
    assert "6.40" in next(l for l in report.reference_table(doc).splitlines() if l.startswith("| high_alone"))
