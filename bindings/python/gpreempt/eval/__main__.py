"""python3 -m gpreempt.eval list | run NAME — what `gpreempt eval` runs (tools/gpreempt/cmd_eval.cpp).

Exit codes: 0 ok (the experiment ran; its checks may still FAIL — see report.md, or --strict),
1 operational failure (an engine failed), 2 usage.
"""
import argparse
import json
import os
import shlex
import sys

from . import report, runner
from .engines import EngineError
from .experiments import EXPERIMENTS, Options


def bin_path(a, name):
    if a.bin_dir:
        return os.path.join(a.bin_dir, name)
    return name


def without_bin_dir(argv):
    """argv minus --bin-dir and its value (the wrapper adds them; the recorded command is the user's)."""
    out, skip = [], False
    for x in argv:
        if skip:
            skip = False
        elif x == "--bin-dir":
            skip = True
        elif not x.startswith("--bin-dir="):
            out.append(x)
    return out


def comma_list(convert, kind):
    """An argparse type: one value or a comma-separated list of them, each `convert`ed, no repeats."""
    def parse(text):
        try:
            values = [convert(x) for x in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind} or a comma-separated list of them, got {text!r}")
        if len(set(values)) != len(values):
            raise argparse.ArgumentTypeError(f"a value is repeated in {text!r}")
        return values
    return parse


seed_list = comma_list(int, "an integer")  # --seed
x_list = comma_list(float, "a number")     # --x
name_list = comma_list(str, "a point name")  # --points


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(
        prog="gpreempt eval",
        description="The evaluation: gpreempt's policy against every baseline in simulated time (des) or on "
                    "real processes under kfdsim (live); results.json, PNG figures and report.md.",
        epilog="Examples:\n  gpreempt eval list\n  gpreempt eval run resnet18-vs-resnet50-train --out eval-out/headline\n"
               "  gpreempt eval run tc1-basic --quick --seeds 2\n  gpreempt eval run tc1-basic --seed 1,7,42\n  gpreempt eval run tc1-basic --engine live --out eval-out/tc1-live\n"
               "  gpreempt eval run matmul-two-model --engine live --seed 1 --out eval-out/matmul-live\n"
               "Live forms (gpreemptd on kfdsim, then the des of the same experiment): tc1-basic, "
               "matmul-two-model, resnet18-vs-resnet50-train.\n"
               "Exit codes: 0 ok (checks may FAIL: see report.md; --strict makes that exit 1), 1 operational "
               "failure, 2 usage.", formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", help="directory of gpreempt-des, gpreempt and kfdsim (default: PATH)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ls = sub.add_parser("list", help="name and describe the experiments")
    ls.add_argument("--json", action="store_true", help="one JSON document on stdout")
    tb = sub.add_parser("table", help="print the results table of a results.json (Markdown; the README's headline)")
    tb.add_argument("results", help="DIR/results.json of a run")
    r = sub.add_parser("run", help="run one experiment")
    r.add_argument("name", help="experiment (gpreempt eval list)")
    r.add_argument("--engine", choices=["des", "live"], default="des",
                   help="des: discrete-event, simulated time (default); live: real processes under kfdsim")
    r.add_argument("--out", default=None, help="output directory (default: eval-out/NAME)")
    r.add_argument("--requests", type=int, default=1000,
                   help="online requests per point (default 1000; experiments with a set duration ignore it)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--seeds", type=int, default=5,
                   help="number of seeds, 1..N (default 5); each point runs once per seed and the report gives "
                        "the median, min–max and mean ± 95 %% CI across them")
    g.add_argument("--seed", type=seed_list, metavar="S[,S...]",
                   help="run these seeds only (one seed, or a comma-separated list: --seed 1,7,42)")
    r.add_argument("--quick", action="store_true", help="shorter durations and fewer sweep points (smoke runs, tests)")
    r.add_argument("--x", type=x_list, metavar="X[,X...]", dest="only_x",
                   help="run only the sweep points at these x values (e.g. request rates: --x 1,2), with the points "
                        "off the sweep axis (each side alone), so that a long sweep can run in parts")
    r.add_argument("--points", type=name_list, metavar="NAME[,NAME...]", dest="only_points",
                   help="run only the points of these names (as report.md's point column names them, e.g. "
                        "--points online-alone,gpreempt-slo): a costly experiment's cheaper points at a larger size")
    r.add_argument("--des", help="the discrete-event engine (default: BIN_DIR/gpreempt-des)")
    r.add_argument("--live-duration", type=float, default=5.0, help="live: seconds of online arrivals per demo scenario (default 5; requests = seconds × the live form's rate)")
    r.add_argument("--traces", help="directory of cached torch_mode traces (default: the output directory)")
    r.add_argument("--strict", action="store_true", help="exit 1 when a check fails")
    r.add_argument("--fresh", action="store_true",
                   help="des: run every point again, ignoring the results an earlier run of the same command kept in "
                        "OUT/points/ (by default a stopped run resumes: a point whose spec, engine binary and input "
                        "files are unchanged is not run twice)")
    r.add_argument("--cwsr-save-scale", type=float, default=1.0,
                   help="des: multiply the model's CWSR save cost (calibration to a measured GPU, docs/hardware.md)")
    r.add_argument("--cost-band", choices=["low", "central", "high"], default="central",
                   help="des: the point of the model's cost bands (CWSR save/restore bandwidth, trap cost, HWS "
                        "unmap/map latency; docs/sim-model.md §5): low = cheapest preemption (default central)")
    r.add_argument("--hws-roundtrip-scale", type=float, default=1.0,
                   help="des: multiply the model's HWS unmap/map latency")
    a = ap.parse_args(argv)

    if a.cmd == "list":
        if a.json:
            json.dump({"schema_version": runner.SCHEMA_VERSION,
                       "experiments": [{"name": e.name, "title": e.title, "shows": e.shows, "live": bool(e.live)}
                                       for e in EXPERIMENTS.values()]}, sys.stdout, indent=1)
            print()
        else:
            w = max(len(n) for n in EXPERIMENTS)
            for e in EXPERIMENTS.values():
                print(f"{e.name:<{w}}  {e.shows}" + ("  [also --engine live]" if e.live else ""))
        return 0

    if a.cmd == "table":
        try:
            doc = runner.load(a.results)
            print(report.points_table(doc), end="")
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"gpreempt eval table: {a.results}: not a results.json of gpreempt eval ({e})", file=sys.stderr)
            return 1
        return 0

    if a.requests < 1:
        ap.error("--requests must be at least 1")
    if a.seed is None and a.seeds < 1:
        ap.error("--seeds must be at least 1")
    seeds = a.seed if a.seed is not None else list(range(1, a.seeds + 1))
    out = a.out or os.path.join("eval-out", a.name)
    o = Options(requests=a.requests, seeds=seeds, quick=a.quick, trace_dir=a.traces or out,
                kfdsim=bin_path(a, "kfdsim"), cwsr_save_scale=a.cwsr_save_scale,
                hws_roundtrip_scale=a.hws_roundtrip_scale, cost_band=a.cost_band, only_x=a.only_x,
                only_points=a.only_points, fresh=a.fresh)
    des = a.des or bin_path(a, "gpreempt-des")
    if a.engine == "des" and os.sep not in des:
        des = next((os.path.join(d, des) for d in os.environ.get("PATH", "").split(os.pathsep)
                    if os.access(os.path.join(d, des), os.X_OK)), des)
    cmd = "gpreempt eval " + " ".join(shlex.quote(x) for x in without_bin_dir(argv))
    try:
        doc = runner.run(a.name, engine=a.engine, out_dir=out, options=o, des=des, gpreempt=bin_path(a, "gpreempt"),
                         live_duration_s=a.live_duration, command=cmd,
                         progress=lambda s: print("...", s, file=sys.stderr, flush=True))
    except runner.UsageProblem as e:
        print(f"gpreempt eval: {e}", file=sys.stderr)
        return 2
    except (EngineError, OSError, ValueError, RuntimeError) as e:
        print(f"gpreempt eval: {e}", file=sys.stderr)
        return 1
    failed = [c for c in doc["checks"] if c["passed"] is False]
    unmeasured = sum(1 for c in doc["checks"] if c["passed"] is None)
    passed = len(doc["checks"]) - len(failed) - unmeasured
    print(f"{a.name}: {len(doc['points'])} points × {len(seeds)} seed(s) on {a.engine}; "
          f"{passed}/{len(doc['checks'])} checks pass"
          f"{f', {unmeasured} not measured' if unmeasured else ''}; wrote {out}/results.json, "
          f"{out}/report.md and {len(doc['figures'])} figure(s)")
    for c in failed:
        print(f"  FAIL: {c['name']}: {c['value']} {c['unit']} (threshold {c['threshold']})")
    return 1 if failed and a.strict else 0


if __name__ == "__main__":
    sys.exit(main())
