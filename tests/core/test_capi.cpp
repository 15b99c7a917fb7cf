// The C ABI's contract without a device: OPTS size handling, negative errno + per-thread detail,
// outputs left unchanged on failure, strerror names.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>

#include <stdio.h>
#include <unistd.h>

#include "gpreempt/gpreempt.h"

TEST(CoreCApi, VersionMatchesTheHeader) {
  EXPECT_EQ(gpreempt_version(), (GPREEMPT_VERSION_MAJOR << 16) | (GPREEMPT_VERSION_MINOR << 8) |
                                    GPREEMPT_VERSION_PATCH);
  EXPECT_STREQ(gpreempt_version_string(), GPREEMPT_VERSION_STRING);
}

TEST(CoreCApi, StrerrorNamesTheCode) {
  EXPECT_NE(std::string(gpreempt_strerror(-EPERM)).find("EPERM"), std::string::npos);
  EXPECT_NE(std::string(gpreempt_strerror(EPROTO)).find("EPROTO"), std::string::npos);
}

TEST(CoreCApi, FailedOpenLeavesOutputAndSetsDetail) {
  gpreempt_ctx_opts opts;
  std::memset(&opts, 0, sizeof opts);
  opts.sz = sizeof opts;
  opts.device_path = "/nonexistent/kfd";
  gpreempt_ctx* sentinel = reinterpret_cast<gpreempt_ctx*>(0x1234);
  gpreempt_ctx* out = sentinel;
  EXPECT_EQ(gpreempt_ctx_open(&opts, &out), -ENOENT);
  EXPECT_EQ(out, sentinel);
  EXPECT_NE(std::string(gpreempt_last_error()).find("/nonexistent/kfd"), std::string::npos);
}

TEST(CoreCApi, OptsSizeIsChecked) {
  gpreempt_ctx* out = nullptr;
  gpreempt_ctx_opts opts;
  std::memset(&opts, 0, sizeof opts);
  opts.sz = 2;  // smaller than the sz field itself
  EXPECT_EQ(gpreempt_ctx_open(&opts, &out), -EINVAL);
  // A newer caller's struct with a non-zero field this library does not know.
  struct Bigger {
    gpreempt_ctx_opts base;
    uint64_t future_field;
  } big;
  std::memset(&big, 0, sizeof big);
  big.base.sz = sizeof big;
  big.base.device_path = "/nonexistent/kfd";
  big.future_field = 1;
  EXPECT_EQ(gpreempt_ctx_open(&big.base, &out), -E2BIG);
  EXPECT_NE(std::string(gpreempt_last_error()).find("does not know"), std::string::npos);
  // The same with the unknown field zero: accepted (then fails on the device, as it should).
  big.future_field = 0;
  EXPECT_EQ(gpreempt_ctx_open(&big.base, &out), -ENOENT);
  EXPECT_EQ(gpreempt_ctx_open(nullptr, nullptr), -EINVAL);
}

TEST(CoreCApi, OptsSizeEndingInsideAFieldOmitsThatField) {
  // An old caller whose struct ends halfway through device_path: the pointer must be ignored, not
  // read torn (half of it would be garbage).
  gpreempt_ctx_opts opts;
  std::memset(&opts, 0, sizeof opts);
  opts.device_path = "/nonexistent/kfd";
  opts.sz = offsetof(gpreempt_ctx_opts, device_path) + sizeof(opts.device_path) / 2;
  gpreempt_ctx* out = nullptr;
  const int rc = gpreempt_ctx_open(&opts, &out);
  if (rc == 0) {
    gpreempt_ctx_close(out);  // the default device exists here: the path was ignored
  } else {
    EXPECT_EQ(std::string(gpreempt_last_error()).find("/nonexistent/kfd"), std::string::npos)
        << gpreempt_last_error();
  }
  opts.sz = offsetof(gpreempt_ctx_opts, device_path) + sizeof(opts.device_path);
  EXPECT_EQ(gpreempt_ctx_open(&opts, &out), -ENOENT);  // whole field: used
}

TEST(CoreCApi, DetailMessageIsPerThread) {
  gpreempt_ctx* out = nullptr;
  EXPECT_EQ(gpreempt_ctx_open(nullptr, nullptr), -EINVAL);
  const std::string mine = gpreempt_last_error();
  std::string other;
  std::thread([&] {
    gpreempt_find_queues_by_process(999999999, nullptr, 0);
    other = gpreempt_last_error();
  }).join();
  EXPECT_EQ(std::string(gpreempt_last_error()), mine);
  EXPECT_NE(other, mine);
  (void)out;
}

TEST(CoreCApi, NullArgumentsAreRejected) {
  EXPECT_EQ(gpreempt_detach(nullptr), -EINVAL);
  EXPECT_EQ(gpreempt_list_queues(nullptr, nullptr, 0), -EINVAL);
  EXPECT_EQ(gpreempt_suspend_queues(nullptr, nullptr, 0, 0, nullptr), -EINVAL);
  EXPECT_EQ(gpreempt_resume_process(nullptr), -EINVAL);
  EXPECT_EQ(gpreempt_target_pid(nullptr), -EINVAL);
  EXPECT_EQ(gpreempt_get_stats(nullptr, nullptr), -EINVAL);
  EXPECT_EQ(gpreempt_take_notice(nullptr, nullptr, nullptr, 0), -EINVAL);
  gpreempt_ctx_close(nullptr);  // ignored
}

TEST(CoreCApi, UnknownProcessHasNoSysfsQueues) {
  gpreempt_sysfs_queue q[2];
  std::memset(q, 0xab, sizeof q);
  EXPECT_EQ(gpreempt_find_queues_by_process(999999999, q, 2), -ESRCH);
  EXPECT_EQ(q[0].queue_id, 0xababababu);  // untouched
  EXPECT_EQ(gpreempt_find_queues_by_process(1, nullptr, 3), -EINVAL);
}

TEST(CoreCApi, GraceConversionIsExported) {
  EXPECT_EQ(gpreempt_grace_from_us(100, 2100), 210u);
  EXPECT_EQ(gpreempt_grace_from_us(100, 0), GPREEMPT_GRACE_DEFAULT);
}

TEST(CoreCApi, PrintMyQueuesWithoutQueuesSaysSoOnOneLine) {
  // This test process never opened /dev/kfd: it used to print nothing and return -ESRCH.
  std::fflush(stdout);
  char path[] = "/tmp/gpreempt_print_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const int saved = ::dup(STDOUT_FILENO);
  ::dup2(fd, STDOUT_FILENO);
  const int rc = gpreempt_print_my_queues();
  std::fflush(stdout);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::string text(4096, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  ::close(fd);
  ::unlink(path);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  EXPECT_EQ(rc, 0) << gpreempt_last_error();
  EXPECT_EQ(text, "gpreempt: process " + std::to_string(::getpid()) +
                      " has no KFD queues yet (queues appear when the GPU runtime first uses the "
                      "GPU)\n");
}
