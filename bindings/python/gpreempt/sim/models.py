"""The model workloads of the user's scenarios, by name, for the demo's online and offline sides
(gpreempt.sim.workload, `gpreempt demo --online resnet18 --offline resnet50-train`).

Each model is built with random weights (nothing is downloaded) and reduced to one callable,
``step()``: one online request (inference, its result read back on the host) or one offline
iteration (a training step: forward, backward and the optimizer, or one GEMM). Steps run inside
gpreempt.sim.torch_mode, so every ATen operator becomes kernels on the simulated GPU.

The names and sides are mirrored by the demo's table (tools/gpreempt/demo/demo_workloads.cpp);
tests/python/test_sim_workload.py checks that the two agree.
"""
import collections

Model = collections.namedtuple(
    "Model", "name side description batch rate_hz arrival compute sleep_s build")
# side: "online" (one step = one request) or "offline" (one step = one iteration).
# rate_hz/arrival: the online request stream's defaults; sleep_s: the offline loop's pause per step.


def _classifier(name, batch):
    import torch
    import torchvision

    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(batch, 3, 224, 224)

    def step():
        with torch.no_grad():
            model(x)[0, 0].item()  # the answer goes back to the host: waits for the GPU
    return step


def _linear512(batch):
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512)).eval()
    x = torch.randn(batch, 512)

    def step():
        with torch.no_grad():
            model(x)[0, 0].item()
    return step


def _train(model, x, y, loss_fn, optimizer="sgd"):
    import torch

    opt = (torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if optimizer == "sgd"
           else torch.optim.Adam(model.parameters(), lr=1e-3))

    def step():
        loss_fn(model(x), y).backward()
        opt.step()
        opt.zero_grad()
    return step


def _torchvision_train(name, batch):
    import torch
    import torchvision

    return _train(getattr(torchvision.models, name)(weights=None),
                  torch.randn(batch, 3, 224, 224), torch.randint(0, 1000, (batch,)),
                  torch.nn.functional.cross_entropy)


def _transformer_train(batch):
    import torch

    # BERT-base-sized encoder (examples/python/train_offline.py): 12 layers, d_model 768,
    # 12 heads, sequence 128, a 1000-way token classifier, Adam.
    layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072)
    model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, num_layers=12),
                                torch.nn.Flatten(0, 1), torch.nn.Linear(768, 1000))
    return _train(model, torch.randn(128, batch, 768), torch.randint(0, 1000, (128 * batch,)),
                  torch.nn.functional.cross_entropy, optimizer="adam")


def _linear1024_train(batch):
    import torch

    # The user's SimpleModel (examples/python/toy_offline.py).
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 1024))
    return _train(model, torch.randn(batch, 1024), torch.randn(batch, 1024),
                  torch.nn.functional.mse_loss)


def _mm(size):
    import torch

    a = torch.randn(size, size, device="meta")
    b = torch.randn(size, size, device="meta")

    def step():
        torch.mm(a, b)
    return step


def _mm_request(size):
    import torch
    from .. import sim

    a = torch.randn(size, size, device="meta")
    b = torch.randn(size, size, device="meta")

    def step():
        torch.mm(a, b)
        sim.synchronize()  # the answer is needed: the request ends when the GEMM has
    return step


def _mm_loop(size, count):
    import torch

    a = torch.randn(size, size, device="meta")
    b = torch.randn(size, size, device="meta")

    def step():
        for _ in range(count):
            torch.mm(a, b)
    return step


MODELS = collections.OrderedDict((m.name, m) for m in [
    Model("resnet18", "online", "torchvision ResNet-18 inference, batch 1, 20 req/s (Poisson)",
          1, 20.0, "poisson", False, 0.0, lambda b: _classifier("resnet18", b)),
    Model("resnet50", "online", "torchvision ResNet-50 inference, batch 1, 20 req/s (Poisson)",
          1, 20.0, "poisson", False, 0.0, lambda b: _classifier("resnet50", b)),
    Model("linear512", "online",
          "the toy service: Linear 512-ReLU-Linear 512, batch 32, a request every 500 ms",
          32, 2.0, "fixed", True, 0.0, _linear512),
    Model("mm4096", "online",
          "the user's MI308X matmul case, high priority: one torch.mm of 4096x4096 fp32 per request, "
          "10 req/s (fixed)",
          None, 10.0, "fixed", False, 0.0, lambda b: _mm_request(4096)),
    Model("resnet50-train", "offline", "torchvision ResNet-50 training, batch 64, SGD",
          64, None, None, False, 0.0, lambda b: _torchvision_train("resnet50", b)),
    Model("resnet18-train", "offline", "torchvision ResNet-18 training, batch 64, SGD",
          64, None, None, False, 0.0, lambda b: _torchvision_train("resnet18", b)),
    Model("transformer-train", "offline",
          "12-layer d=768 transformer encoder training, sequence 128, batch 64, Adam",
          64, None, None, False, 0.0, _transformer_train),
    Model("linear1024-train", "offline",
          "the toy job: SimpleModel (Linear 1024-2048-2048-1024) training, batch 64, "
          "0.1 s sleep per step",
          64, None, None, False, 0.1, _linear1024_train),
    Model("mm4000", "offline", "torch.mm of 4000x4000 fp32 matrices, one per iteration",
          None, None, None, False, 0.0, lambda b: _mm(4000)),
    Model("mm8192x5", "offline",
          "the user's MI308X matmul case, low priority: five torch.mm of 8192x8192 fp32 per iteration",
          None, None, None, False, 0.0, lambda b: _mm_loop(8192, 5)),
    Model("mm2048", "offline", "torch.mm of 2048x2048 fp32 matrices, one per iteration",
          None, None, None, False, 0.0, lambda b: _mm(2048)),
])


def names(side=None):
    return [m.name for m in MODELS.values() if side is None or m.side == side]


def find(name, side):
    """The Model called `name` for `side`; ValueError listing the valid names otherwise."""
    m = MODELS.get(name)
    if m is None or m.side != side:
        raise ValueError("unknown %s model %r (known: %s)" % (side, name, ", ".join(names(side))))
    return m
