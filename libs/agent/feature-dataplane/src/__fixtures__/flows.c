// Test workload for the dataplane's network-namespace tests: small servers that answer with
// their name, and clients that open many short flows and report what answered.
//   flows serve-tcp PORT NAME        accept, read one request, answer "NAME PEERPORT\n", wait
//                                    for EOF (PEERPORT: the source port the server saw)
//   flows serve-udp PORT NAME        answer every datagram with "NAME PEERPORT"
//   flows tcp ADDR PORT COUNT PROCS [SPORT]  COUNT short connections over PROCS processes
//                                    (from source port SPORT if given: PROCS must be 1); prints
//                                    "ok N failed N", "ports MIN MAX" (peer ports the servers
//                                    saw), "slow N" (connections that took 900 ms or more) and
//                                    "NAME count" per answering server; each failed
//                                    connection is one stderr line "failed STEP: ERROR, port
//                                    LOCALPORT, after MS ms" (STEP connect, write or read)
//   flows udp ADDR PORT [BYTES [SPORT]]  one request (BYTES long, default 8) on a connected
//                                    socket, from source port SPORT if given; prints the
//                                    answer, or "error <errno text>"
// Every loop is bounded; connections close with a reset (SO_LINGER 0) so short flows do not
// pile up in TIME_WAIT.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static struct sockaddr_in6 addr_of(const char *ip, int port) {
  struct sockaddr_in6 a;
  memset(&a, 0, sizeof(a));
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(port);
  if (inet_pton(AF_INET6, ip, &a.sin6_addr) != 1) {
    fprintf(stderr, "bad address %s\n", ip);
    exit(2);
  }
  return a;
}

static int serve_tcp(int port, const char *name) {
  int s = socket(AF_INET6, SOCK_STREAM, 0), one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in6 a = addr_of("::", port);
  if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 4096) < 0) {
    perror("listen");
    return 1;
  }
  signal(SIGCHLD, SIG_IGN);
  for (int w = 0; w < 2; w++)
    if (fork() == 0)
      break;
  char buf[4096], reply[256];
  for (;;) {
    struct sockaddr_in6 peer;
    socklen_t plen = sizeof(peer);
    int c = accept(s, (struct sockaddr *)&peer, &plen);
    if (c < 0)
      continue;
    int n = snprintf(reply, sizeof(reply), "%s %d\n", name, ntohs(peer.sin6_port));
    if (read(c, buf, sizeof(buf)) > 0 && write(c, reply, n) == n)
      while (read(c, buf, sizeof(buf)) > 0) {
      }
    close(c);
  }
}

static int serve_udp(int port, const char *name) {
  int s = socket(AF_INET6, SOCK_DGRAM, 0);
  struct sockaddr_in6 a = addr_of("::", port);
  if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
    perror("bind");
    return 1;
  }
  char buf[65536];
  for (;;) {
    struct sockaddr_in6 from;
    socklen_t len = sizeof(from);
    if (recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len) >= 0) {
      char reply[256];
      int n = snprintf(reply, sizeof(reply), "%s %d", name, ntohs(from.sin6_port));
      sendto(s, reply, n, 0, (struct sockaddr *)&from, len);
    }
  }
}

#define MAX_NAMES 16
struct tally {
  long ok, failed, port_min, port_max;
  long slow; // succeeded, but only after 900 ms or more: a SYN or its answer went astray
  char names[MAX_NAMES][64];
  long counts[MAX_NAMES];
};

static void tcp_worker(const char *ip, int port, long count, int sport, struct tally *t) {
  struct sockaddr_in6 a = addr_of(ip, port);
  // Long enough for two SYN retransmissions (1 s, then 2 s more) on a loaded machine.
  struct timeval tv = {10, 0};
  struct linger lg = {1, 0};
  for (long i = 0; i < count; i++) {
    int s = socket(AF_INET6, SOCK_STREAM, 0);
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    if (sport > 0) {
      int one = 1;
      struct sockaddr_in6 local = addr_of("::", sport);
      setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      if (bind(s, (struct sockaddr *)&local, sizeof(local)) < 0)
        perror("bind");
    }
    char buf[64];
    ssize_t n = -1;
    const char *step = "connect";
    struct timeval t0, t1;
    gettimeofday(&t0, NULL);
    if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0) {
      step = "write";
      if (write(s, "GET\n", 4) == 4) {
        step = "read";
        n = read(s, buf, sizeof(buf) - 1);
      }
    }
    if (n <= 0) {
      const char *why = n == 0 ? "EOF" : strerror(errno);
      struct sockaddr_in6 local;
      socklen_t llen = sizeof(local);
      memset(&local, 0, sizeof(local));
      getsockname(s, (struct sockaddr *)&local, &llen);
      close(s);
      gettimeofday(&t1, NULL);
      long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000;
      fprintf(stderr, "failed %s: %s, port %d, after %ld ms\n", step, why,
              ntohs(local.sin6_port), ms);
      t->failed++;
      continue;
    }
    close(s);
    t->ok++;
    gettimeofday(&t1, NULL);
    if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000 >= 900)
      t->slow++;
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    char *space = strchr(buf, ' ');
    if (space) {
      long port = atol(space + 1);
      *space = 0;
      if (t->port_min == 0 || port < t->port_min)
        t->port_min = port;
      if (port > t->port_max)
        t->port_max = port;
    }
    for (int k = 0; k < MAX_NAMES; k++) {
      if (t->names[k][0] == 0)
        snprintf(t->names[k], sizeof(t->names[k]), "%s", buf);
      if (strcmp(t->names[k], buf) == 0) {
        t->counts[k]++;
        break;
      }
    }
  }
}

static int tcp_flows(const char *ip, int port, long count, int procs, int sport) {
  int fds[64][2];
  if (procs < 1 || procs > 64 || sport > 0)
    procs = 1;
  for (int p = 0; p < procs; p++) {
    if (pipe(fds[p]) < 0)
      return 1;
    if (fork() == 0) {
      struct tally t;
      memset(&t, 0, sizeof(t));
      tcp_worker(ip, port, count / procs + (p < count % procs ? 1 : 0), sport, &t);
      if (write(fds[p][1], &t, sizeof(t)) != sizeof(t))
        _exit(1);
      _exit(0);
    }
    close(fds[p][1]);
  }
  struct tally all;
  memset(&all, 0, sizeof(all));
  for (int p = 0; p < procs; p++) {
    struct tally t;
    if (read(fds[p][0], &t, sizeof(t)) != sizeof(t))
      return 1;
    all.ok += t.ok;
    all.failed += t.failed;
    all.slow += t.slow;
    if (t.port_min && (all.port_min == 0 || t.port_min < all.port_min))
      all.port_min = t.port_min;
    if (t.port_max > all.port_max)
      all.port_max = t.port_max;
    for (int k = 0; k < MAX_NAMES && t.names[k][0]; k++)
      for (int j = 0; j < MAX_NAMES; j++) {
        if (all.names[j][0] == 0)
          strcpy(all.names[j], t.names[k]);
        if (strcmp(all.names[j], t.names[k]) == 0) {
          all.counts[j] += t.counts[k];
          break;
        }
      }
  }
  while (wait(NULL) > 0) {
  }
  printf("ok %ld failed %ld\n", all.ok, all.failed);
  printf("ports %ld %ld\n", all.port_min, all.port_max);
  printf("slow %ld\n", all.slow);
  for (int j = 0; j < MAX_NAMES && all.names[j][0]; j++)
    printf("%s %ld\n", all.names[j], all.counts[j]);
  return 0;
}

static int udp_request(const char *ip, int port, int bytes, int sport) {
  struct sockaddr_in6 a = addr_of(ip, port);
  int s = socket(AF_INET6, SOCK_DGRAM, 0), one = 1;
  if (sport > 0) {
    struct sockaddr_in6 local = addr_of("::", sport);
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s, (struct sockaddr *)&local, sizeof(local)) < 0) {
      printf("error bind %s\n", strerror(errno));
      return 0;
    }
  }
  struct timeval tv = {2, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
    printf("error %s\n", strerror(errno));
    return 0;
  }
  static char out[65000];
  memset(out, 'x', sizeof(out));
  if (bytes < 1 || bytes > (int)sizeof(out))
    bytes = 8;
  char buf[256];
  ssize_t n = -1;
  if (send(s, out, bytes, 0) == bytes)
    n = recv(s, buf, sizeof(buf) - 1, 0);
  if (n < 0) {
    printf("error %s\n", strerror(errno));
    return 0;
  }
  buf[n] = 0;
  printf("%s\n", buf);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 4 && strcmp(argv[1], "serve-tcp") == 0)
    return serve_tcp(atoi(argv[2]), argv[3]);
  if (argc >= 4 && strcmp(argv[1], "serve-udp") == 0)
    return serve_udp(atoi(argv[2]), argv[3]);
  if (argc >= 6 && strcmp(argv[1], "tcp") == 0)
    return tcp_flows(argv[2], atoi(argv[3]), atol(argv[4]), atoi(argv[5]),
                     argc >= 7 ? atoi(argv[6]) : 0);
  if (argc >= 4 && strcmp(argv[1], "udp") == 0)
    return udp_request(argv[2], atoi(argv[3]), argc >= 5 ? atoi(argv[4]) : 8,
                       argc >= 6 ? atoi(argv[5]) : 0);
  fprintf(stderr, "usage: see flows.c\n");
  return 2;
}
