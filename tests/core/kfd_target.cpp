// A minimal GPU "workload" for the integration tests: opens /dev/kfd, optionally enables its
// runtime and creates queues through the raw ioctls, then obeys one command per stdin line:
//   runtime | runtime_off | create | destroy <id> | print | exec | exit
// answering "ok <value>" or "err <errno>" on stdout. `print` calls gpreempt_print_my_queues().
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>

#include "gpreempt/gpreempt.h"
#include "gpreempt/kfd_abi.h"

using namespace gpreempt::kfd;

namespace {

int g_kfd = -1;

uint32_t first_gpu_id() {
  for (int node = 0; node < 64; ++node) {
    std::string path = "/sys/class/kfd/kfd/topology/nodes/" + std::to_string(node) + "/gpu_id";
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) continue;
    unsigned id = 0;
    int n = std::fscanf(f, "%u", &id);
    std::fclose(f);
    if (n == 1 && id != 0) return id;
  }
  return 0;
}

std::string answer(long r, long value) {
  return r < 0 ? "err " + std::to_string(errno) : "ok " + std::to_string(value);
}

std::string runtime_enable() {
  kfd_ioctl_runtime_enable_args a{};
  a.mode_mask = KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK;
  long r = ::ioctl(g_kfd, AMDKFD_IOC_RUNTIME_ENABLE, &a);
  return answer(r, 0);
}

std::string create_queue() {
  void* ring = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  auto* ptrs = static_cast<uint64_t*>(std::aligned_alloc(64, 64));
  std::memset(ptrs, 0, 64);
  kfd_ioctl_create_queue_args a{};
  a.ring_base_address = reinterpret_cast<uint64_t>(ring);
  a.ring_size = 4096;
  a.read_pointer_address = reinterpret_cast<uint64_t>(&ptrs[0]);
  a.write_pointer_address = reinterpret_cast<uint64_t>(&ptrs[1]);
  a.gpu_id = first_gpu_id();
  a.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
  a.queue_percentage = 100;
  a.queue_priority = 7;
  long r = ::ioctl(g_kfd, AMDKFD_IOC_CREATE_QUEUE, &a);
  return answer(r, a.queue_id);
}

}  // namespace

int main(int argc, char** argv) {
  bool runtime = false;
  int queues = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runtime") runtime = true;
    if (a == "--queues" && i + 1 < argc) queues = std::atoi(argv[++i]);
  }
  g_kfd = ::open("/dev/kfd", O_RDWR | O_CLOEXEC);
  if (g_kfd < 0) {
    std::printf("err %d open /dev/kfd\n", errno);
    return 1;
  }
  if (runtime) {
    std::string r = runtime_enable();
    if (r.rfind("ok", 0) != 0) {
      std::printf("%s runtime_enable\n", r.c_str());
      return 1;
    }
  }
  std::string ids;
  for (int i = 0; i < queues; ++i) {
    std::string r = create_queue();
    if (r.rfind("ok", 0) != 0) {
      std::printf("%s create_queue\n", r.c_str());
      return 1;
    }
    ids += " " + r.substr(3);
  }
  std::printf("ready %d%s\n", static_cast<int>(::getpid()), ids.c_str());
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    std::string out;
    if (cmd == "runtime") {
      out = runtime_enable();
    } else if (cmd == "runtime_off") {  // what ROCr's shutdown does
      kfd_ioctl_runtime_enable_args a{};
      out = answer(::ioctl(g_kfd, AMDKFD_IOC_RUNTIME_ENABLE, &a), 0);
    } else if (cmd == "create") {
      out = create_queue();
    } else if (cmd == "destroy") {
      kfd_ioctl_destroy_queue_args a{};
      in >> a.queue_id;
      out = answer(::ioctl(g_kfd, AMDKFD_IOC_DESTROY_QUEUE, &a), 0);
    } else if (cmd == "print") {
      int n = gpreempt_print_my_queues();
      out = n < 0 ? "err " + std::to_string(-n) : "ok " + std::to_string(n);
    } else if (cmd == "exec") {  // replace the program (a launcher that execs the real job)
      std::fflush(stdout);
      ::execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
      out = "err " + std::to_string(errno);
    } else if (cmd == "exit") {
      return 0;
    } else {
      out = "err 22 unknown command";
    }
    std::printf("%s\n", out.c_str());
    std::fflush(stdout);
  }
  return 0;
}
