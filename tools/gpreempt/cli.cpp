#include "cli.h"

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace gpreempt::cli {

CLI::App* add_command(CLI::App& parent, Globals& globals, const std::string& name,
                      const std::string& description, const std::string& footer) {
  CLI::App* sub = parent.add_subcommand(name, description);
  sub->add_flag("--json", globals.json, "Print one JSON document on stdout instead of text");
  if (!footer.empty()) sub->footer(footer.back() == '\n' ? footer : footer + "\n");
  return sub;
}

void emit(const Globals& globals, const std::string& human, const nlohmann::json& json) {
  if (globals.json) {
    print_json(json);
  } else {
    std::cout << human;
    if (!human.empty() && human.back() != '\n') std::cout << "\n";
  }
  std::cout.flush();
}

void exit_partial(const std::string& message) {
  std::cout.flush();
  throw PartialResult(message);
}

std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t i = 0; i < width.size(); ++i) {
      std::string c = i < cells.size() ? cells[i] : "";
      s += c;
      if (i + 1 < width.size()) s += std::string(width[i] - c.size() + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(header);
  for (const auto& r : rows) out += line(r);
  return out;
}

std::filesystem::path own_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Failure("cannot find this program's directory (/proc/self/exe)");
  buf[n] = '\0';
  return std::filesystem::path(buf).parent_path();
}

const nlohmann::ordered_json& array_at(const nlohmann::ordered_json& j, const char* key) {
  static const nlohmann::ordered_json empty = nlohmann::ordered_json::array();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

std::string gpu_id_text(uint32_t gpu_id) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%u (%x)", gpu_id, gpu_id);
  return buf;
}

}  // namespace gpreempt::cli
