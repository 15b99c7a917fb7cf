#include "discovery/product_name.h"

#include "discovery/properties.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

namespace gpreempt::discovery {

namespace {

struct Known {
  uint32_t gfx;  // gfx_target_version
  uint32_t device_id;
  const char* name;
};

// Sources: libdrm data/amdgpu.ids (gitlab.freedesktop.org/mesa/drm, 2025: 738C, 7408, 740C, 740F,
// 74A0-74BD, 75A0-75B3 with these names) and, for the gfx target of each family, the amdgpu PCI
// table (CHIP_ARCTURUS gfx908, CHIP_ALDEBARAN gfx90a, GC 9.4.3 gfx942, GC 9.5.0 gfx950). Checked
// against the captures beside the checkout: rocm-smi of MI300X VMs prints "Card series: AMD
// Instinct MI300X OAM" for 0x74a1; rocminfo of the MI308X node shows gfx942 with Chip ID 0x74a2
// (and "AMD Radeon Graphics" as marketing name, because that machine's amdgpu.ids lacked it).
constexpr Known kInstinct[] = {
    {90008, 0x738C, "AMD Instinct MI100"},
    {90010, 0x7408, "AMD Instinct MI250X"},
    {90010, 0x740C, "AMD Instinct MI250X / MI250"},
    {90010, 0x740F, "AMD Instinct MI210"},
    {90402, 0x74A0, "AMD Instinct MI300A"},
    {90402, 0x74A1, "AMD Instinct MI300X"},
    {90402, 0x74A2, "AMD Instinct MI308X"},
    {90402, 0x74A5, "AMD Instinct MI325X"},
    {90402, 0x74A8, "AMD Instinct MI308X HF"},
    {90402, 0x74A9, "AMD Instinct MI300X HF"},
    {90402, 0x74B5, "AMD Instinct MI300X VF"},
    {90402, 0x74B6, "AMD Instinct MI308X"},
    {90402, 0x74BD, "AMD Instinct MI300X HF"},
    {90500, 0x75A0, "AMD Instinct MI350X"},
    {90500, 0x75A3, "AMD Instinct MI355X"},
    {90500, 0x75B0, "AMD Instinct MI350X VF"},
    {90500, 0x75B3, "AMD Instinct MI355X VF"},
};

// amdgpu.ids lines: "DEVICE_ID,\tREVISION,\tNAME" (hex), '#' comments, a version line. The
// topology has no revision, so a device id counts only when all its lines give one name.
std::optional<std::string> from_ids_file(const std::string& path, uint32_t device_id) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto c1 = line.find(',');
    if (c1 == std::string::npos) continue;
    // `end` points into the text it parsed, so that text must outlive the check below.
    const std::string id_text = line.substr(0, c1);
    char* end = nullptr;
    const unsigned long id = std::strtoul(id_text.c_str(), &end, 16);
    if (!end || *end != '\0' || id != device_id) continue;
    const auto c2 = line.find(',', c1 + 1);
    if (c2 == std::string::npos) continue;
    auto name = line.substr(c2 + 1);
    name.erase(0, name.find_first_not_of(" \t"));
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t' || name.back() == '\r')) name.pop_back();
    if (!name.empty()) names.insert(name);
  }
  if (names.size() != 1) return std::nullopt;
  return *names.begin();
}

}  // namespace

std::optional<ProductName> product_name(uint32_t gfx_target_version, uint32_t device_id,
                                        const std::string& ids_path) {
  for (const auto& k : kInstinct)
    if (k.device_id == device_id && k.gfx == gfx_target_version) return ProductName{k.name, "built-in table"};
  if (auto n = from_ids_file(ids_path, device_id)) return ProductName{*n, ids_path};
  return std::nullopt;
}

std::string display_name(uint32_t gfx_target_version, uint32_t device_id, const std::string& ids_path) {
  const std::string gfx = gfx_target_name(gfx_target_version).value_or("unknown");
  if (auto p = product_name(gfx_target_version, device_id, ids_path)) return p->name + " (" + gfx + ")";
  char dev[16];
  std::snprintf(dev, sizeof dev, "0x%04x", device_id);
  return gfx + " GPU (device " + dev + ")";
}

}  // namespace gpreempt::discovery
