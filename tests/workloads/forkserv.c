/* forkserv - a TCP server on loopback whose work is done in processes it
 * forks, and its client; one traced call per connection by construction.
 *
 *   forkserv fork PORTFILE        a child per connection (a forking server)
 *   forkserv pool PORTFILE W      W workers forked at start, each accepting
 *   forkserv client PORTFILE N    N connections one after the other
 *
 * The server listens on 127.0.0.1 (a port of the kernel's choosing, written
 * to PORTFILE once it listens) and runs until killed.  Each connection is
 * served by one process: it reads the request (4 bytes), calls
 * handle(n) once, where n is the request's number, and answers with
 * handle's result (n * 2) before closing.  The client checks every answer
 * and prints how many connections were served; it exits 1 on any failure.
 * Truth: N calls of handle, one per connection, none in the server's first
 * process (it only accepts). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

volatile long sink;

__attribute__((noinline)) long handle(long n)
{
	sink += n;
	return n * 2;
}

static int full(int fd, void *buf, size_t n, int writing)
{
	char *p = buf;
	while (n) {
		ssize_t r = writing ? write(fd, p, n) : read(fd, p, n);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void serve_one(int c)
{
	int n;
	if (full(c, &n, sizeof(n), 0) == 0) {
		int r = (int)handle(n);
		full(c, &r, sizeof(r), 1);
	}
	close(c);
}

static int client(const char *portfile, int n)
{
	FILE *f = fopen(portfile, "r");
	int port = 0;
	if (!f || fscanf(f, "%d", &port) != 1)
		return 1;
	fclose(f);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int served = 0;
	for (int i = 0; i < n; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0), r = 0;
		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    full(s, &i, sizeof(i), 1) < 0 || full(s, &r, sizeof(r), 0) < 0 || r != 2 * i) {
			fprintf(stderr, "forkserv: connection %d failed\n", i);
			return 1;
		}
		close(s);
		served++;
	}
	printf("%d\n", served);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (!strcmp(argv[1], "client"))
		return client(argv[2], argc > 3 ? atoi(argv[3]) : 1);
	int pool = !strcmp(argv[1], "pool");
	int workers = pool && argc > 3 ? atoi(argv[3]) : 0;
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(a);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 128) < 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &len) < 0)
		return 1;
	signal(SIGCHLD, SIG_IGN);	/* children reaped by the kernel */
	for (int w = 0; w < workers; w++)
		if (fork() == 0)
			for (;;) {
				int c = accept(ls, NULL, NULL);
				if (c >= 0)
					serve_one(c);
			}
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.new", argv[2]);
	FILE *f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0 || rename(tmp, argv[2]) < 0)
		return 1;
	if (pool)
		for (;;)
			pause();
	for (;;) {
		int c = accept(ls, NULL, NULL);
		if (c < 0)
			continue;
		pid_t p = fork();
		if (p == 0) {
			close(ls);
			serve_one(c);
			_exit(0);
		}
		close(c);
	}
}
