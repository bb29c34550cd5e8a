/*
 * hello: the node tier's workload, a tiny static HTTP/1.0 server on [::]:$PORT (default 8080)
 * that answers every request with "$GREETING from $HOSTNAME\n" (`/healthz` answers "ok").
 * `hello cat FILE...` copies files to stdout, so a test can read files inside the container
 * (with the container's user and mounts) through `crictl exec` in an image without a shell.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int cat(int argc, char **argv) {
  int status = 0;
  char buf[8192];
  for (int i = 2; i < argc; i++) {
    int fd = open(argv[i], O_RDONLY);
    if (fd < 0) {
      fprintf(stderr, "hello cat: %s: %s\n", argv[i], strerror(errno));
      status = 1;
      continue;
    }
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
      if (write(1, buf, (size_t)n) != n) {
        status = 1;
        break;
      }
    }
    if (n < 0) {
      fprintf(stderr, "hello cat: %s: %s\n", argv[i], strerror(errno));
      status = 1;
    }
    close(fd);
  }
  return status;
}

static void stop(int sig) {
  (void)sig;
  _exit(0);
}

static void answer(int c, const char *greeting, const char *host) {
  char req[4096];
  size_t used = 0;
  struct timeval timeout = {5, 0};
  setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  while (used < sizeof req - 1) {
    ssize_t n = read(c, req + used, sizeof req - 1 - used);
    if (n <= 0) break;
    used += (size_t)n;
    req[used] = '\0';
    if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n")) break;
  }
  req[used] = '\0';
  char body[512];
  if (strncmp(req, "GET /healthz ", 13) == 0)
    snprintf(body, sizeof body, "ok\n");
  else
    snprintf(body, sizeof body, "%s from %s\n", greeting, host);
  char head[256];
  int hn = snprintf(head, sizeof head,
                    "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                    "Connection: close\r\n\r\n",
                    strlen(body));
  if (write(c, head, (size_t)hn) == hn) {
    ssize_t ignored = write(c, body, strlen(body));
    (void)ignored;
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "cat") == 0) return cat(argc, argv);
  const char *greeting = getenv("GREETING") ? getenv("GREETING") : "hello";
  const char *env_port = getenv("PORT");
  int port = env_port ? atoi(env_port) : 8080;
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  signal(SIGTERM, stop);
  signal(SIGINT, stop);
  signal(SIGPIPE, SIG_IGN);

  int s = socket(AF_INET6, SOCK_STREAM, 0);
  if (s < 0) {
    perror("hello: socket");
    return 1;
  }
  int on = 1, off = 0;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  struct sockaddr_in6 addr;
  memset(&addr, 0, sizeof addr);
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_any;
  addr.sin6_port = htons((unsigned short)port);
  if (bind(s, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(s, 64) < 0) {
    perror("hello: bind/listen");
    return 1;
  }
  fprintf(stderr, "hello: serving \"%s\" on [::]:%d\n", greeting, port);
  for (;;) {
    int c = accept(s, NULL, NULL);
    if (c < 0) {
      if (errno == EINTR) continue;
      perror("hello: accept");
      return 1;
    }
    answer(c, greeting, host);
    close(c);
  }
}
