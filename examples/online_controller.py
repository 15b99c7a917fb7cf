#!/usr/bin/env python3
"""The C online_controller.c with the gpreempt Python module: suspend the offline process while
online requests run, resume it once the online side has been idle for a moment.

    PYTHONPATH=<build>/python python3 examples/online_controller.py OFFLINE_PID SOCKET [--idle-ms 2]

The online service connects to SOCKET and sends "start ..." / "end ..." lines, waiting for one
byte after each start (gpreempt-workload online --notify SOCKET --notify-wait).
"""
import argparse
import os
import select
import socket
import sys
import time

import gpreempt


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pid", type=int)
    p.add_argument("socket")
    p.add_argument("--idle-ms", type=float, default=2.0)
    args = p.parse_args()

    if os.path.exists(args.socket):
        os.unlink(args.socket)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(args.socket)
    server.listen(1)
    requests = suspensions = 0
    # Leaving the `with` detaches, which resumes whatever is still suspended.
    with gpreempt.Context() as ctx, ctx.attach(args.pid) as offline:
        print("controlling pid %d; waiting for the online service on %s" % (args.pid, args.socket), flush=True)
        conn, _ = server.accept()
        suspended, active, idle_since, pending = False, 0, time.monotonic(), b""
        while True:
            timeout = None
            if suspended and active == 0:
                timeout = max(0.0, idle_since + args.idle_ms / 1000.0 - time.monotonic())
            readable, _, _ = select.select([conn], [], [], timeout)
            if readable:
                data = conn.recv(4096)
                if not data:
                    break
                pending += data
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if line.startswith(b"start "):
                        requests += 1
                        active += 1
                        if not suspended:
                            offline.suspend()
                            suspended, suspensions = True, suspensions + 1
                        conn.sendall(b".")
                    elif line.startswith(b"end ") and active > 0:
                        active -= 1
                        if active == 0:
                            idle_since = time.monotonic()
            if suspended and active == 0 and time.monotonic() - idle_since >= args.idle_ms / 1000.0:
                offline.resume()
                suspended = False
        conn.close()
    server.close()
    os.unlink(args.socket)
    print("online requests %d, suspensions %d" % (requests, suspensions))


if __name__ == "__main__":
    sys.exit(main())
