/*
 * podexec.c - the messages of `cadre exec` from the API server
 * (kube/podexec.h): the channel demultiplexer, then the Status of the
 * command. The input is a series of messages, each a length byte then that
 * many bytes (the channel byte first); the length also picks how that
 * message is cut into WebSocket fragments.
 *
 * Properties: stdout, stderr, the Status and the first message refused are
 * the same whether each message arrives whole or in fragments; a Status
 * gives an exit code of 0 to 255 or none, and a message that ends.
 */
#include "fuzz/fuzz.h"

#include "base/buf.h"
#include "base/err.h"
#include "kube/podexec.h"

#include <string.h>

struct seen {
	struct buf out[3];   /* by channel: 1 stdout, 2 stderr */
	int refused_at;      /* the message demux refused, -1 for none */
	int error;
	struct buf status;
	bool has_status;
};

static int on_output(void *ctx, int channel, const char *data, size_t len)
{
	struct seen *s = ctx;

	FUZZ_CHECK(channel == PODEXEC_CH_STDOUT || channel == PODEXEC_CH_STDERR,
		   "output on channel %d", channel);
	FUZZ_CHECK(len > 0, "an empty output");
	buf_add(&s->out[channel], data, len);
	return 0;
}

/* Feed every message, whole when split is false, else in fragments. */
static void run(const uint8_t *data, size_t size, bool split, struct seen *s)
{
	struct podexec_demux d;
	size_t at = 0;
	int index = 0;

	memset(s, 0, sizeof(*s));
	for (int c = 0; c < 3; c++)
		buf_init(&s->out[c], (size_t)16 << 20);
	s->refused_at = -1;
	podexec_demux_init(&d, on_output, s);
	while (at < size && s->refused_at < 0) {
		size_t len = data[at++], done = 0;
		unsigned cut = (unsigned)len % 7 + 1;
		const char *msg = (const char *)data + at;

		if (len > size - at)
			len = size - at;
		at += len;
		do {
			/* The first fragment holds the channel byte (an empty message is one empty fragment). */
			size_t n = split ? (done ? cut : (len ? 1 : 0) + cut / 2) : len;
			int e;

			if (n > len - done)
				n = len - done;
			e = podexec_demux_feed(&d, msg + done, n, done == 0, done + n == len);
			done += n;
			if (e) {
				FUZZ_CHECK(e == CADRE_EPARSE, "podexec_demux_feed returned %d", e);
				s->refused_at = index;
				s->error = e;
				break;
			}
		} while (done < len);
		index++;
	}
	buf_init(&s->status, PODEXEC_MAX_STATUS + 1);
	buf_add(&s->status, d.status.data ? d.status.data : "", d.status.len);
	s->has_status = d.has_status;
	FUZZ_CHECK(d.status.len <= PODEXEC_MAX_STATUS, "the Status holds %zu bytes, past its cap",
		   d.status.len);
	podexec_demux_release(&d);
}

static void release(struct seen *s)
{
	for (int c = 0; c < 3; c++)
		buf_release(&s->out[c]);
	buf_release(&s->status);
}

static bool same(const struct buf *a, const struct buf *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));
}

int fuzz_podexec(const uint8_t *data, size_t size)
{
	struct seen whole, cut;
	char message[256];
	int code = 0, e;

	run(data, size, false, &whole);
	run(data, size, true, &cut);
	FUZZ_CHECK(whole.refused_at == cut.refused_at, "refused at message %d whole, %d in pieces",
		   whole.refused_at, cut.refused_at);
	FUZZ_CHECK(same(&whole.out[1], &cut.out[1]) && same(&whole.out[2], &cut.out[2]),
		   "stdout or stderr differ when the messages come in pieces");
	FUZZ_CHECK(whole.has_status == cut.has_status && same(&whole.status, &cut.status),
		   "the Status differs when the messages come in pieces");
	if (whole.has_status) {
		memset(message, 'x', sizeof(message));
		e = podexec_status_exit_code(whole.status.data ? whole.status.data : "",
					     whole.status.len, &code, message, sizeof(message));
		FUZZ_CHECK(e == 0 || e == CADRE_EPARSE, "podexec_status_exit_code returned %d", e);
		if (!e) {
			FUZZ_CHECK(code == PODEXEC_NO_EXIT_CODE || (code >= 0 && code <= 255),
				   "exit code %d", code);
			FUZZ_CHECK(memchr(message, '\0', sizeof(message)), "the message does not end");
		}
	}
	release(&whole);
	release(&cut);
	return 0;
}
