// Which kind of text a file is, from its first lines: so that a decoder handed the wrong file
// (hqds given to `decode mqds`, a HIP log given to `decode hqds`) says what it looks like and
// which command reads it, instead of one diagnostic per line.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpreempt::discovery {

enum class InputKind { unknown, properties, mqds, hqds, rls, hip_log, rocminfo, rocm_smi };

// "debugfs hqds output", "a HIP runtime log", ...
std::string_view describe(InputKind kind);
// The gpreempt command line that reads this kind of file ("gpreempt decode hqds FILE"), or nullopt.
std::optional<std::string> command_for(InputKind kind, std::string_view file);
// The whole hint for input of kind `found` given to the decoder of `expected`, e.g.
// "this looks like debugfs hqds output, not debugfs mqds output: try `gpreempt decode hqds F`".
std::string wrong_kind_message(InputKind found, InputKind expected, std::string_view file);

// Classifies input from its first non-blank lines. A kind is claimed only on evidence no other
// kind produces (a slot header only hqds prints, a "Process <pid> PASID" line only mqds prints,
// ...): a damaged file of the right kind is never taken for another kind.
class InputSniffer {
 public:
  static constexpr std::size_t kWindow = 16;  // non-blank lines looked at before giving up

  void feed(std::string_view line);
  bool decided() const { return decided_; }
  // The verdict once decided(); before that, the best guess from the lines seen so far.
  InputKind kind() const;

 private:
  void decide(InputKind k) {
    kind_ = k;
    decided_ = true;
  }
  bool decided_ = false;
  InputKind kind_ = InputKind::unknown;
  std::size_t seen_ = 0;
  std::size_t property_lines_ = 0;
  bool after_node_header_ = false;
  bool log_hints_ = false;
};

// The verdict on `text` (its first lines).
InputKind sniff_input(std::string_view text);

}  // namespace gpreempt::discovery
