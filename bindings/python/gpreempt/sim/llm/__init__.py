"""LLM serving on the simulated GPU.

Models with random weights: llama.py (Llama-style: RMSNorm, rotary, grouped-query attention,
SwiGLU) and deepseek.py (multi-head latent attention, shared + top-k routed experts), on what
step_model.py gives both; attention.py (attention over a paged KV cache, written out);
executor.py (a step's kernels on the simulated GPU, replayed per step shape as a HIP graph).
Serving as pure logic: request.py (one request's timestamps), kv_blocks.py (the KV block budget),
scheduler.py (vLLM-style continuous batching with chunked prefill), server.py (the loop over an
injected clock and executor), workload.py (arrivals and ShareGPT-like lengths).
Training: training.py (the Llama-style model as a fine-tuning step runs it, full or LoRA) and
lora.py (the adapters).
`python3 -m gpreempt.sim.serve` and `python3 -m gpreempt.sim.finetune` run them; docs/llm.md
describes them.
"""
