"""Offline batch inference at maximum throughput: every prompt queued at once and the engine
running flat out, as vLLM's offline `LLM.generate(prompts)` and its throughput benchmark run.

    kfdsim run -- /usr/bin/python3 -m gpreempt.sim.batch_infer --num-prompts 256 [--json]

This is gpreempt.sim.serve with --request-rate inf (every request arrives at t = 0), under a name
that says what the job is; it takes serve's options except those of an online service (arrival
rate and burstiness, objectives, hints). Read its output tokens/s and total tokens/s: TTFT and
TPOT of requests that all wait from t = 0 describe the queue, not a service.
"""
import sys

from . import serve

# serve's options that describe requests arriving over time and a service's objectives.
_ONLINE_ONLY = ("--request-rate", "--arrival-cv", "--hint", "--ttft-slo-ms", "--tpot-slo-ms")
PROG = "python3 -m gpreempt.sim.batch_infer"


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if "-h" in argv or "--help" in argv:
        print("usage: %s [serve's options but %s]\n\n%s\nserve's options follow.\n"
              % (PROG, ", ".join(_ONLINE_ONLY), __doc__.strip()))
        return serve.main(["--help"])
    for a in argv:
        if a.split("=", 1)[0] in _ONLINE_ONLY:
            print("%s: error: %s is an online service's option; batch inference queues every "
                  "request at t = 0 (use gpreempt.sim.serve for a request stream)"
                  % (PROG, a.split("=", 1)[0]), file=sys.stderr)
            return 2
    return serve.main(["--request-rate", "inf"] + argv)


if __name__ == "__main__":
    sys.exit(main())
