// The version parsers of doctor: kernel release and the ROCr library a process maps.
#include <gtest/gtest.h>

#include "doctor/versions.h"

namespace gpreempt::doctor {
namespace {

TEST(DoctorVersions, KernelRelease) {
  auto r = parse_kernel_release("6.5.0-14-generic\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->major, 6);
  EXPECT_EQ(r->minor, 5);
  r = parse_kernel_release("5.14.0-427.13.1.el9_4.x86_64");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->minor, 14);
  EXPECT_FALSE(parse_kernel_release("linux"));
  EXPECT_FALSE(parse_kernel_release("6"));
  EXPECT_FALSE(parse_kernel_release(""));
}

std::string maps_line(const std::string& path) {
  return "7f4e2c000000-7f4e2c200000 r-xp 00000000 08:01 1234567                    " + path + "\n";
}

// File names as AMD's packages install them: the ROCm release in the last field (MMmmpp), e.g.
// hsa-rocr 1.11.0.50700 for ROCm 5.7.0 and /opt/rocm-6.3.1/lib/libhsa-runtime64.so.1.14.60301 in
// a profiler's list of mapped files.
TEST(DoctorVersions, AmdPackagesNameTheRocmRelease) {
  const std::string maps = "00400000-00401000 r-xp 00000000 08:01 1 /usr/bin/python3.10\n" +
                           maps_line("/opt/rocm-6.3.1/lib/libhsa-runtime64.so.1.14.60301") +
                           maps_line("/opt/rocm-6.3.1/lib/libhsa-runtime64.so.1.14.60301") +
                           "7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack]\n";
  auto v = rocr_from_maps(maps);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->library, "/opt/rocm-6.3.1/lib/libhsa-runtime64.so.1.14.60301");
  EXPECT_EQ(v->describe(), "6.3.1");
  EXPECT_EQ(v->library_minor, 14);
  EXPECT_EQ(v->supports_runtime_enable(), true);

  v = rocr_from_maps(maps_line("/opt/rocm/lib/libhsa-runtime64.so.1.11.50700"));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->describe(), "5.7.0");
  EXPECT_EQ(v->supports_runtime_enable(), true);

  v = rocr_from_maps(maps_line("/opt/rocm-5.6.1/lib/libhsa-runtime64.so.1.10.50601"));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->describe(), "5.6.1");
  EXPECT_EQ(v->supports_runtime_enable(), false);

  v = rocr_from_maps(maps_line("/opt/rocm-7.2.0/lib/libhsa-runtime64.so.1.18.70200 (deleted)"));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->library, "/opt/rocm-7.2.0/lib/libhsa-runtime64.so.1.18.70200");
  EXPECT_EQ(v->describe(), "7.2.0");
}

// Distribution builds leave the patch field 0: Debian 12's ROCm 5.2.3 is libhsa-runtime64.so.1.5.0.
TEST(DoctorVersions, DistributionBuildsTellOnlyTheLibraryVersion) {
  auto v = rocr_from_maps(maps_line("/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1.5.0"));
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->rocm_major);
  EXPECT_EQ(v->describe(), "library 1.5");
  EXPECT_EQ(v->supports_runtime_enable(), false);
  v = rocr_from_maps(maps_line("/usr/lib64/libhsa-runtime64.so.1.12.0"));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->supports_runtime_enable(), true);
  // A source build under /opt/rocm-X.Y.Z: the directory names the release.
  v = rocr_from_maps(maps_line("/opt/rocm-6.1.2/lib/libhsa-runtime64.so.1.13.0"));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->describe(), "6.1.2");
}

TEST(DoctorVersions, BundledOrAbsentRuntime) {
  // PyTorch wheels bundle the library without a version in its name.
  auto v = rocr_from_maps(maps_line("/venv/lib/python3.10/site-packages/torch/lib/libhsa-runtime64.so"));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->describe(), "unknown");
  EXPECT_FALSE(v->supports_runtime_enable());
  EXPECT_FALSE(rocr_from_maps(maps_line("/usr/lib/x86_64-linux-gnu/libc.so.6")));
  EXPECT_FALSE(rocr_from_maps(""));
  // Not fooled by a similar name.
  EXPECT_FALSE(rocr_from_maps(maps_line("/opt/x/libhsa-runtime64-tools.so.1")));
}

}  // namespace
}  // namespace gpreempt::doctor
