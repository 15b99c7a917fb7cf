"""PNG figures of one experiment (matplotlib, Agg: no display needed).

Kinds, chosen per experiment (Experiment.figures):
  cdf       online latency CDF, one line per point (first seed's samples)
  bars      online P50 / tail and offline throughput per point (median across seeds, min–max whiskers)
  vs_x      sweeps: online tail and offline throughput against the swept value, one line per group
  timeline  kernels and suspension windows of the first seed of the point that recorded one
  per_gpu   suspensions per GPU (multi-GPU experiments)
  objective offline throughput where each policy meets the experiment's online p99 objective, and the
            best among those (objective-constrained offline throughput)
  attainment LLM servers: the share of requests meeting both TTFT and TPOT objectives against the
            offline job's throughput, one marker per point (filled: both p99s within objective)
Every figure carries the experiment's configuration in its title and units on its axes.
"""
import os
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import stats  # noqa: E402

DPI = 110


def _title(ax_or_fig, exp, doc, extra=""):
    o = doc["options"]
    cfg = (f"{doc['engine']} engine, {o['requests']} requests/point" if doc["engine"] == "des"
           else f"{doc['engine']} engine") + f", seeds {','.join(str(s) for s in o['seeds'])}"
    if o.get("quick"):
        cfg += ", --quick"
    text = "\n".join(textwrap.wrap(exp.title, 90)) + f"\n({cfg}{', ' + extra if extra else ''})"
    if hasattr(ax_or_fig, "suptitle"):
        ax_or_fig.suptitle(text, fontsize=9)
    else:
        ax_or_fig.set_title(text, fontsize=9)


def _save(fig, out_dir, name):
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return name


def cdf(exp, doc, samples, out_dir):
    if not samples:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    styles = ["-", "--", ":", "-."]  # identical curves (e.g. none = priority) stay visible
    for i, (name, v) in enumerate(samples.items()):
        if not v:
            continue
        x, y = stats.cdf(v)
        ax.plot(x, y, label=f"{name} (n={len(v)})", linewidth=1.4, linestyle=styles[i % len(styles)])
    ax.set_xscale("log")
    ax.set_xlabel("online request latency (ms, log scale)")
    ax.set_ylabel("fraction of requests ≤ latency")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    _title(ax, exp, doc, f"first seed {doc['options']['seeds'][0]}")
    return _save(fig, out_dir, "latency_cdf.png")


def _med(p, k):
    m = p["metrics"].get(k) or {}
    return m.get("median"), m.get("min"), m.get("max")


def bars(exp, doc, out_dir):
    pts = doc["points"]
    if not pts:
        return None
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.8))
    names = [p["point"] for p in pts]
    xs = range(len(pts))

    def series(k):
        med, lo, hi = zip(*[_med(p, k) for p in pts])
        y = [m if m is not None else 0 for m in med]
        err = [[(m - a) if m is not None and a is not None else 0 for m, a in zip(med, lo)],
               [(b - m) if m is not None and b is not None else 0 for m, b in zip(med, hi)]]
        return y, err

    y50, e50 = series("online_p50_ms")
    yt, et = series("online_tail_ms")
    w = 0.4
    a1.bar([x - w / 2 for x in xs], y50, w, yerr=e50, label="P50", capsize=2)
    kinds = {p.get("tail_kind") for p in pts if p.get("tail_kind")}
    a1.bar([x + w / 2 for x in xs], yt, w, yerr=et, capsize=2,
           label="P99" if kinds == {"p99"} else "tail (P99 if ≥ 1000 samples, else max)")
    a1.set_ylabel("online latency (ms)")
    a1.set_xticks(list(xs), names, rotation=35, ha="right", fontsize=7)
    a1.legend(fontsize=7)
    a1.grid(True, axis="y", alpha=0.3)
    yi, ei = series("offline_iterations_per_s")
    a2.bar(list(xs), yi, 0.6, yerr=ei, capsize=2, color="tab:green")
    a2.set_ylabel("offline throughput (iterations/s)")
    a2.set_xticks(list(xs), names, rotation=35, ha="right", fontsize=7)
    a2.grid(True, axis="y", alpha=0.3)
    _title(fig, exp, doc, "median across seeds, whiskers min–max")
    return _save(fig, out_dir, "summary_bars.png")


def vs_x(exp, doc, out_dir):
    pts = [p for p in doc["points"] if p.get("x") is not None]
    if not pts:
        return None
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.6))
    groups = list(dict.fromkeys(p["group"] for p in pts))
    for g in groups:
        gp = sorted((p for p in pts if p["group"] == g), key=lambda p: p["x"])
        x = [p["x"] for p in gp]
        for ax, k in ((a1, "online_tail_ms"), (a2, "offline_iterations_per_s")):
            med, lo, hi = zip(*[_med(p, k) for p in gp])
            ax.plot(x, [m if m is not None else float("nan") for m in med], marker="o", label=g, linewidth=1.2)
            ax.fill_between(x, [a if a is not None else float("nan") for a in lo],
                            [b if b is not None else float("nan") for b in hi], alpha=0.15)
    kinds = {p.get("tail_kind") for p in pts if p.get("tail_kind")}
    a1.set_ylabel("online P99 latency (ms)" if kinds == {"p99"} else "online tail latency (ms; max below 1000 samples)")
    a2.set_ylabel("offline throughput (iterations/s)")
    for ax in (a1, a2):
        ax.set_xlabel(exp.x_label or "x")
        if min(p["x"] for p in pts) > 0 and max(p["x"] for p in pts) / min(p["x"] for p in pts) >= 20:
            ax.set_xscale("log")
        ax.grid(True, alpha=0.3)
    a1.set_yscale("log")
    a1.legend(fontsize=7)
    _title(fig, exp, doc, "median across seeds, band min–max")
    return _save(fig, out_dir, "sweep.png")


def ran(start, end, suspended):
    """[start, end) without the suspended intervals: the pieces in which a kernel's waves ran."""
    pieces = [(start, end)]
    for a, b in sorted(suspended):
        nxt = []
        for s, t in pieces:
            if b <= s or a >= t:
                nxt.append((s, t))
                continue
            if s < a:
                nxt.append((s, a))
            if b < t:
                nxt.append((b, t))
        pieces = nxt
    return pieces


def timeline(exp, doc, timelines, out_dir, window_ms=30.0):
    if not timelines:
        return None
    name, tl = next(iter(timelines.items()))
    if not tl:
        return None
    susp = [e for e in tl if e.get("kind") == "suspended"]
    t0 = (min(e["start_us"] for e in susp) - 5000.0) if susp else min(e["start_us"] for e in tl)
    t0 = max(t0, min(e["start_us"] for e in tl))
    t1 = t0 + window_ms * 1000.0
    shown = [e for e in tl if e["end_us"] >= t0 and e["start_us"] <= t1]
    rows = list(dict.fromkeys(f"GPU{e.get('gpu', 0)} {e['who']}" if e.get("kind") != "suspended"
                              else f"GPU{e.get('gpu', 0)} suspended" for e in shown))
    rows.sort()
    off = {}
    for e in susp:
        off.setdefault((e.get("gpu", 0), e["who"]), []).append((e["start_us"], e["end_us"]))
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.45 * max(len(rows), 1)))
    colors = {}
    for e in shown:
        r = (f"GPU{e.get('gpu', 0)} suspended" if e.get("kind") == "suspended" else f"GPU{e.get('gpu', 0)} {e['who']}")
        y = rows.index(r)
        c = "tab:red" if e.get("kind") == "suspended" else colors.setdefault(e["who"], f"C{len(colors) % 10}")
        s, t = max(e["start_us"], t0), min(e["end_us"], t1)
        # A kernel's waves do not run while its process is suspended: its bar shows when they ran.
        parts = [(s, t)] if e.get("kind") == "suspended" else ran(s, t, off.get((e.get("gpu", 0), e["who"]), []))
        ax.broken_barh([((a - t0) / 1000.0, max((b - a) / 1000.0, 0.01)) for a, b in parts],
                       (y - 0.35, 0.7), facecolors=c, edgecolor="white", linewidth=0.4)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.set_xlabel(f"simulated time (ms) from t = {t0 / 1e6:.3f} s")
    ax.set_xlim(0, window_ms)
    ax.grid(True, axis="x", alpha=0.3)
    _title(ax, exp, doc, f"point {name}, first seed, {window_ms:g} ms window; a bar per kernel where its waves ran "
                        "(its process's suspensions cut out), red = offline suspended")
    return _save(fig, out_dir, "timeline.png")


def per_gpu(exp, doc, out_dir):
    pts = [p for p in doc["points"] if p.get("decisions_per_gpu")]
    if not pts:
        return None
    fig, ax = plt.subplots(figsize=(10, 4.4))
    w = 0.8 / len(pts)
    for i, p in enumerate(pts):
        counts = [d["suspensions"] for d in p["decisions_per_gpu"]]
        ax.bar([g + (i - len(pts) / 2) * w + w / 2 for g in range(len(counts))], counts, w, label=p["point"])
    ax.set_xlabel("GPU index")
    ax.set_ylabel("suspensions decided (count, first seed)")
    ax.set_xticks(range(len(pts[0]["decisions_per_gpu"])))
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    _title(ax, exp, doc)
    return _save(fig, out_dir, "decisions_per_gpu.png")


def objective_fig(exp, doc, out_dir):
    """Objective-constrained offline throughput: each policy's offline throughput where its worst
    seed meets the online p99 objective (filled) and where it does not (hollow), and the best
    among those that meet it (the line an operator can have)."""
    from . import objective
    if not exp.objective_ms:
        return None
    pts = [p for p in doc["points"] if "alone" not in p["group"]]
    rows = objective.constrained(pts, exp.objective_ms)
    if not rows:
        return None
    sweep = rows[0]["x"] is not None
    xs = [r["x"] if sweep else 0 for r in rows]
    fig, ax = plt.subplots(figsize=(10, 4.6))
    groups = list(dict.fromkeys(p["group"] for p in pts))
    for i, g in enumerate(groups):
        c = f"C{i % 10}"
        for x, r in zip(xs, rows):
            v = r["by_group"].get(g)
            if not v or v["throughput"] is None:
                continue
            xo = x if sweep else i
            ax.plot([xo], [v["throughput"]], marker="o", color=c, markersize=7,
                    markerfacecolor=c if v["meets"] else "none", linestyle="none",
                    label=g if x == xs[0] or not sweep else None)
    best = [(x, r["best_throughput"]) for x, r in zip(xs, rows) if r["best"] is not None]
    if sweep and best:
        ax.plot([b[0] for b in best], [b[1] for b in best], color="black", linewidth=1.5,
                label=f"best meeting p99 <= {exp.objective_ms:g} ms")
    for x, r in zip(xs, rows):
        if r["best"] is None:
            ax.axvline(x, color="tab:red", alpha=0.3, linewidth=6)
    if sweep:
        ax.set_xlabel(exp.x_label or "x")
        if min(xs) > 0 and max(xs) / min(xs) >= 20:
            ax.set_xscale("log")
    else:
        ax.set_xticks(range(len(groups)), groups, rotation=30, fontsize=7, ha="right")
    ax.set_ylabel("offline throughput (iterations/s, median of seeds)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    _title(ax, exp, doc, f"filled: worst seed meets online p99 <= {exp.objective_ms:g} ms; hollow: it does not; "
                         "red band: no policy meets it")
    return _save(fig, out_dir, "objective.png")


def attainment(exp, doc, out_dir):
    pts = [p for p in doc["points"] if p["group"] != "offline-alone" and _med(p, "slo_attainment")[0] is not None]
    if not pts:
        return None
    fig, ax = plt.subplots(figsize=(8.5, 5))
    for i, g in enumerate(dict.fromkeys(p["group"] for p in pts)):
        c = f"C{i % 10}"
        mine = sorted((p for p in pts if p["group"] == g), key=lambda p: p["x"] or 0)
        xs = [_med(p, "offline_iterations_per_s")[0] or 0.0 for p in mine]
        ys = [100 * _med(p, "slo_attainment")[0] for p in mine]
        ax.plot(xs, ys, color=c, linewidth=0.8, alpha=0.5)
        for p, x, y in zip(mine, xs, ys):
            meets = _med(p, "p99_meets_slo")[0] == 1.0
            ax.plot([x], [y], marker="o", color=c, markerfacecolor=c if meets else "none", markersize=7,
                    linestyle="none", label=g if p is mine[0] else None)
            if p["x"] is not None:
                ax.annotate(f"{p['x']:g}/s", (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("fine-tuning throughput (iterations/s, median of seeds)")
    ax.set_ylabel("requests meeting both TTFT and TPOT objectives (%)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    _title(ax, exp, doc, "filled: p99 TTFT and p99 TPOT both within objective; labels: request rate")
    return _save(fig, out_dir, "attainment.png")


def draw(exp, doc, samples, timelines, out_dir):
    out = []
    for kind in exp.figures:
        if kind == "cdf":
            f = cdf(exp, doc, samples, out_dir)
        elif kind == "bars":
            f = bars(exp, doc, out_dir)
        elif kind == "vs_x":
            f = vs_x(exp, doc, out_dir)
        elif kind == "timeline":
            f = timeline(exp, doc, timelines, out_dir)
        elif kind == "objective":
            f = objective_fig(exp, doc, out_dir)
        elif kind == "per_gpu":
            f = per_gpu(exp, doc, out_dir)
        elif kind == "attainment":
            f = attainment(exp, doc, out_dir)
        else:
            raise ValueError(f"unknown figure kind {kind!r}")
        if f:
            out.append({"file": f, "kind": kind})
    return out
