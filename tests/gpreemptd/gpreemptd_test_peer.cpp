// A GPU process that talks to gpreemptd, for the daemon's tests: it runs on the simulated machine
// (simrt queues through the shim) and obeys one command per stdin line, answering one line:
//   queue                 create a KFD queue (on $SIMRT_GPU_ID, else the first GPU) → "ok <id>"
//   connect               connect to $GPREEMPT_SOCKET → "ok"
//   hello | status | reload | begin N | end N [TOKENS] | token N [TOKENS] | expect US |
//   suspend CLASS MS      send that message → the daemon's reply line, as received
//   close                 close the connection → "ok"
//   become UID            drop to that uid and gid (groups cleared) → "ok"; the connection keeps
//                         the credentials it was opened with
//   exit                  exit 0
// Any extra arguments are ignored: tests use them to shape the command line a class matches.
#include <grp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "client/protocol.h"
#include "simrt/simrt.hpp"

namespace client = gpreempt::client;

namespace {

int g_fd = -1;
client::LineReader g_reader;
std::vector<std::string> g_lines;
uint64_t g_seq = 1;

std::string exchange(const client::Message& m) {
  const std::string out = client::encode(m);
  if (::send(g_fd, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size()))
    return "err send";
  while (g_lines.empty()) {
    char buf[65536];
    ssize_t n = ::recv(g_fd, buf, sizeof buf, 0);
    if (n <= 0) return "err closed";
    for (auto& l : g_reader.feed(std::string_view(buf, static_cast<std::size_t>(n))))
      g_lines.push_back(l);
  }
  std::string l = g_lines.front();
  g_lines.erase(g_lines.begin());
  return l;
}

}  // namespace

int main() {
  std::unique_ptr<simrt::Runtime> rt;
  std::vector<std::unique_ptr<simrt::Queue>> queues;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    std::string answer;
    try {
      if (cmd == "queue") {
        if (!rt) rt = std::make_unique<simrt::Runtime>();
        queues.push_back(rt->create_queue());
        answer = "ok " + std::to_string(queues.back()->id());
      } else if (cmd == "connect") {
        const std::string path = client::default_socket_path();
        g_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        path.copy(a.sun_path, sizeof a.sun_path - 1);
        answer =
            ::connect(g_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 ? "ok" : "err connect";
      } else if (cmd == "become") {
        unsigned id = 0;
        in >> id;
        answer = ::setgroups(0, nullptr) == 0 && ::setresgid(id, id, id) == 0 &&
                         ::setresuid(id, id, id) == 0
                     ? "ok"
                     : "err become";
      } else if (cmd == "close") {
        ::close(g_fd);
        g_fd = -1;
        answer = "ok";
      } else if (cmd == "exit") {
        std::printf("ok\n");
        std::fflush(stdout);
        return 0;
      } else {
        client::Message m;
        m.seq = g_seq++;
        auto op = client::op_named(cmd);
        if (!op) {
          answer = "err unknown command";
        } else {
          m.op = *op;
          if (m.op == client::Op::kBegin || m.op == client::Op::kEnd || m.op == client::Op::kToken)
            in >> m.request;
          // An LLM request's tokens: so far (token; absent: 1, the first), in all (end).
          if (m.op == client::Op::kEnd || m.op == client::Op::kToken)
            if (!(in >> m.tokens)) m.tokens = m.op == client::Op::kToken ? 1 : 0;
          if (m.op == client::Op::kExpect) in >> m.in_us;
          if (m.op == client::Op::kSuspend || m.op == client::Op::kResume) {
            std::string cls;
            in >> cls >> m.for_ms;
            m.target.class_name = cls;
          }
          answer = exchange(m);
        }
      }
    } catch (const std::exception& e) {
      answer = std::string("err ") + e.what();
    }
    std::printf("%s\n", answer.c_str());
    std::fflush(stdout);
  }
  return 0;
}
