// kfd_probe: a scriptable client of /dev/kfd for the transport tests. It runs under the shim
// (LD_PRELOAD) and executes one command per stdin line, answering one line per command on stdout:
//   "<ret> <errno> [values...]"   (errno 0 when ret >= 0)
// Commands (pid 0 = this process):
//   open | close | fstat | read | version | enotty | dup | fork_version | create [gpu_index] | destroy QID
//   runtime_enable | seize PID | enable PID | disable PID | snapshot PID | snapshot0 PID
//   suspend PID QID... | resume PID QID... | thread CMD... (run CMD on a new thread, wait for it)
//   bg CMD... (run CMD on a new thread; its answer comes later as "bg <answer>")
//   exec (execve this program again: same pid, new address space)
//   cat PATH (open/read) | fcat PATH (fopen) | icat PATH (ifstream) → "<size> <fnv1a hex>"
//   ls PATH (opendir/readdir, sorted, comma-joined) | stat PATH → "<type> <size>"
//   access PATH | readlink PATH | realpath PATH
//   doorbell (create a queue, map its doorbell page twice: "<aligned-map ok> <shared> <unaligned errno>")
//   raw NR SIZE (ioctl nr NR (hex) with SIZE zero bytes, _IOWR) | getpid | exit
//   event [manual] (a signal event, auto-reset unless "manual": "0 0 <id>") | set ID | reset ID
//   evpage LEN (mmap LEN bytes of /dev/kfd at the event_page_offset the last event got back)
//   slot ID ("0 0 <slot ID of that mapping, hex>") | putslot ID VALUE (writes it, then as slot)
//   wait ALL TIMEOUT ID... (WAIT_EVENTS: "<ret> <errno> <wait_result> <timeout as copied back>")
//   sigrestart (SIGUSR1's handler gets SA_RESTART) | sigcount (SIGUSR1s handled so far)
//   atexit (at exit, after main returns: GET_VERSION on the open fd, answered as "atexit <answer>",
//   as a HIP program's module destructor still frees memory through /dev/kfd)
//   render (open the first GPU's render node: "<fd> <errno>") | dupfd FD | acquire FD (ACQUIRE_VM
//   of FD for the first GPU)
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <algorithm>
#include <climits>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "gpreempt/kfd_abi.h"

using namespace gpreempt::kfd;

namespace {

// <linux/kfd_ioctl.h>'s event calls, which gpreempt/kfd_abi.h leaves out.
struct EventCreateArgs {
  uint64_t event_page_offset;
  uint32_t event_trigger_data, event_type, auto_reset, node_id, event_id, event_slot_index;
};
struct EventIdArgs {
  uint32_t event_id, pad;
};
struct EventData {
  uint8_t exception_data[32];
  uint64_t ext;
  uint32_t event_id, pad;
};
struct WaitEventsArgs {
  uint64_t events_ptr;
  uint32_t num_events, wait_for_all, timeout, wait_result;
};
static_assert(sizeof(EventCreateArgs) == 32 && sizeof(EventData) == 48 && sizeof(WaitEventsArgs) == 24);
constexpr uint32_t kSignalEvent = 0;  // KFD_IOC_EVENT_SIGNAL
struct AcquireVmArgs {
  uint32_t drm_fd, gpu_id;
};
constexpr unsigned long kAcquireVm = 0x40084b15;
constexpr unsigned long kCreateEvent = 0xc0204b08, kSetEvent = 0x40084b0a, kResetEvent = 0x40084b0b,
                        kWaitEvents = 0xc0184b0c;

int g_kfd = -1;
int g_event_pipe[2] = {-1, -1};
uint64_t g_event_page_offset = 0;               // what the last CREATE_EVENT gave back
volatile uint64_t* g_event_page = nullptr;      // the event page as evpage mapped it
std::atomic<int> g_sigusr1{0};

std::string result(long ret, const std::string& extra = "") {
  std::ostringstream o;
  o << ret << " " << (ret < 0 ? errno : 0);
  if (!extra.empty()) o << " " << extra;
  return o.str();
}

void version_at_exit() {
  kfd_ioctl_get_version_args v{};
  long r = ioctl(g_kfd, AMDKFD_IOC_GET_VERSION, &v);
  const std::string line =
      "atexit " + result(r, std::to_string(v.major_version) + " " + std::to_string(v.minor_version)) + "\n";
  if (write(STDOUT_FILENO, line.data(), line.size()) < 0) _exit(3);
}

std::vector<uint32_t> gpu_ids() {
  std::vector<uint32_t> ids;
  for (int n = 0; n < 64; ++n) {
    std::ifstream f("/sys/class/kfd/kfd/topology/nodes/" + std::to_string(n) + "/gpu_id");
    if (!f) break;
    uint32_t id = 0;
    f >> id;
    if (id) ids.push_back(id);
  }
  return ids;
}

long dbg_trap(kfd_ioctl_dbg_trap_args& a) { return ioctl(g_kfd, AMDKFD_IOC_DBG_TRAP, &a); }

std::string queue_op(uint32_t op, int pid, std::istringstream& in) {
  std::vector<uint32_t> ids;
  for (uint32_t q; in >> q;) ids.push_back(q);
  kfd_ioctl_dbg_trap_args a{};
  a.pid = static_cast<uint32_t>(pid);
  a.op = op;
  if (op == KFD_IOC_DBG_TRAP_SUSPEND_QUEUES) {
    a.suspend_queues.queue_array_ptr = reinterpret_cast<uint64_t>(ids.data());
    a.suspend_queues.num_queues = static_cast<uint32_t>(ids.size());
    a.suspend_queues.grace_period = 0;
  } else {
    a.resume_queues.queue_array_ptr = reinterpret_cast<uint64_t>(ids.data());
    a.resume_queues.num_queues = static_cast<uint32_t>(ids.size());
  }
  long r = dbg_trap(a);
  std::ostringstream o;
  for (auto id : ids) o << std::hex << "0x" << id << " ";
  return result(r, o.str());
}

std::string digest(const std::string& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  std::ostringstream o;
  o << bytes.size() << " " << std::hex << h;
  return o.str();
}

std::string file_command(const std::string& cmd, const std::string& path) {
  if (cmd == "cat") {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return result(-1);
    std::string bytes;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) bytes.append(buf, static_cast<size_t>(n));
    close(fd);
    return result(0, digest(bytes));
  }
  if (cmd == "fcat") {
    FILE* f = fopen(path.c_str(), "r");
    if (!f) return result(-1);
    std::string bytes;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
    fclose(f);
    return result(0, digest(bytes));
  }
  if (cmd == "icat") {
    std::ifstream in(path, std::ios::binary);
    if (!in) return "-1 2";
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return result(0, digest(bytes));
  }
  if (cmd == "ls") {
    DIR* d = opendir(path.c_str());
    if (!d) return result(-1);
    std::vector<std::string> names;
    while (dirent* e = readdir(d))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names.push_back(e->d_name);
    closedir(d);
    std::sort(names.begin(), names.end());
    std::string joined;
    for (auto& n : names) joined += (joined.empty() ? "" : ",") + n;
    return result(0, joined.empty() ? "-" : joined);
  }
  if (cmd == "stat") {
    struct stat st{};
    if (stat(path.c_str(), &st) != 0) return result(-1);
    const char* type = S_ISDIR(st.st_mode) ? "dir" : S_ISCHR(st.st_mode) ? "chr" : S_ISREG(st.st_mode) ? "reg" : "other";
    return result(0, std::string(type) + " " + std::to_string(st.st_size));
  }
  if (cmd == "access") return result(access(path.c_str(), R_OK));
  if (cmd == "readlink") {
    char buf[PATH_MAX];
    ssize_t n = readlink(path.c_str(), buf, sizeof buf);
    return result(n < 0 ? -1 : 0, n < 0 ? "" : std::string(buf, static_cast<size_t>(n)));
  }
  if (cmd == "realpath") {
    char* r = realpath(path.c_str(), nullptr);
    std::string out = r ? r : "";
    free(r);
    return result(r ? 0 : -1, out);
  }
  return "-1 22 unknown-command";
}

std::string run(const std::string& line);

std::string run(const std::string& line) {
  std::istringstream in(line);
  std::string cmd;
  in >> cmd;
  errno = 0;
  if (cmd == "getpid") return result(getpid());
  if (cmd == "cat" || cmd == "fcat" || cmd == "icat" || cmd == "ls" || cmd == "stat" ||
      cmd == "access" || cmd == "readlink" || cmd == "realpath") {
    std::string path;
    in >> path;
    return file_command(cmd, path);
  }
  if (cmd == "open") {
    g_kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
    return result(g_kfd);
  }
  if (cmd == "close") return result(close(g_kfd));
  if (cmd == "fstat") {
    struct stat st{};
    long r = fstat(g_kfd, &st);
    return result(r, std::string(S_ISCHR(st.st_mode) ? "chr" : "other") + " " + std::to_string(major(st.st_rdev)));
  }
  if (cmd == "read") {
    char c;
    return result(read(g_kfd, &c, 1));
  }
  if (cmd == "atexit") return result(atexit(version_at_exit));
  if (cmd == "version") {
    kfd_ioctl_get_version_args v{};
    long r = ioctl(g_kfd, AMDKFD_IOC_GET_VERSION, &v);
    return result(r, std::to_string(v.major_version) + " " + std::to_string(v.minor_version));
  }
  if (cmd == "raw") {
    unsigned nr = 0, size = 0;
    in >> std::hex >> nr >> std::dec >> size;
    std::vector<uint8_t> buf(size, 0);
    return result(ioctl(g_kfd, ioc(IOC_READ | IOC_WRITE, AMDKFD_IOCTL_BASE, nr, size), buf.data()));
  }
  if (cmd == "enotty") {
    uint64_t buf[4] = {};
    return result(ioctl(g_kfd, ioc(IOC_READ | IOC_WRITE, AMDKFD_IOCTL_BASE, 0x7f, sizeof buf), buf));
  }
  if (cmd == "dup") {
    // Every duplicate keeps working after the original is closed.
    int a = dup(g_kfd);
    int b = fcntl(g_kfd, F_DUPFD_CLOEXEC, 100);
    int c = dup2(g_kfd, 200);
    close(g_kfd);
    std::ostringstream o;
    for (int fd : {a, b, c}) {
      kfd_ioctl_get_version_args v{};
      long r = ioctl(fd, AMDKFD_IOC_GET_VERSION, &v);
      o << (r == 0 ? v.minor_version : 0) << " ";
    }
    g_kfd = a;
    return result(0, o.str());
  }
  if (cmd == "fork_version") {
    pid_t child = fork();
    if (child == 0) {
      kfd_ioctl_get_version_args v{};
      long r = ioctl(g_kfd, AMDKFD_IOC_GET_VERSION, &v);
      int inherited = r < 0 ? errno : 0;
      // The child's own open works.
      int own = open("/dev/kfd", O_RDWR);
      long r2 = ioctl(own, AMDKFD_IOC_GET_VERSION, &v);
      _exit(inherited == EBADF && r2 == 0 ? 0 : 1 + (inherited == EBADF));
    }
    int status = 0;
    waitpid(child, &status, 0);
    return result(WIFEXITED(status) ? WEXITSTATUS(status) : 100);
  }
  if (cmd == "create") {
    size_t index = 0;
    in >> index;
    auto ids = gpu_ids();
    if (index >= ids.size()) return "-1 19 no-such-gpu";
    void* ring = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    auto* ptrs = static_cast<uint64_t*>(aligned_alloc(64, 64));
    // The simulated CP reads the pointers for as long as the queue lives, which may be until exit:
    // kept reachable, so LeakSanitizer does not count a live queue's memory as leaked (from a
    // never-destroyed list: a static vector is destroyed at exit before LeakSanitizer looks).
    static auto* queue_pointers = new std::vector<void*>;
    queue_pointers->push_back(ptrs);
    kfd_ioctl_create_queue_args a{};
    a.ring_base_address = reinterpret_cast<uint64_t>(ring);
    a.ring_size = 4096;
    a.read_pointer_address = reinterpret_cast<uint64_t>(&ptrs[0]);
    a.write_pointer_address = reinterpret_cast<uint64_t>(&ptrs[1]);
    a.gpu_id = ids[index];
    a.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
    a.queue_percentage = 100;
    a.queue_priority = 7;
    long r = ioctl(g_kfd, AMDKFD_IOC_CREATE_QUEUE, &a);
    return result(r, std::to_string(a.queue_id));
  }
  if (cmd == "doorbell") {
    auto ids = gpu_ids();
    if (ids.empty()) return "-1 19 no-gpu";
    void* ring = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    auto* ptrs = static_cast<uint64_t*>(aligned_alloc(64, 64));
    // The simulated CP reads the pointers for as long as the queue lives, which may be until exit:
    // kept reachable, so LeakSanitizer does not count a live queue's memory as leaked (from a
    // never-destroyed list: a static vector is destroyed at exit before LeakSanitizer looks).
    static auto* queue_pointers = new std::vector<void*>;
    queue_pointers->push_back(ptrs);
    kfd_ioctl_create_queue_args a{};
    a.ring_base_address = reinterpret_cast<uint64_t>(ring);
    a.ring_size = 4096;
    a.read_pointer_address = reinterpret_cast<uint64_t>(&ptrs[0]);
    a.write_pointer_address = reinterpret_cast<uint64_t>(&ptrs[1]);
    a.gpu_id = ids[0];
    a.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
    a.queue_percentage = 100;
    if (ioctl(g_kfd, AMDKFD_IOC_CREATE_QUEUE, &a) != 0) return result(-1);
    const uint64_t page = static_cast<uint64_t>(getpagesize());
    off_t base = static_cast<off_t>(a.doorbell_offset & ~(page - 1));
    std::size_t in_page = a.doorbell_offset & (page - 1);
    auto* m1 = static_cast<uint8_t*>(mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, g_kfd, base));
    auto* m2 = static_cast<uint8_t*>(mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, g_kfd, base));
    if (m1 == MAP_FAILED || m2 == MAP_FAILED) return result(-1);
    *reinterpret_cast<volatile uint64_t*>(m1 + in_page) = 0x1234;
    bool shared = *reinterpret_cast<volatile uint64_t*>(m2 + in_page) == 0x1234;
    void* bad = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, g_kfd, base + 8);
    int bad_errno = bad == MAP_FAILED ? errno : 0;
    return result(0, std::string("1 ") + (shared ? "1 " : "0 ") + std::to_string(bad_errno));
  }
  if (cmd == "destroy") {
    kfd_ioctl_destroy_queue_args a{};
    in >> a.queue_id;
    return result(ioctl(g_kfd, AMDKFD_IOC_DESTROY_QUEUE, &a));
  }
  if (cmd == "runtime_enable") {
    kfd_ioctl_runtime_enable_args a{};
    a.mode_mask = KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK;
    return result(ioctl(g_kfd, AMDKFD_IOC_RUNTIME_ENABLE, &a));
  }
  if (cmd == "render") {
    unsigned minor = 0;  // the first node that has a render node (node 0 is the CPU's)
    for (int n = 0; n < 64 && minor == 0; ++n) {
      std::ifstream props("/sys/class/kfd/kfd/topology/nodes/" + std::to_string(n) + "/properties");
      if (!props) break;
      std::string key;
      for (uint64_t v; props >> key >> v;)
        if (key == "drm_render_minor") minor = static_cast<unsigned>(v);
    }
    return result(open(("/dev/dri/renderD" + std::to_string(minor)).c_str(), O_RDWR | O_CLOEXEC));
  }
  if (cmd == "dupfd") {
    int fd = -1;
    in >> fd;
    return result(dup(fd));
  }
  if (cmd == "acquire") {
    AcquireVmArgs a{};
    in >> a.drm_fd;
    auto ids = gpu_ids();
    if (ids.empty()) return "-1 19 no-gpu";
    a.gpu_id = ids[0];
    return result(ioctl(g_kfd, kAcquireVm, &a));
  }
  if (cmd == "event") {
    std::string mode;
    in >> mode;
    EventCreateArgs e{};
    e.event_type = kSignalEvent;
    e.auto_reset = mode == "manual" ? 0 : 1;
    long r = ioctl(g_kfd, kCreateEvent, &e);
    if (r == 0) g_event_page_offset = e.event_page_offset;
    return result(r, std::to_string(e.event_id));
  }
  if (cmd == "evpage") {
    std::size_t len = 0;
    in >> len;
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, g_kfd,
                   static_cast<off_t>(g_event_page_offset));
    if (p == MAP_FAILED) return result(-1);
    g_event_page = static_cast<volatile uint64_t*>(p);
    return result(0);
  }
  if (cmd == "slot" || cmd == "putslot") {
    uint32_t id = 0;
    in >> id;
    if (cmd == "putslot") {
      uint64_t v = 0;
      in >> v;
      g_event_page[id] = v;
    }
    char hex[32];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(g_event_page[id]));
    return result(0, hex);
  }
  if (cmd == "set" || cmd == "reset") {
    EventIdArgs e{};
    in >> e.event_id;
    return result(ioctl(g_kfd, cmd == "set" ? kSetEvent : kResetEvent, &e));
  }
  if (cmd == "wait") {
    WaitEventsArgs w{};
    in >> w.wait_for_all >> w.timeout;
    std::vector<EventData> data;
    for (uint32_t id; in >> id;) {
      EventData d{};
      d.event_id = id;
      data.push_back(d);
    }
    w.events_ptr = reinterpret_cast<uint64_t>(data.data());
    w.num_events = static_cast<uint32_t>(data.size());
    w.wait_result = 99;
    long r = ioctl(g_kfd, kWaitEvents, &w);
    return result(r, std::to_string(w.wait_result) + " " + std::to_string(w.timeout));
  }
  if (cmd == "sigcount") return result(g_sigusr1.load());
  if (cmd == "seize") {
    int pid = 0;
    in >> pid;
    return result(ptrace(PTRACE_SEIZE, pid, nullptr, nullptr));
  }
  int pid = 0;
  in >> pid;
  if (pid == 0) pid = getpid();
  if (cmd == "enable") {
    if (g_event_pipe[0] < 0 && pipe2(g_event_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return result(-1);
    kfd_runtime_info info{};
    kfd_ioctl_dbg_trap_args a{};
    a.pid = static_cast<uint32_t>(pid);
    a.op = KFD_IOC_DBG_TRAP_ENABLE;
    a.enable.exception_mask = KFD_EC_MASK(EC_PROCESS_RUNTIME);
    a.enable.rinfo_ptr = reinterpret_cast<uint64_t>(&info);
    a.enable.rinfo_size = sizeof info;
    a.enable.dbg_fd = static_cast<uint32_t>(g_event_pipe[1]);
    long r = dbg_trap(a);
    return result(r, std::to_string(info.runtime_state) + " " + std::to_string(a.enable.rinfo_size));
  }
  if (cmd == "disable") {
    kfd_ioctl_dbg_trap_args a{};
    a.pid = static_cast<uint32_t>(pid);
    a.op = KFD_IOC_DBG_TRAP_DISABLE;
    return result(dbg_trap(a));
  }
  if (cmd == "snapshot" || cmd == "snapshot0") {
    // snapshot0 passes entry_size 0: -EINVAL, yet num_queues comes back zeroed (copied back on failure).
    std::vector<kfd_queue_snapshot_entry> entries(64);
    kfd_ioctl_dbg_trap_args a{};
    a.pid = static_cast<uint32_t>(pid);
    a.op = KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT;
    a.queue_snapshot.exception_mask = KFD_EC_MASK(EC_QUEUE_NEW);
    a.queue_snapshot.snapshot_buf_ptr = reinterpret_cast<uint64_t>(entries.data());
    a.queue_snapshot.num_queues = static_cast<uint32_t>(entries.size());
    a.queue_snapshot.entry_size = cmd == "snapshot0" ? 0 : sizeof(kfd_queue_snapshot_entry);
    long r = dbg_trap(a);
    std::ostringstream o;
    o << a.queue_snapshot.num_queues;
    if (r == 0)
      for (uint32_t i = 0; i < a.queue_snapshot.num_queues && i < entries.size(); ++i) o << " " << entries[i].queue_id;
    return result(r, o.str());
  }
  if (cmd == "suspend") return queue_op(KFD_IOC_DBG_TRAP_SUSPEND_QUEUES, pid, in);
  if (cmd == "resume") return queue_op(KFD_IOC_DBG_TRAP_RESUME_QUEUES, pid, in);
  return "-1 22 unknown-command";
}

std::mutex g_out;

void answer(const std::string& s) {
  std::lock_guard lock(g_out);
  std::cout << s << std::endl;
}

}  // namespace

void on_sigusr1(int) { ++g_sigusr1; }

int main() {
  // A handler without SA_RESTART: a signal during a blocked simulated ioctl must not end it. Only
  // "bg" threads take SIGUSR1 (blocked here, unblocked there), so a process-directed SIGUSR1
  // lands in the call under test.
  struct sigaction sa {};
  sa.sa_handler = on_sigusr1;
  sigaction(SIGUSR1, &sa, nullptr);
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  std::string line;
  for (;;) {
    errno = 0;
    if (!std::getline(std::cin, line)) {
      if (feof(stdin) || !ferror(stdin) || errno != EINTR) break;
      std::cin.clear();  // a signal interrupted the read of the next command
      clearerr(stdin);
      continue;
    }
    if (line == "exit") break;
    if (line == "sigrestart") {
      sa.sa_flags = SA_RESTART;
      answer(result(sigaction(SIGUSR1, &sa, nullptr)));
      continue;
    }
    if (line == "exec") {
      answer("0 0");
      char self[PATH_MAX];
      ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
      if (n > 0) {
        self[n] = 0;
        char* argv[] = {self, nullptr};
        execv(self, argv);
      }
      return 1;
    }
    if (line.rfind("bg ", 0) == 0) {
      std::thread([cmd = line.substr(3)] {
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        pthread_sigmask(SIG_UNBLOCK, &usr1, nullptr);
        answer("bg " + run(cmd));
      }).detach();
      continue;
    }
    std::string out;
    if (line.rfind("thread ", 0) == 0) {
      std::thread t([&] { out = run(line.substr(7)); });
      t.join();
    } else {
      out = run(line);
    }
    answer(out);
  }
  return 0;
}
