"""Continuous batching as vLLM's V1 scheduler does it, as pure logic: no model, no clock.

Every step: the RUNNING requests first, in admission order, each given the tokens it lacks (one
for a decode, the next chunk of its prompt for a prefill) within the step's token budget
(max_num_batched_tokens: chunked prefill); then WAITING requests in arrival order while the batch
has fewer than max_num_seqs requests and budget remains, a prompt cut to what is left of the
budget. A request's KV blocks grow with the tokens it has computed (kv_blocks.BlockBudget):

* a waiting request whose blocks cannot be allocated stays waiting, and admission stops for this
  step (no request is skipped over, none is dropped);
* a running request that cannot grow preempts the most recently admitted running request
  (recompute: its blocks are freed, it goes back to the front of the waiting queue and later
  recomputes its prompt and the tokens it had generated), or itself when it is the last one.

A request's tokens are its prompt plus what it has generated; it samples one token in every step
that brings its computed tokens up to that count (the end of its prompt, then every decode).

The caller runs each Step's work (the model) and calls complete(step, now) with the clock at
the end of it: the sampled tokens are stamped with that time (TTFT, TPOT, end-to-end latency in
request.Request). docs/llm.md, "Scheduler".
"""
import collections

# One sequence of a step: its request, the tokens computed now, tokens already cached, and
# whether it samples a token after this step.
Work = collections.namedtuple("Work", "request n_new ctx samples")


class Step:
    def __init__(self, work, preempted):
        self.work = work
        self.preempted = preempted

    @property
    def tokens(self):
        return sum(w.n_new for w in self.work)

    def seqs(self):
        """[(n_new, ctx, samples)], as the models' step() takes them."""
        return [(w.n_new, w.ctx, w.samples) for w in self.work]


class Scheduler:
    def __init__(self, budget, max_num_seqs=256, max_num_batched_tokens=8192):
        if max_num_seqs < 1 or max_num_batched_tokens < 1:
            raise ValueError("max_num_seqs and max_num_batched_tokens must be positive")
        self.kv = budget
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.waiting = collections.deque()
        self.running = []
        self.finished = []
        self.preemptions = 0

    def add(self, request):
        """Queue a request; ValueError if it could never fit the KV cache alone."""
        need = self.kv.blocks_for(request.prompt_len + request.output_len - 1)
        if need > self.kv.blocks:
            raise ValueError("request %s needs %d KV blocks, the cache has %d"
                             % (request.id, need, self.kv.blocks))
        self.waiting.append(request)

    def idle(self):
        return not self.waiting and not self.running

    def _preempt(self, victim):
        self.running.remove(victim)
        self.kv.release(victim)
        victim.computed = 0
        victim.preemptions += 1
        self.preemptions += 1
        self.waiting.appendleft(victim)

    def schedule(self):
        """The next Step (possibly empty when nothing can run)."""
        budget = self.max_num_batched_tokens
        work = []
        preempted = []
        i = 0
        while i < len(self.running) and budget > 0:
            r = self.running[i]
            n = min(r.tokens - r.computed, budget)
            while not self.kv.grow(r, r.computed + n):
                victim = self.running[-1]
                self._preempt(victim)
                preempted.append(victim)
                if victim is r:
                    break
            if r not in self.running:
                break
            work.append(Work(r, n, r.computed, r.computed + n == r.tokens))
            budget -= n
            i += 1
        while (self.waiting and not preempted and budget > 0
               and len(self.running) < self.max_num_seqs):
            r = self.waiting[0]
            n = min(r.tokens - r.computed, budget)
            if not self.kv.grow(r, r.computed + n):
                break
            self.waiting.popleft()
            self.running.append(r)
            work.append(Work(r, n, r.computed, r.computed + n == r.tokens))
            budget -= n
        return Step(work, preempted)

    def complete(self, step, now):
        """Account for `step` having run, its results read at clock `now`; returns the requests
        that finished."""
        done = []
        for w in step.work:
            r = w.request
            r.computed += w.n_new
            if w.samples:
                r.emit(now)
                if r.generated == r.output_len:
                    done.append(r)
        for r in done:
            self.running.remove(r)
            self.kv.release(r)
            self.finished.append(r)
        return done
