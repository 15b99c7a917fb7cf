/* A minimal online/offline controller on the C ABI: the shape of `gpreempt demo`'s controller.
 *
 *   online_controller OFFLINE_PID SOCKET [IDLE_MS]
 *
 * Listens on the Unix socket SOCKET for the online service's request lines
 *   "start <request> <pid> <ns>"  and  "end <request> <pid> <ns> <latency_ns>"
 * (what `gpreempt-workload online --notify SOCKET --notify-wait` sends), suspends every queue of
 * OFFLINE_PID when a request starts (then answers one byte, so the request's kernels go out only
 * once the GPU is free), and resumes it once no request has been running for IDLE_MS (default 2).
 * Ends when the online service disconnects, leaving nothing suspended.
 *
 * Without a GPU:  kfdsim run -- sh -c 'OFF & online_controller $! /tmp/c.sock & sleep 0.2;
 *                 gpreempt-workload online --preset cnn --duration 5 --notify /tmp/c.sock --notify-wait'
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <gpreempt/gpreempt.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int listen_on(const char* path) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof addr.sun_path) return -1;
  strcpy(addr.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  unlink(path);
  if (fd < 0 || bind(fd, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(fd, 1) != 0) return -1;
  return fd;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s OFFLINE_PID SOCKET [IDLE_MS]\n", argv[0]);
    return 2;
  }
  const int pid = atoi(argv[1]);
  const char* socket_path = argv[2];
  const double idle_ms = argc > 3 ? atof(argv[3]) : 2.0;

  int lfd = listen_on(socket_path);
  if (lfd < 0) {
    fprintf(stderr, "cannot listen on %s: %s\n", socket_path, strerror(errno));
    return 1;
  }
  struct gpreempt_ctx_opts opts = {.sz = sizeof opts};
  gpreempt_ctx* ctx = NULL;
  gpreempt_target* offline = NULL;
  if (gpreempt_ctx_open(&opts, &ctx) < 0 || gpreempt_attach(ctx, pid, &offline) < 0) {
    fprintf(stderr, "cannot control pid %d: %s\n", pid, gpreempt_last_error());
    gpreempt_ctx_close(ctx);
    return 1;
  }
  printf("controlling pid %d; waiting for the online service on %s\n", pid, socket_path);
  fflush(stdout);

  int cfd = accept(lfd, NULL, NULL);
  int suspended = 0, active = 0, failures = 0;
  unsigned long requests = 0, suspensions = 0;
  double idle_since = now_ms();
  char buf[4096];
  size_t have = 0;
  while (cfd >= 0) {
    /* Wake up in time to resume after the idle delay. */
    int timeout = -1;
    if (suspended && active == 0) {
      double left = idle_since + idle_ms - now_ms();
      timeout = left > 0 ? (int)left + 1 : 0;
    }
    struct pollfd p = {.fd = cfd, .events = POLLIN};
    int n = poll(&p, 1, timeout);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      ssize_t got = recv(cfd, buf + have, sizeof buf - have - 1, 0);
      if (got <= 0) break; /* the online service is done */
      have += (size_t)got;
      buf[have] = '\0';
      char* line = buf;
      for (char* nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        *nl = '\0';
        if (strncmp(line, "start ", 6) == 0) {
          ++requests;
          ++active;
          if (!suspended) {
            int rc = gpreempt_suspend_process(offline, GPREEMPT_GRACE_DEFAULT);
            if (rc < 0) {
              ++failures;
              fprintf(stderr, "suspend: %s\n", gpreempt_last_error());
            } else {
              suspended = 1;
              ++suspensions;
            }
          }
          const char ack = '.';
          if (send(cfd, &ack, 1, MSG_NOSIGNAL) != 1) break;
        } else if (strncmp(line, "end ", 4) == 0) {
          if (active > 0 && --active == 0) idle_since = now_ms();
        }
      }
      have = strlen(line);
      memmove(buf, line, have);
    }
    if (suspended && active == 0 && now_ms() - idle_since >= idle_ms) {
      if (gpreempt_resume_process(offline) < 0) {
        ++failures;
        fprintf(stderr, "resume: %s\n", gpreempt_last_error());
      }
      suspended = 0;
    }
  }
  /* Never leave the offline job frozen: detach resumes whatever is still suspended. */
  if (gpreempt_detach(offline) < 0) {
    ++failures;
    fprintf(stderr, "detach: %s\n", gpreempt_last_error());
  }
  gpreempt_ctx_close(ctx);
  if (cfd >= 0) close(cfd);
  close(lfd);
  unlink(socket_path);
  printf("online requests %lu, suspensions %lu, failures %d\n", requests, suspensions, failures);
  return failures ? 1 : 0;
}
