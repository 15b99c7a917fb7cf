#!/usr/bin/env python3
"""Suspend another process's GPU queues for a while, from Python through ctypes only.

The style of the original proof of concept: load libgpreempt_poc.so (the compatibility name of
libgpreempt.so), print our own queues, suspend the target's queues, resume them.

    LD_LIBRARY_PATH=<build>/lib python3 examples/ctypes_suspend.py PID [--hold-ms 200] [--grace-us 100]
    # without a GPU:  kfdsim run -- env LD_LIBRARY_PATH=<build>/lib python3 examples/ctypes_suspend.py PID

The grace period is in the kernel's unit (1,000 GPU clocks); gpreempt_grace_from_us converts
microseconds at the GPU's clock (gpreempt_gpu_clock_mhz reads it from the KFD topology).
"""
import argparse
import ctypes
import sys
import time

GRACE_DEFAULT = 0xFFFFFFFF
STATUS = {0: "ok", 1: "invalid", 2: "error"}


class Queue(ctypes.Structure):
    """struct gpreempt_queue (include/gpreempt/gpreempt.h)."""
    _fields_ = [
        ("queue_id", ctypes.c_uint32), ("gpu_id", ctypes.c_uint32),
        ("type", ctypes.c_uint32), ("ring_size", ctypes.c_uint32),
        ("ring_base_address", ctypes.c_uint64), ("read_pointer_address", ctypes.c_uint64),
        ("write_pointer_address", ctypes.c_uint64), ("ctx_save_restore_address", ctypes.c_uint64),
        ("ctx_save_restore_size", ctypes.c_uint32), ("suspended", ctypes.c_uint32),
        ("exception_status", ctypes.c_uint64),
    ]


def load():
    lib = ctypes.CDLL("libgpreempt_poc.so")
    vp, u32, i32 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32
    lib.gpreempt_strerror.restype = ctypes.c_char_p
    lib.gpreempt_last_error.restype = ctypes.c_char_p
    lib.gpreempt_ctx_open.argtypes = [vp, ctypes.POINTER(vp)]
    lib.gpreempt_ctx_close.argtypes = [vp]
    lib.gpreempt_ctx_close.restype = None
    lib.gpreempt_attach.argtypes = [vp, i32, ctypes.POINTER(vp)]
    lib.gpreempt_detach.argtypes = [vp]
    lib.gpreempt_list_queues.argtypes = [vp, ctypes.POINTER(Queue), u32]
    lib.gpreempt_suspend_queues.argtypes = [vp, ctypes.POINTER(u32), u32, u32, ctypes.POINTER(u32)]
    lib.gpreempt_resume_queues.argtypes = [vp, ctypes.POINTER(u32), u32, ctypes.POINTER(u32)]
    lib.gpreempt_grace_from_us.argtypes = [ctypes.c_uint64, u32]
    lib.gpreempt_grace_from_us.restype = u32
    lib.gpreempt_gpu_clock_mhz.argtypes = [u32]
    return lib


def check(lib, rc, what):
    if rc < 0:
        sys.exit("%s failed: %s — %s" % (what, lib.gpreempt_strerror(rc).decode(),
                                          lib.gpreempt_last_error().decode()))
    return rc


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pid", type=int, help="process whose queues to suspend")
    p.add_argument("--hold-ms", type=int, default=200, help="how long to keep them suspended")
    p.add_argument("--grace-us", type=int, help="grace period in microseconds (default: driver's)")
    args = p.parse_args()

    lib = load()
    ctx = ctypes.c_void_p()
    check(lib, lib.gpreempt_ctx_open(None, ctypes.byref(ctx)), "gpreempt_ctx_open")
    lib.gpreempt_print_my_queues()  # this controller's own queues (none): per-process sysfs

    target = ctypes.c_void_p()
    check(lib, lib.gpreempt_attach(ctx, args.pid, ctypes.byref(target)), "gpreempt_attach")
    queues = (Queue * 256)()
    n = min(check(lib, lib.gpreempt_list_queues(target, queues, 256), "gpreempt_list_queues"), 256)
    print("process %d has %d queue(s): %s" % (args.pid, n, [queues[i].queue_id for i in range(n)]))

    grace = GRACE_DEFAULT
    if args.grace_us is not None and n:
        mhz = lib.gpreempt_gpu_clock_mhz(queues[0].gpu_id)
        grace = lib.gpreempt_grace_from_us(args.grace_us, max(mhz, 0))
    ids = (ctypes.c_uint32 * n)(*[queues[i].queue_id for i in range(n)])
    status = (ctypes.c_uint32 * n)()
    t0 = time.perf_counter()
    done = check(lib, lib.gpreempt_suspend_queues(target, ids, n, grace, status), "gpreempt_suspend_queues")
    t1 = time.perf_counter()
    print("suspended %d of %d queue(s) in %.1f us: %s" % (
        done, n, (t1 - t0) * 1e6, [(ids[i], STATUS[status[i]]) for i in range(n)]))
    time.sleep(args.hold_ms / 1000.0)
    done = check(lib, lib.gpreempt_resume_queues(target, ids, n, status), "gpreempt_resume_queues")
    print("resumed %d of %d queue(s)" % (done, n))
    check(lib, lib.gpreempt_detach(target), "gpreempt_detach")
    lib.gpreempt_ctx_close(ctx)


if __name__ == "__main__":
    main()
