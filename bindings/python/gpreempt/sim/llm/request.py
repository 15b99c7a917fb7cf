"""One serving request and its timestamps: TTFT (arrival to first token), TPOT (mean time between
its output tokens: (last token − first token) / (output tokens − 1), as vLLM's benchmark and
DistServe define it) and end-to-end latency (arrival to last token). Times in seconds."""


class Request:
    def __init__(self, id, arrival, prompt_len, output_len):
        if prompt_len < 1 or output_len < 1:
            raise ValueError("request %s: prompt and output need at least one token (got %r, %r)"
                             % (id, prompt_len, output_len))
        self.id = id
        self.arrival = arrival
        self.prompt_len = prompt_len
        self.output_len = output_len
        self.computed = 0
        self.generated = 0
        self.preemptions = 0
        self.first_token = None
        self.last_token = None

    @property
    def tokens(self):
        """Tokens the model must have computed before it samples the next one."""
        return self.prompt_len + self.generated

    @property
    def done(self):
        return self.generated == self.output_len

    def emit(self, now):
        if self.first_token is None:
            self.first_token = now
        self.last_token = now
        self.generated += 1

    @property
    def ttft(self):
        return None if self.first_token is None else self.first_token - self.arrival

    @property
    def tpot(self):
        if not self.done or self.output_len < 2:
            return None
        return (self.last_token - self.first_token) / (self.output_len - 1)

    @property
    def e2e(self):
        return None if not self.done else self.last_token - self.arrival

    def meets(self, ttft_slo, tpot_slo):
        """Both objectives met (a one-token request has no TPOT: only its TTFT counts)."""
        if not self.done or self.ttft > ttft_slo:
            return False
        return self.tpot is None or self.tpot <= tpot_slo

    def as_dict(self):
        ms = lambda s: None if s is None else round(s * 1e3, 3)  # noqa: E731
        return {"id": self.id, "prompt_tokens": self.prompt_len, "output_tokens": self.output_len,
                "arrival_s": round(self.arrival, 6), "ttft_ms": ms(self.ttft),
                "tpot_ms": ms(self.tpot), "e2e_ms": ms(self.e2e), "preemptions": self.preemptions}
