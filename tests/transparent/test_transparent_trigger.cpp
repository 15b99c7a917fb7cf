// TransparentTrigger on a real EventLoop, without the simulator: a forked child holds
// amd_queue_t-shaped blocks whose dispatch ids the test sets, and a temporary directory plays
// debugfs (mqds in the kernel's format, pointing at the child's blocks) and KFD sysfs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "discovery/gfx9_mqd_layout.h"
#include "seq_hex_dump.h"
#include "transparent/transparent_trigger.h"

namespace gpreemptd {

using gpreempt::Error;
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr int kQueues = 2;
uint64_t g_blocks[kQueues][32];  // same address in the forked child

// The child sets block[q] pointers on request: 3 u64 per command (queue, rptr, wptr), one ack byte.
class QueueOwner {
 public:
  QueueOwner() {
    int down[2], up[2];
    EXPECT_EQ(pipe(down), 0);
    EXPECT_EQ(pipe(up), 0);
    pid_ = fork();
    if (pid_ == 0) {
      uint64_t cmd[3];
      while (read(down[0], cmd, sizeof cmd) == sizeof cmd) {
        g_blocks[cmd[0]][discovery::gfx9::kAmdQueueReadDispatchIdOffset / 8] = cmd[1];
        g_blocks[cmd[0]][discovery::gfx9::kAmdQueueWriteDispatchIdOffset / 8] = cmd[2];
        char c = 1;
        (void)!write(up[1], &c, 1);
      }
      _exit(0);
    }
    close(down[0]);
    close(up[1]);
    to_ = down[1];
    from_ = up[0];
  }
  ~QueueOwner() { kill_now(); }
  int pid() const { return pid_; }
  void set(uint64_t q, uint64_t rptr, uint64_t wptr) {
    uint64_t cmd[3] = {q, rptr, wptr};
    ASSERT_EQ(write(to_, cmd, sizeof cmd), static_cast<ssize_t>(sizeof cmd));
    char c;
    ASSERT_EQ(read(from_, &c, 1), 1);
  }
  void kill_now() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    close(to_);
    close(from_);
    pid_ = -1;
  }

 private:
  int pid_ = -1, to_ = -1, from_ = -1;
};

class FakeKfd {
 public:
  FakeKfd() {
    char tmpl[] = "/tmp/gp-transparent-XXXXXX";
    dir_ = mkdtemp(tmpl);
    fs::create_directories(dir_ / "debugfs");
    fs::create_directories(dir_ / "sysfs" / "proc");
    publish(0, 0);
  }
  ~FakeKfd() { fs::remove_all(dir_); }
  discovery::QueuePointerSources sources() const {
    return {(dir_ / "debugfs").string(), (dir_ / "sysfs").string()};
  }
  // `pid` has queues 0..n-1, queue i at g_blocks[i].
  void publish(int pid, int n) {
    std::string mqds;
    if (n > 0) mqds = "Process " + std::to_string(pid) + " PASID " + std::to_string(pid) + ":\n";
    for (int i = n - 1; i >= 0; --i) {  // newest first
      namespace m = discovery::gfx9::mqd;
      std::vector<uint32_t> d(512, 0);
      d[0] = 0xC0310800;
      const auto base = reinterpret_cast<uint64_t>(g_blocks[i]);
      const uint64_t ring = 0x7f0000000000ull + (uint64_t(i) << 16);
      d[m::cp_hqd_pq_base_lo] = static_cast<uint32_t>(ring >> 8);
      d[m::cp_hqd_pq_base_hi] = static_cast<uint32_t>(ring >> 40);
      const uint64_t r = base + discovery::gfx9::kAmdQueueReadDispatchIdOffset;
      const uint64_t w = base + discovery::gfx9::kAmdQueueWriteDispatchIdOffset;
      d[m::cp_hqd_pq_rptr_report_addr_lo] = static_cast<uint32_t>(r);
      d[m::cp_hqd_pq_rptr_report_addr_hi] = static_cast<uint32_t>(r >> 32);
      d[m::cp_hqd_pq_wptr_poll_addr_lo] = static_cast<uint32_t>(w);
      d[m::cp_hqd_pq_wptr_poll_addr_hi] = static_cast<uint32_t>(w >> 32);
      mqds += "  Compute queue on device 1a2b\n" + gpreempt::testing::seq_hex_dump(d, "    ");
      const fs::path q =
          dir_ / "sysfs" / "proc" / std::to_string(pid) / "queues" / std::to_string(i);
      fs::create_directories(q);
      std::ofstream(q / "type") << "0";
      std::ofstream(q / "gpuid") << "6699";
      std::ofstream(q / "size") << "262144";
    }
    std::ofstream(dir_ / "debugfs" / "mqds") << mqds;
  }

 private:
  fs::path dir_;
};

// The trigger's samples read as gpreemptd's Runtime reads them: through an ActivityDetector.
struct Recorder {
  sched::ActivityDetector detector;
  std::vector<sched::Event> events;
  TransparentTrigger::Sink sink() {
    return {[this](sched::Time t, const sched::ProcessKey& key,
                   const std::vector<sched::QueueActivitySample>& samples) {
              for (auto& e : detector.update(t, key, samples)) events.push_back(e);
            },
            [this](sched::Time t, const sched::ProcessKey& key) {
              for (auto& e : detector.forget(t, key)) events.push_back(e);
            }};
  }
  template <class T>
  std::size_t count() const {
    std::size_t n = 0;
    for (const auto& e : events) n += std::holds_alternative<T>(e);
    return n;
  }
};

TransparentTrigger::Sink ignore() {
  return {[](sched::Time, const sched::ProcessKey&, const std::vector<sched::QueueActivitySample>&) {},
          [](sched::Time, const sched::ProcessKey&) {}};
}

// The loop runs once (EventLoop::run cannot be restarted): each step waits (checked every
// millisecond, 10 s at most) for its condition, then does its action. Returns "" when every step
// was reached, else the name of the step that timed out.
struct Step {
  std::string name;
  std::function<bool()> until;
  std::function<void()> then = [] {};
};
std::string run_steps(EventLoop& loop, std::vector<Step> steps) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  std::size_t next = 0;
  std::string failed;
  auto check = loop.add_timer([&] {
    while (next < steps.size() && steps[next].until()) steps[next++].then();
    if (next == steps.size()) {
      loop.stop();
    } else if (std::chrono::steady_clock::now() > deadline) {
      failed = steps[next].name;
      loop.stop();
    }
  });
  loop.arm_every(check, 1ms);
  loop.run();
  loop.unwatch(check);
  return failed;
}

TransparentTriggerConfig config(const FakeKfd& kfd, std::chrono::nanoseconds check) {
  TransparentTriggerConfig c;
  c.sources = kfd.sources();
  c.queue_check_interval = check;
  return c;
}

TEST(TransparentTrigger, QueuesCreatedAfterWatchAreFollowed) {
  QueueOwner owner;
  FakeKfd kfd;
  EventLoop loop;
  Recorder rec;
  TransparentTrigger trig(loop, config(kfd, 1ms),
                          rec.sink());
  const sched::ProcessKey key{owner.pid(), 0};
  trig.watch(key, owner.pid());
  EXPECT_EQ(trig.queue_count(key), 0u) << "no queue yet";

  kfd.publish(owner.pid(), 2);
  const auto failed = run_steps(
      loop,
      {{"the queue check re-reads mqds", [&] { return trig.queue_count(key) == 2; },
        [&] { owner.set(1, 0, 3); }},
       {"request started", [&] { return rec.count<sched::event::RequestStarted>() == 1; },
        [&] {
          EXPECT_EQ(rec.count<sched::event::RequestFinished>(), 0u);
          owner.set(1, 3, 3);
        }},
       {"request finished", [&] { return rec.count<sched::event::RequestFinished>() == 1; }}});
  ASSERT_EQ(failed, "");
  EXPECT_EQ(std::get<sched::event::RequestStarted>(rec.events.front()).source,
            sched::RequestSource::kTransparent);
}

TEST(TransparentTrigger, RefreshReadsNewQueuesAtOnce) {
  QueueOwner owner;
  FakeKfd kfd;
  EventLoop loop;
  TransparentTrigger trig(loop, config(kfd, std::chrono::hours(1)),
                          ignore());
  const sched::ProcessKey key{owner.pid(), 0};
  trig.watch(key, owner.pid());
  kfd.publish(owner.pid(), 1);
  EXPECT_EQ(trig.queue_count(key), 0u);
  trig.refresh(owner.pid());
  EXPECT_EQ(trig.queue_count(key), 1u);
  EXPECT_TRUE(trig.read_method_note(key).empty()) << "process_vm_readv works here";
}

TEST(TransparentTrigger, AnExitedProcessIsUnwatchedAndItsRequestFinished) {
  QueueOwner owner;
  FakeKfd kfd;
  EventLoop loop;
  Recorder rec;
  auto cfg = config(kfd, std::chrono::hours(1));
  std::vector<std::string> gone;
  cfg.on_unwatched = [&](const sched::ProcessKey&, const std::string& why) { gone.push_back(why); };
  TransparentTrigger trig(loop, cfg, rec.sink());
  kfd.publish(owner.pid(), 1);
  const sched::ProcessKey key{owner.pid(), 0};
  trig.watch(key, owner.pid());
  owner.set(0, 0, 1);
  const auto failed = run_steps(
      loop, {{"request started", [&] { return rec.count<sched::event::RequestStarted>() == 1; },
              [&] { owner.kill_now(); }},
             {"ESRCH unwatches", [&] { return !gone.empty(); }}});
  ASSERT_EQ(failed, "");
  EXPECT_NE(gone[0].find("process gone"), std::string::npos) << gone[0];
  EXPECT_FALSE(trig.watching(key));
  EXPECT_EQ(rec.count<sched::event::RequestFinished>(), 1u) << "the open request is closed";
}

// A process that exited while its parent has not reaped it yet (a zombie) still answers
// kill(pid, 0) and keeps /proc/PID, but has no queues left to read: it is gone all the same.
TEST(TransparentTrigger, AnExitedProcessNotYetReapedIsUnwatched) {
  FakeKfd kfd;
  EventLoop loop;
  auto cfg = config(kfd, 1ms);
  std::vector<std::string> gone;
  cfg.on_unwatched = [&](const sched::ProcessKey&, const std::string& why) { gone.push_back(why); };
  TransparentTrigger trig(loop, cfg, ignore());
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(go[1]);
    char c;
    (void)!read(go[0], &c, 1);
    _exit(0);
  }
  close(go[0]);
  const sched::ProcessKey key{child, 0};
  trig.watch(key, child);  // no queues published: only the process itself tells it is gone
  close(go[1]);            // the child exits; nobody reaps it until the end of the test
  const auto failed = run_steps(loop, {{"the zombie unwatched", [&] { return !gone.empty(); }}});
  EXPECT_EQ(failed, "");
  ASSERT_FALSE(gone.empty());
  EXPECT_NE(gone[0].find("process gone"), std::string::npos) << gone[0];
  EXPECT_FALSE(trig.watching(key));
  waitpid(child, nullptr, 0);
}

TEST(TransparentTrigger, APidOfAnotherProcessIsRefused) {
  QueueOwner owner;
  FakeKfd kfd;
  EventLoop loop;
  TransparentTrigger trig(loop, config(kfd, 1ms), ignore());
  try {
    trig.watch(sched::ProcessKey{owner.pid(), 1}, owner.pid());  // started at tick 1: not this one
    FAIL() << "expected ESRCH";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ESRCH);
    EXPECT_NE(std::string(e.what()).find("another process"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(trig.watching(sched::ProcessKey{owner.pid(), 1}));
}

TEST(TransparentTrigger, PollIntervalOutsideTheRangeIsRefused) {
  FakeKfd kfd;
  EventLoop loop;
  auto cfg = config(kfd, 1ms);
  cfg.poll_interval = 50us;
  EXPECT_THROW(TransparentTrigger(loop, cfg, ignore()),
               std::invalid_argument);
  cfg.poll_interval = 600us;
  EXPECT_THROW(TransparentTrigger(loop, cfg, ignore()),
               std::invalid_argument);
}

TEST(TransparentTrigger, ASinkWithoutBothFunctionsIsRefused) {
  FakeKfd kfd;
  EventLoop loop;
  auto sink = ignore();
  sink.unwatched = nullptr;
  EXPECT_THROW(TransparentTrigger(loop, config(kfd, 1ms), sink), std::invalid_argument);
}

}  // namespace
}  // namespace gpreemptd
