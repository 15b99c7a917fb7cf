"""Finding the processes of a `kfdsim run` from outside, for the bench scripts beside this file:
a run's descendants, a process's argv and environment, and the kfdsimd serving a machine."""
import os


def descendants(pid):
    out, pending = [], [pid]
    while pending:
        p = pending.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        out += kids
        pending += kids
    return out


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def environ(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)


def machine_dir(pid):
    """The machine directory (KFDSIM_DIR) a process under `kfdsim run` uses."""
    return environ(pid)[b"KFDSIM_DIR"].decode()


def daemon_of(directory):
    """The kfdsimd serving the machine in `directory`, or None."""
    flag = f"--dir={directory}".encode()
    for d in os.listdir("/proc"):
        if d.isdigit():
            argv = cmdline(int(d))
            if argv and argv[0].endswith(b"kfdsimd") and flag in argv:
                return int(d)
    return None
