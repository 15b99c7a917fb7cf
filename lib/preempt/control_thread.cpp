#include "preempt/control_thread.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>

#include "common/error.h"
#include "common/thread_scheduling.h"

namespace gpreempt::preempt {

namespace {
uint64_t ns_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return b > a ? static_cast<uint64_t>(
                     std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count())
               : 0;
}
}  // namespace

ControlThread::ControlThread(ControlLoop& loop) : loop_(loop), owner_(::getpid()) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    int e = errno;
    throw Error(e, "cannot create the control thread's eventfd: " + errno_text(e));
  }
  thread_ = std::thread([this] { main(); });
}

ControlThread::~ControlThread() {
  if (::getpid() != owner_) {
    // A forked child has no copy of the thread: joining would wait forever.
    thread_.detach();
    ::close(wake_fd_);
    return;
  }
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
  ::close(wake_fd_);
}

void ControlThread::wake() {
  uint64_t one = 1;
  ssize_t r = ::write(wake_fd_, &one, sizeof one);
  (void)r;  // EAGAIN means the counter is already non-zero: the loop wakes anyway
}

void ControlThread::set_realtime_priority(int priority) {
  set_thread_realtime_priority(thread_.native_handle(), priority);
}

void ControlThread::count_call(uint64_t hop_ns) {
  ++stats_.calls;
  stats_.last_hop_ns = hop_ns;
  stats_.total_hop_ns += hop_ns;
  if (hop_ns > stats_.max_hop_ns) stats_.max_hop_ns = hop_ns;
}

HopStats ControlThread::hop_stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void ControlThread::run(std::function<void()> fn) {
  if (::getpid() != owner_)
    throw Error(ECHILD, "this gpreempt context belongs to process " + std::to_string(owner_) +
                            ", of which this process is a fork; its control thread does not exist "
                            "here: open a new context in this process");
  Job job;
  job.fn = std::move(fn);
  job.submitted = std::chrono::steady_clock::now();
  {
    std::unique_lock lock(mu_);
    if (stopping_) throw Error(ECANCELED, "the gpreempt context is closing");
    queue_.push_back(&job);
  }
  wake();
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return job.done; });
  stats_.last_return_ns = ns_between(job.finished, std::chrono::steady_clock::now());
  lock.unlock();
  if (job.error) std::rethrow_exception(job.error);
}

void ControlThread::post(std::function<void()> fn) {
  if (::getpid() != owner_)
    throw Error(ECHILD, "this gpreempt context belongs to process " + std::to_string(owner_) +
                            ", of which this process is a fork; its control thread does not exist here");
  auto job = std::make_unique<Job>();
  job->fn = std::move(fn);
  job->detached = true;
  job->submitted = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    if (stopping_) throw Error(ECANCELED, "the gpreempt context is closing");
    queue_.push_back(job.release());
  }
  wake();
}

void ControlThread::report_loop_error(const char* what) noexcept {
  try {
    loop_.on_loop_error(what);
  } catch (...) {
    // Nothing left to report to; keep the loop alive.
  }
}

void ControlThread::main() {
  // Termination signals are handled by a handler that waits for this thread to resume the
  // targets; it must therefore never run on this thread.
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &block, nullptr);
  // Named, so `top -H`, /proc/PID/task/*/comm and a debugger tell it from the host's threads.
  pthread_setname_np(pthread_self(), "gpreempt-ctl");

  // Every queued call, in order. A posted action runs before the rest of the turn (events,
  // tracee service, watchdog): it is what the caller is waiting for (gpreemptd's hint-to-SUSPEND
  // path), and those checks are only due every tick anyway.
  auto run_queued = [&] {
    for (;;) {
      Job* job = nullptr;
      {
        std::lock_guard lock(mu_);
        if (queue_.empty()) break;
        job = queue_.front();
        queue_.pop_front();
      }
      const auto start = std::chrono::steady_clock::now();
      try {
        job->fn();
      } catch (...) {
        job->error = std::current_exception();
      }
      const uint64_t hop = ns_between(job->submitted, start);
      if (job->detached) {
        if (job->error) {
          try {
            std::rethrow_exception(job->error);
          } catch (const std::exception& e) {
            report_loop_error(e.what());
          } catch (...) {
            report_loop_error("unknown exception in a posted call");
          }
        }
        std::lock_guard lock(mu_);
        count_call(hop);
        delete job;
        continue;
      }
      {
        std::lock_guard lock(mu_);
        job->finished = std::chrono::steady_clock::now();
        job->done = true;
        count_call(hop);
      }
      cv_.notify_all();
    }
  };
  for (;;) {
    run_queued();
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
    }
    std::vector<int> fds = loop_.watched_fds();
    std::vector<pollfd> pfds;
    pfds.push_back({wake_fd_, POLLIN, 0});
    for (int fd : fds) pfds.push_back({fd, POLLIN, 0});
    int n = ::poll(pfds.data(), pfds.size(), static_cast<int>(loop_.tick_interval().count()));
    try {
      if (n > 0) {
        if (pfds[0].revents) {
          uint64_t v;
          ssize_t r = ::read(wake_fd_, &v, sizeof v);
          (void)r;
          run_queued();
        }
        for (std::size_t i = 1; i < pfds.size(); ++i)
          if (pfds[i].revents) loop_.on_readable(pfds[i].fd);
      }
      loop_.tick();
    } catch (const std::exception& e) {
      report_loop_error(e.what());
    } catch (...) {
      report_loop_error("unknown exception");
    }
  }
  // Fail whatever is still queued.
  std::lock_guard lock(mu_);
  for (Job* job : queue_) {
    if (job->detached) {
      delete job;  // posted and never run: the context is closing
      continue;
    }
    job->error = std::make_exception_ptr(Error(ECANCELED, "the gpreempt context is closing"));
    job->done = true;
  }
  queue_.clear();
  cv_.notify_all();
}

}  // namespace gpreempt::preempt
