"""gpreempt.sim.torch_mode: unmodified PyTorch models as kernels on the simulated GPU."""
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import BINARY_DIR, SOURCE_DIR, needs_sim

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

import gpreempt  # noqa: E402
import gpreempt.sim as sim  # noqa: E402

# torchvision's model cards: GFLOPS (= multiply-adds) per 224x224 image forward.
PUBLISHED_MACS = {"resnet18": 1.81e9, "resnet50": 4.09e9}


@needs_sim
@pytest.mark.parametrize("name", sorted(PUBLISHED_MACS))
def test_forward_flops_match_the_published_figures(name):
    model = getattr(torchvision.models, name)(weights=None).eval()
    with sim.torch_mode() as m:
        y = model(torch.randn(2, 3, 224, 224))
    assert tuple(y.shape) == (2, 1000)
    macs = m.stats()["matrix_flops"] / 2 / 2  # 2 FLOPs per multiply-add, batch 2
    assert macs == pytest.approx(PUBLISHED_MACS[name], rel=0.01)


@needs_sim
def test_training_dispatches_backward_kernels_and_optimizer_steps():
    model = torchvision.models.resnet18(weights=None)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(2, 3, 64, 64)
    with sim.torch_mode() as fwd:
        loss = torch.nn.functional.cross_entropy(model(x), torch.tensor([1, 2]))
    forward = fwd.stats()
    with sim.torch_mode() as bwd:
        loss.backward()
    backward = bwd.stats()
    with sim.torch_mode() as step:
        opt.step()
        opt.zero_grad()
    assert backward["ops"]["aten.convolution_backward.default"] >= 19  # data + weight kernels
    # Every convolution but the first (its input needs no gradient) costs twice its forward.
    ratio = backward["matrix_flops"] / forward["matrix_flops"]
    assert 1.8 < ratio <= 2.0
    assert step.stats()["dispatches"] >= len(list(model.parameters()))


@needs_sim
def test_adam_and_a_transformer_encoder_train():
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128)
    model = torch.nn.TransformerEncoder(layer, num_layers=2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with sim.torch_mode() as m:
        out = model(torch.randn(16, 4, 64))
        out.pow(2).mean().backward()
        opt.step()
    ops = m.stats()["ops"]
    assert any("backward" in op for op in ops)
    assert any(op.startswith("aten.addcdiv") for op in ops)  # Adam's update


@needs_sim
def test_compute_true_gives_real_values():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    x = torch.randn(8, 32)
    expect = model(x)
    with sim.torch_mode(compute=True) as m:
        y = model(x)
    assert torch.allclose(y, expect)
    assert m.stats()["ops"]["aten.addmm.default"] == 2


@needs_sim
def test_the_host_runs_ahead_until_a_value_is_read():
    a = torch.randn(16384, 16384, device="meta")  # ~8.8 TFLOP each: ~1.3 simulated s in all
    with sim.torch_mode():
        c = torch.mm(torch.mm(torch.mm(a, a), a), a)
        busy = [q for q in sim.hardware_queues() if not q.idle()]
        assert busy, "torch.mm waited for the GPU"
        assert c.sum().item() == 0.0  # shapes only: a read synchronizes and gives 0
        assert all(q.idle() for q in sim.hardware_queues())


@needs_sim
def test_trace_has_one_record_per_dispatch(tmp_path):
    path = tmp_path / "trace.jsonl"
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU())
    with sim.torch_mode(trace=path) as m:
        model(torch.randn(4, 64)).sum().backward()
        sim.synchronize()
    sim.device().trace_to(None)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == m.stats()["dispatches"] > 0
    ids = set(sim.queue_ids())
    for r in records:
        assert set(r) == {"pid", "queue_id", "name", "grid", "workgroup", "kind", "flops", "bytes",
                          "submit_us", "start_us", "end_us"}
        assert r["pid"] == os.getpid() and r["queue_id"] in ids
        # The register model it was priced with: matrix-core operators vs the rest.
        assert r["kind"] in ("matrix", "vector")
        assert r["name"].startswith("aten.")
        assert r["start_us"] <= r["end_us"]
        assert r["submit_us"] <= r["start_us"] + 300  # clocks agree within the CP's poll period
    assert any(r["name"] == "aten.addmm.default" for r in records)


MODEL_OWNER = """
import json, sys, torch, torchvision, gpreempt, gpreempt.sim as sim
model = torchvision.models.resnet18(weights=None).eval()
x = torch.randn(1, 3, 64, 64)
with torch.no_grad(), sim.torch_mode():
    model(x)
    with sim.stream(priority=-1):  # a second queue, of high priority
        model(x)
    sim.synchronize()
print(json.dumps(sim.queue_ids()), flush=True)
gpreempt.print_my_queues()
sys.stdout.flush()
sys.stdin.readline()
"""


@needs_sim
def test_a_models_queues_are_seen_from_outside_and_inside_with_the_same_ids():
    from test_sim_runtime import gpreempt_queues

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BINARY_DIR / "python"),
                                                      env.get("PYTHONPATH")]))
    child = subprocess.Popen([sys.executable, "-c", MODEL_OWNER], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = child.stdout.readline()
        assert line, child.stderr.read()
        ids = sorted(json.loads(line))
        assert len(ids) == 2
        assert gpreempt_queues(child.pid) == ids  # gpreempt queues --pid, from outside
        inside = []
        while len(inside) < 2:
            line = child.stdout.readline()
            assert line, child.stderr.read()
            if line.strip().startswith("queue "):
                inside.append(int(line.split()[1]))
        assert sorted(inside) == ids  # print_my_queues, inside the model's process
    finally:
        child.stdin.write("\n")
        child.stdin.close()
        assert child.wait(timeout=60) == 0, child.stderr.read()


TRAINER = """
import json, sys, torch, gpreempt.sim as sim
model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(4096, 4096, device="meta")
with sim.torch_mode() as m:
    for step in range(int(sys.argv[1])):
        model(x).sum().backward()
        opt.step()
        opt.zero_grad()
        if step == 0 and sys.argv[2] == "run":
            # The test suspends the queue now and only then lets the other steps be queued: the
            # suspension lands mid-run however fast the GPU is compared to this host (under ASan
            # the GPU would otherwise finish all of them before the test's suspend).
            print("ready", flush=True)
            sys.stdin.readline()
    if sys.argv[2] == "exit":  # every step queued, most of them not yet run
        # Then seconds of simulated GPU work at once, so that the GPU is still busy when the test
        # suspends it however slowly this host enqueued the steps (under ASan it can be slower
        # than the GPU runs them, which would leave nothing in flight to suspend).
        big = torch.randn(16384, 16384, device="meta")  # ~8.8 TFLOP per product, ~0.3 s each
        for _ in range(16):
            big = torch.mm(big, big)
        print("ready", flush=True)
        sys.stdin.readline()
        sys.exit(0)
    sim.synchronize()
print(json.dumps({"dispatches": m.stats()["dispatches"],
                  "completed": sum(q.read_index for q in sim.hardware_queues())}), flush=True)
"""


def trainer(steps, mode, **extra_env):
    env = dict(os.environ, **extra_env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BINARY_DIR / "python"),
                                                      env.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, "-c", TRAINER, str(steps), mode],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def gpu_queues(pid):
    """The GPU model's records of the queues of `pid` (fetched and completed packets)."""
    out = subprocess.run([str(BINARY_DIR / "bin" / "kfdsim"), "stats", "--json"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    return [q for q in json.loads(out)["queues"] if q["pid"] == pid]


def completed_on_gpu(pid):
    return sum(q["completed"] for q in gpu_queues(pid))


@needs_sim
def test_suspension_stops_progress_and_resume_loses_nothing():
    ref = trainer(12, "run")
    out, err = ref.communicate(timeout=120)
    assert ref.returncode == 0, err
    expect = json.loads(out.splitlines()[-1])
    assert expect["dispatches"] == expect["completed"] > 0

    child = trainer(12, "run")
    assert child.stdout.readline().strip() == "ready", child.stderr.read()
    with gpreempt.Context() as ctx, ctx.attach(child.pid) as target:
        with target.suspended():
            child.stdin.write("\n")
            child.stdin.flush()
            before = completed_on_gpu(child.pid)
            time.sleep(0.3)
            assert completed_on_gpu(child.pid) == before
            assert before < expect["dispatches"]
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert json.loads(out.splitlines()[-1]) == expect


@needs_sim
def test_a_model_exiting_while_suspended_does_not_hang():
    # The model exits while the test's Context still traces it, and LeakSanitizer cannot check a
    # process under ptrace (it stops the threads with ptrace itself and aborts): in a sanitizer
    # build this child keeps every ASan check but the exit-time leak check, which the trainer of
    # the test above (it exits after the detach) still gets.
    asan = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))
    child = trainer(50, "exit", ASAN_OPTIONS=asan)
    assert child.stdout.readline().strip() == "ready", child.stderr.read()
    with gpreempt.Context() as ctx:
        target = ctx.attach(child.pid)
        target.suspend()
        assert not all(q["completed"] == q["fetched"] for q in gpu_queues(child.pid))
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(timeout=30) == 0, child.stderr.read()


def run_example(name, *argv):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BINARY_DIR / "python"),
                                                      env.get("PYTHONPATH")]))
    env["LD_LIBRARY_PATH"] = str(BINARY_DIR / "lib")
    r = subprocess.run([sys.executable, str(SOURCE_DIR / "examples" / "python" / name)] + list(argv),
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


@needs_sim
def test_examples_print_their_queues_both_ways(tmp_path):
    qfile = tmp_path / "offline.queues"
    out = run_example("toy_offline.py", "--steps", "2", "--sleep", "0", "--queue-file", str(qfile))
    ids = [int(x) for x in qfile.read_text().split()]
    assert len(ids) == 1
    # gpreempt.print_my_queues() and the C ABI through ctypes: the same queue, twice.
    assert out.count("has 1 KFD queue(s)") == 2
    assert out.count("  queue %d " % ids[0]) == 2
    out = run_example("mm_loop.py", "--duration", "0.2")
    assert out.count("has 1 KFD queue(s)") == 2 and "torch.mm 4000x4000" in out
