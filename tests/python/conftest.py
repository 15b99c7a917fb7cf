"""Fixtures for the gpreempt Python tests.

ctest runs this suite under `kfdsim run` (a private simulated machine: LD_PRELOAD + KFDSIM_DIR are
set for this process and inherited by the processes it starts). Tests that need the simulated
device skip when KFDSIM_DIR is absent, e.g. when pytest is run by hand without kfdsim.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BINARY_DIR = Path(os.environ.get("GPREEMPT_BINARY_DIR", Path(__file__).resolve().parents[2] / "build"))
SOURCE_DIR = Path(os.environ.get("GPREEMPT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(BINARY_DIR / "python"))


def on_simulator():
    return bool(os.environ.get("KFDSIM_DIR")) and "libkfdshim" in os.environ.get("LD_PRELOAD", "")


needs_sim = pytest.mark.skipif(not on_simulator(), reason="needs the simulated KFD (run under kfdsim run)")


class TargetProcess:
    """gpreempt_test_target: a raw-ioctl GPU process, driven one command per line."""

    def __init__(self, queues=2):
        exe = BINARY_DIR / "bin" / "gpreempt_test_target"
        self.proc = subprocess.Popen([str(exe), "--runtime", "--queues", str(queues)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self.proc.stdout.readline().split()
        assert ready and ready[0] == "ready", "target did not start: %r" % ready
        self.pid = int(ready[1])
        self.queue_ids = [int(x) for x in ready[2:]]

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def target():
    t = TargetProcess()
    yield t
    t.close()


def device_queues():
    """The simulated device's own view of every queue (the oracle)."""
    out = subprocess.run([str(BINARY_DIR / "bin" / "kfdsim"), "queues", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["queues"]


def suspended_in_device(target):
    """{queue_id: suspended} of every queue of `target` (a TargetProcess) in the device.

    Asserts first that the device lists exactly the target's queues: `all()` and `not any()` of an
    empty dict are both true, so a check on the values alone would pass with no queue at all.
    """
    states = {q["queue_id"]: q["suspended"] for q in device_queues() if q["pid"] == target.pid}
    assert sorted(states) == sorted(target.queue_ids), \
        "device lists queues %s for pid %d, expected %s" % (sorted(states), target.pid, target.queue_ids)
    return states
