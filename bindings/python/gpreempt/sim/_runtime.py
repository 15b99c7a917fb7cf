"""This process's simulated GPU: one simrt device, hardware queues pooled per priority as ROCm does,
and streams that multiplex onto them.

ROCm's HIP runtime gives each stream a hardware queue (HWq) of the stream's priority until
GPU_MAX_HW_QUEUES (default 4) exist at that priority, then shares the least used one
(a HIP log of 16 streams showed 4 HWq: docs/kfd-interface.md#joining-queues-across-sources).
Queues appear lazily, on a stream's first dispatch, as PyTorch's do on the first kernel. Stream
priorities follow HIP and torch.cuda: -1 high, 0 normal, 1 low; ROCr turns them into KFD queue
priorities 15, 7 and 0.
"""
import atexit
import contextlib
import os
import threading

from .._gpreempt import sim as _native

KFD_PRIORITY = {"high": 15, "normal": 7, "low": 0}
_LEVEL_OF_HIP = {-1: "high", 0: "normal", 1: "low"}


class Unavailable(RuntimeError):
    """This process cannot use the simulated GPU (not under kfdsim, or a real GPU)."""


_lock = threading.RLock()
_device = None
_pools = {}  # level -> [[native queue, streams using it]]
_all_queues = []
_tls = threading.local()
_named_streams = {}


def _env_int(name, default, low):
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = int(text, 0)
    except ValueError:
        raise ValueError("%s: expected an integer, got %r" % (name, text)) from None
    if value < low:
        raise ValueError("%s: must be at least %d, got %d" % (name, low, value))
    return value


def device():
    """The process's simrt device, opened on first use (raises Unavailable off the simulator)."""
    global _device
    with _lock:
        if _device is None:
            reason = _native.unavailable_reason()
            if reason:
                raise Unavailable(reason)
            try:
                _device = _native.Device()
            except RuntimeError as e:
                raise Unavailable(str(e)) from None
            atexit.register(_at_exit)
        return _device


def available():
    """True when this process runs on the simulated KFD."""
    return not _native.unavailable_reason()


def _level(priority):
    if isinstance(priority, str):
        if priority not in KFD_PRIORITY:
            raise ValueError("stream priority must be 'high', 'normal', 'low' or -1, 0, 1; got %r"
                             % priority)
        return priority
    return _LEVEL_OF_HIP[max(-1, min(1, int(priority)))]


def _acquire(level):
    with _lock:
        pool = _pools.setdefault(level, [])
        if len(pool) < _env_int("GPU_MAX_HW_QUEUES", 4, 1):
            q = device().create_queue(KFD_PRIORITY[level],
                                      _env_int("GPREEMPT_SIM_RING_PACKETS", 4096, 16))
            entry = [q, 0]
            pool.append(entry)
            _all_queues.append(q)
        else:
            # The least used; among equals the newest, as the capture shows ROCm picking.
            entry = min(reversed(pool), key=lambda e: e[1])
        entry[1] += 1
        return entry[0]


class Stream:
    """An in-order stream of kernels, mapped on first use onto one of the hardware queues of its
    priority (-1 high, 0 normal, 1 low, or 'high'/'normal'/'low')."""

    def __init__(self, priority=0):
        self.level = _level(priority)
        self._queue = None

    @property
    def queue(self):
        """The hardware queue (gpreempt._gpreempt.sim.Queue); created or chosen on first use."""
        if self._queue is None:
            self._queue = _acquire(self.level)
        return self._queue

    @property
    def queue_id(self):
        return self.queue.queue_id

    @property
    def priority(self):
        return {"high": -1, "normal": 0, "low": 1}[self.level]

    def synchronize(self, timeout=None):
        """Wait until the GPU finished this stream's hardware queue; False after `timeout` s."""
        if self._queue is None:
            return True
        return self._queue.synchronize(timeout)

    def __repr__(self):
        q = "not yet mapped" if self._queue is None else "queue %d" % self._queue.queue_id
        return "<gpreempt.sim.Stream %s priority, %s>" % (self.level, q)


def default_stream():
    with _lock:
        if None not in _named_streams:
            _named_streams[None] = Stream(0)
        return _named_streams[None]


def current_stream():
    """The stream kernels go to in this thread (the default stream unless `stream()` is active)."""
    return getattr(_tls, "stream", None) or default_stream()


@contextlib.contextmanager
def stream(s=None, priority=None):
    """``with stream(priority=-1):`` sends this thread's kernels to a stream of that priority (one
    per priority per process), ``with stream(s):`` to the Stream ``s``."""
    if s is None:
        level = _level(0 if priority is None else priority)
        with _lock:
            s = _named_streams.get(level)
            if s is None:
                s = _named_streams[level] = Stream(level)
    elif priority is not None:
        raise ValueError("give a Stream or a priority, not both")
    old = getattr(_tls, "stream", None)
    _tls.stream = s
    try:
        yield s
    finally:
        _tls.stream = old


def hardware_queues():
    """The KFD queues this process created, in creation order."""
    with _lock:
        return list(_all_queues)


def queue_ids():
    return [q.queue_id for q in hardware_queues()]


def synchronize(timeout=None):
    """Wait until the GPU finished everything this process queued (a HIP device synchronize);
    on return every traced dispatch queued before has its line in its trace file.
    False when `timeout` seconds passed first (e.g. the queues are suspended)."""
    for q in hardware_queues():
        if not q.synchronize(timeout):
            return False
    return True


def now_us():
    """The simulated GPU clock in µs (the clock of trace records)."""
    return device().now_us()


def _at_exit():
    # Finish the trace of what the GPU still runs, but never hang: a suspended queue stops the
    # wait after half a second without progress. Lines are written unbuffered as dispatches
    # finish, so there is nothing to flush.
    for q in hardware_queues():
        q.drain(0.5)
