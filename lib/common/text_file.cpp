#include "common/text_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpreempt {

namespace {

// What a non-regular file is, and what to do instead; empty for a regular file.
std::string refusal(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode))
    return "is a FIFO (named pipe), not a regular file: read it from standard input instead "
           "('-' with '< FIFO')";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  if (S_ISCHR(mode)) return "is a character device, not a regular file";
  if (S_ISBLK(mode)) return "is a block device, not a regular file";
  return "is not a regular file";
}

// Opens `path` for reading if it is a regular file. O_NONBLOCK so that opening a FIFO does not
// wait for a writer before fstat can tell what it is.
}  // namespace

int open_regular_file(const std::string& path, std::optional<FileError>& err) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    err = FileError{path, e, std::strerror(e)};
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    err = FileError{path, e, std::strerror(e)};
    return -1;
  }
  if (std::string why = refusal(st.st_mode); !why.empty()) {
    ::close(fd);
    err = FileError{path, S_ISDIR(st.st_mode) ? EISDIR : 0, std::move(why)};
    return -1;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

namespace {

// read(2) without EINTR; -1 with errno on an error.
ssize_t read_some(int fd, char* buf, std::size_t n) {
  for (;;) {
    const ssize_t r = ::read(fd, buf, n);
    if (r >= 0 || errno != EINTR) return r;
  }
}

}  // namespace

std::optional<std::string> read_descriptor(int fd, std::size_t max_bytes) {
  std::string out;
  char buf[16384];
  for (;;) {
    const ssize_t n = read_some(fd, buf, sizeof buf);
    if (n < 0) return std::nullopt;
    if (n == 0) return out;
    if (static_cast<std::size_t>(n) > max_bytes - out.size()) {
      errno = EFBIG;
      return std::nullopt;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::optional<std::string> read_text_file(const std::string& path) {
  std::optional<FileError> err;
  const int fd = open_regular_file(path, err);
  if (fd < 0) {
    errno = err->error != 0 ? err->error : EINVAL;
    return std::nullopt;
  }
  auto out = read_descriptor(fd);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return out;
}

std::optional<std::vector<std::string>> list_directory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return std::nullopt;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

InputFile::InputFile(std::string path) : path_(std::move(path)) {
  if (path_ == "-") {
    fd_ = STDIN_FILENO;
    return;
  }
  fd_ = open_regular_file(path_, error_);
  owned_ = fd_ >= 0;
}

InputFile::~InputFile() {
  if (owned_) ::close(fd_);
}

std::size_t InputFile::read(char* buf, std::size_t n) {
  if (fd_ < 0 || error_ || n == 0) return 0;
  const ssize_t r = read_some(fd_, buf, n);
  if (r < 0) {
    const int e = errno;
    error_ = FileError{path_ == "-" ? "<stdin>" : path_, e, std::strerror(e)};
    return 0;
  }
  return static_cast<std::size_t>(r);
}

bool TextLines::next(std::string_view& line) {
  if (pos_ >= text_.size()) return false;
  const std::size_t nl = text_.find('\n', pos_);
  const std::size_t end = nl == std::string_view::npos ? text_.size() : nl;
  line = text_.substr(pos_, end - pos_);
  ended_with_newline_ = nl != std::string_view::npos;
  pos_ = end + 1;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  cut_ = line.size() > max_line_;
  if (cut_) line = line.substr(0, max_line_);
  ++line_no_;
  return true;
}

FileLines::FileLines(InputFile& file, std::size_t max_line)
    : LineSource(max_line), file_(file), buf_(64u << 10) {}

bool FileLines::fill() {
  if (eof_) return false;
  begin_ = 0;
  end_ = file_.read(buf_.data(), buf_.size());
  if (end_ == 0) eof_ = true;
  return end_ > 0;
}

bool FileLines::next(std::string_view& line) {
  line_.clear();
  // One byte more than the limit is kept so that a "\r" right after max_line() bytes is still
  // recognised as the line end and not taken for an over-long line.
  const std::size_t keep = max_line_ + 1;
  bool any = false, overflow = false;
  for (;;) {
    if (begin_ == end_ && !fill()) {
      if (!any) return false;
      ended_with_newline_ = false;
      break;
    }
    any = true;
    const char* b = buf_.data() + begin_;
    const std::size_t n = end_ - begin_;
    const void* nl = std::memchr(b, '\n', n);
    const std::size_t take = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - b) : n;
    const std::size_t room = keep - line_.size();
    line_.append(b, std::min(take, room));
    overflow |= take > room;
    begin_ += take;
    if (nl) {
      ++begin_;
      ended_with_newline_ = true;
      break;
    }
  }
  if (!overflow && !line_.empty() && line_.back() == '\r') line_.pop_back();
  cut_ = overflow || line_.size() > max_line_;
  if (line_.size() > max_line_) line_.resize(max_line_);
  ++line_no_;
  line = line_;
  return true;
}

}  // namespace gpreempt
