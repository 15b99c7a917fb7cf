// Moving protocol messages over a SOCK_SEQPACKET unix socket, optionally with one file descriptor
// (SCM_RIGHTS). Sends retry after a signal; how a signal ends the wait for a message is the
// caller's choice (SignalWait). Nothing here closes a descriptor it did not create.
#pragma once

#include <signal.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpreempt::sim::protocol {

// How a signal handled during recv_message's wait ends it, mirroring a driver's sleeps.
enum class SignalWait {
  kIgnore,  // the wait goes on (an uninterruptible sleep)
  // -EINTR, nothing received, unless the handler has SA_RESTART: the kernel restarts a blocking
  // recv after such a handler, as it restarts an ioctl whose sleep returned -ERESTARTSYS.
  kRestartable,
  // -EINTR after any handler, SA_RESTART or not, as from a sleep that returns -EINTR itself
  // (down_interruptible): the wait is a poll, which the kernel never restarts after a handler.
  kAlwaysEnds,
};

// 0 or -errno. `nonblocking`: -EAGAIN instead of waiting when the socket's send buffer is full
// (the peer has not taken what it was sent before).
int send_message(int sock, std::span<const uint8_t> msg, int pass_fd = -1, bool nonblocking = false);

// Receives one whole message into `out`. 0 on success, -ECONNRESET when the peer has gone,
// -EMSGSIZE if it exceeds kMaxMessage, else -errno. `received_fd` gets a passed descriptor or -1.
// `signals` says what a handled signal does to the wait for the message (see SignalWait).
// `wait_mask` (kAlwaysEnds only): the signal mask during the wait, set atomically with it
// (ppoll), so that a signal the caller blocked before sending its request still ends the wait.
int recv_message(int sock, std::vector<uint8_t>& out, int* received_fd = nullptr,
                 SignalWait signals = SignalWait::kIgnore, const sigset_t* wait_mask = nullptr);

// A connected SOCK_SEQPACKET|SOCK_CLOEXEC client socket, or -errno.
int connect_unix(const std::string& path);

}  // namespace gpreempt::sim::protocol
