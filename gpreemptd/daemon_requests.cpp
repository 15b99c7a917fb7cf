// What gpreemptd answers on its socket: hints (hello, begin, end, token, expect) from the processes that
// opened a connection, with their permission and rate checks, the status view each peer may see,
// and the operator's commands (suspend, resume, reload) for those the control group admits.
#include "daemon.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "common/json_conventions.h"
#include "control_permission.h"
#include "gpreempt/version.h"
#include "service_notify.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
namespace client = gpreempt::client;
using Json = nlohmann::ordered_json;

const sched::ProcessRecord* Daemon::hint_peer(uint64_t connection, const Peer& peer,
                                              std::string& why) {
  const std::string who = "pid " + std::to_string(peer.pid);
  if (!peer.start_time_ticks) {
    why = who + " exited before gpreemptd accepted its connection: hints on it are ignored";
    return nullptr;
  }
  // Its pid may name another process by now: that one gets none of this connection's rights.
  if (server_->peer_exited(connection)) {
    why = who + ", which opened this connection, has exited: hints on it are ignored";
    return nullptr;
  }
  const sched::ProcessKey key{peer.pid, *peer.start_time_ticks};
  if (const sched::ProcessRecord* p = runtime_->processes().find(key)) return p;
  // Not reported by discovery yet (or its pid's record is older news): read it now, once.
  const sched::ProcessRecord* p = tracker_->find(peer.pid);
  if (p && p->key == key) return p;
  why = who +
        " is not a GPU process gpreemptd knows (it has not opened /dev/kfd, or it exited): its "
        "hints are ignored";
  return nullptr;
}

std::optional<std::string> Daemon::hint_refusal(const Peer& peer, const sched::ProcessRecord* p,
                                                const std::string& not_found) const {
  // Checked first without building a sentence: this runs on every hint.
  if (p && p->class_name && p->description.uid == peer.uid) {
    if (const sched::SchedClass* cls = runtime_->scheduler().class_named(*p->class_name);
        cls && cls->accepts(sched::RequestSource::kHint) &&
        std::any_of(config_.classes.begin(), config_.classes.end(),
                    [&](const auto& r) { return r.cls.priority < cls->priority; }))
      return std::nullopt;
  }
  if (!p) return not_found;
  const std::string who = "pid " + std::to_string(peer.pid);
  // The connection's credentials, not the process's own: a process that changed its uid since it
  // connected speaks with the rights it had then, and they must be the process's.
  if (p->description.uid != peer.uid)
    return who + " runs as uid " + std::to_string(p->description.uid) + " but connected as uid " +
           std::to_string(peer.uid) +
           ": a hint counts only from the user the process runs as, so its hints are ignored";
  if (!p->class_name) return who + " matches no class: its hints are ignored";
  const sched::SchedClass* cls = runtime_->scheduler().class_named(*p->class_name);
  if (!cls) return who + " matches no class: its hints are ignored";
  const std::string in =
      who + " is in class " + cls->name + " (priority " + std::to_string(cls->priority) + ")";
  if (!cls->accepts(sched::RequestSource::kHint))
    return in + ", whose triggers do not include hint: its hints are ignored";
  bool lower = false;
  for (const auto& r : config_.classes) lower = lower || r.cls.priority < cls->priority;
  if (!lower)
    return in + ": its hints are ignored (no class has a lower priority for them to preempt)";
  return std::nullopt;
}

void Daemon::arm_request_expiry() {
  const auto first = hints_.oldest_start();
  request_deadline_ = first ? std::optional(*first + config_.policy.max_request) : std::nullopt;
  loop_.arm_at(request_timer_, request_deadline_);
}

void Daemon::request_done(const sched::RequestDone& d) {
  for (auto g : d.gpus) {
    GpuRecord& rec = gpus_[g];
    rec.class_latency.try_emplace(d.class_name, gpreemptd::Histogram::request_latency())
        .first->second.observe(std::chrono::duration<double>(d.latency).count());
  }
}

void Daemon::expire_requests() {
  const auto limit = config_.policy.max_request;
  for (const auto& x : hints_.expire(Clock::now(), limit)) {
    spdlog::warn("request {} of {} not ended within max_request_ms = {}: ending it", x.client_id,
                 sched::to_string(x.request.key),
                 std::chrono::duration_cast<std::chrono::milliseconds>(limit).count());
    dispatch(sched::event::RequestFinished{x.request.key, x.request.id, sched::RequestSource::kHint});
  }
  arm_request_expiry();
}

client::Reply Daemon::handle(uint64_t connection, const Peer& peer, const client::Message& m,
                             Clock::time_point received) {
  using client::ErrorCode;
  using client::Op;
  if (client::needs_control_permission(m.op))
    if (auto why = control_refusal(peer, config_.daemon.control_group, client::to_string(m.op)))
      return client::error_reply(m.seq, ErrorCode::kNotPermitted, *why);
  switch (m.op) {
    case Op::kHello: {
      std::string not_found;
      const sched::ProcessRecord* p = hint_peer(connection, peer, not_found);
      auto refusal = hint_refusal(peer, p, not_found);
      Json body = {{"daemon_version", GPREEMPT_VERSION_STRING},
                   {"protocol", client::kProtocolVersion},
                   {"pid", peer.pid},
                   {"class", p && p->class_name ? Json(*p->class_name) : Json()},
                   {"may_preempt", !refusal.has_value()}};
      if (refusal) body["reason"] = *refusal;
      return client::ok_reply(m.seq, body);
    }
    case Op::kBegin:
    case Op::kEnd:
    case Op::kToken:
    case Op::kExpect: {
      if (shutting_down_)
        return client::error_reply(m.seq, ErrorCode::kUnavailable, "gpreemptd is shutting down");
      if (m.op == Op::kToken) return token_report(connection, m, received);
      if (m.op == Op::kEnd) {
        HintRequests::Open r;
        const auto ended = hints_.end(connection, m.request, &r);
        if (ended != HintRequests::EndOutcome::kEnded) {
          // Ended by the daemon already: the client's `end` is no mistake of its own.
          if (ended == HintRequests::EndOutcome::kExpired)
            return client::ok_reply(
                m.seq, {{"expired", true},
                        {"max_request_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                               config_.policy.max_request)
                                               .count()}});
          return client::error_reply(
              m.seq, ErrorCode::kBadRequest,
              "request " + std::to_string(m.request) + " was not begun on this connection");
        }
        // Its output tokens first: the scheduler takes the TPOT's count from them.
        if (m.tokens > 0)
          dispatch(sched::event::RequestProgress{r.key, r.id, m.tokens, /*at_end=*/true});
        dispatch(sched::event::RequestFinished{r.key, r.id, sched::RequestSource::kHint});
        return client::ok_reply(m.seq);
      }
      // Every begin and expect costs a token, refused or not: a flood of either is work.
      if (!hints_.take_token(connection, received, config_.daemon.hint_rate,
                             config_.daemon.hint_burst)) {
        return client::error_reply(
            m.seq, ErrorCode::kUnavailable,
            std::string(client::to_string(m.op)) + " refused: this connection sends hints faster than " +
                std::to_string(config_.daemon.hint_rate) + " per second (burst " +
                std::to_string(config_.daemon.hint_burst) +
                ", [daemon] hint_rate and hint_burst); it was not applied");
      }
      std::string not_found;
      const sched::ProcessRecord* p = hint_peer(connection, peer, not_found);
      if (auto why = hint_refusal(peer, p, not_found)) {
        ++hints_refused_;
        return client::error_reply(m.seq, ErrorCode::kNotPermitted, *why);
      }
      if (m.op == Op::kExpect) {
        dispatch(sched::event::RequestExpected{p->key, std::chrono::microseconds(m.in_us),
                                               sched::RequestSource::kHint},
                 received);
        return client::ok_reply(m.seq);
      }
      const auto r = hints_.begin(connection, m.request, p->key, received);
      if (!r)
        return client::error_reply(
            m.seq, ErrorCode::kBadRequest,
            "request " + std::to_string(m.request) + " is already open on this connection");
      dispatch(sched::event::RequestStarted{r->key, r->id, sched::RequestSource::kHint}, received);
      if (!request_deadline_) arm_request_expiry();
      return client::ok_reply(m.seq);
    }
    case Op::kStatus: {
      // Everyone's processes and command lines, and the rules that classify them, only for those
      // who may control the daemon; others see their own processes.
      const bool full =
          !control_refusal(peer, config_.daemon.control_group, client::to_string(m.op));
      return client::ok_reply(m.seq, status(full ? nullptr : &peer));
    }
    case Op::kReload: {
      notify_reloading();
      auto errors = reload();
      notify_ready("running");
      if (!errors.empty()) {
        std::string msg = "the config file was rejected; the running config stays in effect:";
        for (const auto& e : errors) msg += "\n" + e;
        return client::error_reply(m.seq, ErrorCode::kUnavailable, msg);
      }
      return client::ok_reply(
          m.seq,
          {{"config_path", options_.config_path.empty() ? Json() : Json(options_.config_path)},
           {"classes", config_.classes.size()},
           {"not_applied", reload_not_applied_}});
    }
    case Op::kSuspend:
    case Op::kResume:
      return operator_command(m);
  }
  return client::error_reply(m.seq, ErrorCode::kBadRequest, "unknown op");
}

client::Reply Daemon::operator_command(const client::Message& m) {
  using client::ErrorCode;
  const bool suspend = m.op == client::Op::kSuspend;
  if (shutting_down_)
    return client::error_reply(m.seq, ErrorCode::kUnavailable, "gpreemptd is shutting down");
  sched::event::OperatorTarget t;
  if (m.target.class_name) {
    if (!runtime_->scheduler().class_named(*m.target.class_name)) {
      std::string names;
      for (const auto& r : config_.classes) names += (names.empty() ? "" : ", ") + r.cls.name;
      return client::error_reply(
          m.seq, ErrorCode::kUnknownTarget,
          "no class named '" + *m.target.class_name + "' (classes: " + names + ")");
    }
    t.class_name = *m.target.class_name;
  } else if (m.target.pid) {
    const sched::ProcessRecord* p = tracker_->find(*m.target.pid);
    if (!p)
      return client::error_reply(m.seq, ErrorCode::kUnknownTarget,
                                 "pid " + std::to_string(*m.target.pid) +
                                     " is not a GPU process gpreemptd knows (it has not opened "
                                     "/dev/kfd, or it exited)");
    if (!p->class_name)
      return client::error_reply(
          m.seq, ErrorCode::kUnknownTarget,
          "pid " + std::to_string(*m.target.pid) + " matches no class: gpreemptd leaves it alone");
    t.key = p->key;
  } else {
    return client::error_reply(m.seq, ErrorCode::kBadRequest, "a target needs a class or a pid");
  }
  if (m.target.gpu_id) {
    const auto ids = runtime_->scheduler().gpus();
    if (!gpus_.count(*m.target.gpu_id) &&
        std::find(ids.begin(), ids.end(), *m.target.gpu_id) == ids.end())
      return client::error_reply(m.seq, ErrorCode::kUnknownTarget,
                                 "no GPU with gpu_id " + std::to_string(*m.target.gpu_id));
    t.gpu = *m.target.gpu_id;
  }
  const auto pairs = runtime_->scheduler().operator_targets(t);
  Json targets = Json::array();
  std::set<sched::GpuId> gpus;
  Json cannot = Json::array();
  for (const auto& x : pairs) {
    targets.push_back({{"pid", x.key.pid},
                       {"start_time_ticks", x.key.start_time_ticks},
                       {"class", class_of(x.key)},
                       {"gpu_id", x.gpu}});
    if (gpus.insert(x.gpu).second)
      if (const auto* a = runtime_->scheduler().gpu(x.gpu); a && !a->can_suspend()) cannot.push_back(x.gpu);
  }
  Json body = {{"targets", targets}, {"gpus", Json(gpus)}};
  if (suspend) {
    // max_suspension ends it earlier: say so rather than promise the time asked.
    const sched::Duration asked = std::chrono::milliseconds(m.for_ms);
    const sched::Duration effective = std::min(asked, runtime_->scheduler().config().max_suspension);
    dispatch(sched::event::OperatorSuspend{t, asked});
    const auto until = std::chrono::system_clock::now() + effective;
    body["for_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(effective).count();
    body["until_unix_s"] = gpreempt::json_conventions::round_to(
        std::chrono::duration<double>(until.time_since_epoch()).count(), 3);
    if (effective < asked)
      body["bounded_by"] =
          "max_suspension_ms = " +
          std::to_string(runtime_->scheduler().config().max_suspension / std::chrono::milliseconds(1));
  } else {
    dispatch(sched::event::OperatorResume{t});
  }
  if (!cannot.empty()) body["gpus_without_suspend"] = cannot;
  spdlog::info("operator {} {}{} for {} target(s)", suspend ? "suspend" : "resume",
               t.class_name ? "class " + *t.class_name : "pid " + std::to_string(t.key->pid),
               suspend ? " (" + std::to_string(m.for_ms) + " ms)" : "", pairs.size());
  return client::ok_reply(m.seq, body);
}

void Daemon::connection_closed(uint64_t connection, const Peer& peer) {
  const auto open = hints_.close(connection);
  if (!open.empty())
    spdlog::info("pid {} disconnected with {} open request{}: ending them", peer.pid, open.size(),
                 open.size() == 1 ? "" : "s");
  for (const auto& r : open)
    dispatch(sched::event::RequestFinished{r.key, r.id, sched::RequestSource::kHint});
}

client::Reply Daemon::token_report(uint64_t connection, const client::Message& m,
                                   Clock::time_point received) {
  using client::ErrorCode;
  // A report costs a token of the bucket as a begin does: a flood of them is work too.
  if (!hints_.take_token(connection, received, config_.daemon.hint_rate, config_.daemon.hint_burst))
    return client::error_reply(
        m.seq, ErrorCode::kUnavailable,
        "token refused: this connection sends hints faster than " +
            std::to_string(config_.daemon.hint_rate) + " per second (burst " +
            std::to_string(config_.daemon.hint_burst) +
            ", [daemon] hint_rate and hint_burst); it was not applied");
  HintRequests::Open r;
  switch (hints_.find(connection, m.request, &r)) {
    case HintRequests::EndOutcome::kExpired:
      return client::ok_reply(m.seq, {{"expired", true}});
    case HintRequests::EndOutcome::kUnknown:
      return client::error_reply(
          m.seq, ErrorCode::kBadRequest,
          "request " + std::to_string(m.request) + " was not begun on this connection");
    case HintRequests::EndOutcome::kEnded:
      break;
  }
  // The request was accepted at its begin (its process, class and trigger were checked then).
  dispatch(sched::event::RequestProgress{r.key, r.id, m.tokens, /*at_end=*/false}, received);
  return client::ok_reply(m.seq);
}

}  // namespace gpreemptd
