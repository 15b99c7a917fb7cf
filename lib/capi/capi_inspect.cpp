// The inspection C ABI (include/gpreempt/inspect.h): documents built by inspect_documents.cpp,
// handed out as malloc'ed JSON strings. Every entry point catches every exception.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "capi_error.h"
#include "capi_opts.h"
#include "common/error.h"
#include "gpreempt/inspect.h"
#include "inspect_documents.h"

using gpreempt::Error;
using gpreempt::capi::fail;
using gpreempt::capi::guarded;
using gpreempt::capi::t_last_error;

namespace {

// Runs `fn` (which returns a Document) and stores its JSON in *out only once everything succeeded.
template <class F>
int produce(char** out, F&& fn) {
  return guarded([&] {
    if (!out) return fail(EINVAL, "json_out is NULL");
    const gpreempt::inspect::Document doc = fn();
    // Invalid UTF-8 in the input (a binary file, a cut multi-byte character) is replaced rather
    // than failing the whole document: the diagnostics already say where the text went wrong.
    const std::string s = doc.json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    char* copy = static_cast<char*>(std::malloc(s.size() + 1));
    if (!copy) return fail(ENOMEM, "out of memory for a " + std::to_string(s.size()) + "-byte document");
    std::memcpy(copy, s.c_str(), s.size() + 1);
    *out = copy;
    if (!doc.complete) t_last_error = "input incomplete or malformed: see the document's diagnostics";
    return doc.complete ? 1 : 0;
  });
}

std::string_view text_of(const char* text, std::size_t len, const char* what) {
  if (!text && len) throw Error(EINVAL, std::string(what) + " is NULL but len is " + std::to_string(len));
  return text ? std::string_view(text, len) : std::string_view();
}

std::optional<int> pid_of(int32_t pid_filter) {
  if (pid_filter < -1) throw Error(EINVAL, "pid_filter " + std::to_string(pid_filter) + " (expected a pid or -1)");
  return pid_filter == -1 ? std::nullopt : std::optional<int>(pid_filter);
}

std::optional<std::string_view> optional_text(const char* s) {
  return s ? std::optional<std::string_view>(s) : std::nullopt;
}

}  // namespace

extern "C" {

int gpreempt_decode(const char* kind, const char* text, size_t len, const char* display_name,
                    char** json_out) {
  return produce(json_out, [&] {
    if (!kind) throw Error(EINVAL, "kind is NULL");
    return gpreempt::inspect::decode(kind, text_of(text, len, "text"),
                                     display_name ? display_name : "<string>");
  });
}

int gpreempt_log_analyze(const char* text, size_t len, const char* display_name, int32_t pid_filter,
                         char** json_out) {
  return produce(json_out, [&] {
    return gpreempt::inspect::analyze_log(text_of(text, len, "text"), display_name ? display_name : "<string>",
                                          pid_of(pid_filter));
  });
}

int gpreempt_queue_map(const char* mqds, const char* hqds, const char* rls, const char* log,
                       int32_t pid_filter, char** json_out) {
  return produce(json_out, [&] {
    gpreempt::inspect::MapTexts t;
    t.mqds = optional_text(mqds);
    t.hqds = optional_text(hqds);
    t.rls = optional_text(rls);
    t.log = optional_text(log);
    t.pid = pid_of(pid_filter);
    return gpreempt::inspect::queue_map(t);
  });
}

int gpreempt_queue_map_opts(const struct gpreempt_queue_map_opts* opts, char** json_out) {
  return produce(json_out, [&] {
    if (!opts) throw Error(EINVAL, "gpreempt_queue_map_opts: opts is NULL");
    const auto o = gpreempt::capi::read_opts(opts, GPREEMPT_OFFSETOFEND(struct gpreempt_queue_map_opts, pid),
                                             "gpreempt_queue_map_opts");
    gpreempt::inspect::MapTexts t;
    t.mqds = optional_text(GPREEMPT_OPTS_HAS(o, mqds) ? o.mqds : nullptr);
    t.hqds = optional_text(GPREEMPT_OPTS_HAS(o, hqds) ? o.hqds : nullptr);
    t.rls = optional_text(GPREEMPT_OPTS_HAS(o, rls) ? o.rls : nullptr);
    t.log = optional_text(GPREEMPT_OPTS_HAS(o, log) ? o.log : nullptr);
    const int32_t pid = GPREEMPT_OPTS_HAS(o, pid) ? o.pid : 0;
    if (pid < 0) throw Error(EINVAL, "gpreempt_queue_map_opts.pid is negative (0 keeps every process)");
    if (pid > 0) t.pid = pid;
    return gpreempt::inspect::queue_map(t);
  });
}

void gpreempt_free(void* p) { std::free(p); }

}  // extern "C"
