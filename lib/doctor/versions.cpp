#include "doctor/versions.h"

#include <charconv>
#include <vector>

namespace gpreempt::doctor {

namespace {

// Leading decimal number of `s` (advancing it); nullopt when `s` does not start with a digit.
std::optional<int> take_number(std::string_view& s) {
  int v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<std::size_t>(r.ptr - s.data()));
  return v;
}

// "X.Y.Z" at the start of `s` (all three present), as in /opt/rocm-6.1.2/.
bool take_triple(std::string_view s, int& a, int& b, int& c) {
  auto x = take_number(s);
  if (!x || s.empty() || s.front() != '.') return false;
  s.remove_prefix(1);
  auto y = take_number(s);
  if (!y || s.empty() || s.front() != '.') return false;
  s.remove_prefix(1);
  auto z = take_number(s);
  if (!z) return false;
  a = *x, b = *y, c = *z;
  return true;
}

}  // namespace

std::optional<KernelRelease> parse_kernel_release(std::string_view s) {
  auto major = take_number(s);
  if (!major || s.empty() || s.front() != '.') return std::nullopt;
  s.remove_prefix(1);
  auto minor = take_number(s);
  if (!minor) return std::nullopt;
  return KernelRelease{*major, *minor};
}

std::optional<bool> RocrVersion::supports_runtime_enable() const {
  if (rocm_major && rocm_minor) return *rocm_major > 5 || (*rocm_major == 5 && *rocm_minor >= 7);
  if (library_minor) return *library_minor >= 11;
  return std::nullopt;
}

std::string RocrVersion::describe() const {
  if (rocm_major && rocm_minor && rocm_patch)
    return std::to_string(*rocm_major) + "." + std::to_string(*rocm_minor) + "." +
           std::to_string(*rocm_patch);
  if (library_minor) return "library 1." + std::to_string(*library_minor);
  return "unknown";
}

std::optional<RocrVersion> rocr_from_maps(std::string_view maps) {
  static constexpr std::string_view kName = "libhsa-runtime64.so";
  while (!maps.empty()) {
    const auto nl = maps.find('\n');
    std::string_view line = maps.substr(0, nl);
    maps.remove_prefix(nl == std::string_view::npos ? maps.size() : nl + 1);
    // "start-end perms offset dev inode   /path": the path starts at the first '/'.
    const auto slash = line.find('/');
    if (slash == std::string_view::npos) continue;
    std::string_view path = line.substr(slash);
    if (path.ends_with(" (deleted)")) path.remove_suffix(10);
    const auto base_at = path.rfind('/') + 1;
    std::string_view base = path.substr(base_at);
    if (!base.starts_with(kName)) continue;

    RocrVersion v;
    v.library = std::string(path);
    std::string_view rest = base.substr(kName.size());  // ".1.14.60301", ".1", ""
    std::vector<int> parts;
    while (rest.size() > 1 && rest.front() == '.') {
      rest.remove_prefix(1);
      auto n = take_number(rest);
      if (!n) break;
      parts.push_back(*n);
    }
    if (parts.size() >= 2 && parts[0] == 1) v.library_minor = parts[1];
    // AMD's packages put the ROCm release in the patch field as MMmmpp (50700, 60301, 70200).
    if (parts.size() >= 3 && parts[0] == 1 && parts[2] >= 10000) {
      v.rocm_major = parts[2] / 10000;
      v.rocm_minor = parts[2] / 100 % 100;
      v.rocm_patch = parts[2] % 100;
    }
    // Else the install directory may name it: /opt/rocm-6.1.2/lib/...
    if (!v.rocm_major) {
      const auto at = path.find("/rocm-");
      int a = 0, b = 0, c = 0;
      if (at != std::string_view::npos && take_triple(path.substr(at + 6), a, b, c)) {
        v.rocm_major = a;
        v.rocm_minor = b;
        v.rocm_patch = c;
      }
    }
    return v;
  }
  return std::nullopt;
}

}  // namespace gpreempt::doctor
