"""Tensor parallelism as vLLM serves DeepSeek-V3 on one 8-GPU node (TP=8, no expert parallel): the
per-GPU shard of a DeepSeek config, and where the shards exchange results (docs/llm.md, "Tensor
parallel across a node").

vLLM's DeepSeek-V2/V3 layers (vllm/model_executor/models/deepseek_v2.py) split across the tensor-
parallel group like this:
* MLA: the query up-projection, the per-head absorptions W_UK / W_UV and the output projection are
  split by heads (column- and row-parallel); the low-rank down-projections (q_a, kv_a) and the
  latent KV cache are replicated, so every GPU holds the whole cache;
* the MoE (FusedMoE without --enable-expert-parallel) splits every routed expert's intermediate
  width over the group, and so do the shared experts and the dense layers' MLP; the router is
  replicated;
* the embedding and the LM head are split by vocabulary.
A row-parallel output leaves each GPU a partial sum of the hidden state: the shards all-reduce it
after attention and after the MLP or MoE of every layer, and after the embedding lookup; the
LM head's logits are gathered.

Only the positions and sizes of those collectives are recorded here (marks on the recording
stream, executor._Recorder); what they cost is the DES's link model (eval/des/llm/step_grid.h).
Every shard launches the same kernels: routing is modelled as balanced (deepseek.py), which is
also why a split of experts' widths and a split of whole experts (expert parallel) read the same
bytes per GPU.
"""
ELEMENT_BYTES = 2  # bf16 activations


def shard(c, tp):
    """The per-GPU config of DeepSeekConfig `c` over `tp` GPUs (what one shard holds and runs)."""
    if tp == 1:
        return c
    for field in ("heads", "dense_ffn", "moe_ffn", "vocab"):
        if getattr(c, field) % tp:
            raise ValueError("%s: %s = %d does not split over %d GPUs" % (c.name, field, getattr(c, field), tp))
    return c._replace(name="%s-tp%d" % (c.name, tp), heads=c.heads // tp, dense_ffn=c.dense_ffn // tp,
                      moe_ffn=c.moe_ffn // tp, vocab=c.vocab // tp)


def _mark(kind, bus_bytes):
    from ... import sim

    q = sim.current_stream().queue
    mark = getattr(q, "collective", None)
    if mark is not None:  # only a recording stream keeps marks; a live queue has nothing to mark
        mark(kind, bus_bytes)


def all_reduce(x, tp):
    """Marks the all-reduce of `x` (each GPU's partial sum) over `tp` GPUs; returns `x`. Its size is
    stated as a ring all-reduce's bus bytes, what each GPU sends: 2(tp-1)/tp of the tensor (the
    busbw convention of rccl-tests)."""
    if tp > 1:
        _mark("all_reduce", 2.0 * (tp - 1) / tp * x.numel() * ELEMENT_BYTES)
    return x


def all_gather(x, tp):
    """Marks the gather of `x` (this GPU's slice) from `tp` GPUs; returns `x`. Bus bytes: (tp-1)/tp
    of the gathered tensor, that is (tp-1) slices."""
    if tp > 1:
        _mark("all_gather", float(tp - 1) * x.numel() * ELEMENT_BYTES)
    return x
