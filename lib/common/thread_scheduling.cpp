#include "common/thread_scheduling.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include <string>

#include "common/error.h"

namespace gpreempt {

void set_thread_realtime_priority(pthread_t thread, int priority) {
  const int max = sched_get_priority_max(SCHED_FIFO);
  if (priority < 0 || priority > max)
    throw Error(EINVAL, "real-time priority " + std::to_string(priority) + " is not 0 (off) or a " +
                            "SCHED_FIFO priority 1.." + std::to_string(max));
  sched_param param{};
  param.sched_priority = priority;
  const int policy = priority > 0 ? (SCHED_FIFO | SCHED_RESET_ON_FORK) : SCHED_OTHER;
  // pthread_setschedparam returns the error rather than setting errno.
  if (const int e = pthread_setschedparam(thread, policy, &param); e != 0) {
    std::string what = priority > 0 ? "cannot run a thread under SCHED_FIFO at priority " +
                                          std::to_string(priority)
                                    : std::string("cannot return a thread to SCHED_OTHER");
    what += ": " + errno_text(e);
    if (e == EPERM)
      what += priority > 0 ? " (it needs CAP_SYS_NICE, or RLIMIT_RTPRIO of at least " +
                                 std::to_string(priority) +
                                 "; in a cgroup with real-time group scheduling, a cpu.rt_runtime_us "
                                 "budget)"
                           : " (leaving SCHED_FIFO needs CAP_SYS_NICE)";
    throw Error(e, what);
  }
}

int thread_realtime_priority(pid_t tid) {
  const int policy = sched_getscheduler(tid);
  if (policy < 0) {
    const int e = errno;
    throw Error(e, "cannot read the scheduling policy of thread " + std::to_string(tid) + ": " +
                       errno_text(e));
  }
  if ((policy & ~SCHED_RESET_ON_FORK) != SCHED_FIFO) return 0;
  sched_param param{};
  if (sched_getparam(tid, &param) < 0) {
    const int e = errno;
    throw Error(e, "cannot read the priority of thread " + std::to_string(tid) + ": " +
                       errno_text(e));
  }
  return param.sched_priority;
}

namespace {
// The uapi's struct sched_attr (linux/sched/types.h), which glibc does not declare.
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
};
}  // namespace

bool request_short_slice(std::chrono::nanoseconds slice) {
  const int policy = sched_getscheduler(0);
  if (policy != SCHED_OTHER && policy != SCHED_BATCH) {
    errno = EINVAL;
    return false;
  }
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, 0);  // this thread's (tid 0 = the caller)
  if (errno != 0) return false;
  SchedAttr a{};
  a.size = sizeof a;
  a.sched_policy = static_cast<uint32_t>(policy);
  a.sched_nice = nice;
  a.sched_runtime = static_cast<uint64_t>(slice.count());
  // Kernels before per-task slices ignore sched_runtime for the fair class: nothing changes then.
  return syscall(SYS_sched_setattr, 0, &a, 0u) == 0;
}

}  // namespace gpreempt
