"""The serving loop: requests arrive on the clock, the scheduler forms each step, the executor
runs it, the sampled tokens are stamped with the clock when the step's results are read.

Pure logic over injected parts, so that it runs on a fake clock in tests: clock() → seconds,
sleep(seconds), execute(step) runs a scheduler.Step's work (the model on the simulated GPU in
gpreempt.sim.serve). on_arrival/on_finish(request) are called when a request enters and leaves
the server (gpreempt.online_request() brackets, the progress line); on_token(request) after each
step for each request that sampled a token in it, before on_finish (its first token, its decode
progress: what gpreemptd measures TTFT and TPOT from).
"""


def serve(scheduler, requests, execute, clock, sleep, on_arrival=None, on_finish=None,
          on_step=None, on_token=None):
    """Run every request to completion; returns the requests in arrival order. A request's
    arrival is relative to the clock when serve() starts; so are its timestamps."""
    pending = sorted(requests, key=lambda r: r.arrival)
    start = clock()
    now = 0.0
    i = 0
    while i < len(pending) or not scheduler.idle():
        while i < len(pending) and pending[i].arrival <= now:
            scheduler.add(pending[i])
            if on_arrival:
                on_arrival(pending[i])
            i += 1
        if scheduler.idle():
            sleep(pending[i].arrival - now)
            now = clock() - start
            continue
        step = scheduler.schedule()
        if not step.work:
            raise RuntimeError("the scheduler formed an empty step with %d requests waiting and "
                               "%d running" % (len(scheduler.waiting), len(scheduler.running)))
        execute(step)
        now = clock() - start
        finished = scheduler.complete(step, now)
        if on_token:
            for w in step.work:
                if w.samples:
                    on_token(w.request)
        for r in finished:
            if on_finish:
                on_finish(r)
        if on_step:
            on_step(step, now)
    return pending
