// Versions doctor reads from text: the kernel release (/proc/sys/kernel/osrelease) and the ROCm
// runtime (ROCr, libhsa-runtime64) a process has mapped (/proc/PID/maps). Pure parsers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpreempt::doctor {

struct KernelRelease {
  int major = 0;
  int minor = 0;
};
// "6.5.0-14-generic" -> 6.5; nullopt when the text does not start with MAJOR.MINOR.
std::optional<KernelRelease> parse_kernel_release(std::string_view osrelease);

// What a process's maps say about its ROCm user space.
struct RocrVersion {
  std::string library;  // the mapped file's path, as maps shows it
  // ROCm release, when the file or its directory names it (AMD packages name the file
  // libhsa-runtime64.so.1.<minor>.<MMmmpp>, e.g. .so.1.14.60301 = ROCm 6.3.1, and install under
  // /opt/rocm-X.Y.Z).
  std::optional<int> rocm_major, rocm_minor, rocm_patch;
  // The library's own minor version (1.<minor>): AMD shipped 1.11 with ROCm 5.7 (hsa-rocr
  // 1.11.0.50700) and 1.12 with 6.0; Debian 12's ROCm 5.2.3 is libhsa-runtime64.so.1.5.0.
  std::optional<int> library_minor;

  // ROCm >= 5.7, the first user space that enables its runtime through the upstream
  // RUNTIME_ENABLE ioctl (what suspend needs); nullopt when neither number tells.
  std::optional<bool> supports_runtime_enable() const;
  // "6.3.1", or "library 1.14" when only that is known, or "unknown".
  std::string describe() const;
};

// The ROCr library mapped in a /proc/PID/maps text; nullopt when none is (not a ROCm process, or
// one that drives /dev/kfd itself). Statically linked or renamed copies (some Python wheels bundle
// libhsa-runtime64.so without a version) come back with no numbers.
std::optional<RocrVersion> rocr_from_maps(std::string_view maps_text);

}  // namespace gpreempt::doctor
