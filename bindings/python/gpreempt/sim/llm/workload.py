"""The requests of a serving run: arrival times and prompt/output lengths (docs/llm.md,
"Workload").

Arrivals follow vLLM's benchmark (benchmarks/serve.py, get_request): gaps between requests are
Gamma(shape = 1/cv², scale = cv² / rate), so cv = 1 is a Poisson process and a larger cv is
burstier (vLLM's --burstiness is 1/cv²); rate = inf sends every request at t = 0.

Lengths ("sharegpt"): a synthetic stand-in for vLLM's ShareGPT sampler, which keeps a pair only if
prompt ≥ 4, output ≥ 4, prompt ≤ 1024 and prompt + output ≤ 2048 tokens. Prompt and output lengths
are independent lognormals, rounded, and resampled until they pass that same filter. The shapes
(σ) are those of a ShareGPT chat trace after vLLM's filter (Sarathi-Serve's
sharegpt_8k_filtered_stats_llama2_tokenizer.csv: σ 1.397 prompt, 1.017 output; correlation of the
logs 0.06, hence independent); the medians (μ) are chosen so that the filtered means are those
vLLM reports for its own sampler with the Llama-3 tokenizer (vLLM PR #18566: 229.7 prompt and
203.1 output tokens per request over 1,000 requests). "fixed": every request has --input-len and
--output-len tokens (vLLM's "random" dataset with range ratio 0).
"""
import math
import random

SHAREGPT = {"prompt_mu": 5.146, "prompt_sigma": 1.397, "output_mu": 4.849, "output_sigma": 1.017,
            "max_prompt": 1024, "max_total": 2048, "min_len": 4}


def sharegpt_lengths(rng, n):
    """n (prompt, output) pairs from the synthetic ShareGPT distribution."""
    d = SHAREGPT
    out = []
    while len(out) < n:
        p = round(math.exp(rng.gauss(d["prompt_mu"], d["prompt_sigma"])))
        o = round(math.exp(rng.gauss(d["output_mu"], d["output_sigma"])))
        if min(p, o) >= d["min_len"] and p <= d["max_prompt"] and p + o <= d["max_total"]:
            out.append((p, o))
    return out


def arrivals(rng, n, rate, cv=1.0):
    """n arrival times (s, from 0) at `rate` requests/s with gaps of coefficient of variation cv."""
    if rate <= 0 or cv <= 0:
        raise ValueError("the request rate and the arrivals' cv must be positive")
    if math.isinf(rate):
        return [0.0] * n
    shape = 1.0 / (cv * cv)
    t = 0.0
    times = []
    for _ in range(n):
        t += rng.gammavariate(shape, 1.0 / (rate * shape))
        times.append(t)
    return times


def requests(n, rate, cv=1.0, dataset="sharegpt", input_len=None, output_len=None, seed=0):
    """[(arrival s, prompt tokens, output tokens)] of a run."""
    from .request import Request

    rng = random.Random(seed)
    if dataset == "sharegpt":
        lengths = sharegpt_lengths(rng, n)
    elif dataset == "fixed":
        lengths = [(input_len, output_len)] * n
    else:
        raise ValueError("unknown dataset %r (sharegpt, fixed)" % dataset)
    return [Request(i, t, p, o) for i, (t, (p, o)) in enumerate(zip(arrivals(rng, n, rate, cv),
                                                                      lengths))]
