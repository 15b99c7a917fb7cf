// Pure pieces of the transport: message encoding, the machine layout, path classification, the
// materialised file tree and the /proc status parser.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string_view>

#include "sim/daemon/file_parts.h"
#include "sim/daemon/file_tree.h"
#include "sim/daemon/host_cpu_topology.h"
#include "sim/daemon/host_env_linux.h"
#include "sim/daemon/machine_options.h"
#include "sim/protocol/machine_paths.h"
#include "sim/protocol/messages.h"

using namespace gpreempt::sim;
using namespace gpreempt::sim::protocol;

TEST(Protocol, RequestRoundTrip) {
  Request r{Op::kIoctl, 42, 43, 0xc0204b26, {1, 2, 3, 4}};
  auto bytes = encode(r);
  ASSERT_EQ(bytes.size(), sizeof(RequestHeader) + 4);
  auto d = decode_request(bytes);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->op, Op::kIoctl);
  EXPECT_EQ(d->pid, 42);
  EXPECT_EQ(d->tid, 43);
  EXPECT_EQ(d->arg, 0xc0204b26u);
  EXPECT_EQ(d->payload, (std::vector<uint8_t>{1, 2, 3, 4}));
}

TEST(Protocol, ReplyRoundTripKeepsNegativeReturn) {
  Reply r{-22, {9, 8}};
  auto d = decode_reply(encode(r));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->ret, -22);
  EXPECT_EQ(d->payload, (std::vector<uint8_t>{9, 8}));
}

TEST(Protocol, DecoderRejectsBrokenMessages) {
  auto bytes = encode(Request{Op::kOpenKfd, 1, 1, 0, {}});
  DecodeError err;
  EXPECT_FALSE(decode_request(std::span(bytes).first(10), &err));
  EXPECT_NE(err.what.find("shorter"), std::string::npos);

  auto bad_magic = bytes;
  bad_magic[0] ^= 0xff;
  EXPECT_FALSE(decode_request(bad_magic, &err));
  EXPECT_NE(err.what.find("magic"), std::string::npos);

  auto bad_op = bytes;
  bad_op[6] = 0x7f;  // op field
  EXPECT_FALSE(decode_request(bad_op, &err));
  EXPECT_NE(err.what.find("unknown op"), std::string::npos);

  auto extra = bytes;
  extra.push_back(0);  // payload the header does not announce
  EXPECT_FALSE(decode_request(extra, &err));
  EXPECT_NE(err.what.find("payload"), std::string::npos);
}

TEST(Protocol, HelloCarriesAbsoluteRoot) {
  HelloReply h{1234, "/tmp/m/root"};
  auto d = decode_hello(encode(h));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->daemon_pid, 1234);
  EXPECT_EQ(d->root_dir, "/tmp/m/root");
  EXPECT_FALSE(decode_hello(encode(HelloReply{1, "relative"})));
}

TEST(MachinePaths, FromEnvironment) {
  std::map<std::string, const char*> env;
  auto get = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second;
  };
  EXPECT_EQ(machine_paths(get, 1000).dir, "/tmp/kfdsim-1000");
  env["XDG_RUNTIME_DIR"] = "/run/user/1000";
  EXPECT_EQ(machine_paths(get, 1000).socket, "/run/user/1000/kfdsim/kfdsim.sock");
  env["KFDSIM_SOCKET"] = "/srv/m1/s.sock";
  EXPECT_EQ(machine_paths(get, 1000).dir, "/srv/m1");
  env["KFDSIM_DIR"] = "/srv/m2/";
  auto p = machine_paths(get, 1000);
  EXPECT_EQ(p.dir, "/srv/m2");
  EXPECT_EQ(p.socket, "/srv/m1/s.sock");
  EXPECT_EQ(p.root(), "/srv/m2/root");
}

TEST(MachinePaths, Normalize) {
  EXPECT_EQ(normalize_path("//sys/./class//kfd/../kfd/kfd"), "/sys/class/kfd/kfd");
  EXPECT_EQ(normalize_path("/sys/class/kfd/kfd//"), "/sys/class/kfd/kfd/");
  EXPECT_EQ(normalize_path("/.."), "/");
  EXPECT_EQ(normalize_path("relative/../x"), "relative/../x");
}

TEST(MachinePaths, ClassifiesOnlyKfdTrees) {
  EXPECT_EQ(classify_path("/dev/kfd", "/r").kind, GuestPathKind::kKfdNode);
  auto g = classify_path("/sys/class/kfd/kfd/topology/nodes/1/gpu_id", "/r");
  EXPECT_EQ(g.kind, GuestPathKind::kFile);
  EXPECT_EQ(g.host, "/r/sys/class/kfd/kfd/topology/nodes/1/gpu_id");
  EXPECT_EQ(classify_path("/sys/devices/virtual/kfd", "/r").kind, GuestPathKind::kFile);
  EXPECT_EQ(classify_path("/sys/kernel/debug/kfd/mqds", "/r").kind, GuestPathKind::kFile);
  EXPECT_EQ(classify_path("/sys/class/kfdx", "/r").kind, GuestPathKind::kNone);
  EXPECT_EQ(classify_path("/dev/kfd2", "/r").kind, GuestPathKind::kNone);
  EXPECT_EQ(classify_path("/sys/kernel/debug/dri/0", "/r").kind, GuestPathKind::kNone);
}

TEST(MachinePaths, ClassifiesTheDriverModuleFiles) {
  auto m = classify_path("/proc/modules", "/r");
  EXPECT_EQ(m.kind, GuestPathKind::kFile);
  EXPECT_EQ(m.host, "/r/proc/modules");
  EXPECT_EQ(classify_path("/sys/module/amdgpu/initstate", "/r").host,
            "/r/sys/module/amdgpu/initstate");
  EXPECT_EQ(classify_path("/sys/module/amdgpux", "/r").kind, GuestPathKind::kNone);
  EXPECT_EQ(classify_path("/sys/module/drm", "/r").kind, GuestPathKind::kNone);
  EXPECT_EQ(classify_path("/proc/modules2", "/r").kind, GuestPathKind::kNone);
}

TEST(FileTree, MaterialisesUpdatesAndRemoves) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("kfdsim-tree-" + std::to_string(getpid()));
  fs::remove_all(root);
  daemon::FileTree tree(root.string());
  tree.init();
  EXPECT_EQ(fs::read_symlink(root / "sys/class/kfd/kfd"), "../../devices/virtual/kfd/kfd");
  EXPECT_TRUE(fs::exists(root / "dev/kfd"));

  std::map<std::string, std::string> files = {
      {"sys/class/kfd/kfd/topology/generation_id", "1\n"},
      {"sys/class/kfd/kfd/proc/7/queues/0/size", "4096"},
      {"sys/class/kfd/kfd/proc/7/queues/", ""},
      {"sys/kernel/debug/kfd/rls", "Node 1, gpu_id 1:\n  No active runlist\n"},
  };
  EXPECT_EQ(tree.sync(files), 3);
  auto read = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(read(root / "sys/class/kfd/kfd/proc/7/queues/0/size"), "4096");
  EXPECT_EQ(read(root / "sys/devices/virtual/kfd/kfd/topology/generation_id"), "1\n");
  EXPECT_EQ(tree.sync(files), 0) << "unchanged files are not rewritten";

  files.erase("sys/class/kfd/kfd/proc/7/queues/0/size");
  files.erase("sys/class/kfd/kfd/proc/7/queues/");
  files["sys/class/kfd/kfd/topology/generation_id"] = "2\n";
  tree.sync(files);
  EXPECT_FALSE(fs::exists(root / "sys/class/kfd/kfd/proc/7"));
  EXPECT_EQ(read(root / "sys/class/kfd/kfd/topology/generation_id"), "2\n");
  fs::remove_all(root);
}

TEST(FileTree, KeysEndingInAtAreSymlinks) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("kfdsim-links-" + std::to_string(getpid()));
  fs::remove_all(root);
  daemon::FileTree tree(root.string());
  tree.init();
  std::map<std::string, std::string> files = {
      {"sys/devices/pci0000:00/0000:03:00.0/vendor", "0x1002\n"},
      {"sys/devices/pci0000:00/0000:03:00.0/drm/card0/device@", "../../../0000:03:00.0"},
      {"sys/class/drm/card0@", "../../devices/pci0000:00/0000:03:00.0/drm/card0"},
  };
  EXPECT_EQ(tree.sync(files), 3);
  EXPECT_EQ(fs::read_symlink(root / "sys/class/drm/card0"),
            "../../devices/pci0000:00/0000:03:00.0/drm/card0");
  std::ifstream in(root / "sys/class/drm/card0/device/vendor");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "0x1002\n") << "resolves";
  EXPECT_EQ(tree.sync(files), 0) << "an unchanged link is left alone";
  files["sys/class/drm/card0@"] = "../../devices/pci0000:00/0000:03:00.0/drm/card1";
  EXPECT_EQ(tree.sync(files), 1);
  EXPECT_EQ(fs::read_symlink(root / "sys/class/drm/card0"),
            "../../devices/pci0000:00/0000:03:00.0/drm/card1");
  files.erase("sys/class/drm/card0@");
  tree.sync(files);
  EXPECT_FALSE(fs::is_symlink(root / "sys/class/drm/card0")) << "removed with the key";
  fs::remove_all(root);
}

TEST(FileTree, SyncUnderTouchesOnlyItsSubtree) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("kfdsim-subtree-" + std::to_string(getpid()));
  fs::remove_all(root);
  daemon::FileTree tree(root.string());
  tree.init();
  const std::string proc = "sys/devices/virtual/kfd/kfd/proc";
  tree.sync({{proc + "/7/pasid", "0\n"},
             {proc + "/7/queues/0/size", "4096"},
             {proc + "/70/pasid", "0\n"},  // shares the prefix "proc/7" but not the directory
             {proc + "/8/queues/", ""},
             {"sys/kernel/debug/kfd/rls", "old\n"}});
  auto read = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  // proc/7 goes away: nothing else moves.
  EXPECT_EQ(tree.sync_under(proc + "/7", {}), 5) << "2 files, 3 directories";
  EXPECT_FALSE(fs::exists(root / proc / "7"));
  EXPECT_EQ(read(root / proc / "70/pasid"), "0\n");
  EXPECT_TRUE(fs::is_directory(root / proc / "8/queues"));
  EXPECT_EQ(read(root / "sys/kernel/debug/kfd/rls"), "old\n");
  // One file, with its directories above created as needed; unchanged bytes are not rewritten.
  EXPECT_EQ(tree.sync_under(proc + "/9", {{proc + "/9/queues/3/gpuid", "1"}}), 1);
  EXPECT_EQ(read(root / proc / "9/queues/3/gpuid"), "1");
  EXPECT_EQ(tree.sync_under(proc + "/9", {{proc + "/9/queues/3/gpuid", "1"}}), 0);
  EXPECT_EQ(tree.sync_under("sys/kernel/debug/kfd/rls", {{"sys/kernel/debug/kfd/rls", "new\n"}}), 1);
  EXPECT_EQ(read(root / "sys/kernel/debug/kfd/rls"), "new\n");
  // A whole directory: what is not rendered any more goes, the class path lands on the device.
  tree.sync_under(proc, {{"sys/class/kfd/kfd/proc/8/pasid", "0\n"}});
  EXPECT_EQ(read(root / proc / "8/pasid"), "0\n");
  EXPECT_FALSE(fs::exists(root / proc / "8/queues"));
  EXPECT_FALSE(fs::exists(root / proc / "70"));
  EXPECT_FALSE(fs::exists(root / proc / "9"));
  EXPECT_EQ(read(root / "sys/kernel/debug/kfd/rls"), "new\n");
  // A key outside the subtree is a caller's bug, named.
  try {
    tree.sync_under(proc + "/8", {{proc + "/80/pasid", "0\n"}});
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("proc/80/pasid"), std::string::npos) << e.what();
  }
  // The full sync afterwards still sees everything the partial ones made.
  tree.sync({{"sys/kernel/debug/kfd/rls", "new\n"}});
  EXPECT_FALSE(fs::exists(root / proc / "8"));
  fs::remove_all(root);
}

TEST(FileParts, ALookupRendersThePartsItCanReach) {
  using daemon::parts_for_lookup;
  auto names = [](std::string_view path) {
    std::string s;
    for (const auto& p : parts_for_lookup(path)) s += (s.empty() ? "" : " ") + p.subtree;
    return s;
  };
  const std::string proc = "sys/devices/virtual/kfd/kfd/proc";
  const std::string dbg = "sys/kernel/debug/kfd/";
  const std::string all = proc + " " + dbg + "mqds " + dbg + "hqds " + dbg + "rls";
  EXPECT_EQ(names("/sys/class/kfd/kfd/proc/42/queues/0/size"), proc + "/42");
  EXPECT_EQ(names("/sys/devices/virtual/kfd/kfd/proc/42/"), proc + "/42");
  EXPECT_EQ(names("/sys/class/kfd/kfd/proc/42"), proc + "/42");
  EXPECT_EQ(names("/sys/class/kfd/kfd/proc"), proc);
  EXPECT_EQ(names("/sys/class/kfd/kfd/proc/"), proc);
  EXPECT_EQ(names("/sys/class/kfd/kfd"), proc);
  EXPECT_EQ(names("/sys/class/kfd"), proc) << "the class link leads to proc/";
  EXPECT_EQ(names("/sys/devices/virtual/kfd"), proc);
  EXPECT_EQ(names("/sys/class/kfd/kfd/topology/nodes/2/properties"), "") << "static: rendered at start";
  EXPECT_EQ(names("/sys/dev/char/226:128/device/vendor"), "");
  EXPECT_EQ(names("/sys/kernel/debug/kfd/hqds"), dbg + "hqds");
  EXPECT_EQ(names("/sys/kernel/debug/kfd/"), dbg + "mqds " + dbg + "hqds " + dbg + "rls");
  EXPECT_EQ(names("/sys"), all);
  EXPECT_EQ(names("/"), all);
  EXPECT_EQ(names(""), all);
  // Names KFD never prints for a process: nothing to render (the lookup finds nothing).
  EXPECT_EQ(names("/sys/class/kfd/kfd/proc/042"), "");
  EXPECT_EQ(names("/sys/class/kfd/kfd/proc/-1"), "");
  EXPECT_EQ(names("/sys/class/kfd/kfd/proc/99999999999"), "");
  EXPECT_EQ(names("/sys/class/kfd/kfd/process"), "");
}

TEST(ProcStatus, ParsesTgidTracerAndAddressSpace) {
  auto s = daemon::parse_proc_status(
      "Name:\tprobe\nState:\tS (sleeping)\nTgid:\t100\nPid:\t101\nTracerPid:\t55\nVmSize:\t 1000 kB\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->tgid, 100);
  EXPECT_EQ(s->tracer_pid, 55);
  EXPECT_TRUE(s->has_mm);
  auto zombie = daemon::parse_proc_status("Name:\tx\nState:\tZ (zombie)\nTgid:\t9\nTracerPid:\t0\n");
  ASSERT_TRUE(zombie);
  EXPECT_FALSE(zombie->has_mm);
  EXPECT_FALSE(daemon::parse_proc_status("garbage"));
}

TEST(MachineOptions, EnvironmentErrorsNameTheVariable) {
  daemon::MachineOptions o;
  std::map<std::string, const char*> env = {{"KFDSIM_KFD_MINOR", "12"}, {"KFDSIM_GPUS", "2"}};
  auto get = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second;
  };
  EXPECT_EQ(daemon::apply_environment(o, get), "");
  EXPECT_EQ(o.kfd_minor, 12u);
  EXPECT_EQ(o.gpus, 2u);
  env["KFDSIM_SCHED_POLICY"] = "7";
  EXPECT_NE(daemon::apply_environment(o, get).find("KFDSIM_SCHED_POLICY"), std::string::npos);
  env.erase("KFDSIM_SCHED_POLICY");
  env["KFDSIM_KERNEL_HZ"] = "1000";
  EXPECT_EQ(daemon::apply_environment(o, get), "");
  EXPECT_EQ(o.kernel_hz, 1000u);
  env["KFDSIM_KERNEL_HZ"] = "300";
  EXPECT_NE(daemon::apply_environment(o, get).find("KFDSIM_KERNEL_HZ"), std::string::npos)
      << "a CONFIG_HZ that does not divide 1000 ms";
}

TEST(HostCpuTopology, CountsKernelCpuLists) {
  EXPECT_EQ(daemon::count_cpulist("0-3,8,10-11\n"), 7u);
  EXPECT_EQ(daemon::count_cpulist("0"), 1u);
  EXPECT_EQ(daemon::count_cpulist(""), 0u);
  EXPECT_FALSE(daemon::count_cpulist("3-1"));
  EXPECT_FALSE(daemon::count_cpulist("a-b"));
}

TEST(Protocol, DrmDeviceInfoRoundTrip) {
  DrmDeviceInfo d;
  d.render_minor = 129;
  d.device_id = 0x74a2;
  auto back = decode_drm_device(encode(d));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->render_minor, 129u);
  EXPECT_EQ(back->device_id, 0x74a2u);
  EXPECT_FALSE(decode_drm_device(std::vector<uint8_t>(3)));
}
