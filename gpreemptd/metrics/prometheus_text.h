// A MetricsSnapshot in the Prometheus text exposition format (version 0.0.4): one `# HELP` and one
// `# TYPE` line per metric family, then its samples; every name starts with `gpreempt_`, carries
// its base unit (`_seconds`) and counters end in `_total`; labels gpu, class, pid; histograms as
// cumulative `_bucket{le="…"}` lines ending with le="+Inf", then `_sum` and `_count`.
// docs/metrics.md lists every family.
#pragma once

#include <string>
#include <string_view>

#include "metrics/metrics_snapshot.h"

namespace gpreemptd {

// The Content-Type of render_prometheus_text's output.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

// The exposition text. Families without samples are left out; samples are ordered by gpu, class,
// pid, whatever order the snapshot lists them in, so two renders of equal snapshots are equal.
// Throws std::invalid_argument for a histogram whose bucket_counts does not have one entry more
// than its upper_bounds.
std::string render_prometheus_text(const MetricsSnapshot& snapshot);

// A label value as the format quotes it: backslash, double quote and line feed escaped.
std::string escape_label_value(std::string_view value);
// A HELP text: backslash and line feed escaped.
std::string escape_help(std::string_view text);
// A sample value: integers without a fraction, "+Inf", "-Inf", "NaN", else the shortest text that
// reads back as the same double.
std::string format_value(double value);

}  // namespace gpreemptd
