// Fills the metrics branch's plain MetricsSnapshot (metrics/metrics_snapshot.h) from what the
// daemon accounts: per GPU, per (GPU, class) and per live (GPU, class, pid). The daemon publishes
// it to the /metrics server after its loop's batches (at most every 50 ms).
#pragma once

#include "metrics/metrics_snapshot.h"
#include "status_document.h"

namespace gpreemptd {

gpreemptd::MetricsSnapshot metrics_snapshot(const StatusSource& s,
                                                      double start_time_unix_s);

}  // namespace gpreemptd
