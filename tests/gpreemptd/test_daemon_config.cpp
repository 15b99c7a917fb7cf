// The TOML config loader: the issue's minimal config as written, every key, and every kind of
// error reported as file:line: message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "daemon_config.h"

namespace gpreemptd {
namespace {

using namespace gpreempt::sched;

using namespace std::chrono_literals;

const char* kMinimal = R"(
[[class]]
name = "online"
priority = 10
match = { uid = 1000, cmdline = "*serve*" }
trigger = "transparent"

[[class]]
name = "offline"
priority = 0
match = { env = "GPREEMPT_CLASS=offline" }
)";

// The single error of loading `text`, rendered.
std::string error_of(const std::string& text) {
  auto r = load_daemon_config(text, "gpreemptd.toml");
  EXPECT_FALSE(r.config);
  if (r.errors.size() != 1) {
    std::string all;
    for (auto& e : r.errors) all += e.to_string() + "\n";
    ADD_FAILURE() << "expected one error, got " << r.errors.size() << ":\n" << all;
    return all;
  }
  return r.errors[0].to_string();
}

std::string with_class(const std::string& body) {
  return "[[class]]\nname = \"online\"\npriority = 10\nmatch = { uid = 1000, cmdline = \"*serve*\" }\n" + body;
}

TEST(Config, TheIssuesMinimalConfigAsWritten) {
  auto r = load_daemon_config(kMinimal, "minimal.toml");
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
  const DaemonConfig& c = *r.config;
  ASSERT_EQ(c.classes.size(), 2u);
  EXPECT_EQ(c.classes[0].cls.name, "online");
  EXPECT_EQ(c.classes[0].cls.priority, 10);
  EXPECT_EQ(c.classes[0].cls.triggers, std::vector<RequestSource>{RequestSource::kTransparent});
  EXPECT_EQ(c.classes[0].match[0].describe(), "cmdline=*serve* uid=1000");
  EXPECT_EQ(c.classes[1].cls.name, "offline");
  EXPECT_EQ(c.classes[1].cls.priority, 0);
  EXPECT_EQ(c.classes[1].cls.triggers, std::vector<RequestSource>{RequestSource::kHint});
  EXPECT_EQ(c.classes[1].match[0].describe(), "env=GPREEMPT_CLASS=offline");
  // Everything else keeps the defaults of the structs.
  EXPECT_EQ(c.policy.max_suspension, ArbiterConfig{}.max_suspension);
  EXPECT_EQ(c.daemon.socket_path, "/run/gpreempt/gpreemptd.sock");
  EXPECT_EQ(c.daemon.realtime_priority, 0) << "off unless asked for";
  EXPECT_EQ(c.source, "minimal.toml");
}

TEST(Config, EveryKey) {
  auto r = load_daemon_config(R"(
[daemon]
socket = "/tmp/g.sock"
metrics = "127.0.0.1:9100"
control_group = "gpu-ops"
poll_interval_us = 150
realtime_priority = 20
docker_root = "/host/var/lib/docker/containers"
containerd_root = ""
crio_root = "/host/run/containers/storage/overlay-containers"
podman_root = "/host/var/lib/containers/storage"
podman_rootless_root = "/srv/containers/%u"
containerd_rootless_root = ""

[policy]
resume_after_idle_ms = 3.5
max_suspension_ms = 800
starvation_window_ms = 2000
starvation_min_run_ms = 250
expect_lead_ms = 1
expect_timeout_ms = 30
grace_default_us = 10
grace_min_us = 1
grace_drain_limit_us = 300
failure_backoff_ms = 5000
coalesce_flaps = true

[[class]]
name = "online"
priority = 100
trigger = ["hint", "transparent", "operator"]
match = [ { cgroup = "/kubepods*", user = "svc" }, { exe = "tritonserver", uid = 998 },
          { container = "3f4e2b1c9d8a", pod = "0f1b5c64-8c1e-4c3c-9c5a-2b3a1e2f4d5c" }, { pid = 77, uid = 998 },
          { container = "vllm-*", pod = "inference/llama-*" } ]

[[class]]
name = "offline"
priority = 0
match = { env = "JOB=train-*" }
)",
                       "full.toml");
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
  const DaemonConfig& c = *r.config;
  EXPECT_EQ(c.daemon.socket_path, "/tmp/g.sock");
  EXPECT_EQ(c.daemon.metrics_address, "127.0.0.1:9100");
  EXPECT_EQ(c.daemon.control_group, "gpu-ops");
  EXPECT_EQ(c.daemon.poll_interval, 150us);
  EXPECT_EQ(c.daemon.realtime_priority, 20);
  EXPECT_EQ(c.daemon.containers.docker, "/host/var/lib/docker/containers");
  EXPECT_EQ(c.daemon.containers.containerd, "");
  EXPECT_EQ(c.daemon.containers.crio, "/host/run/containers/storage/overlay-containers");
  EXPECT_EQ(c.daemon.containers.podman, "/host/var/lib/containers/storage");
  EXPECT_EQ(c.daemon.containers.podman_rootless, "/srv/containers/%u");
  EXPECT_EQ(c.daemon.containers.containerd_rootless, "");
  EXPECT_EQ(c.policy.resume_after_idle, 3500us);
  EXPECT_EQ(c.policy.max_suspension, 800ms);
  EXPECT_EQ(c.policy.starvation_window, 2000ms);
  EXPECT_EQ(c.policy.starvation_min_run, 250ms);
  EXPECT_EQ(c.policy.expect_lead, 1ms);
  EXPECT_EQ(c.policy.expect_timeout, 30ms);
  EXPECT_EQ(c.policy.grace_default, 10us);
  EXPECT_EQ(c.policy.grace_min, 1us);
  EXPECT_EQ(c.policy.grace_drain_limit, 300us);
  EXPECT_EQ(c.policy.failure_backoff, 5000ms);
  EXPECT_TRUE(c.policy.coalesce_flaps);
  ASSERT_EQ(c.classes[0].match.size(), 5u);
  EXPECT_EQ(c.classes[0].match[0].describe(), "user=svc cgroup=/kubepods*");
  EXPECT_EQ(c.classes[0].match[1].describe(), "exe=tritonserver uid=998");
  EXPECT_EQ(c.classes[0].match[2].describe(),
            "container=3f4e2b1c9d8a pod=0f1b5c64-8c1e-4c3c-9c5a-2b3a1e2f4d5c");
  EXPECT_EQ(c.classes[0].match[3].describe(), "uid=998 pid=77");
  EXPECT_EQ(c.classes[0].match[4].describe(), "container=vllm-* pod=inference/llama-*");
  EXPECT_EQ(c.classes[0].cls.triggers.size(), 3u);
  EXPECT_EQ(c.classes[1].match[0].describe(), "env=JOB=train-*");
}

TEST(Config, NoClassesKeepsTheBuiltInOnes) {
  auto r = load_daemon_config("[policy]\nmax_suspension_ms = 100\n", "p.toml");
  ASSERT_TRUE(r.config);
  ASSERT_EQ(r.config->classes.size(), 2u);
  // Online only for the daemon's own user (class_trust.h): a process chooses its environment.
  EXPECT_EQ(r.config->classes[0].match[0].describe(),
            "uid=" + std::to_string(::geteuid()) + " env=GPREEMPT_CLASS=online");
  EXPECT_EQ(r.config->policy.max_suspension, 100ms);
}

TEST(ConfigErrors, Syntax) {
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = = 3\n").substr(0, 17),
            "gpreemptd.toml:3:");
}

TEST(ConfigErrors, UnknownKeys) {
  EXPECT_EQ(error_of("\n[polcy]\nx = 1\n"),
            "gpreemptd.toml:2: unknown key 'polcy' (expected [[class]], [policy] or [daemon])");
  EXPECT_EQ(error_of("[policy]\nmax_suspension = 3\n"),
            "gpreemptd.toml:2: unknown key 'max_suspension' in [policy]");
  EXPECT_EQ(error_of("[daemon]\nsock = \"/x\"\n"),
            "gpreemptd.toml:2: unknown key 'sock' in [daemon]");
  EXPECT_EQ(error_of(with_class("weight = 3\n")),
            "gpreemptd.toml:5: unknown key 'weight' in [[class]] (expected name, priority, match, "
            "trigger, slo)");
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = 1\nmatch = { comm = \"x\" }\n"),
            "gpreemptd.toml:4: unknown match key 'comm' (expected cmdline, exe, uid, user, cgroup, "
            "container, pod, env, pid)");
}

TEST(ConfigErrors, DuplicateClassName) {
  EXPECT_EQ(error_of(with_class(
                "\n[[class]]\nname = \"online\"\npriority = 1\nmatch = { user = \"x\" }\n")),
            "gpreemptd.toml:7: duplicate class name 'online'");
}

TEST(ConfigErrors, BadGlob) {
  EXPECT_EQ(
      error_of("[[class]]\nname = \"a\"\npriority = 1\nmatch = { cgroup = \"/kubepods[\" }\n"),
      "gpreemptd.toml:4: bad glob in 'cgroup' (\"/kubepods[\"): unterminated '[' at offset 9");
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = 1\nmatch = { env = \"K=[x\" }\n"),
            "gpreemptd.toml:4: bad glob in 'env' (\"K=[x\"): unterminated '[' at offset 0");
}

TEST(ConfigErrors, PriorityOutOfRange) {
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = 1001\nmatch = { user = \"x\" }\n"),
            "gpreemptd.toml:3: priority 1001 out of range (0 to 1000)");
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = -1\nmatch = { user = \"x\" }\n"),
            "gpreemptd.toml:3: priority -1 out of range (0 to 1000)");
}

TEST(ConfigErrors, UnknownTrigger) {
  EXPECT_EQ(error_of(with_class("trigger = [\"hint\", \"magic\"]\n")),
            "gpreemptd.toml:5: unknown trigger 'magic' (expected hint, transparent or operator)");
}

TEST(ConfigErrors, WrongTypesAndValues) {
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = \"high\"\nmatch = { user = \"x\" }\n"),
            "gpreemptd.toml:3: 'priority' must be an integer, not a string");
  EXPECT_EQ(error_of("[policy]\nmax_suspension_ms = \"500ms\"\n"),
            "gpreemptd.toml:2: 'max_suspension_ms' must be a number, not a string");
  EXPECT_EQ(error_of("[policy]\ncoalesce_flaps = \"yes\"\n"),
            "gpreemptd.toml:2: 'coalesce_flaps' must be a boolean, not a string");
  EXPECT_EQ(error_of("[policy]\nexpect_lead_ms = -1\n"),
            "gpreemptd.toml:2: 'expect_lead_ms' must be between 0 and 1000000");
  EXPECT_EQ(
      error_of("[policy]\nmax_suspension_ms = 0\n"),
      "gpreemptd.toml:2: max_suspension_ms must be greater than 0 (it bounds every suspension)");
  EXPECT_EQ(error_of("[policy]\nstarvation_window_ms = 100\nstarvation_min_run_ms = 100\n"),
            "gpreemptd.toml:3: starvation_min_run_ms must be less than starvation_window_ms");
  EXPECT_EQ(error_of("[daemon]\npoll_interval_us = 50\n"),
            "gpreemptd.toml:2: poll_interval_us must be between 100 and 500");
  EXPECT_EQ(error_of("[daemon]\nrealtime_priority = 100\n"),
            "gpreemptd.toml:2: realtime_priority must be between 0 (off) and 99 (a SCHED_FIFO "
            "priority), not 100");
  EXPECT_EQ(error_of("[daemon]\nsocket = \"/s\"\nrealtime_priority = -1\n"),
            "gpreemptd.toml:3: realtime_priority must be between 0 (off) and 99 (a SCHED_FIFO "
            "priority), not -1");
  EXPECT_EQ(error_of("[daemon]\nrealtime_priority = 1.5\n"),
            "gpreemptd.toml:2: 'realtime_priority' must be an integer, not a number");
  EXPECT_EQ(error_of("[daemon]\nsocket = \"relative.sock\"\n"),
            "gpreemptd.toml:2: 'socket' must be an absolute path, not \"relative.sock\"");
  EXPECT_EQ(
      error_of("[daemon]\nmetrics = \"localhost\"\n"),
      "gpreemptd.toml:2: 'metrics' must be HOST:PORT (port 0-65535, 0: any free port) or \"\" "
      "to disable, not \"localhost\"");
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = 1\nmatch = { env = \"NOVALUE\" }\n"),
            "gpreemptd.toml:4: 'env' must be NAME=VALUE (VALUE may be a glob), not \"NOVALUE\"");
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = 1\nmatch = {}\n"),
            "gpreemptd.toml:4: empty 'match' table (it would match nothing)");
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = 1\nmatch = { pid = 0 }\n"),
            "gpreemptd.toml:4: pid 0 out of range (1 to 4194304)");
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = 1\nmatch = { pod = \"a/b/c\" }\n"),
            "gpreemptd.toml:4: 'pod' must be NAMESPACE/NAME (globs allowed) or a pod uid, not "
            "\"a/b/c\"");
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = 1\nmatch = { pod = \"ns/\" }\n"),
            "gpreemptd.toml:4: 'pod' must be NAMESPACE/NAME (globs allowed) or a pod uid, not "
            "\"ns/\"");
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = 1\nmatch = { container = \"x[\" }\n"),
            "gpreemptd.toml:4: bad glob in 'container' (\"x[\"): unterminated '[' at offset 1");
  EXPECT_EQ(error_of("[daemon]\ncrio_root = \"run/crio\"\n"),
            "gpreemptd.toml:2: 'crio_root' must be an absolute path or \"\" (not looked at), not "
            "\"run/crio\"");
  EXPECT_EQ(error_of("[daemon]\npodman_root = \"var/lib/containers/storage\"\n"),
            "gpreemptd.toml:2: 'podman_root' must be an absolute path or \"\" (not looked at), "
            "not \"var/lib/containers/storage\"");
  EXPECT_EQ(error_of("[daemon]\n\npodman_rootless_root = \"~/.local/share/containers/storage\"\n"),
            "gpreemptd.toml:3: 'podman_rootless_root' must be an absolute path once expanded "
            "(start with '/' or %h) or \"\" (not looked at), not "
            "\"~/.local/share/containers/storage\"");
  EXPECT_EQ(error_of("[daemon]\ncontainerd_rootless_root = \"/run/user/%i/containerd\"\n"),
            "gpreemptd.toml:2: 'containerd_rootless_root' has an unknown specifier '%i' (known: "
            "%h home, %u user name, %U uid, %% a '%')");
  EXPECT_EQ(error_of("[daemon]\ncontainerd_rootless_root = \"/run/100%\"\n"),
            "gpreemptd.toml:2: 'containerd_rootless_root' ends with a lone '%' (write %% for a "
            "'%')");
  EXPECT_EQ(error_of("[daemon]\npodman_rootless_root = \"%U/storage\"\n"),
            "gpreemptd.toml:2: 'podman_rootless_root' must be an absolute path once expanded "
            "(start with '/' or %h) or \"\" (not looked at), not \"%U/storage\"");
  EXPECT_EQ(error_of("[class]\nname = \"a\"\n"),
            "gpreemptd.toml:1: 'class' must be an array of tables: write each class as [[class]]");
}

// Two classes, the first with `slo` (its text), the second the lowest.
std::string with_slo(const std::string& slo, const std::string& policy = "") {
  return policy + "[[class]]\nname = \"online\"\npriority = 10\nmatch = { uid = 1000 }\nslo = " + slo +
         "\n[[class]]\nname = \"offline\"\npriority = 0\nmatch = { uid = 1001 }\n";
}

TEST(Config, AClassStatesAnObjective) {
  auto r = load_daemon_config(with_slo("{ p99_ms = 5, window_s = 30 }", "[policy]\nhold_after_idle_ms = 15\n"),
                       "slo.toml");
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
  const auto& o = r.config->classes[0].cls.objective;
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->percentile, 99);
  EXPECT_EQ(o->target, 5ms);
  EXPECT_EQ(o->window, 30s);
  EXPECT_EQ(o->describe(), "p99 <= 5 ms over 30 s");
  EXPECT_FALSE(r.config->classes[1].cls.objective.has_value());
  EXPECT_EQ(r.config->policy.hold_after_idle, 15ms);
  auto d = load_daemon_config(with_slo("{ p999_ms = 2.5 }"), "slo.toml");
  ASSERT_TRUE(d.errors.empty()) << d.errors[0].to_string();
  EXPECT_EQ(d.config->classes[0].cls.objective->percentile, 99.9);
  EXPECT_EQ(d.config->classes[0].cls.objective->target, 2500us);
  EXPECT_EQ(d.config->classes[0].cls.objective->window, 10s) << "the default window";
}

TEST(ConfigErrors, ObjectivesAreCheckedAtTheirLine) {
  EXPECT_EQ(error_of(with_slo("5")),
            "gpreemptd.toml:5: 'slo' must be a table such as { p99_ms = 5 } or { ttft_p99_ms = 500, "
            "tpot_p99_ms = 30 }, not an integer");
  EXPECT_EQ(error_of(with_slo("{ p99_ms = 5, p95_ms = 3 }")),
            "gpreemptd.toml:5: 'slo' must name one percentile per measure, not 2 of the request "
            "latency (p99_ms, ...)");
  EXPECT_EQ(error_of(with_slo("{ window_s = 5 }")),
            "gpreemptd.toml:5: 'slo' must name a percentile (p50_ms, p90_ms, p95_ms, p99_ms or "
            "p999_ms, or the same after ttft_ or tpot_), e.g. slo = { p99_ms = 5 } or slo = { "
            "ttft_p99_ms = 500, tpot_p99_ms = 30 }");
  EXPECT_EQ(error_of(with_slo("{ p99_ms = 0 }")), "gpreemptd.toml:5: 'p99_ms' must be greater than 0");
  EXPECT_EQ(error_of(with_slo("{ p99_ms = 5, window_s = 0.5 }")),
            "gpreemptd.toml:5: 'window_s' must be between 1 and 3600");
  EXPECT_EQ(error_of(with_slo("{ p98_ms = 5 }")),
            "gpreemptd.toml:5: unknown key 'p98_ms' in slo (expected one of p50_ms, p90_ms, p95_ms, "
            "p99_ms, p999_ms; the same with ttft_ or tpot_ before it (ttft_p99_ms, tpot_p99_ms); "
            "and window_s)");
  EXPECT_EQ(error_of("[[class]]\nname = \"online\"\npriority = 10\nmatch = { uid = 1000 }\n"
                     "[[class]]\nname = \"offline\"\npriority = 0\nmatch = { uid = 1001 }\n"
                     "slo = { p99_ms = 5 }\n"),
            "gpreemptd.toml:9: class 'offline' has the lowest priority: no class below it can be "
            "preempted for its slo (give it to a higher class)");
}

TEST(Config, AClassStatesTtftAndTpotObjectives) {
  auto r = load_daemon_config(with_slo("{ ttft_p99_ms = 500, tpot_p95_ms = 30, window_s = 20 }"),
                              "slo.toml");
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].to_string();
  const auto& o = r.config->classes[0].cls.objective;
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->target, 0ms) << "no request-latency goal was stated";
  ASSERT_TRUE(o->ttft.has_value());
  EXPECT_EQ(o->ttft->percentile, 99);
  EXPECT_EQ(o->ttft->target, 500ms);
  ASSERT_TRUE(o->tpot.has_value());
  EXPECT_EQ(o->tpot->percentile, 95);
  EXPECT_EQ(o->tpot->target, 30ms);
  EXPECT_EQ(o->window, 20s);
  EXPECT_TRUE(o->keyed_on_tokens());
  EXPECT_EQ(o->describe(), "TTFT p99 <= 500 ms, TPOT p95 <= 30 ms over 20 s");
  ASSERT_EQ(o->goals().size(), 2u);
  EXPECT_EQ(o->goals()[0].metric, gpreempt::sched::Metric::kTtft);
  EXPECT_EQ(o->goals()[1].metric, gpreempt::sched::Metric::kTpot);

  auto both = load_daemon_config(with_slo("{ p99_ms = 2000, tpot_p99_ms = 30 }"), "slo.toml");
  ASSERT_TRUE(both.errors.empty()) << both.errors[0].to_string();
  const auto& b = *both.config->classes[0].cls.objective;
  EXPECT_EQ(b.target, 2000ms);
  EXPECT_FALSE(b.ttft.has_value());
  EXPECT_EQ(b.describe(), "p99 <= 2000 ms, TPOT p99 <= 30 ms over 10 s");
  auto one = load_daemon_config(with_slo("{ tpot_p999_ms = 50 }"), "slo.toml");
  ASSERT_TRUE(one.errors.empty()) << one.errors[0].to_string();
  EXPECT_EQ(one.config->classes[0].cls.objective->tpot->percentile, 99.9);
}

TEST(ConfigErrors, TtftAndTpotObjectivesAreCheckedAtTheirLine) {
  EXPECT_EQ(error_of(with_slo("{ ttft_p99_ms = 0 }")),
            "gpreemptd.toml:5: 'ttft_p99_ms' must be greater than 0");
  EXPECT_EQ(error_of(with_slo("{ tpot_p99_ms = -3 }")),
            "gpreemptd.toml:5: 'tpot_p99_ms' must be between 0 and 1000000");
  EXPECT_EQ(error_of(with_slo("{ ttft_p98_ms = 500 }")),
            "gpreemptd.toml:5: unknown key 'ttft_p98_ms' in slo (expected one of p50_ms, p90_ms, "
            "p95_ms, p99_ms, p999_ms; the same with ttft_ or tpot_ before it (ttft_p99_ms, "
            "tpot_p99_ms); and window_s)");
  EXPECT_EQ(error_of(with_slo("{ ttft_ms = 500 }")),
            "gpreemptd.toml:5: unknown key 'ttft_ms' in slo (expected one of p50_ms, p90_ms, "
            "p95_ms, p99_ms, p999_ms; the same with ttft_ or tpot_ before it (ttft_p99_ms, "
            "tpot_p99_ms); and window_s)");
  EXPECT_EQ(error_of(with_slo("{ tpot_p99_ms = 30, tpot_p90_ms = 20 }")),
            "gpreemptd.toml:5: 'slo' must name one percentile per measure, not 2 of the tpot "
            "(tpot_p99_ms, ...)");
  EXPECT_EQ(error_of(with_slo("{ ttft_p99_ms = \"fast\" }")).substr(0, 32),
            "gpreemptd.toml:5: 'ttft_p99_ms' ");
  EXPECT_EQ(error_of("[[class]]\nname = \"online\"\npriority = 10\nmatch = { uid = 1000 }\n"
                     "[[class]]\nname = \"offline\"\npriority = 0\nmatch = { uid = 1001 }\n"
                     "slo = { ttft_p99_ms = 500, tpot_p99_ms = 30 }\n"),
            "gpreemptd.toml:9: class 'offline' has the lowest priority: no class below it can be "
            "preempted for its slo (give it to a higher class)");
}

TEST(ConfigSections, TheSchedulersLoaderLeavesOnlyTheTablesItIsToldToTheCaller) {
  const std::string text = "[daemon]\nsocket = \"/x.sock\"\n";
  auto alone = gpreempt::sched::load_config(text, "s.toml");
  ASSERT_EQ(alone.errors.size(), 1u);
  EXPECT_EQ(alone.errors[0].to_string(), "s.toml:1: unknown key 'daemon' (expected [[class]] or [policy])");
  EXPECT_TRUE(gpreempt::sched::load_config(text, "s.toml", {"daemon"}).errors.empty());
  auto whole = load_daemon_config(text, "s.toml");
  ASSERT_TRUE(whole.errors.empty()) << whole.errors[0].to_string();
  EXPECT_EQ(whole.config->daemon.socket_path, "/x.sock");
}

TEST(ConfigErrors, MissingKeysNameTheClassLine) {
  EXPECT_EQ(error_of("\n\n[[class]]\nname = \"a\"\nmatch = { user = \"x\" }\n"),
            "gpreemptd.toml:3: class 'a' has no priority");
  EXPECT_EQ(error_of("[[class]]\nname = \"a\"\npriority = 3\n"),
            "gpreemptd.toml:1: class 'a' has no match rule");
  EXPECT_EQ(error_of("[[class]]\npriority = 3\nmatch = { user = \"x\" }\n"),
            "gpreemptd.toml:1: [[class]] without a name");
}

TEST(ConfigErrors, EveryErrorIsReportedInFileOrder) {
  auto r = load_daemon_config("[policy]\nfoo = 1\n[daemon]\nbar = 2\n", "x.toml");
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].line, 2);
  EXPECT_EQ(r.errors[1].line, 4);
}

TEST(CheckConfig, ReadsTheFileAndNamesIt) {
  char path[] = "/tmp/gpreempt-config-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string text = std::string(kMinimal) + "\n[policy]\nresume_after_idle = 2\n";
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  auto r = check_daemon_config(path);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].to_string(),
            std::string(path) + ":14: unknown key 'resume_after_idle' in [policy]");
  unlink(path);
  auto missing = check_daemon_config("/nonexistent/gpreemptd.toml");
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_EQ(missing.errors[0].to_string(),
            "/nonexistent/gpreemptd.toml: cannot read: No such file or directory");
}

TEST(Config, PerUserRootTemplatesExpandLikeSystemdSpecifiers) {
  const ContainerRoots defaults;
  EXPECT_EQ(defaults.podman, "/var/lib/containers/storage");
  // The rootless roots are opt-in (docs/security.md); the templates their comment suggests:
  EXPECT_EQ(defaults.podman_rootless, "");
  EXPECT_EQ(defaults.containerd_rootless, "");
  const std::string podman_rootless = "%h/.local/share/containers/storage";
  const std::string containerd_rootless = "/run/user/%U/containerd/io.containerd.runtime.v2.task";
  EXPECT_EQ(expand_user_root(podman_rootless, 1000, "alice", "/home/alice"),
            "/home/alice/.local/share/containers/storage");
  EXPECT_EQ(expand_user_root(containerd_rootless, 1000, "", ""),
            "/run/user/1000/containerd/io.containerd.runtime.v2.task");
  EXPECT_EQ(expand_user_root("/host%h/%u/%U/100%%", 7, "bob", "/home/bob"),
            "/host/home/bob/bob/7/100%");
  // %h and %u need the passwd entry; %U never does.
  EXPECT_EQ(expand_user_root("%h/x", 1000, "alice", ""), std::nullopt);
  EXPECT_EQ(expand_user_root("/x/%u", 1000, "", "/home/alice"), std::nullopt);
  EXPECT_EQ(check_user_root(podman_rootless), "");
  EXPECT_EQ(check_user_root(containerd_rootless), "");
}

}  // namespace
}  // namespace gpreemptd
