#include "sim/protocol/query.h"

#include <unistd.h>

#include <cerrno>
#include <vector>

#include "sim/protocol/socket_io.h"

namespace gpreempt::sim::protocol {

QueryResult query(const std::string& socket_path, Op op, uint64_t arg) {
  QueryResult r;
  const int s = connect_unix(socket_path);
  if (s < 0) {
    r.error = s;
    return r;
  }
  Request req{op, getpid(), gettid(), arg, {}};
  std::vector<uint8_t> in;
  if ((r.error = send_message(s, encode(req))) == 0 && (r.error = recv_message(s, in)) == 0) {
    if (auto rep = decode_reply(in)) {
      r.ret = rep->ret;
      r.payload.assign(rep->payload.begin(), rep->payload.end());
    } else {
      r.error = -EPROTO;
    }
  }
  if (op == Op::kShutdown && r.error == 0 && r.ret == 0) {
    // The daemon closes every connection as it exits: wait for that (not after a refusal).
    std::vector<uint8_t> rest;
    while (recv_message(s, rest) == 0) {
    }
  }
  close(s);
  return r;
}

}  // namespace gpreempt::sim::protocol
