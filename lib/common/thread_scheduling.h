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

namespace gpreempt {

// `priority` 1..99: SCHED_FIFO at that priority (with SCHED_RESET_ON_FORK); 0: SCHED_OTHER, nice
// unchanged. Throws Error(errno) naming what was asked and, for EPERM, what grants it.
void set_thread_realtime_priority(pthread_t thread, int priority);

// The SCHED_FIFO priority of thread `tid` (a kernel thread id; 0: the caller), 0 when it runs
// under any other policy. Throws Error(errno) when the thread cannot be queried (ESRCH: gone).
int thread_realtime_priority(pid_t tid);

}  // namespace gpreempt
