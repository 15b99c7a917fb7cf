#include "logs/log_file.h"

#include "common/error.h"
#include "common/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

#include "logs/log_merge.h"
#include "logs/log_record.h"

namespace gpreempt::logs {

namespace {

// Small enough to stay in L1/L2 between read() copying it in and the analyzer reading it: on a
// 256 MiB log, read() alone took 0.039 s with 256 KiB buffers and 0.023 s with 64 KiB ones.
constexpr std::size_t kChunk = 64u << 10;

// gpreempt::Error keeps the errno, so the CLI's --json failure names it (EIO, ENOENT, ...).
[[noreturn]] void fail(const std::string& path, const char* what) {
  const int e = errno;
  throw Error(e, std::string(what) + " " + path + ": " + std::strerror(e));
}

// Analyzes bytes [begin, end) of fd.
detail::PieceSummary analyze_range(int fd, const std::string& path, off_t begin, off_t end, const AnalyzerOptions& o) {
  LogAnalyzer a(o);
  std::vector<char> buf(kChunk);
  for (off_t pos = begin; pos < end;) {
    const std::size_t want = static_cast<std::size_t>(std::min<off_t>(end - pos, static_cast<off_t>(buf.size())));
    const ssize_t n = ::pread(fd, buf.data(), want, pos);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, "error reading");
    }
    if (n == 0) break;
    a.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
    pos += n;
  }
  return a.finish_piece();
}

// First offset >= from that starts a line beginning a record (":<digit>:"), or `limit`. A piece
// must start there: such a line is never the continuation of a wrapped record.
off_t next_boundary(int fd, off_t from, off_t limit) {
  std::vector<char> buf(1u << 16);
  off_t pos = from > 0 ? from - 1 : 0;  // see a '\n' right before `from`
  while (pos < limit) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), pos);
    if (n < 5) return limit;
    for (ssize_t i = 0; i + 5 <= n; ++i)
      if (buf[static_cast<std::size_t>(i)] == '\n' &&
          detail::is_record_start(std::string_view(buf.data() + i + 1, static_cast<std::size_t>(n - i - 1))))
        return pos + i + 1;
    pos += n - 4;  // overlap: a pattern cut by the window end is seen again
  }
  return limit;
}

// Sequential read of a stream (pipes, stdin, terminals).
LogSummary analyze_stream(int fd, const std::string& path, const AnalyzerOptions& o) {
  LogAnalyzer a(o);
  std::vector<char> buf(kChunk);
  while (true) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, "error reading");
    }
    if (n == 0) break;
    a.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
  return a.finish();
}

}  // namespace

LogSummary analyze_file(const std::string& path, const AnalyzerOptions& options, unsigned threads,
                        std::uint64_t min_piece_bytes) {
  const off_t min_piece = static_cast<off_t>(std::max<std::uint64_t>(min_piece_bytes, 1));
  if (path == "-") return analyze_stream(STDIN_FILENO, "<stdin>", options);
  // A directory, FIFO or device is refused as the decoders refuse it (common/text_file.h): a FIFO
  // without a writer would block forever; standard input ("-") is how a pipe is given.
  std::optional<FileError> refused;
  const int fd = open_regular_file(path, refused);
  if (fd < 0) throw Error(refused->error ? refused->error : EINVAL, refused->message());
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, "cannot stat");
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  if (threads == 1 || st.st_size < 2 * min_piece)
    return detail::resolve_dumps(analyze_range(fd, path, 0, st.st_size, options));
  threads = static_cast<unsigned>(std::min<off_t>(threads, st.st_size / min_piece));
  std::vector<off_t> cuts = {0};
  for (unsigned k = 1; k < threads; ++k) {
    const off_t b = next_boundary(fd, st.st_size * k / threads, st.st_size);
    if (b > cuts.back() && b < st.st_size) cuts.push_back(b);
  }
  cuts.push_back(st.st_size);
  std::vector<detail::PieceSummary> parts(cuts.size() - 1);
  std::vector<std::exception_ptr> errors(parts.size());
  std::vector<std::thread> pool;
  for (std::size_t k = 0; k < parts.size(); ++k)
    pool.emplace_back([&, k] {
      try {
        parts[k] = analyze_range(fd, path, cuts[k], cuts[k + 1], options);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  detail::PieceSummary total = std::move(parts[0]);
  for (std::size_t k = 1; k < parts.size(); ++k) merge_into(total, parts[k], options.max_errors);
  return detail::resolve_dumps(std::move(total));
}

}  // namespace gpreempt::logs
