// What LogAnalyzer learns from each logical record: the message kinds it recognises (queue
// creation, dispatch packets, refcounts, kernels, failed returns, faults, dump lines) and the
// per-process, per-queue and per-kernel counts of the summary they add to.
#include <charconv>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "logs/byte_scan.h"
#include "logs/excerpt.h"
#include "logs/hip_log_impl.h"

namespace gpreempt::logs {

namespace {

using detail::starts_with;
using detail::trim;

// Parses "0x…" (or bare hex) at the start of s; advances s past it.
std::optional<std::uint64_t> take_hex(std::string_view& s) {
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<std::size_t>(p - s.data()));
  return v;
}

std::optional<std::uint64_t> take_dec(std::string_view& s) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<std::size_t>(p - s.data()));
  return v;
}

// Value after `key` anywhere in s.
std::optional<std::uint64_t> hex_after(std::string_view s, std::string_view key) {
  const std::size_t k = s.find(key);
  if (k == std::string_view::npos) return std::nullopt;
  s.remove_prefix(k + key.size());
  return take_hex(s);
}
std::optional<std::uint64_t> dec_after(std::string_view s, std::string_view key) {
  const std::size_t k = s.find(key);
  if (k == std::string_view::npos) return std::nullopt;
  s.remove_prefix(k + key.size());
  return take_dec(s);
}

// Where a return line, "<function>: Returned <hipError_t> : …", has its ": Returned ", or npos.
// ROCclr's HIP_RETURN prints the C function's name (__func__) first, so the phrase follows the
// message's first blank, ':' or '(' right there; an entry line, "<api> ( args )", stops at its
// blank. (A ": Returned " further on, in a call's arguments or a kernel name, is not a return.)
std::size_t returned_at(std::string_view m) {
  constexpr std::string_view kPhrase = ": Returned ";
  const std::size_t k = detail::find_first_of(m.data(), 0, m.size(), ' ', ':', '(');
  if (k == 0 || m.size() - k < kPhrase.size() || std::memcmp(m.data() + k, kPhrase.data(), kPhrase.size()) != 0)
    return std::string_view::npos;
  return k;
}

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// "<function>: Returned <code> : …" with a code other than hipSuccess. Whoever returns it — a hip*
// API call or a runtime-internal function (ihipModuleLoad, __hipRegisterFatBinary, …) — the line
// reports a failure. The name must be a C identifier, as __func__ is.
bool failed_return(std::string_view m) {
  if (!is_identifier_char(m[0]) || (m[0] >= '0' && m[0] <= '9')) return false;
  const std::size_t k = returned_at(m);
  if (k == std::string_view::npos || starts_with(m.substr(k + 11), "hipSuccess")) return false;
  for (std::size_t i = 1; i < k; ++i)
    if (!is_identifier_char(m[i])) return false;
  return true;
}

// Whether s holds "Me", "ab" or "HS", where the fault phrases below begin: one pass, which rules out
// most messages ("Command (KernelExecution) enqueued: …" asks on every kernel launch) before the
// four searches.
bool may_hold_fault_text(std::string_view s) {
  const char* p = s.data();
  const std::size_t n = s.size();
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i m = _mm_set1_epi8('M'), e = _mm_set1_epi8('e'), a = _mm_set1_epi8('a'), b = _mm_set1_epi8('b'),
                h = _mm_set1_epi8('H'), hs = _mm_set1_epi8('S');
  for (; i + 17 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 1));
    const __m128i hit =
        _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(x, m), _mm_cmpeq_epi8(y, e)),
                     _mm_or_si128(_mm_and_si128(_mm_cmpeq_epi8(x, a), _mm_cmpeq_epi8(y, b)),
                                  _mm_and_si128(_mm_cmpeq_epi8(x, h), _mm_cmpeq_epi8(y, hs))));
    if (_mm_movemask_epi8(hit)) return true;
  }
#endif
  for (; i + 1 < n; ++i)
    if ((p[i] == 'M' && p[i + 1] == 'e') || (p[i] == 'a' && p[i + 1] == 'b') || (p[i] == 'H' && p[i + 1] == 'S'))
      return true;
  return false;
}

bool is_fault_text(std::string_view s) {
  if (!may_hold_fault_text(s)) return false;
  return s.find("Memory access fault") != std::string_view::npos ||
         s.find("Memory Fault Error") != std::string_view::npos ||
         s.find("aborting with error") != std::string_view::npos ||
         s.find("HSA_STATUS_ERROR") != std::string_view::npos;
}

// Lines of the multi-line queue-error dump ROCclr prints without a record prefix.
bool is_dump_line(std::string_view t) {
  return starts_with(t, "Kernel Name:") || starts_with(t, "VGPU=") ||
         starts_with(t, "Dispatch Header") || starts_with(t, "grid=") ||
         starts_with(t, "private_seg_size=") || starts_with(t, "kernel_obj=") ||
         starts_with(t, "completion_signal=") || starts_with(t, "rptr=");
}

constexpr std::size_t kMaxErrorText = 400;

}  // namespace

// `s`: the record's text, for error entries; `coloured`: s still holds the colour codes, which
// an error entry leaves out (stripped only then: errors are rare).
void LogAnalyzer::Impl::one(const detail::LogRecord& rec, std::string_view s, std::size_t line_no, bool coloured) {
  ++sum.records;
  const detail::LogRecord* r = &rec;
  if (opt.pid && r->pid && *r->pid != *opt.pid) {
    ++sum.other_pids;
    return;
  }
  ++sum.recognized;
  ++levels[static_cast<std::size_t>(r->level)];
  thread(*r);
  std::string_view m = r->message;
  if (r->level == 1) error(line_no, s, coloured);
  const std::int64_t pid = r->pid ? *r->pid : -1;
  if (m.empty()) return;
  // ROCm 4.x separates some messages from the prefix with "!" and a TAB: "[7fb360ad23c0]!\tShaderName : …".
  if (m[0] == '!' && m.size() > 1 && m[1] == '\t') {
    m = trim(m.substr(2));
    if (m.empty()) return;
  }
  switch (m[0]) {
    case 'S':
      if (starts_with(m, "SWq=")) return packet(pid, m);
      if (starts_with(m, "ShaderName :")) return kernel(trim(m.substr(12)));
      if (starts_with(m, "Selected queue refCount:")) return refcount(pid, m.substr(24), true);
      break;
    case 'H':
      if (starts_with(m, "HWq=")) return packet(pid, m);
      break;
    case 'C':
      if (starts_with(m, "Created SWq=")) return created(pid, m, line_no, true);
      if (starts_with(m, "Callback: Queue ")) {
        if (r->level != 1 && is_fault_text(m)) error(line_no, s, coloured);
        return;
      }
      break;
    case 'c':
      if (starts_with(m, "created hardware queue ")) return created(pid, m, line_no, false);
      break;
    case 'a':
      if (starts_with(m, "acquireQueue refCount:")) return refcount(pid, m.substr(22), true);
      break;
    case 'r':
      if (starts_with(m, "releaseQueue refCount:")) return refcount(pid, m.substr(22), false);
      break;
    case 'D':
      if (starts_with(m, "Deleting hardware queue ")) {
        std::string_view v = m.substr(24);
        if (auto a = take_hex(v)) hwq(pid, *a).deleted = true;
        return;
      }
      break;
    default:
      break;
  }
  // Any function's return, the runtime's own (module loading, init, …) as much as a hip* call's.
  if (failed_return(m)) {
    if (r->level != 1) error(line_no, s, coloured);
    return;
  }
  if (r->level != 1 && (m[0] == 'M' || m[0] == 'H' || m[0] == 'C') && is_fault_text(m)) error(line_no, s, coloured);
}

void LogAnalyzer::Impl::other(std::string_view s, std::size_t line_no) {
  const bool fault = is_fault_text(s);
  if (fault) error(line_no, s);
  if (!fault && !is_dump_line(s)) return;
  ++sum.recognized;
  // "VGPU=0x… SWq=0x…, HWq=0x…, id=N" ties a software queue to its hardware queue.
  // It prints no pid: which queue it belongs to is settled at the end (detail::resolve_dumps).
  if (starts_with(s, "VGPU=")) {
    auto hw = hex_after(s, "HWq=");
    if (!hw) return;
    auto [it, inserted] = dumps.try_emplace(*hw);
    if (inserted) it->second.first_record = sum.records;
    if (auto sw = hex_after(s, "SWq=")) it->second.sw_queues.insert(*sw);
    if (auto id = dec_after(s, "id=")) it->second.ids.insert(*id);
  }
}

void LogAnalyzer::Impl::thread(const detail::LogRecord& r) {
  // The same bracket as the last record's: the same pid and tid (LogRecord::bracket).
  if (r.bracket != 0 && r.bracket == last_bracket) return;
  last_bracket = r.bracket;
  const std::optional<int> pid = r.pid;
  const std::string_view tid = r.tid;
  const std::int64_t key = pid ? *pid : kNoPid;
  if (key != last_pid) {
    auto [it, inserted] = proc_index.try_emplace(key, sum.processes.size());
    if (inserted) sum.processes.push_back({pid, {}});
    last_pid = key;
    last_proc = it->second;
    last_tid.clear();
  }
  if (!tid.empty() && (tid.size() != last_tid.size() || !detail::equal_bytes(tid.data(), last_tid.data(), tid.size()))) {
    sum.processes[last_proc].tids.emplace(tid);
    last_tid.assign(tid);
  }
}

HwQueueStats& LogAnalyzer::Impl::hwq(std::int64_t pid, std::uint64_t address) {
  const auto key = std::make_pair(pid, address);
  if (key == last_hwq_key) return sum.hw_queues[last_hwq];
  auto [it, inserted] = hwq_index.try_emplace(key, sum.hw_queues.size());
  if (inserted) {
    HwQueueStats q;
    if (pid >= 0) q.pid = static_cast<int>(pid);
    q.address = address;
    sum.hw_queues.push_back(std::move(q));
    hwq_first.push_back(sum.records);
  }
  last_hwq_key = key;
  last_hwq = it->second;
  return sum.hw_queues[it->second];
}

// "SWq=0x…, HWq=0x…, id=N, Dispatch Header = …" / "… BarrierAND Header = …" (ROCm 6+),
// "HWq=0x…, Dispatch Header = …" (ROCm 5).
void LogAnalyzer::Impl::packet(std::int64_t pid, std::string_view m) {
  std::optional<std::uint64_t> sw;
  if (starts_with(m, "SWq=")) {
    m.remove_prefix(4);
    sw = take_hex(m);
    if (!sw) return;
    if (starts_with(m, ", ")) m.remove_prefix(2);
  }
  if (!starts_with(m, "HWq=")) return;
  m.remove_prefix(4);
  auto hw = take_hex(m);
  if (!hw) return;
  if (starts_with(m, ", ")) m.remove_prefix(2);
  std::optional<std::uint64_t> id;
  if (starts_with(m, "id=")) {
    m.remove_prefix(3);
    id = take_dec(m);
    if (starts_with(m, ", ")) m.remove_prefix(2);
  }
  HwQueueStats& q = hwq(pid, *hw);
  if (sw) q.sw_queues.insert(*sw);
  if (id) q.ids.insert(*id);
  if (starts_with(m, "Dispatch Header")) {
    ++q.dispatches;
    ++sum.dispatches;
  } else if (starts_with(m, "BarrierAND Header")) {
    ++q.barriers;
    ++sum.barriers;
  }
}

void LogAnalyzer::Impl::created(std::int64_t pid, std::string_view m, std::size_t line_no, bool with_swq) {
  std::optional<std::uint64_t> hw, sw;
  if (with_swq) {
    sw = hex_after(m, "SWq=");
    hw = hex_after(m, "HWq=");
  } else {
    std::string_view v = m.substr(23);
    hw = take_hex(v);
  }
  if (!hw) return;
  HwQueueStats& q = hwq(pid, *hw);
  if (sw) q.sw_queues.insert(*sw);
  if (auto size = dec_after(m, "with size ")) q.size = *size;
  if (auto prio = dec_after(m, "with priority ")) q.priority = static_cast<int>(*prio);
  if (auto coop = dec_after(m, "cooperative: ")) q.cooperative = *coop != 0;
  q.created_line = line_no;
}

void LogAnalyzer::Impl::refcount(std::int64_t pid, std::string_view rest, bool acquire) {
  rest = trim(rest);
  auto a = take_hex(rest);
  if (!a) return;
  HwQueueStats& q = hwq(pid, *a);
  if (acquire)
    ++q.acquired;
  else
    ++q.released;
}

void LogAnalyzer::Impl::kernel(std::string_view name) {
  if (last_kernel_count && name.size() == last_kernel.size() &&
      detail::equal_bytes(name.data(), last_kernel.data(), name.size())) {
    ++*last_kernel_count;
    return;
  }
  auto it = sum.kernels.find(name);  // the name is copied only the first time it is seen
  if (it == sum.kernels.end()) it = sum.kernels.emplace(std::string(name), 0).first;
  ++it->second;
  last_kernel = it->first;
  last_kernel_count = &it->second;
}

// `coloured`: `text` still holds colour codes, which the entry leaves out.
void LogAnalyzer::Impl::error(std::size_t line_no, std::string_view text, bool coloured) {
  ++sum.errors_total;
  if (sum.errors.size() >= opt.max_errors) return;
  text = trim(coloured ? strip_ansi(text) : text);
  sum.errors.push_back({line_no, excerpt(text, kMaxErrorText)});
}

}  // namespace gpreempt::logs
