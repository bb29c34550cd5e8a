/* A minimal Pod sandbox process: holds the Pod's namespaces and exits on SIGINT or SIGTERM. */
#include <signal.h>
#include <unistd.h>

static void stop(int sig) {
  (void)sig;
  _exit(0);
}

int main(void) {
  signal(SIGINT, stop);
  signal(SIGTERM, stop);
  for (;;) pause();
}
