// Reading text files: the small files of /proc and /sys whole, and user-named input files
// (captures, "-" for stdin) as lines in bounded memory.
//
// Plain open/read/opendir (not iostreams or std::filesystem) on purpose: the simulated KFD's
// LD_PRELOAD shim interposes exactly these libc entry points for /sys/class/kfd, so the same code
// reads the real kernel's files or the simulator's.
//
// Only regular files are read by path. A directory, FIFO, socket or device is refused with the
// reason instead of being read: a directory reads as an error or as nothing, a FIFO without a writer
// blocks forever, a device may never end. Standard input ("-") is read whatever it is: piping is
// how a FIFO or a command's output is meant to be given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt {

// Whole file, or nullopt (errno set: EISDIR for a directory, EINVAL for another non-regular file)
// when it cannot be opened or read.
std::optional<std::string> read_text_file(const std::string& path);
// The rest of an open descriptor, to its end: nullopt (errno set) when a read fails, or EFBIG when
// it holds more than `max_bytes` (refused, not cut: a half-read value must match nothing). The
// caller keeps the descriptor (and closes it).
std::optional<std::string> read_descriptor(int fd, std::size_t max_bytes = SIZE_MAX);
// Entry names of a directory except "." and "..", sorted; nullopt (errno set) if it cannot be opened.
std::optional<std::vector<std::string>> list_directory(const std::string& path);

// Why an input file could not be read.
struct FileError {
  std::string path;
  int error = 0;       // errno, or 0 when the reason is not an errno (a FIFO refused)
  std::string reason;  // "No such file or directory", "is a directory", ...
  std::string message() const { return "cannot read " + path + ": " + reason; }
};

// Opens a user-named input file (not "-") for reading: a file descriptor, or -1 with `err` set when
// it cannot be opened or is not a regular file (the refusals above). For readers that need the
// descriptor itself (pread, several threads); the caller closes it.
int open_regular_file(const std::string& path, std::optional<FileError>& err);

// An input named by the user, opened for sequential reading. Check error() after construction
// and after reading: a read error mid-file ends the input and is reported there.
class InputFile {
 public:
  explicit InputFile(std::string path);  // "-" = standard input
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::optional<FileError>& error() const { return error_; }
  const std::string& path() const { return path_; }
  // Up to `n` bytes; 0 at the end of the input or after an error.
  std::size_t read(char* buf, std::size_t n);

 private:
  std::string path_;
  int fd_ = -1;
  bool owned_ = false;
  std::optional<FileError> error_;
};

// Lines of text one at a time, whatever holds them (a string, a file). Lines longer than
// max_line() are returned as their first max_line() bytes with line_cut() set; the rest of such a
// line is skipped, never stored, so memory stays bounded whatever the input.
class LineSource {
 public:
  static constexpr std::size_t kDefaultMaxLine = 4096;

  explicit LineSource(std::size_t max_line) : max_line_(max_line == 0 ? 1 : max_line) {}
  virtual ~LineSource() = default;

  // The next line without its "\n" and without a "\r" before it; false at the end of the input.
  virtual bool next(std::string_view& line) = 0;

  std::size_t line_number() const { return line_no_; }  // 1-based, of the line last returned
  bool line_cut() const { return cut_; }                 // that line was longer than max_line()
  std::size_t max_line() const { return max_line_; }
  // At the end: whether the last line had its "\n" (no input at all counts as ended).
  bool ended_with_newline() const { return ended_with_newline_; }
  bool empty() const { return line_no_ == 0; }

 protected:
  std::size_t max_line_;
  std::size_t line_no_ = 0;
  bool cut_ = false;
  bool ended_with_newline_ = true;
};

// Lines of text already in memory.
class TextLines final : public LineSource {
 public:
  explicit TextLines(std::string_view text, std::size_t max_line = kDefaultMaxLine)
      : LineSource(max_line), text_(text) {}
  bool next(std::string_view& line) override;

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// Lines of an InputFile, read in chunks: memory is one chunk plus max_line(), whatever the size.
class FileLines final : public LineSource {
 public:
  explicit FileLines(InputFile& file, std::size_t max_line = kDefaultMaxLine);
  bool next(std::string_view& line) override;

 private:
  bool fill();  // more bytes into buf_; false at the end of the input

  InputFile& file_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;  // unread bytes are buf_[begin_, end_)
  std::string line_;                 // the line being returned, at most max_line() bytes
  bool eof_ = false;
};

}  // namespace gpreempt
