/* The kernel's TCP floor for the inter-host section of the compare report:
 * a ping-pong over one plain TCP connection (TCP_NODELAY), both ends
 * busy-polling non-blocking recv(), one send() and as few recv() as the
 * data needs per message. No MPI library can go below this over the same
 * link without bypassing the kernel's stack.
 *
 *   tcp_pingpong -s PORT                 serve one client, then exit
 *   tcp_pingpong -c ADDR PORT [SIZES]    prints {"latency_us": {"1": ...}}
 *                                        (one-way, half the round trip;
 *                                        SIZES a comma list, default
 *                                        1,64,4096,8192) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ITERS 20000
#define WARMUP 2000
#define MAX_SIZE 65536

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void send_all(int s, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = send(s, buf, n, 0);
        if (w < 0 && errno != EINTR && errno != EAGAIN)
            die("send");
        if (w > 0) {
            buf += w;
            n -= (size_t)w;
        }
    }
}

/* Busy-polls until n bytes came; 0 when the peer closed first. */
static int recv_all(int s, char *buf, size_t n)
{
    while (n) {
        ssize_t r = recv(s, buf, n, MSG_DONTWAIT);
        if (r == 0)
            return 0;
        if (r < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            die("recv");
        }
        buf += r;
        n -= (size_t)r;
    }
    return 1;
}

static int nodelay(int s)
{
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return s;
}

/* The server echoes: a 4-byte size, then that many bytes back, until EOF. */
static int serve(int port)
{
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1))
        die("listen");
    int s = nodelay(accept(l, NULL, NULL));
    if (s < 0)
        die("accept");
    static char buf[MAX_SIZE];
    uint32_t size;
    while (recv_all(s, (char *)&size, sizeof size)) {
        if (size > MAX_SIZE)
            return 1;
        for (int i = 0; i < ITERS + WARMUP; i++) {
            if (!recv_all(s, buf, size))
                return 1;
            send_all(s, buf, size);
        }
    }
    return 0;
}

static int client(const char *addr, int port, const char *sizes)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
        die("address");
    int s = -1;
    for (int tries = 0; tries < 500; tries++) {   /* the server may still be starting */
        s = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
            break;
        close(s);
        s = -1;
        usleep(10000);
    }
    if (s < 0)
        die("connect");
    nodelay(s);
    static char buf[MAX_SIZE];
    memset(buf, 1, sizeof buf);
    printf("{\"latency_us\": {");
    char *list = strdup(sizes), *save = NULL;
    int first = 1;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint32_t size = (uint32_t)atoi(tok);
        if (size < 1 || size > MAX_SIZE)
            continue;
        send_all(s, (const char *)&size, sizeof size);
        double t0 = 0;
        for (int i = 0; i < ITERS + WARMUP; i++) {
            if (i == WARMUP)
                t0 = now_s();
            send_all(s, buf, size);
            if (!recv_all(s, buf, size))
                die("server went away");
        }
        printf("%s\"%u\": %.3f", first ? "" : ", ", size, (now_s() - t0) / ITERS / 2 * 1e6);
        first = 0;
    }
    printf("}}\n");
    free(list);
    close(s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "-s") == 0)
        return serve(atoi(argv[2]));
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "-c") == 0)
        return client(argv[2], atoi(argv[3]), argc == 5 ? argv[4] : "1,64,4096,8192");
    fprintf(stderr, "usage: %s -s PORT | -c ADDR PORT [SIZES]\n", argv[0]);
    return 2;
}
