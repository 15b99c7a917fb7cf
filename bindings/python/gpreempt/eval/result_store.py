"""The discrete-event results of a run, kept as each one finishes, so that a run that is stopped
(a killed terminal, a lost SSH session, a runner's time limit) loses none of the points it had
finished: running the same command again computes only the rest.

A result is reused only when rerunning would give it byte for byte: gpreempt-des is deterministic
for a given spec, so the key is the spec (the seed and the calibrated model included), the
engine binary's contents and the contents of every file the spec names (kernel traces, step
grids). Anything else changed, the point runs again. `gpreempt eval run --fresh` ignores what is
kept; deleting OUT/points/ does the same.
"""
import hashlib
import json
import os
import re

# Spec keys whose string values name files gpreempt-des reads.
FILE_KEYS = ("trace", "steps")


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def named_files(spec):
    """The files a spec names, in a stable order."""
    found = []

    def walk(v):
        if isinstance(v, dict):
            for k in sorted(v):
                if k in FILE_KEYS and isinstance(v[k], str):
                    found.append(v[k])
                else:
                    walk(v[k])
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(spec)
    return found


class ResultStore:
    def __init__(self, directory, engine_binary, fresh=False, progress=lambda s: None):
        self.directory = directory
        self.fresh = fresh
        self.progress = progress
        self.engine = file_digest(engine_binary)
        self.reused = 0
        self._files = {}  # path -> digest, once per run (traces are large)

    def _digest_of(self, path):
        if path not in self._files:
            self._files[path] = file_digest(path) if os.path.isfile(path) else "missing"
        return self._files[path]

    def key(self, spec):
        h = hashlib.sha256()
        h.update(json.dumps(spec, sort_keys=True).encode())
        h.update(self.engine.encode())
        for path in named_files(spec):
            h.update(f"{path}\0{self._digest_of(path)}".encode())
        return h.hexdigest()[:20]

    def path(self, point, spec):
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", point)
        return os.path.join(self.directory, f"{name}.seed{spec.get('seed')}.{self.key(spec)}.json")

    def get(self, point, spec):
        """The kept result of this point and spec, or None."""
        if self.fresh:
            return None
        p = self.path(point, spec)
        try:
            with open(p) as f:
                result = json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            # put() renames whole files into place, so this is a file changed by hand.
            self.progress(f"{p}: not a kept result ({e}); running the point again")
            return None
        self.reused += 1
        return result

    def put(self, point, spec, result):
        os.makedirs(self.directory, exist_ok=True)
        p = self.path(point, spec)
        with open(p + ".part", "w") as f:
            json.dump(result, f)
        os.replace(p + ".part", p)  # a stop mid-write leaves no half result under the real name
