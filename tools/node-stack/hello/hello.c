/*
 * hello: the node tier's workload, a tiny static HTTP/1.0 server on [::]:$PORT (default 8080)
 * that answers every request with "$GREETING from $HOSTNAME\n" (`/healthz` answers "ok").
 * `hello cat FILE...` copies files to stdout, so a test can read files inside the container
 * (with the container's user and mounts) through `crictl exec` in an image without a shell.
 * `hello resolve NAME` resolves NAME's AAAA as a stub resolver does, from /etc/resolv.conf
 * (first nameserver, search list, ndots), so a test can see what a Pod's lookups return.
 * `hello get http://NAME/` resolves NAME the same way and prints the body of one HTTP GET, so a
 * test can call a Service from inside a Pod (DNS, VIP and dataplane together).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
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

/*
 * resolve: a static binary has no usable libc resolver (getaddrinfo needs NSS modules at run
 * time), so the query is built and parsed by hand: one AAAA question over UDP per candidate.
 */
#define MAX_SEARCH 6

struct resolv_conf {
  struct sockaddr_storage server;
  socklen_t server_len;
  char search[MAX_SEARCH][256];
  int nsearch;
  int ndots;
};

static int read_resolv_conf(struct resolv_conf *rc) {
  memset(rc, 0, sizeof *rc);
  rc->ndots = 1; /* the resolv.conf(5) default */
  FILE *f = fopen("/etc/resolv.conf", "r");
  if (!f) {
    perror("hello resolve: /etc/resolv.conf");
    return -1;
  }
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    char *key = strtok(line, " \t\r\n");
    if (!key || key[0] == '#' || key[0] == ';') continue;
    char *word;
    if (strcmp(key, "nameserver") == 0 && rc->server_len == 0 && (word = strtok(NULL, " \t\r\n"))) {
      struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&rc->server;
      struct sockaddr_in *v4 = (struct sockaddr_in *)&rc->server;
      if (inet_pton(AF_INET6, word, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(53);
        rc->server_len = sizeof *v6;
      } else if (inet_pton(AF_INET, word, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(53);
        rc->server_len = sizeof *v4;
      }
    } else if (strcmp(key, "search") == 0 || strcmp(key, "domain") == 0) {
      rc->nsearch = 0; /* the last search or domain line wins */
      while ((word = strtok(NULL, " \t\r\n")) && rc->nsearch < MAX_SEARCH)
        snprintf(rc->search[rc->nsearch++], sizeof rc->search[0], "%s", word);
    } else if (strcmp(key, "options") == 0) {
      while ((word = strtok(NULL, " \t\r\n")))
        if (strncmp(word, "ndots:", 6) == 0) rc->ndots = atoi(word + 6);
    }
  }
  fclose(f);
  if (rc->server_len == 0) {
    fprintf(stderr, "hello resolve: no nameserver in /etc/resolv.conf\n");
    return -1;
  }
  return 0;
}

/* Writes NAME as DNS labels at out; returns the length, or -1 when a label is empty or long. */
static int encode_name(const char *name, unsigned char *out, size_t room) {
  size_t n = 0;
  while (*name) {
    const char *dot = strchr(name, '.');
    size_t len = dot ? (size_t)(dot - name) : strlen(name);
    if (len == 0 || len > 63 || n + len + 2 > room) return -1;
    out[n++] = (unsigned char)len;
    memcpy(out + n, name, len);
    n += len;
    name += len + (dot ? 1 : 0);
  }
  out[n++] = 0;
  return (int)n;
}

/* Skips a possibly compressed name at p; returns the offset after it, or -1. */
static int skip_name(const unsigned char *msg, int len, int p) {
  while (p < len) {
    if (msg[p] == 0) return p + 1;
    if ((msg[p] & 0xc0) == 0xc0) return p + 2 <= len ? p + 2 : -1;
    p += msg[p] + 1;
  }
  return -1;
}

static const char *rcode_name(int rcode) {
  static const char *names[] = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"};
  return rcode >= 0 && rcode < 6 ? names[rcode] : "RCODE";
}

/*
 * One AAAA query for the absolute NAME (without the final dot). Returns 0 with the first AAAA
 * address of the answer in out, 1 for a reply without one (its rcode in *rcode: NXDOMAIN, or
 * NOERROR for NODATA), -1 when no reply came (two tries, 2 s each).
 */
static int query_aaaa(const struct resolv_conf *rc, const char *name, struct in6_addr *out,
                      int *rcode) {
  unsigned char q[512], r[4096];
  unsigned short id = (unsigned short)(getpid() ^ time(NULL));
  memset(q, 0, 12);
  q[0] = (unsigned char)(id >> 8), q[1] = (unsigned char)id;
  q[2] = 0x01; /* RD */
  q[5] = 1;    /* QDCOUNT */
  int n = encode_name(name, q + 12, sizeof q - 16);
  if (n < 0) return -1;
  n += 12;
  q[n++] = 0, q[n++] = 28; /* QTYPE AAAA */
  q[n++] = 0, q[n++] = 1;  /* QCLASS IN */

  int s = socket(rc->server.ss_family, SOCK_DGRAM, 0);
  struct timeval timeout = {2, 0};
  if (s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) < 0 ||
      connect(s, (const struct sockaddr *)&rc->server, rc->server_len) < 0) {
    if (s >= 0) close(s);
    return -1;
  }
  int got = -1;
  for (int attempt = 0; attempt < 2 && got < 0; attempt++) {
    if (send(s, q, (size_t)n, 0) != n) continue;
    for (;;) { /* a reply that is not ours (wrong ID) is ignored, as a resolver does */
      ssize_t len = recv(s, r, sizeof r, 0);
      if (len < 0) break;
      if (len >= 12 && r[0] == q[0] && r[1] == q[1] && (r[2] & 0x80)) {
        got = (int)len;
        break;
      }
    }
  }
  close(s);
  if (got < 0) return -1;

  *rcode = r[3] & 0x0f;
  int qd = r[4] << 8 | r[5], an = r[6] << 8 | r[7], p = 12;
  for (int i = 0; i < qd && p >= 0; i++) {
    p = skip_name(r, got, p);
    if (p >= 0) p += 4; /* QTYPE, QCLASS */
  }
  for (int i = 0; i < an && p >= 0; i++) {
    p = skip_name(r, got, p);
    if (p < 0 || p + 10 > got) break; /* TYPE, CLASS, TTL, RDLENGTH */
    int type = r[p] << 8 | r[p + 1], rdlen = r[p + 8] << 8 | r[p + 9];
    p += 10;
    if (p + rdlen > got) break;
    if (type == 28 && rdlen == 16) {
      memcpy(out, r + p, 16);
      return 0;
    }
    p += rdlen;
  }
  return 1;
}

/*
 * Prints NAME's first AAAA address. Exit status: 0; else that of the last candidate: its rcode
 * (3 for NXDOMAIN), 1 for NODATA, 2 (as SERVFAIL) when the nameserver did not answer.
 */
static int lookup(const char *name, struct in6_addr *found) {
  struct resolv_conf rc;
  if (read_resolv_conf(&rc) < 0) return 1;
  /* The candidates in resolv.conf(5) order: as given first when it has at least ndots dots. */
  char candidates[MAX_SEARCH + 1][512];
  int count = 0, dots = 0;
  size_t len = strlen(name);
  for (const char *c = name; *c; c++) dots += *c == '.';
  if (len > 0 && name[len - 1] == '.') {
    snprintf(candidates[count++], sizeof candidates[0], "%.*s", (int)(len - 1), name);
  } else {
    if (dots >= rc.ndots) snprintf(candidates[count++], sizeof candidates[0], "%s", name);
    for (int i = 0; i < rc.nsearch; i++)
      snprintf(candidates[count++], sizeof candidates[0], "%s.%s", name, rc.search[i]);
    if (dots < rc.ndots) snprintf(candidates[count++], sizeof candidates[0], "%s", name);
  }
  int status = 1;
  for (int i = 0; i < count; i++) {
    struct in6_addr addr;
    int rcode = 0, result = query_aaaa(&rc, candidates[i], &addr, &rcode);
    if (result == 0) {
      *found = addr;
      return 0;
    }
    if (result < 0) {
      fprintf(stderr, "hello resolve: %s: no reply\n", candidates[i]);
      status = 2;
    } else {
      fprintf(stderr, "hello resolve: %s: %s%s\n", candidates[i], rcode_name(rcode),
              rcode == 0 ? " without AAAA" : "");
      status = rcode == 0 ? 1 : rcode;
    }
  }
  return status;
}

static int resolve(const char *name) {
  struct in6_addr addr;
  int status = lookup(name, &addr);
  if (status == 0) {
    char text[INET6_ADDRSTRLEN];
    /* glibc's inet_ntop writes RFC 5952 text (longest zero run, first of equals, lowercase) */
    puts(inet_ntop(AF_INET6, &addr, text, sizeof text));
  }
  return status;
}

/*
 * `hello get http://HOST[:PORT]/PATH`: resolves HOST as `resolve` does (a Service name through
 * the Pod's resolv.conf) unless it is a bracketed IPv6 literal, sends one HTTP/1.0 GET and
 * prints the response body. Exit status 0 for a 2xx answer; 7 when the connection fails (as
 * curl's "couldn't connect"), with the reason on stderr; 1 otherwise.
 */
static int get(const char *url) {
  const char *p = strncmp(url, "http://", 7) == 0 ? url + 7 : NULL;
  if (!p) {
    fprintf(stderr, "hello get: only http:// URLs\n");
    return 1;
  }
  char host[256] = "", path[512] = "/";
  int port = 80;
  const char *slash = strchr(p, '/');
  size_t hl = slash ? (size_t)(slash - p) : strlen(p);
  if (hl >= sizeof host) return 1;
  memcpy(host, p, hl);
  host[hl] = '\0';
  if (slash) snprintf(path, sizeof path, "%s", slash);
  struct in6_addr addr;
  char *colon = strrchr(host, ':');
  if (host[0] == '[') {
    char *end = strchr(host, ']');
    if (!end) return 1;
    *end = '\0';
    if (end[1] == ':') port = atoi(end + 2);
    memmove(host, host + 1, strlen(host));
    if (inet_pton(AF_INET6, host, &addr) != 1) return 1;
  } else {
    if (colon) {
      *colon = '\0';
      port = atoi(colon + 1);
    }
    int status = lookup(host, &addr);
    if (status != 0) return status;
  }
  struct sockaddr_in6 sa;
  memset(&sa, 0, sizeof sa);
  sa.sin6_family = AF_INET6;
  sa.sin6_port = htons((uint16_t)port);
  sa.sin6_addr = addr;
  int s = socket(AF_INET6, SOCK_STREAM, 0);
  struct timeval timeout = {5, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  if (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
    fprintf(stderr, "hello get: connect %s port %d: %s\n", host, port, strerror(errno));
    close(s);
    return 7;
  }
  char req[1024];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, host);
  if (write(s, req, (size_t)n) != n) {
    close(s);
    return 1;
  }
  char resp[8192];
  size_t used = 0;
  for (;;) {
    ssize_t r = read(s, resp + used, sizeof resp - 1 - used);
    if (r <= 0) break;
    used += (size_t)r;
    if (used == sizeof resp - 1) break;
  }
  close(s);
  resp[used] = '\0';
  char *body = strstr(resp, "\r\n\r\n");
  if (body) fputs(body + 4, stdout);
  return strncmp(resp, "HTTP/1.0 2", 10) == 0 || strncmp(resp, "HTTP/1.1 2", 10) == 0 ? 0 : 1;
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
  if (argc == 3 && strcmp(argv[1], "resolve") == 0) return resolve(argv[2]);
  if (argc == 3 && strcmp(argv[1], "get") == 0) return get(argv[2]);
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
