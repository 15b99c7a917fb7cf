"""Statistics of the evaluation: latency summaries and the spread across seeds.

Percentiles interpolate linearly between order statistics (numpy's default), the definition of
lib/common/latency_summary.cpp, so that a P99 here means what it means in `gpreempt demo` and
`gpreempt-workload --json`.

A P99 of fewer than MIN_TAIL_SAMPLES samples is mostly the largest sample (the demo's 54 requests
were exactly that): below that count the tail is reported as the maximum and labelled so
(`tail_kind` "max"), never as a P99.
"""
import math
import statistics

MIN_TAIL_SAMPLES = 1000


def percentile(sorted_values, q):
    """q-th percentile (0–100) of an ascending list, linear between order statistics."""
    if not sorted_values:
        raise ValueError("percentile of an empty sample")
    pos = q / 100.0 * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(values):
    """{count, mean, p50, p95, p99, max, tail_ms, tail_kind} of a latency sample in ms.

    tail is the P99 with at least MIN_TAIL_SAMPLES samples and the maximum below that."""
    v = sorted(float(x) for x in values)
    if not v:
        return {"count": 0, "mean": None, "p50": None, "p95": None, "p99": None, "max": None,
                "tail": None, "tail_kind": None}
    p99 = percentile(v, 99)
    enough = len(v) >= MIN_TAIL_SAMPLES
    return {
        "count": len(v),
        "mean": sum(v) / len(v),
        "p50": percentile(v, 50),
        "p95": percentile(v, 95),
        "p99": p99,
        "max": v[-1],
        "tail": p99 if enough else v[-1],
        "tail_kind": "p99" if enough else "max",
    }


# Two-sided 95 % quantiles of Student's t by degrees of freedom (1..30); above 30 the normal 1.96
# is within 4 % of t. Seeds are few (3..10), so the normal quantile alone would understate the
# interval by up to 2×.
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042)


def t975(df):
    return T975[df - 1] if df <= len(T975) else 1.96


def spread(values):
    """One metric across seeds: {min, median, max, mean, stdev, ci95, n}; None values (not measured)
    are left out.

    stdev is the sample standard deviation (n - 1) and ci95 the half-width of the 95 % confidence
    interval of the mean, Student's t with n - 1 degrees of freedom (mean ± ci95); both are None
    with fewer than two seeds. The tables print the median and min–max; the CI is for readers who
    want the mean's uncertainty."""
    v = [float(x) for x in values if x is not None]
    if not v:
        return {"min": None, "median": None, "max": None, "mean": None, "stdev": None, "ci95": None, "n": 0}
    mean = math.fsum(v) / len(v)
    sd = statistics.stdev(v, mean) if len(v) > 1 else None
    ci = t975(len(v) - 1) * sd / math.sqrt(len(v)) if sd is not None else None
    return {"min": min(v), "median": statistics.median(v), "max": max(v), "mean": mean, "stdev": sd, "ci95": ci,
            "n": len(v)}


def relative_loss(alone, shared):
    """Fraction of throughput lost (0.1 = 10 %) going from `alone` to `shared` iterations/s."""
    if alone is None or shared is None or alone <= 0:
        return None
    return (alone - shared) / alone


def cdf(values):
    """(x, y) of the empirical CDF: x ascending, y in (0, 1]."""
    v = sorted(values)
    n = len(v)
    return v, [(i + 1) / n for i in range(n)]
