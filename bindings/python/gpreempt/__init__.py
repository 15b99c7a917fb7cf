"""gpreempt: suspend and resume the KFD compute queues of AMD GPU processes.

Preemptive GPU sharing on AMD Instinct GPUs through the upstream KFD debug-trap ioctls, without
kernel or runtime patches::

    import gpreempt

    with gpreempt.Context() as ctx, ctx.attach(offline_pid) as target:
        with target.suspended(grace=gpreempt.grace_from_us(100, 2100)) as s:
            print("suspended", s.result.count, "queues")
            run_online_request()
        # resumed here, also on exceptions (KeyboardInterrupt included)

Errors raise gpreempt.Error (an OSError: ``e.errno``, ``e.strerror`` is the detail message).
Without an AMD GPU, run under the simulator: ``kfdsim run -- python3 your_script.py``.
From a build tree: ``PYTHONPATH=<build>/python python3 ...``.
"""

from ._gpreempt import (  # noqa: F401
    GRACE_DEFAULT,
    BatchResult,
    Client,
    Context,
    Error,
    Queue,
    SysfsQueue,
    Target,
    __version__,
    analyze_log,
    decode,
    find_queues_by_process,
    gpu_clock_mhz,
    grace_from_us,
    my_queues,
    queue_map,
)

__all__ = [
    "GRACE_DEFAULT", "BatchResult", "Client", "Context", "OnlineRequest", "Request", "default_client",
    "expect_request", "online_request", "Error", "Queue", "SysfsQueue", "Target",
    "Suspension", "find_queues_by_process", "gpu_clock_mhz", "grace_from_us", "my_queues",
    "print_my_queues", "__version__", "analyze_log", "decode", "queue_map",
]


class Suspension:
    """Queues of a target held suspended for the duration of a ``with`` block.

    On entry the queues (``ids``, or all) are suspended; with ``strict`` (the default) a partial
    suspension resumes what was suspended and raises Error. On exit — normal or by exception —
    exactly the queues that were suspended are resumed.
    """

    def __init__(self, target, ids=None, grace=GRACE_DEFAULT, strict=True):
        self.target = target
        self.ids = None if ids is None else list(ids)
        self.grace = grace
        self.strict = strict
        self.result = None

    def __enter__(self):
        self.result = self.target.suspend(self.ids, self.grace)
        if self.strict and not self.result.all_done:
            failed = [(q, s) for q, s in self.result.queues if s != "ok"]
            self._resume()
            import errno

            raise Error(errno.EIO, "could not suspend every requested queue: %r" % failed)
        return self

    def _resume(self):
        done = [q for q, s in self.result.queues if s == "ok"]
        if done:
            return self.target.resume(done)
        return None

    def __exit__(self, exc_type, exc, tb):
        self._resume()
        return False


def _suspended(self, ids=None, grace=GRACE_DEFAULT, strict=True):
    """Context manager: suspend ``ids`` (None: all queues) for the ``with`` block."""
    return Suspension(self, ids, grace, strict)


Target.suspended = _suspended


def print_my_queues():
    """Print this process's own KFD queues (per-process sysfs; no root, no debug session).

    Returns the number of queues. Meant to be called from inside a model to log which queues it
    uses; called before the model has used the GPU it prints one line saying there are no queues
    yet (and returns 0).
    """
    import os

    try:
        queues = my_queues()
    except Error as e:
        import errno

        if e.errno != errno.ESRCH:  # ESRCH: no KFD process yet, i.e. no queues yet
            raise
        queues = []
    if not queues:
        print("gpreempt: process %d has no KFD queues yet (queues appear when the GPU runtime "
              "first uses the GPU)" % os.getpid())
        return 0
    names = {0: "compute", 1: "sdma", 2: "hiq", 3: "sdma_xgmi"}
    print("gpreempt: process %d has %d KFD queue(s)" % (os.getpid(), len(queues)))
    for q in queues:
        print("  queue %u  gpu_id %u  type %s  ring %u bytes"
              % (q.queue_id, q.gpu_id, names.get(q.type, "type %d" % q.type), q.ring_size))
    return len(queues)


# ---- hints to gpreemptd (docs/protocol.md) -------------------------------------------------------

import contextlib as _contextlib
import os as _os
import threading as _threading

_default_lock = _threading.Lock()
_default = None
_default_pid = None


def default_client():
    """The process's shared Client, made on first use for $GPREEMPT_SOCKET (else
    /run/gpreempt/gpreemptd.sock), also when no daemon is there yet: its hints fail open and it
    reconnects by itself (see Client). A forked child gets its own: it must not share its parent's
    connection."""
    global _default, _default_pid
    with _default_lock:
        if _default is None or _default_pid != _os.getpid():
            _default = Client()
            _default_pid = _os.getpid()
        return _default


class Request(int):
    """An online request begun by ``with gpreempt.online_request() as r:`` — its id (an int, as
    before) that can also report an LLM request's tokens to gpreemptd, for TTFT/TPOT objectives
    (docs/llm.md):

    * ``r.first_token()`` when its first output token is produced (its time to first token);
    * ``r.token(n)``: ``n`` output tokens so far (its decode pace, optional);
    * ``r.tokens = n`` before the block ends: its output tokens, sent with its end (its time per
      output token).

    Each fails open as begin/end do: with no daemon nothing is sent and nothing is raised."""

    def __new__(cls, request_id, client, require_daemon=None):
        r = super().__new__(cls, request_id)
        r._client = client
        r._require_daemon = require_daemon
        r.tokens = None
        return r

    def first_token(self):
        """Its first output token was produced now."""
        self.token(1)

    def token(self, n):
        """It has produced ``n`` (>= 1) output tokens so far."""
        n = int(n)
        if self.tokens is None or n > self.tokens:
            self.tokens = n
        self._client.token(int(self), n)


class OnlineRequest(_contextlib.ContextDecorator):
    """Marks an online request for gpreemptd: ``begin`` on entry, ``end`` on exit — also when the
    body raises (the body's exception is what propagates). Usable as ``with`` block and, through
    ContextDecorator, as a decorator; nested and concurrent uses (threads) each get their own
    request id, so several requests may be open at once (the daemon counts them). ``client``
    None: the module's default client. ``with ... as r``: ``r`` is the request (a Request: its id,
    and for an LLM request ``r.first_token()`` and ``r.tokens = n``).

    Fails open: when gpreemptd is away, restarting or refuses, the body runs all the same,
    unprotected (one warning on the "gpreempt" logger; ``client.stats()`` counts it).
    ``require_daemon=True`` raises gpreempt.Error instead and the body does not run; None: the
    client's own setting (``Client(require_daemon=...)``)."""

    def __init__(self, client=None, require_daemon=None):
        self._client = client
        self._require_daemon = require_daemon
        self._local = _threading.local()

    def _stack(self):
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def __enter__(self):
        client = self._client if self._client is not None else default_client()
        request = Request(client.begin(require_daemon=self._require_daemon), client)
        self._stack().append((client, request))
        return request

    def __exit__(self, exc_type, exc, tb):
        client, request = self._stack().pop()
        try:
            client.end(int(request), tokens=request.tokens or None)
        except Error:
            # A failure to end (a client that requires the daemon) must not replace the body's own
            # exception; the daemon ends the request anyway when the connection goes.
            if exc_type is None:
                raise
        return False


def online_request(client=None, require_daemon=None):
    """``with gpreempt.online_request():`` or ``@gpreempt.online_request()``: tell gpreemptd that
    an online request is running for the duration of the block or call (see OnlineRequest).
    Without a daemon the block runs unprotected (fail open); ``require_daemon=True`` raises
    gpreempt.Error instead (ENOENT/ECONNREFUSED: no daemon; EPERM: this process's class may not
    preempt)."""
    return OnlineRequest(client, require_daemon)


def expect_request(us, client=None):
    """Early hint: a request will start in about ``us`` microseconds, so gpreemptd can make room
    while this process is still pre-processing. Fails open as online_request()."""
    (client if client is not None else default_client()).expect(int(us))
