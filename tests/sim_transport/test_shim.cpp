// One process under the shim: /dev/kfd opens, ioctl dispatch rules (FACTS §2), descriptor
// bookkeeping, and the simulated sysfs/debugfs files as every kind of reader sees them.
#include <gtest/gtest.h>

#include <filesystem>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "machine_fixture.h"
#include "sim/protocol/query.h"

using gpreempt::testing::Child;
using gpreempt::testing::Machine;

namespace {

std::string host_digest(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  std::ostringstream o;
  o << bytes.size() << " " << std::hex << h;
  return o.str();
}

std::string host_listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  std::string joined;
  for (auto& n : names) joined += (joined.empty() ? "" : ",") + n;
  return joined;
}

}  // namespace

TEST(ShimIoctl, OpenGetVersionClose) {
  Machine m;
  auto p = m.probe();
  EXPECT_EQ(p->call("open").substr(0, 2) == "-1", false);
  EXPECT_EQ(p->call("version"), "0 0 1 22");
  EXPECT_EQ(p->call("close"), "0 0");
}

TEST(ShimIoctl, DeviceStillAnswersInExitHandlers) {
  // The handler is registered before the process first reaches the shim (as a HIP program's
  // module destructor is, before its first HIP call opens the device) and runs after main
  // returns, when the main thread's thread_local objects are gone: a kernel's file still works
  // there, and a HIP program frees its code objects' memory in it.
  Machine m;
  auto p = m.probe();
  EXPECT_EQ(p->call("atexit"), "0 0");
  EXPECT_EQ(p->call("open").substr(0, 2) == "-1", false);
  EXPECT_EQ(p->call("version"), "0 0 1 22");
  p->send("exit");
  EXPECT_EQ(p->finish(), 0);
  EXPECT_EQ(p->rest(), "atexit 0 0 1 22\n");
}

TEST(ShimIoctl, KfdFdLooksLikeACharacterDeviceAndCannotBeRead) {
  Machine m;
  auto p = m.probe();
  p->call("open");
  EXPECT_EQ(p->call("fstat"), "0 0 chr 234");
  EXPECT_EQ(p->call("read"), "-1 22") << "kfd has no read method: -EINVAL";
  EXPECT_EQ(p->call("stat /dev/kfd"), "0 0 chr 0");
}

TEST(ShimIoctl, ConfiguredMinorVersion) {
  Machine m(std::map<std::string, std::string>{{"KFDSIM_KFD_MINOR", "12"}});
  auto p = m.probe();
  p->call("open");
  EXPECT_EQ(p->call("version"), "0 0 1 12");
}

TEST(ShimIoctl, UnknownIoctlNumberIsEnotty) {  // FACTS §2: nr outside the table → -ENOTTY
  Machine m;
  auto p = m.probe();
  p->call("open");
  EXPECT_EQ(p->call("enotty"), "-1 25");
}

TEST(ShimIoctl, ArgsAreCopiedBackEvenOnFailure) {
  // FACTS §8 GET_QUEUE_SNAPSHOT: num_queues is zeroed first, entry_size 0 → -EINVAL, and the
  // args still travel back (FACTS §2), so the caller sees num_queues == 0 (it passed 64).
  Machine m;
  auto p = m.probe();
  p->call("open");
  p->call("runtime_enable");
  ASSERT_EQ(p->call("enable 0").substr(0, 3), "0 0") << "a process may debug itself without ptrace";
  EXPECT_EQ(p->call("snapshot0 0"), "-1 22 0");
}

TEST(ShimIoctl, ForkedChildCannotUseParentsFd) {  // FACTS §2: fd bound to the opening process
  Machine m;
  auto p = m.probe();
  p->call("open");
  EXPECT_EQ(p->call("fork_version"), "0 0") << "child: inherited fd → EBADF, own open works";
  EXPECT_EQ(p->call("version"), "0 0 1 22") << "the parent's fd still works";
}

TEST(ShimIoctl, DuplicatedFdsStayKfdFiles) {
  Machine m;
  auto p = m.probe();
  p->call("open");
  EXPECT_EQ(p->call("dup"), "0 0 22 22 22 ") << "dup, fcntl(F_DUPFD_CLOEXEC), dup2 after close";
}

TEST(ShimIoctl, AcquireVmAgainTakesOnlyTheSameRenderFile) {
  // docs/kfd-interface.md#memory: the same file (or a dup of it) again is fine; a second open of
  // the same render node is another file: EBUSY.
  Machine m;
  auto p = m.probe();
  p->call("open");
  const std::string first = p->call("render"), second = p->call("render");
  ASSERT_EQ(first.find('-'), std::string::npos) << first;
  const std::string fd1 = first.substr(0, first.find(' ')), fd2 = second.substr(0, second.find(' '));
  const std::string dup1 = p->call("dupfd " + fd1);
  EXPECT_EQ(p->call("acquire " + fd1), "0 0");
  EXPECT_EQ(p->call("acquire " + fd1), "0 0") << "the same file again";
  EXPECT_EQ(p->call("acquire " + dup1.substr(0, dup1.find(' '))), "0 0") << "a dup of it";
  EXPECT_EQ(p->call("acquire " + fd2), "-1 16") << "another open of the same node: EBUSY";
  EXPECT_EQ(p->call("acquire 999"), "-1 22") << "not an open file";
}

TEST(ShimIoctl, AcquireVmTakesNoFileButARenderNode) {
  // amdgpu_file_to_fpriv: a file that is not amdgpu's DRM file is EINVAL, whatever it is.
  Machine m;
  auto p = m.probe();
  const std::string kfd = p->call("open");
  EXPECT_EQ(p->call("acquire 0"), "-1 22") << "stdin";
  EXPECT_EQ(p->call("acquire " + kfd.substr(0, kfd.find(' '))), "-1 22") << "/dev/kfd itself";
  const std::string node = p->call("render");
  ASSERT_EQ(node.find('-'), std::string::npos) << node;
  EXPECT_EQ(p->call("acquire " + node.substr(0, node.find(' '))), "0 0");
}

TEST(ShimIoctl, DoorbellPageIsSharedMemory) {
  // Two mappings of the queue's doorbell page see the same bytes (the daemon's memfd), and the
  // kernel's generic mmap rule holds: an offset that is not page-aligned is EINVAL.
  Machine m;
  auto p = m.probe();
  p->call("open");
  EXPECT_EQ(p->call("doorbell"), "0 0 1 1 22");
}

TEST(ShimIoctl, OtherFdsPassThrough) {
  Machine m;
  auto p = m.probe();
  EXPECT_EQ(p->call("stat /etc/hostname").substr(0, 8), "0 0 reg ");
  EXPECT_EQ(p->call("cat /nonexistent/kfd/file"), "-1 2");
}

TEST(ShimFiles, EveryCReaderSeesTheRenderedBytes) {
  Machine m;
  auto p = m.probe();
  const std::string gen = "/sys/class/kfd/kfd/topology/generation_id";
  std::string c = p->call("cat " + gen);
  ASSERT_EQ(c.substr(0, 4), "0 0 ");
  EXPECT_EQ(p->call("fcat " + gen), c);
  EXPECT_EQ(p->call("icat " + gen), c);
  EXPECT_EQ(c.substr(4), host_digest(m.dir() / "root/sys/devices/virtual/kfd/kfd/topology/generation_id"));
  // The same object under /sys/devices/virtual.
  EXPECT_EQ(p->call("cat /sys/devices/virtual/kfd/kfd/topology/generation_id"), c);
  std::string props = "/sys/class/kfd/kfd/topology/nodes/1/properties";
  EXPECT_EQ(p->call("cat " + props), p->call("fcat " + props));
  EXPECT_EQ(p->call("stat " + props).substr(0, 8), "0 0 reg ");
  EXPECT_EQ(p->call("stat /sys/class/kfd/kfd/topology/nodes").substr(0, 8), "0 0 dir ");
  EXPECT_EQ(p->call("ls /sys/class/kfd/kfd/topology/nodes"),
            "0 0 " + host_listing(m.dir() / "root/sys/devices/virtual/kfd/kfd/topology/nodes"));
  EXPECT_EQ(p->call("access " + props), "0 0");
  EXPECT_EQ(p->call("readlink /sys/class/kfd/kfd"), "0 0 ../../devices/virtual/kfd/kfd");
  EXPECT_EQ(p->call("realpath /sys/class/kfd/kfd/topology"), "0 0 /sys/devices/virtual/kfd/kfd/topology");
  EXPECT_EQ(p->call("cat /sys/class/kfd/kfd/topology/nodes/9/gpu_id"), "-1 2");
  std::string mqds = p->call("cat /sys/kernel/debug/kfd/mqds");
  EXPECT_EQ(mqds.substr(0, 4), "0 0 ");
}

TEST(ShimFiles, PerProcessQueueFilesAppearOnDemand) {
  Machine m;
  auto p = m.probe();
  p->call("open");
  std::string pid = p->call("getpid").substr(0, p->call("getpid").find(' '));
  std::string created = p->call("create");
  ASSERT_EQ(created.substr(0, 4), "0 0 ");
  std::string qid = created.substr(4);
  std::string dir = "/sys/class/kfd/kfd/proc/" + pid + "/queues/" + qid;
  EXPECT_EQ(p->call("ls " + dir), "0 0 gpuid,size,type");
  EXPECT_EQ(p->call("cat " + dir + "/size").substr(0, 6), "0 0 4 ") << "\"4096\", no newline";
  EXPECT_EQ(p->call("destroy " + qid), "0 0");
  EXPECT_EQ(p->call("stat " + dir), "-1 2");
}

// kfdsimd renders only the part of the files a lookup can reach, and only when something may have
// changed since. Whatever the order of changes and lookups, a reader must see what a render of
// every file shows at that moment (the kernel renders sysfs/debugfs on read): each read is
// followed by a full refresh, which must find nothing to change.
TEST(ShimFiles, LookupsNeverServeStaleOrLeftoverFiles) {
  namespace fs = std::filesystem;
  Machine m;
  auto a = m.probe();
  auto b = m.probe();
  ASSERT_NE(a->call("open").substr(0, 2), "-1");
  ASSERT_NE(b->call("open").substr(0, 2), "-1");
  auto field = [](const std::string& answer) { return answer.substr(4); };  // after "0 0 "
  auto first = [](const std::string& answer) { return answer.substr(0, answer.find(' ')); };
  const std::string pa = first(a->call("getpid")), pb = first(b->call("getpid"));
  const std::string proc = "/sys/class/kfd/kfd/proc/";
  auto full_refresh = [&] {
    auto r = gpreempt::sim::protocol::query((m.dir() / "kfdsim.sock").string(),
                                            gpreempt::sim::protocol::Op::kRefreshFiles);
    ASSERT_EQ(r.error, 0);
    ASSERT_EQ(r.ret, 0);
  };
  const fs::path host = m.dir() / "root";
  auto fresh = [&](const std::string& debugfs_name) {
    const std::string seen = a->call("cat /sys/kernel/debug/kfd/" + debugfs_name);
    full_refresh();
    EXPECT_EQ(seen, "0 0 " + host_digest(host / "sys/kernel/debug/kfd" / debugfs_name)) << debugfs_name;
  };
  auto listing = [&](const std::string& guest, const std::string& host_rel) {
    const std::string seen = a->call("ls " + guest);
    full_refresh();
    const std::string now = host_listing(host / host_rel);
    EXPECT_EQ(seen, "0 0 " + (now.empty() ? std::string("-") : now)) << guest;
    return seen;
  };
  const std::string dev_proc = "sys/devices/virtual/kfd/kfd/proc";

  EXPECT_EQ(listing(proc, dev_proc), "0 0 " + std::min(pa, pb) + "," + std::max(pa, pb));
  for (const char* f : {"mqds", "hqds", "rls"}) fresh(f);
  // A queue of b appears in b's directory, in proc/ as a whole and in every debugfs file.
  const std::string qb = field(b->call("create"));
  EXPECT_EQ(a->call("ls " + proc + pb + "/queues"), "0 0 " + qb);
  EXPECT_EQ(a->call("cat " + proc + pb + "/queues/" + qb + "/gpuid").substr(0, 4), "0 0 ");
  for (const char* f : {"mqds", "hqds", "rls"}) fresh(f);
  // a's own queue, created and destroyed between lookups of other parts.
  const std::string qa = field(a->call("create"));
  fresh("rls");
  listing(proc + pa + "/queues", dev_proc + "/" + pa + "/queues");
  EXPECT_EQ(a->call("destroy " + qa), "0 0");
  EXPECT_EQ(a->call("stat " + proc + pa + "/queues/" + qa), "-1 2");
  fresh("mqds");
  EXPECT_EQ(listing(proc + pa + "/queues", dev_proc + "/" + pa + "/queues"), "0 0 -");
  // b exits: its directory goes, whether looked up by itself or through proc/.
  EXPECT_EQ(a->call("stat " + proc + pb).substr(0, 8), "0 0 dir ");
  b->finish();
  const int gone = std::stoi(pb);
  for (int i = 0; i < 2000; ++i) {
    auto st = m.status();
    ASSERT_TRUE(st);
    const auto& c = (*st)["clients"];
    if (std::find(c.begin(), c.end(), gone) == c.end()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(a->call("stat " + proc + pb), "-1 2");
  EXPECT_EQ(listing(proc, dev_proc), "0 0 " + pa);
  for (const char* f : {"mqds", "hqds", "rls"}) fresh(f);
  EXPECT_FALSE(fs::exists(host / dev_proc / pb));
}

TEST(ShimFiles, PythonReadsTheSameFiles) {
  Machine m;
  auto p = m.probe();
  std::string gen = p->call("cat /sys/class/kfd/kfd/topology/generation_id");
  std::string nodes = p->call("ls /sys/class/kfd/kfd/topology/nodes");
  const char* script = R"PY(
import os, sys
t = '/sys/class/kfd/kfd/topology'
with open(t + '/generation_id', 'rb') as f: data = f.read()
h = 1469598103934665603
for c in data: h = ((h ^ c) * 1099511628211) & 0xffffffffffffffff
print(len(data), format(h, 'x'))
print(','.join(sorted(os.listdir(t + '/nodes'))))
print(os.path.isdir('/sys/kernel/debug/kfd'), os.path.exists('/dev/kfd'), os.stat(t + '/nodes/1/gpu_id').st_size > 0)
print('gpu_id' in [e.name for e in os.scandir('/sys/class/kfd/kfd/topology/nodes/1')])
)PY";
  auto py = m.spawn({"/usr/bin/python3", "-c", script});
  auto l1 = py->line(), l2 = py->line(), l3 = py->line(), l4 = py->line();
  ASSERT_TRUE(l1 && l2 && l3 && l4) << py->rest();
  EXPECT_EQ("0 0 " + *l1, gen);
  EXPECT_EQ("0 0 " + *l2, nodes);
  EXPECT_EQ(*l3, "True True True");
  EXPECT_EQ(*l4, "True");
  EXPECT_EQ(py->finish(), 0);
}

TEST(ShimDrm, RenderNodeAnswersLibdrmAmdgpu) {
  Machine m;
  auto s = m.probe();
  s->call("open");  // starts the machine
  auto status = m.status();
  ASSERT_TRUE(status);
  int minor = (*status)["gpus"][0]["drm_render_minor"].get<int>();
  auto topo = m.dir() / "root/sys/devices/virtual/kfd/kfd/topology/nodes";
  std::string device_id;
  for (const auto& e : std::filesystem::directory_iterator(topo)) {
    std::ifstream in(e.path() / "properties");
    std::string key, value, found_id, found_minor;
    while (in >> key >> value) {
      if (key == "device_id") found_id = value;
      if (key == "drm_render_minor") found_minor = value;
    }
    if (found_minor == std::to_string(minor)) device_id = found_id;
  }
  ASSERT_FALSE(device_id.empty());
  auto d = m.spawn({gpreempt::testing::build_path("bin/drm_probe").string(), std::to_string(minor)});
  EXPECT_EQ(*d->line(), "stat chr 1 226:" + std::to_string(minor));
  EXPECT_EQ(*d->line(), "node_type 2") << "DRM_NODE_RENDER, via /sys/dev/char/226:N/device/drm";
  EXPECT_EQ(*d->line(), "version amdgpu 3");
  EXPECT_EQ(*d->line(), "initialize 0 3");
  auto info = d->line();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->rfind("gpu_info 0 device_id " + device_id + " family 141 ", 0), 0u) << *info;
  auto name = d->line();
  ASSERT_TRUE(name);
  EXPECT_EQ(name->rfind("name ", 0), 0u);
  EXPECT_EQ(d->finish(), 0);
}

TEST(ShimFiles, CoreutilsSeeADeviceAndATree) {
  // ls -l asks for xattrs and statx, find walks with openat relative to directory fds, stat -c
  // prints device numbers, readlink -f resolves through the class symlink.
  Machine m;
  auto keeper = m.probe();  // keeps the machine up to ask it which render minor GPU 0 has
  keeper->call("open");
  ASSERT_EQ((*m.status())["gpus"][0]["drm_render_minor"], 128);
  auto sh = m.spawn({"/bin/sh", "-c",
                     "ls -ld /dev/kfd /sys/class/kfd/kfd/ >/dev/null && "
                     "stat -c '%F %t:%T' /dev/kfd /dev/dri/renderD128 && "
                     "find /sys/class/kfd/kfd/topology/nodes -name gpu_id | sort | head -1 && "
                     "readlink -f /sys/class/kfd/kfd/topology"});
  EXPECT_EQ(sh->line(), "character special file ea:0");
  EXPECT_EQ(sh->line(), "character special file e2:80");
  EXPECT_EQ(sh->line(), "/sys/class/kfd/kfd/topology/nodes/0/gpu_id");
  EXPECT_EQ(sh->line(), "/sys/devices/virtual/kfd/kfd/topology");
  EXPECT_EQ(WEXITSTATUS(sh->finish()), 0) << "ls exits 1 when an xattr lookup fails";
}
