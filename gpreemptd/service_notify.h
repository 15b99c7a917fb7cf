// systemd's readiness protocol (sd_notify, Type=notify): READY once the socket listens and the
// first discovery scan is done, RELOADING around a reload, STOPPING on the way out. Without
// $NOTIFY_SOCKET (not started by systemd) every call does nothing.
#pragma once

#include <string>

namespace gpreemptd {

void notify_ready(const std::string& status);
void notify_reloading();
void notify_stopping();

}  // namespace gpreemptd
