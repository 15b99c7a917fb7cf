#include "service_notify.h"

#include <systemd/sd-daemon.h>

namespace gpreemptd {

void notify_ready(const std::string& status) {
  sd_notify(0, ("READY=1\nSTATUS=" + status).c_str());
}

void notify_reloading() {
  sd_notify(0, "RELOADING=1");
}

void notify_stopping() {
  sd_notify(0, "STOPPING=1\nSTATUS=resuming suspended processes");
}

}  // namespace gpreemptd
