// A GPU's product name for people. The KFD topology's `name` is the amdgpu ASIC name, and on
// MI300-class parts every node says "ip discovery", so the name comes from the PCI device id: a
// small built-in table of the Instinct parts gpreempt targets, else libdrm's amdgpu.ids when it is
// installed (Debian's libdrm-common; older versions lack the MI300 ids).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpreempt::cli {

struct ProductName {
  std::string name;    // "AMD Instinct MI308X"
  std::string source;  // "built-in table" or the amdgpu.ids path
};

// `gfx_target_version` (major*10000 + minor*100 + stepping) guards the table: an id listed for
// another generation is not trusted. `ids_path` is libdrm's table.
std::optional<ProductName> product_name(uint32_t gfx_target_version, uint32_t device_id,
                                        const std::string& ids_path = "/usr/share/libdrm/amdgpu.ids");

}  // namespace gpreempt::cli
