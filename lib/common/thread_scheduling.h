// The scheduling class of one thread: SCHED_FIFO at a priority, or the normal policy.
//
// gpreemptd puts the two threads on the hint-to-SUSPEND path (its event loop, the core's control
// thread) in SCHED_FIFO when configured ([daemon] realtime_priority): on a node whose CPUs the
// workloads keep busy, a normal thread that becomes runnable waits for the host's CPU scheduler,
// which is the whole tail of the daemon's added latency (docs/gpreemptd.md). Such threads are given
// SCHED_RESET_ON_FORK, so whatever they start (the metrics server's threads, child processes)
// starts under the normal policy instead of inheriting the real-time one.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <chrono>

namespace gpreempt {

// `priority` 1..99: SCHED_FIFO at that priority (with SCHED_RESET_ON_FORK); 0: SCHED_OTHER, nice
// unchanged. Throws Error(errno) naming what was asked and, for EPERM, what grants it.
void set_thread_realtime_priority(pthread_t thread, int priority);

// The SCHED_FIFO priority of thread `tid` (a kernel thread id; 0: the caller), 0 when it runs
// under any other policy. Throws Error(errno) when the thread cannot be queried (ESRCH: gone).
int thread_realtime_priority(pid_t tid);

// Asks the kernel's fair scheduler (EEVDF, Linux >= 6.12) for a time slice of `slice` (clamped by
// the kernel to 0.1..100 ms; the default here is 1.4 ms) for the calling thread, keeping its
// policy and niceness. A thread with a shorter slice than the one running preempts it on wake-up
// (PREEMPT_SHORT) instead of waiting until that task's slice has run out, which only the tick
// (4 ms at HZ=250) notices: the difference between a simulated GPU that answers within
// microseconds and one that answers a tick late whenever a build keeps the CPUs busy. Needs no
// privilege. Threads and processes the caller creates afterwards inherit it. Returns false,
// changing nothing, under a policy other than SCHED_OTHER/SCHED_BATCH (errno says why); kernels
// without per-task slices accept and ignore it.
bool request_short_slice(std::chrono::nanoseconds slice);

}  // namespace gpreempt
