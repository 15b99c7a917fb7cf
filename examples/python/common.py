"""Shared by the examples: show this process's queues both ways a user does, and report latencies."""
import ctypes
import statistics


def show_my_queues():
    """gpreempt.print_my_queues() and, in the ctypes style of user code,
    libgpreempt_poc.so's gpreempt_print_my_queues() (found through LD_LIBRARY_PATH)."""
    import gpreempt

    gpreempt.print_my_queues()
    try:
        lib = ctypes.CDLL("libgpreempt_poc.so")
    except OSError as e:
        print("ctypes: cannot load libgpreempt_poc.so (%s); set LD_LIBRARY_PATH=build/lib" % e)
        return
    lib.gpreempt_print_my_queues()


def latency_summary(ms):
    """P50/P95/P99 of per-request latencies in ms; below 1000 samples P99 is the maximum."""
    if not ms:
        return "no requests"
    s = sorted(ms)

    def pct(p):
        return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]

    tail = "P99 %.2f" % pct(99) if len(s) >= 1000 else "max %.2f (P99 needs 1000 samples)" % s[-1]
    return "requests %d, mean %.2f, P50 %.2f, P95 %.2f, %s ms" % (
        len(s), statistics.fmean(s), pct(50), pct(95), tail)
