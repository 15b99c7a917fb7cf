// JSON forms of every lib/discovery result (the `--json` output of `gpreempt decode|map|ps`).
// The conventions (snake_case keys with units, numeric ids, "0x…" addresses) are
// common/json_conventions.h; the top-level schema_version is added by whoever prints a document.
#pragma once

#include <nlohmann/json.hpp>

#include "discovery/hqds.h"
#include "discovery/mqds.h"
#include "discovery/process_discovery.h"
#include "discovery/process_watch.h"
#include "discovery/properties.h"
#include "discovery/queue_map.h"
#include "discovery/rls.h"

namespace gpreempt::discovery {

nlohmann::ordered_json to_json(const Diagnostic& d);
nlohmann::ordered_json to_json(const TopologyProperties& p);
nlohmann::ordered_json to_json(const QueueDescriptor& d);
nlohmann::ordered_json to_json(const MqdsDump& m);
nlohmann::ordered_json to_json(const HqdsDump& h);
nlohmann::ordered_json to_json(const RlsDump& r);
nlohmann::ordered_json to_json(const QueueMap& m);
nlohmann::ordered_json to_json(const ProcessInfo& p);
nlohmann::ordered_json to_json(const WatchEvent& e);

std::string gpu_id_hex(std::uint32_t gpu_id);  // "f7bc", as debugfs prints it

}  // namespace gpreempt::discovery
