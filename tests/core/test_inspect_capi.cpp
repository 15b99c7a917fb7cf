// The inspection C ABI (gpreempt/inspect.h) through the shared library: the documents equal the
// CLI's --json on the real captures, truncated input gives a partial document (return 0) naming
// the input and line, and failures leave *json_out unchanged with a detail message.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "gpreempt/inspect.h"
#include "support/fixtures.h"

namespace {

using gpreempt::testing::binary_dir;
using gpreempt::testing::read_file;
using gpreempt::testing::shared_dir;
using nlohmann::json;

struct Result {
  int rc = 0;
  json doc;
};

// Takes ownership of a returned string (gpreempt_free) and parses it.
json take(char* s) {
  std::unique_ptr<char, void (*)(void*)> owned(s, gpreempt_free);
  return json::parse(s);
}

Result decode(const char* kind, const std::string& text, const char* name) {
  char* out = nullptr;
  Result r;
  r.rc = gpreempt_decode(kind, text.data(), text.size(), name, &out);
  if (r.rc >= 0) r.doc = take(out);
  return r;
}

std::string debugfs(const char* file) { return (shared_dir() / "realdata" / "debugfs" / file).string(); }

// The gpreempt CLI's stdout (it exits 1 on incomplete input, with the partial document printed).
json cli_json(const std::string& args) {
  const std::string cmd = (binary_dir() / "bin" / "gpreempt").string() + " " + args + " --json 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  if (!p) throw std::runtime_error("cannot run " + cmd);
  std::string out;
  char buf[65536];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p.get())) > 0;) out.append(buf, n);
  return json::parse(out);
}

// A captured mqds cut inside a hex line: the kind of paste the user actually made.
std::string cut_mid_line(const std::string& text, std::size_t line_no) {
  std::size_t pos = 0;
  for (std::size_t i = 0; i < line_no && pos != std::string::npos; ++i) pos = text.find('\n', pos + 1);
  return text.substr(0, pos + 20);
}

}  // namespace

TEST(CoreInspectCApi, DecodeEqualsTheCliOnRealCaptures) {
  GPREEMPT_REQUIRE_SHARED();
  const struct {
    const char* kind;
    const char* file;
  } cases[] = {{"mqds", "03_mi308x_rocm702_mqds.txt"},
               {"hqds", "01_mi308x_rocm702_hqds_full.txt"},
               {"hqds", "02_mi308x_rocm702_hqds_baseline_node2.txt"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string path = debugfs(c.file);
    Result r = decode(c.kind, read_file(path), path.c_str());
    ASSERT_EQ(r.rc, 1) << r.doc.dump();
    EXPECT_EQ(r.doc["complete"], true);
    EXPECT_EQ(r.doc, cli_json(std::string("decode ") + c.kind + " " + path));
  }
}

TEST(CoreInspectCApi, QueueMapOfRealCapturesShowsFiveQueuesOnFourXccs) {
  GPREEMPT_REQUIRE_SHARED();
  const std::string mqds = read_file(debugfs("03_mi308x_rocm702_mqds.txt"));
  const std::string hqds = read_file(debugfs("01_mi308x_rocm702_hqds_full.txt"));
  char* out = nullptr;
  ASSERT_EQ(gpreempt_queue_map(mqds.c_str(), hqds.c_str(), nullptr, nullptr, -1, &out), 1)
      << gpreempt_last_error();
  const json doc = take(out);
  ASSERT_EQ(doc["queues"].size(), 5u);
  for (const auto& q : doc["queues"]) {
    EXPECT_EQ(q["pid"], 94314);
    EXPECT_EQ(q["gpu_id"], 0xf7bc);
    EXPECT_EQ(q["type"], "compute");
    EXPECT_EQ(q["queue_id_inferred"], true);
    std::set<int> active_xccs;
    for (const auto& s : q["hw_slots"])
      if (s["active"] == true) active_xccs.insert(s["xcc"].get<int>());
    EXPECT_EQ(active_xccs, (std::set<int>{0, 1, 2, 3}));
  }
  EXPECT_EQ(doc, cli_json("map --offline --mqds " + debugfs("03_mi308x_rocm702_mqds.txt") + " --hqds " +
                          debugfs("01_mi308x_rocm702_hqds_full.txt")));

  // The pid filter keeps this process's rows and drops every other.
  ASSERT_EQ(gpreempt_queue_map(mqds.c_str(), hqds.c_str(), nullptr, nullptr, 94314, &out), 1);
  EXPECT_EQ(take(out)["queues"].size(), 5u);
  ASSERT_EQ(gpreempt_queue_map(mqds.c_str(), hqds.c_str(), nullptr, nullptr, 1, &out), 1);
  EXPECT_TRUE(take(out)["queues"].empty());
}

TEST(CoreInspectCApi, TruncatedMqdsGivesPartialDocumentNamingFileAndLine) {
  GPREEMPT_REQUIRE_SHARED();
  const std::string cut = cut_mid_line(read_file(debugfs("03_mi308x_rocm702_mqds.txt")), 40);
  Result r = decode("mqds", cut, "pasted.txt");
  ASSERT_EQ(r.rc, 0) << r.doc.dump();
  EXPECT_EQ(r.doc["complete"], false);
  ASSERT_FALSE(r.doc["diagnostics"].empty());
  EXPECT_EQ(r.doc["diagnostics"][0]["file"], "pasted.txt");
  EXPECT_GT(r.doc["diagnostics"][0]["line"].get<int>(), 0);
  // What was decoded before the cut is still there, and the cut queue says it is incomplete.
  ASSERT_FALSE(r.doc["processes"].empty());
  EXPECT_EQ(r.doc["processes"][0]["pid"], 94314);
  EXPECT_EQ(r.doc["processes"][0]["queues"].back()["complete"], false);

  // The map over a cut dump is still built, and says it is incomplete.
  const std::string hqds = read_file(debugfs("01_mi308x_rocm702_hqds_full.txt"));
  char* out = nullptr;
  ASSERT_EQ(gpreempt_queue_map(cut.c_str(), hqds.c_str(), nullptr, nullptr, -1, &out), 0);
  const json map = take(out);
  EXPECT_EQ(map["complete"], false);
  EXPECT_EQ(map["diagnostics"][0]["file"], "<mqds>");
}

TEST(CoreInspectCApi, EveryPrefixOfEveryCaptureDecodesWithoutCrashing) {
  GPREEMPT_REQUIRE_SHARED();
  const struct {
    const char* kind;
    std::string path;
  } cases[] = {{"mqds", debugfs("03_mi308x_rocm702_mqds.txt")},
               {"hqds", debugfs("02_mi308x_rocm702_hqds_baseline_node2.txt")},
               {"rls", (shared_dir() / "kfd" / "examples" / "rls.txt").string()},
               {"properties", (shared_dir() / "kfd" / "examples" / "sys_class_kfd_kfd" / "topology" / "nodes" /
                               "1" / "properties").string()}};
  for (const auto& c : cases) {
    const std::string text = read_file(c.path);
    ASSERT_EQ(decode(c.kind, text, "whole").rc, 1) << c.path;
    // 97 cut points spread over the file (a prime step, so cuts fall at varied columns).
    for (std::size_t i = 1; i < 98; ++i) {
      const std::size_t len = text.size() * i / 98;
      SCOPED_TRACE(std::string(c.kind) + " cut at byte " + std::to_string(len));
      Result r = decode(c.kind, text.substr(0, len), "cut");
      ASSERT_GE(r.rc, 0) << gpreempt_last_error();
      EXPECT_EQ(r.doc["complete"], r.rc == 1);
      if (r.rc == 0) {
        ASSERT_FALSE(r.doc["diagnostics"].empty());
        EXPECT_EQ(r.doc["diagnostics"][0]["file"], "cut");
      }
    }
  }
}

TEST(CoreInspectCApi, PropertiesByKey) {
  const std::string text = "cpu_cores_count 0\nsimd_count 1216\nsimd_per_cu 4\nnum_xcc 8\n"
                           "gfx_target_version 90402\n";
  Result r = decode("properties", text, "props");
  ASSERT_EQ(r.rc, 1) << r.doc.dump();
  EXPECT_EQ(r.doc["gpu"], true);
  EXPECT_EQ(r.doc["compute_units"], 304);
  EXPECT_EQ(r.doc["gfx_target"], "gfx942");
  EXPECT_EQ(r.doc["properties"]["simd_count"], 1216);
}

TEST(CoreInspectCApi, LogAnalyzeOfRealLogEqualsTheCli) {
  GPREEMPT_REQUIRE_SHARED();
  const std::string path = (shared_dir() / "realdata" / "amdlog" / "03_mi308x_rocm702_stream_priority_L4.log").string();
  const std::string text = read_file(path);
  char* out = nullptr;
  ASSERT_EQ(gpreempt_log_analyze(text.data(), text.size(), path.c_str(), -1, &out), 1) << gpreempt_last_error();
  const json doc = take(out);
  ASSERT_EQ(doc["files"].size(), 1u);
  EXPECT_FALSE(doc["files"][0]["hw_queues"].empty());
  EXPECT_EQ(doc["files"][0]["file"], path);
  EXPECT_EQ(doc, cli_json("log analyze " + path));
}

TEST(CoreInspectCApi, LogPidFilterKeepsOnlyThatProcess) {
  const std::string text =
      ":3:rocdevice.cpp:2768: 1234567890 us: [pid:100 tid: 0x7f01] Created SWq=0x7f10 to map on "
      "HWq=0x7e000000 with size 1024 with priority 1, cooperative: 0\n"
      ":3:rocdevice.cpp:2768: 1234567891 us: [pid:200 tid: 0x7f02] Created SWq=0x7f20 to map on "
      "HWq=0x7d000000 with size 1024 with priority 2, cooperative: 0\n";
  char* out = nullptr;
  ASSERT_EQ(gpreempt_log_analyze(text.data(), text.size(), nullptr, -1, &out), 1);
  json all = take(out)["files"][0];
  EXPECT_EQ(all["file"], "<string>");
  ASSERT_EQ(all["hw_queues"].size(), 2u);
  ASSERT_EQ(gpreempt_log_analyze(text.data(), text.size(), nullptr, 200, &out), 1);
  json one = take(out)["files"][0];
  ASSERT_EQ(one["hw_queues"].size(), 1u);
  EXPECT_EQ(one["hw_queues"][0]["hwq"], "0x7d000000");
  EXPECT_EQ(one["hw_queues"][0]["priority"], 2);
}

TEST(CoreInspectCApi, FailuresLeaveOutputUnchangedAndExplain) {
  char sentinel = 0;
  char* out = &sentinel;
  EXPECT_EQ(gpreempt_decode("mqd", "x", 1, nullptr, &out), -EINVAL);
  EXPECT_EQ(out, &sentinel);
  EXPECT_NE(std::string(gpreempt_last_error()).find("\"mqd\""), std::string::npos) << gpreempt_last_error();
  EXPECT_EQ(gpreempt_decode(nullptr, "x", 1, nullptr, &out), -EINVAL);
  EXPECT_EQ(gpreempt_decode("mqds", nullptr, 5, nullptr, &out), -EINVAL);
  EXPECT_EQ(gpreempt_decode("mqds", "x", 1, nullptr, nullptr), -EINVAL);
  EXPECT_EQ(gpreempt_log_analyze("x", 1, nullptr, -2, &out), -EINVAL);
  EXPECT_EQ(gpreempt_queue_map(nullptr, nullptr, "rls", "log", -1, &out), -EINVAL);
  EXPECT_NE(std::string(gpreempt_last_error()).find("mqds or the hqds"), std::string::npos);
  EXPECT_EQ(out, &sentinel);
  // Empty input is not an error: an empty document (NULL text with len 0 included).
  Result r = decode("mqds", "", "empty");
  EXPECT_GE(r.rc, 0);
  EXPECT_TRUE(r.doc["processes"].empty());
  ASSERT_GE(gpreempt_decode("hqds", nullptr, 0, nullptr, &out), 0);
  gpreempt_free(out);
  gpreempt_free(nullptr);
}
