#include "eval_des/actuator_trace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "eval/des/scheduler_setup.h"

namespace gpreempt::testing {

namespace sched = gpreempt::sched;
using namespace std::chrono;

const TraceProcess* ActuatorTrace::process(int pid) const {
  for (const auto& p : processes)
    if (p.key.pid == pid) return &p;
  return nullptr;
}

namespace {

struct Line {
  std::string path;
  int number = 0;
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(path + ":" + std::to_string(number) + ": " + what);
  }
};

uint64_t number(const Line& l, const std::string& word, const char* what) {
  try {
    std::size_t used = 0;
    const unsigned long long v = std::stoull(word, &used, 0);
    if (used == word.size()) return v;
  } catch (const std::exception&) {
  }
  l.fail(std::string("expected ") + what + ", got '" + word + "'");
}

double decimal(const Line& l, const std::string& word, const char* what) {
  try {
    std::size_t used = 0;
    const double v = std::stod(word, &used);
    if (used == word.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  l.fail(std::string("expected ") + what + " (a number >= 0), got '" + word + "'");
}

std::vector<sched::GpuId> gpu_list(const Line& l, const std::string& word) {
  std::vector<sched::GpuId> out;
  std::stringstream ss(word);
  for (std::string item; std::getline(ss, item, ',');)
    out.push_back(static_cast<sched::GpuId>(number(l, item, "a gpu_id")));
  return out;
}

}  // namespace

ActuatorTrace load_actuator_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the trace");
  ActuatorTrace t;
  Line l{path, 0};
  for (std::string text; std::getline(in, text);) {
    ++l.number;
    if (auto hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream ss(text);
    std::vector<std::string> w;
    for (std::string s; ss >> s;) w.push_back(s);
    if (w.empty()) continue;
    auto need = [&](std::size_t n, const char* usage) {
      if (w.size() != n) l.fail(std::string("expected '") + usage + "'");
    };
    auto key_of = [&](const std::string& word) {
      const auto pid = static_cast<int>(number(l, word, "a pid"));
      const TraceProcess* p = t.process(pid);
      if (!p) l.fail("process " + word + " is not declared by a 'process' line above");
      return p->key;
    };
    if (w[0] == "clock") {
      need(2, "clock MHZ");
      t.clock_mhz = static_cast<uint32_t>(number(l, w[1], "a clock in MHz"));
    } else if (w[0] == "gpus") {
      if (w.size() < 2) l.fail("expected 'gpus ID ID ...'");
      for (std::size_t i = 1; i < w.size(); ++i)
        t.gpus.push_back(static_cast<sched::GpuId>(number(l, w[i], "a gpu_id")));
    } else if (w[0] == "process") {
      if (w.size() < 4) l.fail("expected 'process PID START ID:N ...'");
      TraceProcess p;
      p.key = {static_cast<int>(number(l, w[1], "a pid")), number(l, w[2], "a start tick")};
      for (std::size_t i = 3; i < w.size(); ++i) {
        const auto colon = w[i].find(':');
        if (colon == std::string::npos) l.fail("expected ID:N, got '" + w[i] + "'");
        const auto gpu = static_cast<sched::GpuId>(number(l, w[i].substr(0, colon), "a gpu_id"));
        if (std::find(t.gpus.begin(), t.gpus.end(), gpu) == t.gpus.end())
          l.fail("gpu_id " + w[i].substr(0, colon) + " is not in the 'gpus' line");
        p.queues.emplace_back(gpu, static_cast<uint32_t>(number(l, w[i].substr(colon + 1), "a queue count")));
      }
      t.processes.push_back(p);
    } else if (w[0] == "fault") {
      need(3, "fault ID KIND@N");
      const auto at = w[2].find('@');
      TraceFault f;
      f.gpu = static_cast<sched::GpuId>(number(l, w[1], "a gpu_id"));
      f.kind = w[2].substr(0, at);
      if (at == std::string::npos || (f.kind != "timeout" && f.kind != "eio"))
        l.fail("expected timeout@N or eio@N, got '" + w[2] + "'");
      f.nth = static_cast<uint32_t>(number(l, w[2].substr(at + 1), "a 1-based suspend count"));
      t.faults.push_back(f);
    } else {
      TraceStep s;
      s.line = l.number;
      s.at = duration_cast<nanoseconds>(duration<double, std::micro>(decimal(l, w[0], "a time in µs")));
      if (!t.steps.empty() && s.at < t.steps.back().at) l.fail("times must not decrease");
      if (w.size() < 2) l.fail("expected an event after the time");
      const std::string& e = w[1];
      if (e == "tick") {
        need(2, "T tick");
      } else if (e == "classified") {
        need(5, "T classified PID CLASS|- ID,ID");
        std::optional<std::string> cls;
        if (w[3] != "-") cls = w[3];
        s.event = sched::event::ProcessClassified{key_of(w[2]), cls, gpu_list(l, w[4])};
      } else if (e == "appeared") {
        need(4, "T appeared PID ID,ID");
        s.event = sched::event::ProcessAppeared{key_of(w[2]), gpu_list(l, w[3])};
      } else if (e == "exited") {
        need(3, "T exited PID");
        s.event = sched::event::ProcessExited{key_of(w[2])};
      } else if (e == "start" || e == "end") {
        need(4, "T start|end PID REQ");
        const uint64_t req = number(l, w[3], "a request number");
        if (e == "start") s.event = sched::event::RequestStarted{key_of(w[2]), req};
        else s.event = sched::event::RequestFinished{key_of(w[2]), req};
      } else if (e == "expect") {
        need(4, "T expect PID IN_US");
        s.event = sched::event::RequestExpected{
            key_of(w[2]), duration_cast<nanoseconds>(duration<double, std::micro>(decimal(l, w[3], "µs")))};
      } else if (e == "kernel") {
        need(5, "T kernel PID ID LENGTH_US");
        s.event = sched::event::KernelObserved{
            static_cast<sched::GpuId>(number(l, w[3], "a gpu_id")), key_of(w[2]),
            duration_cast<nanoseconds>(duration<double, std::micro>(decimal(l, w[4], "µs")))};
      } else {
        l.fail("unknown event '" + e + "' (classified, appeared, exited, start, end, expect, kernel, tick)");
      }
      t.steps.push_back(std::move(s));
    }
  }
  if (t.clock_mhz == 0 || t.gpus.empty() || t.processes.empty() || t.steps.empty())
    throw std::runtime_error(path + ": a trace needs 'clock', 'gpus', 'process' lines and events");
  return t;
}

namespace {

std::string keys(const std::vector<sched::ProcessKey>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + sched::to_string(v[i]);
  return s + "]";
}

std::string at(sched::Time t) { return std::to_string(t.count()) + "ns "; }

}  // namespace

std::string describe(const sched::event::ActuationCompleted& c) {
  std::string s = "answer #" + std::to_string(c.action) + " gpu " + std::to_string(c.gpu);
  for (const auto& o : c.outcomes)
    s += " " + sched::to_string(o.key) + "=" + sched::event::to_string(o.outcome) +
         (o.error ? "(" + std::to_string(o.error) + ")" : "");
  return s;
}

Replayer::Replayer(const ActuatorTrace& trace, ActuatorRig& rig)
    : trace_(trace),
      rig_(rig),
      runtime_(eval::des::scheduler_classes(sched::RequestSource::kHint, {}),
               eval::des::arbiter_config(eval::des::PolicyDef{}),
               {&rig, [this](std::optional<sched::Time> t) { armed_ = t; },
                [this](sched::Time, const std::vector<sched::Action>& a) { logged(a); },
                {},
                {}}) {}

void Replayer::logged(const std::vector<sched::Action>& actions) {
  for (const auto& a : actions) {
    if (const auto* s = std::get_if<sched::action::Suspend>(&a)) {
      log_.push_back(at(now_) + "suspend #" + std::to_string(s->id) + " gpu " + std::to_string(s->gpu) +
                     " " + keys(s->targets) + " grace " + std::to_string(s->grace.count()) + "ns " +
                     sched::to_string(s->reason));
      ++in_flight_;
    } else if (const auto* r = std::get_if<sched::action::Resume>(&a)) {
      log_.push_back(at(now_) + "resume #" + std::to_string(r->id) + " gpu " + std::to_string(r->gpu) +
                     " " + keys(r->targets) + " " + sched::to_string(r->reason));
      ++in_flight_;
    }
  }
}

void Replayer::feed(const sched::Event& e) { runtime_.dispatch(now_, e); }

std::vector<std::string> Replayer::accounting() const {
  // Rendered from the snapshot, as the status document, the metrics and the DES's rows are.
  const sched::RuntimeSnapshot f = runtime_.snapshot(now_);
  std::vector<std::string> out;
  for (const auto& [gpu, g] : f.gpus) {
    std::string s = "gpu " + std::to_string(gpu) + " suspensions " + std::to_string(g.suspensions) +
                    " suspended " + std::to_string(g.suspended.count()) + "ns actions " +
                    std::to_string(g.actions.suspend_actions) + "/" +
                    std::to_string(g.actions.resume_actions);
    for (const auto& [cls, share] : g.by_class)
      s += " " + (cls.empty() ? "-" : cls) + ":" + std::to_string(share.suspensions) + "/" +
           std::to_string(share.suspended.count()) + "ns";
    out.push_back(s);
  }
  for (const auto& [cls, u] : f.classes)
    out.push_back("class " + cls + " suspensions " + std::to_string(u.suspensions) + " suspended " +
                  std::to_string(u.suspended_time.count()) + "ns");
  out.push_back("recoveries " + std::to_string(f.recoveries));
  return out;
}

void Replayer::advance() {
  while (!done_ && in_flight_ == 0) {
    rig_.settled(now_);
    if (next_ == trace_.steps.size()) {
      done_ = true;
      return;
    }
    const TraceStep& step = trace_.steps[next_];
    if (armed_ && *armed_ <= step.at) {
      now_ = std::max(now_, *armed_);
      armed_.reset();
      log_.push_back(at(now_) + "timer");
      feed(sched::event::TimerFired{});
      continue;
    }
    now_ = step.at;
    ++next_;
    if (step.event) {
      rig_.observe(*step.event);
      feed(*step.event);
    }
  }
}

void Replayer::completed(const sched::event::ActuationCompleted& c) {
  answers_[c.action] = c;
  if (--in_flight_ > 0) return;
  // Every answer of this round, in action order: the order two actuators finish in is theirs.
  auto answers = std::move(answers_);
  answers_.clear();
  for (const auto& [id, a] : answers) {
    log_.push_back(at(now_) + describe(a));
    runtime_.completed(now_, a);
  }
  advance();
}

}  // namespace gpreempt::testing
