// The transparent trigger's wiring in gpreemptd: which processes' queue pointers are watched (those
// of classes with the transparent trigger), and the events the watching produces, taken at the
// time the pointers were read.
#include "daemon.h"

#include <spdlog/spdlog.h>

namespace gpreemptd {

namespace sched = gpreempt::sched;

void Daemon::sync_transparent(const TrackedProcess& p) {
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
        [this](sched::Time t, sched::Event e) { on_transparent_event(t, std::move(e)); });
  }
  try {
    transparent_->watch(p.key, p.key.pid);
    spdlog::info("transparent: watching the queues of {} (class {})", sched::to_string(p.key),
                 cls->name);
  } catch (const std::exception& e) {
    spdlog::warn("transparent: cannot watch {}: {}", sched::to_string(p.key), e.what());
  }
}

void Daemon::on_transparent_event(sched::Time t, sched::Event e) {
  dispatch_at(t, e, std::nullopt);
}

}  // namespace gpreemptd
