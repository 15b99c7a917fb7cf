// One sniffing function tells what a file is; every decoder handed another kind of file stops
// after a few lines with one diagnostic naming what it looks like and the command that reads it.
// Checked on every real capture (and the kernel-format examples) against every decoder.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "discovery/hqds.h"
#include "discovery/input_kind.h"
#include "discovery/mqds.h"
#include "discovery/properties.h"
#include "discovery/rls.h"
#include "fixtures.h"

using namespace gpreempt::discovery;
namespace gt = gpreempt::testing;

namespace {

struct Capture {
  const char* path;  // under ../shared
  InputKind kind;
};

const Capture kCaptures[] = {
    {"realdata/debugfs/01_mi308x_rocm702_hqds_full.txt", InputKind::hqds},
    {"realdata/debugfs/02_mi308x_rocm702_hqds_baseline_node2.txt", InputKind::hqds},
    {"realdata/debugfs/03_mi308x_rocm702_mqds.txt", InputKind::mqds},
    {"realdata/debugfs/04_mi308x_rocm702_rocminfo.txt", InputKind::rocminfo},
    {"realdata/debugfs/10_mi300x_x4_sriov_rocm-smi-a.txt", InputKind::rocm_smi},
    {"realdata/amdlog/01_hpctraining_hipstdpar_mi300a.log", InputKind::hip_log},
    {"realdata/amdlog/02_strixhalo_rpc_queue_abort.log", InputKind::hip_log},
    {"realdata/amdlog/03_mi308x_rocm702_stream_priority_L4.log", InputKind::hip_log},
    {"realdata/amdlog/04_mi308x_rocm702_16streams_L3.log", InputKind::hip_log},
    {"realdata/amdlog/12_lumi_mi250x_rocm561_terminal_wrapped.log", InputKind::hip_log},
    {"realdata/amdlog/13_p1sin_rx7800xt_rocm612_hostcall.log", InputKind::hip_log},
    // Synthetic files in the exact kernel formats: the only rls and properties text there is.
    {"kfd/examples/rls.txt", InputKind::rls},
    {"kfd/examples/hqds.txt", InputKind::hqds},
    {"kfd/examples/hqds_stopped.txt", InputKind::hqds},
    {"kfd/examples/mqds.txt", InputKind::mqds},
    {"kfd/examples/mqds_older_header.txt", InputKind::mqds},
    {"kfd/examples/sys_class_kfd_kfd/topology/nodes/0/properties", InputKind::properties},
    {"kfd/examples/sys_class_kfd_kfd/topology/nodes/1/properties", InputKind::properties},
};

// The result of decoding `text` as `as`: whether it was taken for another kind, and the diagnostics.
struct Outcome {
  std::optional<InputKind> looks_like;
  std::vector<Diagnostic> diagnostics;
  bool complete;
};

Outcome decode_as(InputKind as, const std::string& text) {
  switch (as) {
    case InputKind::properties: {
      auto r = decode_properties(text, "F");
      return {r.looks_like, r.diagnostics, r.complete};
    }
    case InputKind::mqds: {
      auto r = decode_mqds(text, "F");
      return {r.looks_like, r.diagnostics, r.complete};
    }
    case InputKind::hqds: {
      auto r = decode_hqds(text, "F");
      return {r.looks_like, r.diagnostics, r.complete};
    }
    case InputKind::rls: {
      auto r = decode_rls(text, "F");
      return {r.looks_like, r.diagnostics, r.complete};
    }
    default: break;
  }
  ADD_FAILURE() << "no decoder for that kind";
  return {};
}

const InputKind kDecoders[] = {InputKind::properties, InputKind::mqds, InputKind::hqds, InputKind::rls};

}  // namespace

TEST(InputKindSniff, EveryCaptureIsRecognised) {
  GPREEMPT_REQUIRE_SHARED();
  for (const auto& c : kCaptures)
    EXPECT_EQ(sniff_input(gt::read_file(gt::shared_dir() / c.path)), c.kind) << c.path;
}

TEST(InputKindSniff, EveryCaptureAgainstEveryDecoder) {
  GPREEMPT_REQUIRE_SHARED();
  for (const auto& c : kCaptures) {
    const std::string text = gt::read_file(gt::shared_dir() / c.path);
    for (InputKind d : kDecoders) {
      const Outcome o = decode_as(d, text);
      if (d == c.kind) {
        EXPECT_FALSE(o.looks_like) << c.path << " decoded as its own kind";
        EXPECT_TRUE(o.complete) << c.path << ": " << (o.diagnostics.empty() ? "" : o.diagnostics[0].message);
        continue;
      }
      ASSERT_TRUE(o.looks_like) << c.path << " given to the " << describe(d) << " decoder";
      EXPECT_EQ(*o.looks_like, c.kind) << c.path;
      EXPECT_FALSE(o.complete);
      ASSERT_EQ(o.diagnostics.size(), 1u) << c.path;
      const std::string& msg = o.diagnostics[0].message;
      EXPECT_EQ(msg, wrong_kind_message(c.kind, d, "F"));
      EXPECT_NE(msg.find(std::string(describe(c.kind))), std::string::npos) << msg;
      if (auto cmd = command_for(c.kind, "F"))
        EXPECT_NE(msg.find("try `" + *cmd + "`"), std::string::npos) << msg;
      else
        EXPECT_NE(msg.find("gpreempt does not decode"), std::string::npos) << msg;
    }
  }
}

TEST(InputKindSniff, HintNamesTheCommandForTheFile) {
  EXPECT_EQ(wrong_kind_message(InputKind::hqds, InputKind::mqds, "saved.txt"),
            "this looks like debugfs hqds output, not debugfs mqds output: try `gpreempt decode hqds saved.txt`");
  EXPECT_EQ(wrong_kind_message(InputKind::hip_log, InputKind::hqds, "<stdin>"),
            "this looks like a HIP runtime log (AMD_LOG_LEVEL), not debugfs hqds output: try "
            "`gpreempt log analyze FILE`");
}

TEST(InputKindSniff, HqdsAndRlsAreToldApartByTheLineAfterTheNodeHeader) {
  EXPECT_EQ(sniff_input("Node 1, gpu_id 1a2b:\n  00000000: c011a100 00000000\n"), InputKind::rls);
  EXPECT_EQ(sniff_input("Node 1, gpu_id 1a2b:\n  No active runlist\n"), InputKind::rls);
  EXPECT_EQ(sniff_input("Node 1, gpu_id 1a2b:\n Device is stopped\n"), InputKind::hqds);
  EXPECT_EQ(sniff_input("Node 1, gpu_id 1a2b:\n  HIQ on MEC 2 Pipe 0 Queue 0\n"), InputKind::hqds);
  EXPECT_EQ(sniff_input("Node 1, gpu_id 1a2b:\n"), InputKind::unknown);
}

TEST(InputKindSniff, DamagedFilesOfTheRightKindAreNeverTakenForAnotherKind) {
  GPREEMPT_REQUIRE_SHARED();
  // Cut after the first lines, rows damaged: still decoded as what they are (with diagnostics).
  const std::string mqds = gt::read_file(gt::shared_dir() / "realdata/debugfs/03_mi308x_rocm702_mqds.txt");
  auto m = decode_mqds("garbage line\n" + mqds.substr(0, 2000), "F");
  EXPECT_FALSE(m.looks_like);
  EXPECT_FALSE(m.complete);
  const std::string hqds = gt::read_file(gt::shared_dir() / "realdata/debugfs/02_mi308x_rocm702_hqds_baseline_node2.txt");
  auto h = decode_hqds(hqds.substr(0, 21) + "    zzzz\n" + hqds.substr(21), "F");
  EXPECT_FALSE(h.looks_like);
  EXPECT_FALSE(h.complete);
}

TEST(InputKindSniff, UnrecognisedInputIsDecodedWithOrdinaryDiagnostics) {
  auto m = decode_mqds("hello\nworld\n", "F");
  EXPECT_FALSE(m.looks_like);
  EXPECT_EQ(m.diagnostics.size(), 2u);
  auto p = decode_properties("", "F");
  EXPECT_FALSE(p.looks_like);
}

TEST(InputKindSniff, TheWrongDecoderReadsOnlyAFewLines) {
  // A huge hqds file given to decode mqds is recognised on its second line; nothing past it counts.
  std::string text = "Node 1, gpu_id 1a2b:\n  HIQ on MEC 2 Pipe 0 Queue 0\n";
  for (int i = 0; i < 100000; ++i) text += "garbage that would be a diagnostic each\n";
  auto m = decode_mqds(text, "F");
  ASSERT_TRUE(m.looks_like);
  EXPECT_EQ(*m.looks_like, InputKind::hqds);
  EXPECT_EQ(m.diagnostics.size(), 1u);
  EXPECT_TRUE(m.processes.empty());
}
