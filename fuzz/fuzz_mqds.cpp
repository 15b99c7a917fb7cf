// libFuzzer target: the debugfs mqds decoder on arbitrary bytes, with the default line limit and with a
// short one (so that over-long lines are cut mid-token), and its JSON document.
#include "discovery/json.h"
#include "discovery/mqds.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpreempt;
  const std::string_view text = fuzz::as_text(data, size);
  const auto r = discovery::decode_mqds(text, "fuzz");
  fuzz::check_result(r);
  (void)discovery::to_json(r).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  TextLines short_lines(text, 1 + (size ? data[0] % 64 : 0));
  fuzz::check_result(discovery::decode_mqds(short_lines, "fuzz"));
  return 0;
}
