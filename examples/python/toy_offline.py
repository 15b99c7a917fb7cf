"""The user's offline toy job: SimpleModel (Linear 1024) trained in a loop with 0.1 s sleeps, on the
simulated GPU. Writes its KFD queue ids to a file so that a controller can suspend them.

    kfdsim run -- python3 examples/python/toy_offline.py --queue-file /tmp/offline.queues
"""
import argparse
import time

import torch

import gpreempt.sim as sim
from common import show_my_queues


class SimpleModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(1024, 2048)
        self.fc2 = torch.nn.Linear(2048, 2048)
        self.fc3 = torch.nn.Linear(2048, 1024)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=50, help="training steps (default 50)")
    ap.add_argument("--sleep", type=float, default=0.1, help="seconds between steps (default 0.1)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--queue-file", help="write this process's queue ids here, one per line")
    ap.add_argument("--compute", action="store_true",
                    help="also compute on the CPU (real losses; Debian's CPU torch needs ~3 s a step)")
    a = ap.parse_args()
    model = SimpleModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, target = torch.randn(a.batch, 1024), torch.randn(a.batch, 1024)
    start = time.monotonic()
    with sim.torch_mode(compute=a.compute):
        for step in range(a.steps):
            loss = torch.nn.functional.mse_loss(model(x), target)
            loss.backward()
            opt.step()
            opt.zero_grad()
            if step == 0:
                show_my_queues()
                if a.queue_file:
                    with open(a.queue_file, "w") as f:
                        f.write("".join("%d\n" % q for q in sim.queue_ids()))
            if a.compute and step % 10 == 0:
                print("step %d loss %.4f" % (step, loss.item()), flush=True)
            time.sleep(a.sleep)
        sim.synchronize()
    el = time.monotonic() - start
    print("offline: %d steps in %.2f s, %.2f it/s" % (a.steps, el, a.steps / el))


if __name__ == "__main__":
    main()
