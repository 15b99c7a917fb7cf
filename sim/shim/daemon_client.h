// The shim's side of the connection to kfdsimd.
//
// Each process has one *anchor* connection (close-on-exec, never used for requests): the daemon
// treats its hang-up as the process's exec, and watches the process's exit with a pidfd. Each
// thread has its own request connection, so a thread blocked in a simulated ioctl (RUNTIME_ENABLE
// while debugged, destroy of a suspended queue) never holds up another thread. After fork the
// child drops the parent's connections and makes its own.
//
// The daemon is started on demand when the machine's socket does not answer — unless
// KFDSIM_AUTOSTART=0 (a `kfdsim run` sets it: its command's processes belong to the run's machine
// and must not start another once the run has ended), or the process has lost the daemon that
// served it. A process whose daemon goes away has lost its device: its /dev/kfd files fail with
// ENODEV from then on (as the kernel's do once their GPU is unplugged), and the shim says once,
// on stderr, which daemon went away and why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/protocol/messages.h"
#include "sim/protocol/socket_io.h"

namespace gpreempt::sim::shim {

struct CallResult {
  int error = 0;  // transport failure as -errno (the reply is then meaningless)
  protocol::Reply reply;
  int fd = -1;    // descriptor passed with the reply, owned by the caller
};

// Sends one request from the calling thread and waits for its reply (through signals).
// `session` (non-zero): the request belongs to a /dev/kfd file opened in that session; it fails
// with -ENODEV without being sent when the process is no longer in it.
// `signals` (an ioctl the kernel may sleep in interruptibly): a signal that ends the wait for the
// answer (protocol::SignalWait: kRestartable for a sleep returning -ERESTARTSYS, which a handler
// with SA_RESTART restarts, as WAIT_EVENTS and DESTROY_QUEUE do; kAlwaysEnds for one returning
// -EINTR, as RUNTIME_ENABLE's down_interruptible does) is passed on to the daemon
// (Op::kInterrupt), and the one answer that follows is the call's: -EINTR when its sleep was
// interruptible, else its result whenever it comes (or the result that was already on its way).
CallResult call(protocol::Op op, uint64_t arg, std::vector<uint8_t> payload, uint32_t session = 0,
                protocol::SignalWait signals = protocol::SignalWait::kIgnore);

// The calling process's current session with a daemon: a number that changes each time the
// process introduces itself to a daemon; 0 while it has none (never had one, or lost it).
uint32_t live_session();

// Says once, on stderr, that the daemon of this process has gone, which one (pid, machine) and
// why (the last word of its log), if it has; a no-op otherwise.
void report_lost_daemon();

// Where the machine's files are materialised (asks the daemon once per process). Empty if the
// daemon cannot be reached; the reason has been printed to stderr once.
const std::string& machine_root();

// The root computed from the environment alone, without contacting the daemon (path
// classification must not start a daemon for paths that are not ours).
const std::string& configured_root();

// Installed once (pthread_atfork): the child closes its copies of the parent's connections.
void install_fork_handler();

}  // namespace gpreempt::sim::shim
