"""gpreempt.eval: the evaluation harness behind `gpreempt eval` (docs/evaluation.md).

Experiments (experiments.py) build engine specs; the runner (runner.py) runs each point on the
discrete-event engine `gpreempt-des` (or `gpreempt demo` under kfdsim for --engine live) once per
seed, aggregates the spread across seeds (stats.py), judges the user's thresholds, and writes
results.json (schemas/eval-results.schema.json), PNG figures (figures.py) and report.md
(report.py). Workloads (workloads.py) are the gpreempt-workload presets and torch_mode traces of
real PyTorch models (record.py).
"""
