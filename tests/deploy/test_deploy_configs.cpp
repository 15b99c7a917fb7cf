// Every example config under deploy/ loads without an error in lib/sched's parser, the one
// gpreemptd --check-config uses, so a copied example never stops a daemon from starting.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "fixtures.h"
#include "daemon_config.h"

namespace gt = gpreempt::testing;

namespace {

std::string errors_of(const gpreemptd::DaemonConfigResult& r) {
  std::string s;
  for (const auto& e : r.errors) s += e.to_string() + "\n";
  return s;
}

// The TOML block under `gpreemptd.toml: |` of the ConfigMap, de-indented.
std::string configmap_toml(const std::string& yaml) {
  std::istringstream in(yaml);
  std::string line, out;
  bool inside = false;
  std::size_t indent = 0;
  while (std::getline(in, line)) {
    if (!inside) {
      if (line.find("gpreemptd.toml: |") != std::string::npos) inside = true;
      continue;
    }
    if (line.find_first_not_of(' ') == std::string::npos) {
      out += "\n";
      continue;
    }
    const std::size_t here = line.find_first_not_of(' ');
    if (indent == 0) indent = here;
    if (here < indent) break;
    out += line.substr(indent) + "\n";
  }
  return out;
}

}  // namespace

// By text: the checkout's owner and mode are the developer's (check_config would judge them), and
// what is checked here is what the files say. No warning: the shipped configs do not rely on
// single_tenant (docs/security.md).
TEST(DeployConfigs, SystemdAndComposeExamplesLoad) {
  for (const char* rel : {"deploy/systemd/gpreemptd.toml", "deploy/compose/gpreemptd.toml"}) {
    const auto path = (gt::source_dir() / rel).string();
    const auto r = gpreemptd::load_daemon_config(gt::read_file(path), path);
    EXPECT_TRUE(r.errors.empty()) << errors_of(r);
    ASSERT_TRUE(r.config) << path;
    EXPECT_TRUE(r.warnings.empty()) << path;
    EXPECT_FALSE(r.config->single_tenant) << path;
  }
}

TEST(DeployConfigs, ConfigMapLoads) {
  const std::string text = configmap_toml(gt::read_file(gt::source_dir() / "deploy/kubernetes/configmap.yaml"));
  ASSERT_NE(text.find("[[class]]"), std::string::npos) << text;
  const auto r = gpreemptd::load_daemon_config(text, "configmap.yaml:gpreemptd.toml");
  EXPECT_TRUE(r.errors.empty()) << errors_of(r);
  ASSERT_TRUE(r.config);
  EXPECT_TRUE(r.warnings.empty());
}

// The examples are what the parser refuses when broken: a planted typo is caught.
TEST(DeployConfigs, ATypoIsCaught) {
  std::string text = gt::read_file(gt::source_dir() / "deploy/systemd/gpreemptd.toml");
  text.replace(text.find("max_suspension_ms"), 17, "max_suspensions_ms");
  EXPECT_FALSE(gpreemptd::load_daemon_config(text, "typo.toml").errors.empty());
}
