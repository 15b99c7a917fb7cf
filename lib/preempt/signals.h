// Resume-on-signal for SIGINT, SIGTERM and SIGHUP.
//
// The handler cannot issue DBG_TRAP itself (only the control thread is the targets' tracer), so it
// writes the signal number to each registered context's pipe and waits, bounded, until every
// context's control thread has resumed its targets. Then it hands the signal on: to the handler
// that was installed before ours, or — if that was the default action — it restores the default
// and re-raises, so the process dies of the signal as it would have without us. Signals that were
// ignored when we installed stay ignored (we do not install for them).
#pragma once

namespace gpreempt::preempt {

// A registration: `notify_fd` receives the signal number (one byte); the control thread writes
// one byte to `done_fd`'s peer when its targets are resumed.
struct SignalSlot {
  int notify_fd = -1;  // write end, non-blocking
  int done_fd = -1;    // read end, non-blocking
};

// Installs the handlers once per process (idempotent) and registers `slot` for this process: in a
// forked child the handler skips it. Returns a slot index for unregister_signal_slot, or -1 when
// all slots are taken (16 contexts).
int register_signal_slot(SignalSlot slot);
void unregister_signal_slot(int index);

// How long a terminating signal waits for the targets to be resumed.
inline constexpr int kSignalResumeTimeoutMs = 3000;

}  // namespace gpreempt::preempt
