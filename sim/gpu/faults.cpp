#include "sim/gpu/faults.h"

#include <charconv>

namespace gpreempt::sim::gpu {

std::optional<FaultRule> FaultPlan::for_suspend(uint32_t n) const {
  for (const auto& r : rules) {
    if (r.nth == 0) continue;
    if (n == r.nth || (r.every && n % r.nth == 0)) return r;
  }
  return std::nullopt;
}

std::string to_string(FaultKind k) {
  switch (k) {
    case FaultKind::kTimeout: return "timeout";
    case FaultKind::kHang: return "hang";
    case FaultKind::kEio: return "eio";
    case FaultKind::kSlowSave: return "slow_save";
  }
  return "?";
}

static bool fail(std::string* error, std::string msg) {
  if (error) *error = std::move(msg);
  return false;
}

static bool parse_item(std::string_view item, FaultRule& out, std::string* error) {
  const auto at = item.find('@');
  if (at == std::string_view::npos)
    return fail(error, "fault '" + std::string(item) + "': expected KIND@N");
  const std::string_view kind = item.substr(0, at);
  std::string_view rest = item.substr(at + 1);
  if (kind == "timeout") out.kind = FaultKind::kTimeout;
  else if (kind == "hang") out.kind = FaultKind::kHang;
  else if (kind == "eio") out.kind = FaultKind::kEio;
  else if (kind == "slow_save") out.kind = FaultKind::kSlowSave;
  else
    return fail(error, "fault '" + std::string(item) +
                           "': unknown kind (expected timeout, hang, eio or slow_save)");
  uint32_t n = 0;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
  if (ec != std::errc() || n == 0)
    return fail(error, "fault '" + std::string(item) + "': N must be a positive integer");
  out.nth = n;
  rest.remove_prefix(static_cast<std::size_t>(p - rest.data()));
  if (!rest.empty() && rest.front() == '+') {
    out.every = true;
    rest.remove_prefix(1);
  }
  if (!rest.empty() && rest.front() == 'x') {
    if (out.kind != FaultKind::kSlowSave)
      return fail(error, "fault '" + std::string(item) + "': only slow_save takes a factor");
    rest.remove_prefix(1);
    double f = 0;
    auto [q, ec2] = std::from_chars(rest.data(), rest.data() + rest.size(), f);
    if (ec2 != std::errc() || f <= 0)
      return fail(error, "fault '" + std::string(item) + "': factor must be a positive number");
    out.factor = f;
    rest.remove_prefix(static_cast<std::size_t>(q - rest.data()));
  } else if (out.kind == FaultKind::kSlowSave) {
    out.factor = 10.0;
  }
  if (!rest.empty())
    return fail(error, "fault '" + std::string(item) + "': unexpected '" + std::string(rest) + "'");
  return true;
}

std::optional<FaultPlan> parse_fault_plan(std::string_view text, std::string* error) {
  FaultPlan plan;
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      FaultRule r;
      if (!parse_item(item, r, error)) return std::nullopt;
      plan.rules.push_back(r);
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return plan;
}

}  // namespace gpreempt::sim::gpu
