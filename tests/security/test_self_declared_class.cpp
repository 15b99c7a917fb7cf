// Attack: a local user makes its own GPU process "online" and so suspends everyone else's work.
// A process chooses its command line (exec -a serve), its executable's name and its environment
// (GPREEMPT_CLASS=online); a class that may preempt another must not be reachable that way under
// the shipped configs and the built-in one, and a config written so is refused with its line.
#include <gtest/gtest.h>

#include <sstream>

#include "fixtures.h"
#include "sched/classifier.h"
#include "daemon_config.h"

namespace gpreempt::sched {
namespace {

namespace gt = gpreempt::testing;

// The attacker: uid 65534 in an ordinary login session, naming itself like a server and declaring
// itself online in its environment.
ProcessFacts attacker() {
  ProcessFacts p;
  p.key = {4242, 1};
  p.uid = 65534;
  p.user = "nobody";
  p.cmdline = {"serve", "--model", "x"};
  p.exe = "/home/nobody/serve";
  p.cgroups = {"/user.slice/user-65534.slice/session-7.scope"};
  p.environ = {{"GPREEMPT_CLASS", "online"}};
  return p;
}

std::string errors_of(const gpreemptd::DaemonConfigResult& r) {
  std::string s;
  for (const auto& e : r.errors) s += e.to_string() + "\n";
  return s;
}

// The highest-priority class the attacker lands in, or "" when none.
std::string class_of(const Config& c, const ProcessFacts& p) {
  auto got = Classifier(c.classes).classify(p, {});
  return got ? got->class_name : "";
}

// The TOML block under `gpreemptd.toml: |` of the ConfigMap, de-indented.
std::string configmap_toml() {
  std::istringstream in(gt::read_file(gt::source_dir() / "deploy/kubernetes/configmap.yaml"));
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside) {
      inside = line.find("gpreemptd.toml: |") != std::string::npos;
      continue;
    }
    if (!line.empty() && line.rfind("    ", 0) != 0) break;
    out += (line.size() >= 4 ? line.substr(4) : std::string()) + "\n";
  }
  return out;
}

TEST(SelfDeclaredClass, AProcessNamedServeIsNotOnlineUnderTheShippedConfigs) {
  struct Shipped {
    const char* name;
    std::string text;
  };
  const Shipped configs[] = {
      {"deploy/systemd/gpreemptd.toml",
       gt::read_file(gt::source_dir() / "deploy/systemd/gpreemptd.toml")},
      {"deploy/compose/gpreemptd.toml",
       gt::read_file(gt::source_dir() / "deploy/compose/gpreemptd.toml")},
      {"deploy/kubernetes/configmap.yaml", configmap_toml()},
  };
  for (const auto& s : configs) {
    auto r = gpreemptd::load_daemon_config(s.text, s.name);
    ASSERT_TRUE(r.config) << errors_of(r);
    EXPECT_TRUE(r.warnings.empty()) << s.name << " must not need single_tenant";
    EXPECT_FALSE(r.config->single_tenant) << s.name;
    EXPECT_NE(class_of(*r.config, attacker()), "online") << s.name;
  }
}

TEST(SelfDeclaredClass, TheBuiltInOnlineClassIsOnlyTheDaemonUsersOwn) {
  // gpreemptd as root with no config file: GPREEMPT_CLASS=online from uid 65534 is not online...
  const Config root = builtin_config(0);
  EXPECT_NE(class_of(root, attacker()), "online");
  // ... from root it is, and =offline still works for anyone (the lowest class preempts nobody).
  ProcessFacts own = attacker();
  own.uid = 0;
  EXPECT_EQ(class_of(root, own), "online");
  ProcessFacts offline = attacker();
  offline.environ = {{"GPREEMPT_CLASS", "offline"}};
  EXPECT_EQ(class_of(root, offline), "offline");
}

TEST(SelfDeclaredClass, AConfigThatLetsAProcessDeclareItselfOnlineIsRefusedAtItsLine) {
  const std::string text =
      "[[class]]\nname = \"online\"\npriority = 10\n"
      "match = [{ uid = 1000 }, { cmdline = \"*serve*\" }]\n"  // line 4: the second table
      "\n[[class]]\nname = \"offline\"\npriority = 0\nmatch = { env = \"GPREEMPT_CLASS=offline\" "
      "}\n";
  auto r = gpreemptd::load_daemon_config(text, "g.toml");
  EXPECT_FALSE(r.config);
  ASSERT_EQ(r.errors.size(), 1u) << errors_of(r);
  const std::string e = r.errors[0].to_string();
  EXPECT_EQ(e.rfind("g.toml:4: class 'online' (priority 10) may suspend class 'offline'", 0), 0u)
      << e;
  EXPECT_NE(e.find("cmdline is what the process sets itself"), std::string::npos) << e;
  // And it says what to write instead.
  EXPECT_NE(e.find("{ uid = 1000, cmdline = \"*serve*\" }"), std::string::npos) << e;
  EXPECT_NE(e.find("[policy] single_tenant = true"), std::string::npos) << e;

  // env and exe alike; a middle class preempts too.
  for (const char* rule : {"{ env = \"GPREEMPT_CLASS=online\" }", "{ exe = \"vllm\" }",
                           "{ cgroup = \"*serve*\" }", "{ pid = 77 }"}) {
    auto mid =
        gpreemptd::load_daemon_config(std::string("[[class]]\nname = \"batch\"\npriority = 5\nmatch = ") + rule +
                        "\n[[class]]\nname = \"low\"\npriority = 0\nmatch = { uid = 7 }\n",
                    "m.toml");
    EXPECT_FALSE(mid.config) << rule;
  }
}

TEST(SelfDeclaredClass, WhatAProcessCannotSetItselfIsAccepted) {
  for (const char* rule : {"{ uid = 1000, cmdline = \"*serve*\" }", "{ user = \"vllm\" }",
                           "{ cgroup = \"/system.slice/vllm.service\" }",
                           "{ cgroup = \"/kubepods.slice/kubepods-pod*\" }",
                           "{ cgroup = \"/user.slice/user-1000.slice/*\", env = \"X=1\" }",
                           "{ container = \"vllm-*\" }", "{ pod = \"inference/vllm-*\" }"}) {
    auto r =
        gpreemptd::load_daemon_config(std::string("[[class]]\nname = \"online\"\npriority = 10\nmatch = ") + rule +
                        "\n[[class]]\nname = \"offline\"\npriority = 0\nmatch = { cmdline = "
                        "\"*train*\" }\n",
                    "ok.toml");
    EXPECT_TRUE(r.config) << rule << "\n" << errors_of(r);
  }
  // Cgroups a user names in a delegated subtree are refused.
  for (const char* rule : {"{ cgroup = \"/user.slice/*serve*\" }", "{ cgroup = \"/*.slice/x\" }",
                           "{ cgroup = \"system.slice/x\" }"}) {
    auto r =
        gpreemptd::load_daemon_config(std::string("[[class]]\nname = \"online\"\npriority = 10\nmatch = ") + rule +
                        "\n[[class]]\nname = \"offline\"\npriority = 0\nmatch = { uid = 5 }\n",
                    "bad.toml");
    EXPECT_FALSE(r.config) << rule;
  }
}

TEST(SelfDeclaredClass, ASingleTenantNodeMayUseThemAndIsWarnedAbout) {
  const std::string text =
      "[policy]\nsingle_tenant = true\n\n"
      "[[class]]\nname = \"online\"\npriority = 10\nmatch = { cmdline = \"*serve*\" }\n"
      "\n[[class]]\nname = \"offline\"\npriority = 0\nmatch = { env = \"GPREEMPT_CLASS=offline\" "
      "}\n";
  auto r = gpreemptd::load_daemon_config(text, "st.toml");
  ASSERT_TRUE(r.config) << errors_of(r);
  EXPECT_TRUE(r.config->single_tenant);
  ASSERT_EQ(r.warnings.size(), 1u);
  const std::string w = r.warnings[0].to_string();
  EXPECT_EQ(w.rfind("st.toml:2: single_tenant = true: every local user is trusted", 0), 0u) << w;
  EXPECT_NE(w.find("class 'online' (cmdline=*serve*)"), std::string::npos) << w;
  EXPECT_EQ(trust_warnings(*r.config).size(), 1u);
  // The attacker is online there: that is what the acknowledgement accepts.
  EXPECT_EQ(class_of(*r.config, attacker()), "online");
  EXPECT_FALSE(gpreemptd::load_daemon_config("[policy]\nsingle_tenant = \"yes\"\n", "t.toml").config);
}

}  // namespace
}  // namespace gpreempt::sched
