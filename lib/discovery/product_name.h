// A GPU's product name for people, the one every command prints. The KFD topology's `name` is the
// amdgpu ASIC name lower-cased (kfd_topology_add_device copies amdgpu_asic_name[asic_type]), and
// MI300-class parts are CHIP_IP_DISCOVERY, so every node says "ip discovery" — on real machines
// and, faithfully, on the simulator. The product name therefore comes from the PCI device id, as
// rocm-smi's "Card series" does: a small built-in table of the Instinct parts gpreempt targets,
// else libdrm's amdgpu.ids when it is installed (Debian's libdrm-common; older versions lack the
// MI300 ids).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpreempt::discovery {

struct ProductName {
  std::string name;    // "AMD Instinct MI308X"
  std::string source;  // "built-in table" or the amdgpu.ids path
};

// `gfx_target_version` (major*10000 + minor*100 + stepping) guards the table: an id listed for
// another generation is not trusted. `ids_path` is libdrm's table.
std::optional<ProductName> product_name(uint32_t gfx_target_version, uint32_t device_id,
                                        const std::string& ids_path = "/usr/share/libdrm/amdgpu.ids");

// What to call the GPU in one line: "AMD Instinct MI308X (gfx942)", or without a known product
// "gfx942 GPU (device 0x74a2)".
std::string display_name(uint32_t gfx_target_version, uint32_t device_id,
                         const std::string& ids_path = "/usr/share/libdrm/amdgpu.ids");

}  // namespace gpreempt::discovery
