#!/usr/bin/env python3
"""Suspend another process's GPU queues for a while, with the gpreempt Python module.

    PYTHONPATH=<build>/python python3 examples/python_suspend.py PID [--hold-ms 200] [--grace-us 100]
    # without a GPU:  kfdsim run -- env PYTHONPATH=<build>/python python3 examples/python_suspend.py PID
"""
import argparse
import time

import gpreempt


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pid", type=int)
    p.add_argument("--hold-ms", type=int, default=200)
    p.add_argument("--grace-us", type=int)
    args = p.parse_args()

    with gpreempt.Context() as ctx, ctx.attach(args.pid) as target:
        queues = target.queues()
        print("process %d has %d queue(s): %s" % (args.pid, len(queues), [q.queue_id for q in queues]))
        grace = gpreempt.GRACE_DEFAULT
        if args.grace_us is not None and queues:
            grace = gpreempt.grace_from_us(args.grace_us, gpreempt.gpu_clock_mhz(queues[0].gpu_id))
        with target.suspended(grace=grace) as s:
            print("suspended %d queue(s) in %.1f us (ioctl %.1f us, control-thread hop %.1f us)"
                  % (s.result.count, s.result.total_us, s.result.ioctl_us, s.result.hop_us))
            time.sleep(args.hold_ms / 1000.0)
        print("resumed")


if __name__ == "__main__":
    main()
