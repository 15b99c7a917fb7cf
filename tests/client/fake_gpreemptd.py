"""A fake gpreemptd for the Python client and `gpreempt ctl` tests: a thread serving a Unix socket,
one JSON object per line each way (docs/protocol.md). It records every message and answers what
the test's handler returns — a result dict, an Error(code, message) refusal, raw bytes, or None
for silence. Written independently of lib/client/protocol so the tests also check that the C++
encoder and decoder speak the documented wire format."""
import json
import os
import socket
import tempfile
import threading


class Refuse:
    def __init__(self, code, message):
        self.code = code
        self.message = message


class Raw:
    def __init__(self, data, close=False):
        self.data = data
        self.close = close


class FakeDaemon:
    """``path`` None: a socket in a private directory; else that socket (a daemon restarted on the
    socket of one that was closed), whose directory close() leaves."""

    def __init__(self, handler=None, path=None):
        self.handler = handler or (lambda msg: {})
        self.dir = tempfile.mkdtemp(prefix="gpreempt-fake-") if path is None else None
        self.path = path if path is not None else os.path.join(self.dir, "gpreemptd.sock")
        self.messages = []
        self.hangups = 0
        self._lock = threading.Lock()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(self.path)
        self._sock.listen(16)
        self._stop = False
        self._threads = []
        self._accept = threading.Thread(target=self._accept_loop, daemon=True)
        self._accept.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        # The socket leaves its path first, as a dead daemon's socket stops answering all at once:
        # a client whose connection closes below must not reach this daemon again.
        closing = self.path + ".closing"
        os.rename(self.path, closing)
        self._stop = True
        try:
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(closing)
        except OSError:
            pass
        self._accept.join(5)
        self._sock.close()
        for t in self._threads:
            t.join(5)
        os.unlink(closing)
        if self.dir is not None:
            os.rmdir(self.dir)

    def received(self):
        with self._lock:
            return list(self.messages)

    def ops(self):
        return [m["op"] for m in self.received()]

    def _accept_loop(self):
        while True:
            conn, _ = self._sock.accept()
            if self._stop:
                conn.close()
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _serve(self, conn):
        buf = b""
        conn.settimeout(0.2)
        while not self._stop:
            try:
                data = conn.recv(65536)
            except socket.timeout:
                continue
            if not data:
                with self._lock:
                    self.hangups += 1
                break
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                msg = json.loads(line)
                with self._lock:
                    self.messages.append(msg)
                answer = self.handler(msg)
                if answer is None:
                    continue
                if isinstance(answer, Raw):
                    conn.sendall(answer.data)
                    if answer.close:
                        conn.close()
                        return
                    continue
                if isinstance(answer, Refuse):
                    reply = {"v": 1, "seq": msg["seq"], "ok": False, "error": answer.code,
                             "message": answer.message}
                else:
                    reply = {"v": 1, "seq": msg["seq"], "ok": True, "result": answer}
                conn.sendall((json.dumps(reply) + "\n").encode())
        conn.close()
