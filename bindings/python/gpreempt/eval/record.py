"""Record one kernel trace of a real PyTorch model on the simulated GPU (torch_mode, docs/torch.md).

Run under the simulator, alone on the machine, so that every kernel's start/end is its duration
without co-runners:

    kfdsim run --profile mi308x --hardware gpu -- /usr/bin/python3 -m gpreempt.eval.record NAME OUT.jsonl

NAME: resnet18-b1-infer (one batch-1 inference request), resnet50-b256-train (one SGD step of
batch 256) or llama-1b-finetune (one full fine-tuning step of the Llama-3.2-1B-shaped model,
AdamW, 4 sequences of 1024 tokens: the offline side of `gpreempt demo --offline llm-finetune`),
after one untraced warm-up step. Weights are random (nothing is downloaded);
compute=False, so only shapes are computed. The trace keeps the host's gaps (submit_us), which
gpreempt-des replays as the host time between dependent kernels.
"""
import argparse
import os
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m gpreempt.eval.record", description=__doc__.splitlines()[0])
    ap.add_argument("name", choices=["resnet18-b1-infer", "resnet50-b256-train", "llama-1b-finetune"])
    ap.add_argument("out", help="trace file to write (JSON Lines)")
    a = ap.parse_args(argv)

    import torch

    import gpreempt.sim as sim

    if a.name == "llama-1b-finetune":
        from gpreempt.sim.llm import llama, training

        model = training.CausalLM(llama.LLAMA_1B, "full")
        opt = training.optimizer(model)
        tokens, labels = training.batch(llama.LLAMA_1B, 4, 1024)

        def step():
            training.step(model, opt, tokens, labels)
    elif a.name == "resnet18-b1-infer":
        import torchvision

        model = torchvision.models.resnet18(weights=None).eval()
        x = torch.randn(1, 3, 224, 224)

        def step():
            with torch.no_grad():
                model(x)
    else:
        import torchvision

        model = torchvision.models.resnet50(weights=None)
        x, y = torch.randn(256, 3, 224, 224), torch.randint(0, 1000, (256,))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step():
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()

    # The first step fills torch_mode's price and shape caches (one-time host cost a serving or
    # training loop does not pay per step): it runs outside the trace that is kept.
    with sim.torch_mode(trace=os.devnull):
        step()
        sim.synchronize()
    with sim.torch_mode(trace=a.out):
        step()
        sim.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
