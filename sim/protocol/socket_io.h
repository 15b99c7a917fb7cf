// Moving protocol messages over a SOCK_SEQPACKET unix socket, optionally with one file descriptor
// (SCM_RIGHTS). Interrupted calls are retried: a simulated ioctl keeps waiting through signals
// the way an SA_RESTART syscall does. Nothing here closes a descriptor it did not create.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpreempt::sim::protocol {

// 0 or -errno. `nonblocking`: -EAGAIN instead of waiting when the socket's send buffer is full
// (the peer has not taken what it was sent before).
int send_message(int sock, std::span<const uint8_t> msg, int pass_fd = -1, bool nonblocking = false);

// Receives one whole message into `out`. 0 on success, -ECONNRESET when the peer has gone,
// -EMSGSIZE if it exceeds kMaxMessage, else -errno. `received_fd` gets a passed descriptor or -1.
// `interruptible`: -EINTR, nothing received, when a signal interrupts the wait for the message.
// The kernel restarts a blocking recv by itself after a handler installed with SA_RESTART, so
// this happens only for a handler without it, as for an interruptible sleep in a driver.
int recv_message(int sock, std::vector<uint8_t>& out, int* received_fd = nullptr,
                 bool interruptible = false);

// A connected SOCK_SEQPACKET|SOCK_CLOEXEC client socket, or -errno.
int connect_unix(const std::string& path);

}  // namespace gpreempt::sim::protocol
