/* fields - members read through DWARF (lp-trace FUNC(r->conn->serial),
 * FILE:LINE(local.hdr.len)): a request whose members, through two pointers,
 * a nested struct, an anonymous union and a C string, are set from its
 * number i, so that every captured value can be checked against the others.
 *
 *   fields [COUNT]   default 300, a call of handle(r) each 1 ms
 *
 * Call i (1..COUNT) of handle(r) has r->hdr.len = 3 * i, r->hdr.id = 7 * i
 * (in an anonymous union) and, but for every tenth call, whose r->conn is
 * NULL, r->conn->serial = 1000 + i, r->conn->peer.port = i % 1000 and
 * r->conn->host "odd" or "even".  At the line marked LINE-PROBE in main the
 * same holds of `local`, a struct in main's frame (its address is taken).
 * Members are at offsets other than 0, so a wrong offset reads another's
 * value; r->flags is a bit-field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct peer {
	short port;
	int addr;
};

struct conn {
	char name[24];
	long serial;
	struct peer peer;
	const char *host;
};

struct hdr {
	int len;
	union {
		long id;
		char tag[8];
	};
};

struct req {
	int phase;
	struct conn *conn;
	struct hdr hdr;
	unsigned flags : 3;
};

static volatile long sink;

__attribute__((noinline)) long handle(struct req *r)
{
	sink += r->hdr.len + (r->conn ? r->conn->serial : 0);
	return sink;
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 300;
	struct conn conn;
	struct req local;
	struct timespec ms = { 0, 1000000 };

	memset(&conn, 0, sizeof(conn));
	for (long i = 1; i <= count; i++) {
		memset(&local, 0, sizeof(local));
		conn.serial = 1000 + i;
		conn.peer.port = (short)(i % 1000);
		conn.peer.addr = -1;
		conn.host = i % 2 ? "odd" : "even";
		snprintf(conn.name, sizeof(conn.name), "conn-%ld", i);
		local.phase = -1;
		local.conn = i % 10 ? &conn : NULL;
		local.hdr.len = (int)(3 * i);
		local.hdr.id = 7 * i;
		local.flags = (unsigned)i & 7;
		handle(&local); /* LINE-PROBE */
		nanosleep(&ms, NULL);
	}
	return 0;
}
