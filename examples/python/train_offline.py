"""Case A/B offline side: ResNet-50 training (batch 64 or 256) or a transformer encoder training, on
the simulated GPU, as fast as it goes; iterations per second.

    kfdsim run -- python3 examples/python/train_offline.py --model resnet50 --batch 64 --duration 20
    kfdsim run -- python3 examples/python/train_offline.py --model transformer --duration 20
"""
import argparse
import time

import torch
import torchvision

import gpreempt.sim as sim
from common import show_my_queues


def build(name, batch):
    if name == "resnet50":
        return (torchvision.models.resnet50(weights=None), torch.randn(batch, 3, 224, 224),
                torch.randint(0, 1000, (batch,)))
    # BERT-base-sized encoder: 12 layers, d_model 768, 12 heads, sequence 128.
    layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072)
    model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, num_layers=12),
                                torch.nn.Flatten(0, 1), torch.nn.Linear(768, 1000))
    return model, torch.randn(128, batch, 768), torch.randint(0, 1000, (128 * batch,))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["resnet50", "transformer"], default="resnet50")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--duration", type=float, default=20.0, help="seconds (default 20)")
    ap.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    ap.add_argument("--trace", help="write the kernel trace (JSON Lines) here")
    a = ap.parse_args()
    model, x, y = build(a.model, a.batch)
    opt = (torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if a.optimizer == "sgd"
           else torch.optim.Adam(model.parameters(), lr=1e-3))
    steps = 0
    with sim.torch_mode(trace=a.trace):
        start = time.monotonic()
        while time.monotonic() - start < a.duration:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            steps += 1
            if steps == 1:
                show_my_queues()
            sim.current_stream().synchronize()  # one step in flight, as a training loop that logs
        el = time.monotonic() - start
    print("offline %s batch %d: %d steps in %.2f s, %.3f it/s"
          % (a.model, a.batch, steps, el, steps / el))


if __name__ == "__main__":
    main()
