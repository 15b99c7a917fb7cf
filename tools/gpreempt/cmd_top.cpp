// `gpreempt top`: a live full-screen view of gpreemptd over its socket, usable over ssh (plain ANSI
// escape codes, no curses). The picture itself is top_view.h; this file fetches status documents,
// times them and draws.
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <iostream>
#include <optional>

#include "cli.h"
#include "client/connection.h"
#include "common/error.h"
#include "top_view.h"

namespace gpreempt::cli {

namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

struct TopOptions {
  std::string socket;  // empty: $GPREEMPT_SOCKET, else the default
  double interval_s = 1.0;
  bool once = false;
  int timeout_ms = 2000;
};

volatile sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }

// The terminal as top leaves it: alternate screen, cursor hidden, keys read one at a time; the
// destructor puts everything back (also after SIGINT/SIGTERM, which only set g_stop).
class Screen {
 public:
  explicit Screen(bool tty) : tty_(tty) {
    if (!tty_) return;
    std::cout << "\033[?1049h\033[?25l" << std::flush;
    if (::isatty(STDIN_FILENO) && ::tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios raw = saved_;
      raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      keys_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
  }
  ~Screen() {
    if (keys_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    if (tty_) std::cout << "\033[?25h\033[?1049l" << std::flush;
  }
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;

  void draw(const std::string& frame) {
    if (!tty_) {
      std::cout << frame << "\n" << std::flush;
      return;
    }
    // Home, then each line followed by clear-to-end-of-line, then clear the rest: no flicker.
    std::string out = "\033[H";
    std::size_t start = 0;
    while (start < frame.size()) {
      const auto nl = frame.find('\n', start);
      out += frame.substr(start, nl - start) + "\033[K\n";
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
    out += "\033[J";
    std::cout << out << std::flush;
  }

  // Waits up to `seconds`; true when the user asked to quit (q) or a signal arrived.
  bool wait(double seconds) {
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (!g_stop) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{keys_ ? STDIN_FILENO : -1, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(left));
      if (r > 0 && (p.revents & POLLIN)) {
        char c = 0;
        if (::read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q' || c == 3)) return true;
      }
    }
    return true;
  }

  std::pair<int, int> size() const {
    winsize ws{};
    if (tty_ && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return {ws.ws_col, ws.ws_row};
    return {0, 0};
  }

 private:
  bool tty_;
  bool keys_ = false;
  termios saved_{};
};

void run_top(const Globals& g, const TopOptions& o) {
  if (!(o.interval_s >= 0.1)) throw UsageError("--interval must be at least 0.1 s");
  const bool tty = !g.json && ::isatty(STDOUT_FILENO);

  if (o.once) {
    auto c = client::Connection::connect(o.socket, std::chrono::milliseconds(o.timeout_ms));
    const TopView v = compute_top_view(c.status(), nullptr, 0);
    if (g.json)
      print_json(top_view_json(v), -1);
    else
      std::cout << render_top(v, TopStyle{g.color, 0, 0});
    return;
  }

  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);

  Screen screen(tty);
  std::optional<client::Connection> conn;
  std::optional<Json> previous;
  Clock::time_point previous_at{};
  for (;;) {
    std::string frame;
    try {
      if (!conn) conn.emplace(client::Connection::connect(o.socket, std::chrono::milliseconds(o.timeout_ms)));
      Json doc = conn->status();
      const auto now = Clock::now();
      const double elapsed = previous ? std::chrono::duration<double>(now - previous_at).count() : 0;
      const TopView v = compute_top_view(doc, previous ? &*previous : nullptr, elapsed);
      if (g.json) {
        print_json(top_view_json(v), -1);
      } else {
        const auto [w, h] = screen.size();
        frame = render_top(v, TopStyle{g.color && tty, w, h > 1 ? h - 1 : h});
        if (tty) frame += "q quits; every " + std::to_string(o.interval_s).substr(0, 4) + " s";
      }
      previous = std::move(doc);
      previous_at = now;
    } catch (const Error& e) {
      // Keep watching: the daemon may be restarting. Rates start over with the new one.
      conn.reset();
      previous.reset();
      if (g.json) throw;
      frame = std::string("gpreempt top: ") + e.what() + "\n(retrying every " +
              std::to_string(o.interval_s).substr(0, 4) + " s; q quits)\n";
    }
    if (!frame.empty()) screen.draw(frame);
    if (screen.wait(o.interval_s)) break;
  }
}

}  // namespace

void register_top_commands(CLI::App& app, Globals& globals) {
  auto opts = std::make_shared<TopOptions>();
  CLI::App* top = add_command(
      app, globals, "top", "A live view of gpreemptd: per GPU its classes, processes, suspensions and latency",
      "Per GPU: whether it can suspend, the grace period, processes suspended now, suspensions per\n"
      "second, offline progress (the share of time the GPU's lower classes were not suspended),\n"
      "the online requests' p50/p99 latency, then a line per class (highest priority first) and\n"
      "per process. Rates cover the time between two refreshes; the first frame and --once show\n"
      "averages since the daemon started. A p99 of fewer than 1000 requests is marked '*'.\n"
      "Full screen on a terminal (plain ANSI codes: works over ssh; q or Ctrl-C quits); without a\n"
      "terminal it prints one frame after another, without colour (NO_COLOR also turns colour off).\n"
      "--json prints one JSON document per refresh, one per line. While the daemon is unreachable\n"
      "the live view says why and keeps retrying; --once fails instead.\n"
      "Examples:\n  gpreempt top\n  gpreempt top --interval 0.5\n  gpreempt top --once\n"
      "  gpreempt top --once --json | jq '.gpus[] | {gpu_id, suspensions_per_s}'\n"
      "Exit codes: 0 ok (q, Ctrl-C, or --once printed), 1 gpreemptd unreachable (--once, --json), 2 usage.");
  top->add_option("--socket", opts->socket,
                  "gpreemptd's socket (default: $GPREEMPT_SOCKET, else /run/gpreempt/gpreemptd.sock)");
  top->add_option("--interval", opts->interval_s, "Seconds between refreshes (>= 0.1)")->capture_default_str();
  top->add_flag("--once", opts->once, "Print one frame and exit (for scripts and tests)");
  top->add_option("--timeout-ms", opts->timeout_ms, "Give up on a status request after this long")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  top->callback([&globals, opts] { run_top(globals, *opts); });
}

}  // namespace gpreempt::cli
