#include "discovery/queue_pointers.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "common/error.h"
#include "common/hex.h"
#include "common/text_file.h"
#include "discovery/mqds.h"
#include "discovery/process_discovery.h"

namespace gpreempt::discovery {

std::vector<QueuePointers> queue_pointers(const QueueMap& map, int pid,
                                          std::vector<std::string>* notes) {
  std::vector<QueuePointers> out;
  for (const auto& r : map.queues) {
    if (!r.pid || *r.pid != pid) continue;
    const std::string name = "pid " + std::to_string(pid) + " queue " +
                             (r.queue_id ? std::to_string(*r.queue_id) : std::string("?")) +
                             " on gpu " + std::to_string(r.gpu_id);
    if (r.type != "compute") {
      if (notes)
        notes->push_back(name + ": " + r.type +
                         " queue not watched (only AQL compute queues carry dispatch ids)");
      continue;
    }
    if (!r.rptr_address || !r.wptr_address || !*r.rptr_address || !*r.wptr_address) {
      if (notes) notes->push_back(name + ": no read/write pointer address (needs debugfs mqds)");
      continue;
    }
    QueuePointers q;
    q.pid = pid;
    q.gpu_id = r.gpu_id;
    q.queue_id = r.queue_id;
    q.queue_id_inferred = r.queue_id_inferred;
    q.ring_base = r.ring_base.value_or(0);
    q.rptr_address = *r.rptr_address;
    q.wptr_address = *r.wptr_address;
    out.push_back(q);
  }
  return out;
}

std::vector<QueuePointers> read_queue_pointers(int pid, const QueuePointerSources& src,
                                               std::vector<std::string>* notes) {
  const std::string path = src.debugfs + "/mqds";
  InputFile in(path);
  if (const auto& e = in.error())
    throw Error(
        e->error ? e->error : EIO,
        e->message() + (e->error == EACCES || e->error == EPERM ? " (debugfs needs root)" : ""));
  FileLines lines(in);
  MqdsDump dump = decode_mqds(lines, path);
  if (const auto& e = in.error()) throw Error(e->error ? e->error : EIO, e->message());
  if (dump.looks_like) throw Error(EINVAL, path + ": " + dump.diagnostics.front().message);

  QueueMapInputs mi;
  mi.mqds = &dump;
  mi.pid = pid;
  SystemRoots roots;
  roots.kfd_sysfs = src.kfd_sysfs;
  std::vector<std::string> problems;
  mi.known = sysfs_queues(roots, pid, &problems);
  const QueueMap map = build_queue_map(mi);
  if (notes) {
    notes->insert(notes->end(), problems.begin(), problems.end());
    notes->insert(notes->end(), map.notes.begin(), map.notes.end());
  }
  return queue_pointers(map, pid, notes);
}

PointerReader::PointerReader(int pid, std::vector<QueuePointers> queues)
    : pid_(pid), queues_(std::move(queues)), samples_(queues_.size()) {
  // rptr before wptr of each queue: see the class comment.
  remote_.reserve(2 * queues_.size());
  for (const auto& q : queues_) {
    remote_.push_back({reinterpret_cast<void*>(q.rptr_address), sizeof(std::uint64_t)});
    remote_.push_back({reinterpret_cast<void*>(q.wptr_address), sizeof(std::uint64_t)});
  }
}

PointerReader::~PointerReader() {
  if (mem_fd_ >= 0) ::close(mem_fd_);
}

void PointerReader::fail(int error, std::uint64_t address, const char* how) const {
  std::string msg = "pid " + std::to_string(pid_) + ": " + how;
  if (address) msg += " at " + hex(address);
  msg += ": " + errno_text(error);
  if (error == ESRCH) msg += " (process gone)";
  if (!method_note_.empty()) msg += " [" + method_note_ + "]";
  throw Error(error, msg);
}

const std::vector<PointerSample>& PointerReader::sample() {
  if (method_ == Method::kProcessVmReadv) {
    int refused = 0;
    if (sample_vm_readv(refused)) return samples_;
    method_ = Method::kProcMem;
    method_note_ = "process_vm_readv refused (" + errno_text(refused) + "), reading /proc/" +
                   std::to_string(pid_) + "/mem";
  }
  sample_proc_mem();
  return samples_;
}

bool PointerReader::sample_vm_readv(int& refused_errno) {
  // PointerSample is {rptr, wptr}: the local side of a call is one contiguous buffer.
  static_assert(sizeof(PointerSample) == 2 * sizeof(std::uint64_t));
  constexpr std::size_t kMaxIov = IOV_MAX;
  for (std::size_t first = 0; first < remote_.size(); first += kMaxIov) {
    const std::size_t count = std::min(kMaxIov, remote_.size() - first);
    iovec local{reinterpret_cast<char*>(samples_.data()) + first * sizeof(std::uint64_t),
                count * sizeof(std::uint64_t)};
    ssize_t n;
    if (simulated_refusal_) {
      errno = simulated_refusal_;
      n = -1;
    } else {
      n = ::process_vm_readv(pid_, &local, 1, &remote_[first], count, 0);
    }
    if (n < 0) {
      const int e = errno;
      if (e == EPERM || e == ENOSYS) {
        refused_errno = e;
        return false;
      }
      fail(e, e == EFAULT ? reinterpret_cast<std::uint64_t>(remote_[first].iov_base) : 0,
           "process_vm_readv");
    }
    if (static_cast<std::size_t>(n) < local.iov_len) {
      // A partial read stops at the first remote iovec it could not copy.
      const std::size_t bad = first + static_cast<std::size_t>(n) / sizeof(std::uint64_t);
      fail(EFAULT, reinterpret_cast<std::uint64_t>(remote_[bad].iov_base), "process_vm_readv");
    }
  }
  return true;
}

void PointerReader::sample_proc_mem() {
  if (mem_fd_ < 0) {
    const std::string path = "/proc/" + std::to_string(pid_) + "/mem";
    mem_fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (mem_fd_ < 0) {
      const int e = errno;
      // The pid's /proc directory is gone: the process exited.
      fail(e == ENOENT ? ESRCH : e, 0, ("open " + path).c_str());
    }
  }
  std::vector<PointerSample>& out = samples_;
  for (std::size_t i = 0; i < queues_.size(); ++i) {
    for (int k = 0; k < 2; ++k) {
      const std::uint64_t addr = k == 0 ? queues_[i].rptr_address : queues_[i].wptr_address;
      std::uint64_t* dst = k == 0 ? &out[i].rptr : &out[i].wptr;
      const ssize_t n = ::pread(mem_fd_, dst, sizeof *dst, static_cast<off_t>(addr));
      if (n == static_cast<ssize_t>(sizeof *dst)) continue;
      // pread of an exited process's mem reads nothing (0) or fails with EIO/ESRCH.
      int e = n < 0 ? errno : EIO;
      if (::kill(pid_, 0) < 0 && errno == ESRCH) e = ESRCH;
      fail(e, addr, "pread /proc/PID/mem");
    }
  }
}

}  // namespace gpreempt::discovery
