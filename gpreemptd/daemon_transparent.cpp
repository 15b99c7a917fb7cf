// The transparent trigger's wiring in gpreemptd: which processes' queue pointers are watched (those
// of classes with the transparent trigger); the samples go to the Runtime, whose ActivityDetector
// decides what they mean, at the time the pointers were read.
#include "daemon.h"

#include <spdlog/spdlog.h>

namespace gpreemptd {

namespace sched = gpreempt::sched;

void Daemon::sync_transparent(const sched::ProcessRecord& p) {
  const sched::SchedClass* cls = p.class_name ? runtime_->scheduler().class_named(*p.class_name) : nullptr;
  const bool want = cls && cls->accepts(sched::RequestSource::kTransparent);
  const bool watching = transparent_ && transparent_->watching(p.key);
  if (want == watching) return;
  if (!want) {
    transparent_->unwatch(p.key);
    return;
  }
  if (!transparent_) {
    gpreemptd::TransparentTriggerConfig tc;
    tc.poll_interval = config_.daemon.poll_interval;
    tc.sources.kfd_sysfs = options_.roots.kfd_sysfs;
    tc.log = [](const std::string& line) { spdlog::info("transparent: {}", line); };
    tc.on_unwatched = [](const sched::ProcessKey& key, const std::string& why) {
      spdlog::info("transparent: no longer watching {}: {}", sched::to_string(key), why);
    };
    transparent_ = std::make_unique<gpreemptd::TransparentTrigger>(
        loop_, tc,
        gpreemptd::TransparentTrigger::Sink{
            [this](sched::Time t, const sched::ProcessKey& key,
                   const std::vector<sched::QueueActivitySample>& samples) {
              runtime_->queues_sampled(t, key, samples);
              check_shutdown_done();
            },
            [this](sched::Time t, const sched::ProcessKey& key) {
              runtime_->queues_unwatched(t, key);
              check_shutdown_done();
            }});
  }
  try {
    transparent_->watch(p.key, p.key.pid);
    spdlog::info("transparent: watching the queues of {} (class {})", sched::to_string(p.key),
                 cls->name);
  } catch (const std::exception& e) {
    spdlog::warn("transparent: cannot watch {}: {}", sched::to_string(p.key), e.what());
  }
}

}  // namespace gpreemptd
