/*
 * podexec.c - pods/exec over WebSocket (podexec.h): RFC 6455's client side
 * on connections kube/http.c upgrades.
 *
 * kube_http_upgrade makes the connections as every request is made (the
 * kubeconfig's proxy, TLS, token and impersonation), so exec reaches every
 * cluster a GET reaches, and the request is as long as the command and the
 * token need. Here: the handshake's key and answer, frames in (read as they
 * arrive, a data frame handed on in pieces) and out (masked), ping and
 * close, and one poll loop over every session's socket and stdin that also
 * looks at *stop and *resized every 100 ms.
 */
#include "kube/podexec.h"

#include "base/err.h"
#include "kube/resource.h"

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define TICK_MS 100
#define STDIN_CHUNK 4096
/* Read no more stdin while this much waits to be sent. */
#define MAX_PENDING_OUT (256u << 10)
/* RFC 6455 4.2.2: the key's digest is taken with this. */
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_CONT 0x0
#define WS_BINARY 0x2
#define WS_CLOSE 0x8
#define WS_PING 0x9
#define WS_PONG 0xA

/* ---- the pure parts ---- */

void podexec_demux_init(struct podexec_demux *d,
			int (*on_output)(void *ctx, int channel, const char *data, size_t len),
			void *ctx)
{
	d->channel = -1;
	buf_init(&d->status, PODEXEC_MAX_STATUS);
	d->has_status = false;
	d->on_output = on_output;
	d->ctx = ctx;
}

void podexec_demux_release(struct podexec_demux *d)
{
	buf_release(&d->status);
}

int podexec_demux_feed(struct podexec_demux *d, const char *data, size_t len, bool first,
		       bool final)
{
	int e = 0;

	if (first) {
		if (!len)
			return CADRE_EPARSE;
		d->channel = (unsigned char)data[0];
		data++;
		len--;
		if (d->channel == PODEXEC_CH_ERROR && d->has_status)
			return CADRE_EPARSE;
	} else if (d->channel < 0) {
		return CADRE_EPARSE;
	}
	if (d->channel == PODEXEC_CH_ERROR) {
		if (len && buf_add(&d->status, data, len))
			return CADRE_EPARSE;
		if (final)
			d->has_status = true;
	} else if ((d->channel == PODEXEC_CH_STDOUT || d->channel == PODEXEC_CH_STDERR) && len &&
		   d->on_output) {
		e = d->on_output(d->ctx, d->channel, data, len);
	}
	if (final)
		d->channel = -1;
	return e;
}

/* The number in the ExitCode cause of details.causes; -1 when none. */
static int exit_code_cause(const json_t *status)
{
	const json_t *causes = json_object_get(json_object_get(status, "details"), "causes");
	size_t i;
	json_t *c;

	json_array_foreach(causes, i, c) {
		const char *reason = json_string_value(json_object_get(c, "reason"));
		const char *msg = json_string_value(json_object_get(c, "message"));
		char *end;
		long v;

		if (!reason || strcmp(reason, "ExitCode") || !msg)
			continue;
		v = strtol(msg, &end, 10);
		if (end != msg && !*end && v >= 0 && v <= 255)
			return (int)v;
	}
	return -1;
}

/*
 * "...: exit status 5" at the end of msg: Go's exec.ExitError text, the only
 * place some kubelets put the code (kwok v0.8.0 wraps the error, so the
 * API server cannot see it is one and sends InternalError). -1 when absent.
 */
static int exit_code_in_message(const char *msg)
{
	static const char tail[] = "exit status ";
	const char *p = msg ? strstr(msg, tail) : NULL, *last = NULL;
	char *end;
	long v;

	for (; p; p = strstr(p + 1, tail))
		last = p;
	if (!last)
		return -1;
	last += sizeof(tail) - 1;
	if (*last < '0' || *last > '9')
		return -1;
	v = strtol(last, &end, 10);
	return !*end && v >= 0 && v <= 255 ? (int)v : -1;
}

int podexec_status_exit_code(const char *json, size_t len, int *exit_code, char *message,
			     size_t size)
{
	json_t *obj = json_loadb(json, len, 0, NULL);
	const char *status = json_string_value(json_object_get(obj, "status"));
	const char *reason = json_string_value(json_object_get(obj, "reason"));
	const char *msg = json_string_value(json_object_get(obj, "message"));
	int e = 0, code;

	if (size)
		message[0] = '\0';
	if (!json_is_object(obj) || !status) {
		e = CADRE_EPARSE;
		goto out;
	}
	if (size && msg)
		snprintf(message, size, "%s", msg);
	if (!strcmp(status, "Success")) {
		*exit_code = 0;
		goto out;
	}
	code = reason && !strcmp(reason, "NonZeroExitCode") ? exit_code_cause(obj) : -1;
	if (code < 0)
		code = exit_code_in_message(msg);
	*exit_code = code >= 0 ? code : PODEXEC_NO_EXIT_CODE;
out:
	json_decref(obj);
	return e;
}

int podexec_resize_body(unsigned cols, unsigned rows, struct buf *out)
{
	buf_reset(out);
	return buf_addf(out, "{\"Width\":%u,\"Height\":%u}", cols, rows);
}

int podexec_path(struct buf *out, const char *ns, const char *pod, const char *container,
		 char *const *argv, size_t argc, bool with_stdin, bool tty)
{
	struct buf q;
	int e = 0;

	buf_reset(out);
	if (!argc || !argv || !argv[0])
		return CADRE_EINVAL;
	buf_init(&q, (size_t)1 << 20);
	for (size_t i = 0; i < argc && !e; i++)
		e = kube_path_query_add(&q, "command", argv[i]);
	if (!e)
		e = kube_path_query_add(&q, "container", container);
	if (!e)
		e = kube_path_query_add(&q, "stdin", with_stdin ? "true" : "false");
	if (!e)
		e = kube_path_query_add(&q, "stdout", "true");
	if (!e)
		e = kube_path_query_add(&q, "stderr", tty ? "false" : "true");
	if (!e)
		e = kube_path_query_add(&q, "tty", tty ? "true" : "false");
	if (!e)
		e = kube_path(out, &kube_resource_pods, ns, pod, "exec", buf_str(&q));
	buf_release(&q);
	return e;
}

/* ---- frames (RFC 6455 5.2) ---- */

/* Reads server frames as they arrive, at any boundaries. */
struct ws_reader {
	enum { WS_HEAD, WS_EXTLEN, WS_MASK, WS_PAYLOAD } state;
	unsigned char hdr[14];
	size_t have, need;
	bool fin, masked, in_message;  /* in_message: a data message has begun */
	int opcode;                    /* of the frame being read */
	unsigned char mask[4];
	uint64_t left, offset;         /* payload bytes still to come, and read */
	bool payload_started;          /* this frame's first payload byte was handed on */
	unsigned char control[125];    /* a control frame's payload */
	size_t control_len;
};

struct session_priv {
	struct podexec_session *s;
	struct kube_upgrade up;
	struct podexec_demux demux;
	struct ws_reader reader;
	struct buf out;          /* framed bytes waiting to be sent */
	char accept[32];         /* the Sec-WebSocket-Accept the key asks for */
	char headers[256];       /* the handshake's own header lines */
	char *path;
	bool done;
	bool v5;
	bool stdin_eof;          /* read end reached; v5 then sends a close of channel 0 */
	bool close_sent, close_seen;
};

/* Queue one masked client frame of opcode (with FIN) carrying data. */
static int ws_frame(struct buf *out, int opcode, const void *a, size_t a_len, const void *b,
		    size_t b_len)
{
	unsigned char h[14], mask[4];
	size_t hl = 2, len = a_len + b_len;
	const unsigned char *parts[2] = { a, b };
	size_t lens[2] = { a_len, b_len }, at = 0;
	char chunk[4096];
	int e;

	if (RAND_bytes(mask, sizeof(mask)) != 1)
		return CADRE_EIO;
	h[0] = (unsigned char)(0x80 | opcode);
	if (len < 126) {
		h[1] = (unsigned char)(0x80 | len);
	} else if (len < 65536) {
		h[1] = 0x80 | 126;
		h[2] = (unsigned char)(len >> 8);
		h[3] = (unsigned char)len;
		hl = 4;
	} else {
		h[1] = 0x80 | 127;
		for (int i = 0; i < 8; i++)
			h[2 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
		hl = 10;
	}
	memcpy(h + hl, mask, 4);
	if ((e = buf_add(out, (const char *)h, hl + 4)))
		return e;
	for (int p = 0; p < 2; p++)
		for (size_t i = 0; i < lens[p];) {
			size_t n = lens[p] - i < sizeof(chunk) ? lens[p] - i : sizeof(chunk);

			for (size_t j = 0; j < n; j++, at++)
				chunk[j] = (char)(parts[p][i + j] ^ mask[at % 4]);
			if ((e = buf_add(out, chunk, n)))
				return e;
			i += n;
		}
	return 0;
}

/* One channel message (channel byte, then data) as a binary frame. */
static int send_channel(struct session_priv *p, int channel, const void *data, size_t len)
{
	unsigned char c = (unsigned char)channel;

	return ws_frame(&p->out, WS_BINARY, &c, 1, data, len);
}

static void session_end(struct session_priv *p, size_t *running, int code, const char *why)
{
	struct podexec_session *s = p->s;

	if (p->done)
		return;
	p->done = true;
	(*running)--;
	if (code && !s->st.code)
		kube_status_set(&s->st, code, "%s", why);
}

static void take_status(struct session_priv *p)
{
	struct podexec_session *s = p->s;
	char msg[sizeof(s->st.message)];

	if (!p->demux.has_status) {
		kube_status_set(&s->st, CADRE_EIO, "the connection closed before the command's "
				"exit status arrived");
		return;
	}
	if (podexec_status_exit_code(p->demux.status.data, p->demux.status.len, &s->exit_code,
				     msg, sizeof(msg))) {
		kube_status_set(&s->st, CADRE_EPARSE, "the exit status is not a Status object");
		return;
	}
	if (s->exit_code == PODEXEC_NO_EXIT_CODE)
		snprintf(s->st.message, sizeof(s->st.message), "%s", msg);
}

/* A control frame read whole: a ping is answered, a close answered and noted. */
static int on_control(struct session_priv *p)
{
	struct ws_reader *r = &p->reader;

	if (r->opcode == WS_PING)
		return ws_frame(&p->out, WS_PONG, r->control, r->control_len, NULL, 0);
	if (r->opcode == WS_CLOSE) {
		p->close_seen = true;
		if (!p->close_sent) {
			p->close_sent = true;
			/* echo the code (the first two bytes), as RFC 6455 5.5.1 asks */
			return ws_frame(&p->out, WS_CLOSE, r->control,
					r->control_len >= 2 ? 2 : 0, NULL, 0);
		}
	}
	return 0;
}

/* Payload bytes of the frame being read: a data frame's go to the demux as they come. */
static int on_payload(struct session_priv *p, unsigned char *data, size_t n)
{
	struct ws_reader *r = &p->reader;
	bool first, final;

	for (size_t i = 0; i < n && r->masked; i++)
		data[i] ^= r->mask[(r->offset + i) % 4];
	r->offset += n;
	r->left -= n;
	if (r->opcode >= WS_CLOSE) {
		if (n)
			memcpy(r->control + r->control_len, data, n);
		r->control_len += n;
		return r->left ? 0 : on_control(p);
	}
	first = !r->in_message && !r->payload_started;
	final = r->fin && !r->left;
	if (!n && !final)
		return 0;
	r->payload_started = true;
	if (final)
		r->in_message = false;
	else if (first)
		r->in_message = true;
	return podexec_demux_feed(&p->demux, (const char *)data, n, first, final);
}

/* The frame's header is complete: check it and get ready for its payload. */
static int frame_begins(struct session_priv *p)
{
	struct ws_reader *r = &p->reader;
	const unsigned char *h = r->hdr;
	size_t len7 = h[1] & 0x7f;

	r->fin = h[0] & 0x80;
	r->opcode = h[0] & 0x0f;
	r->masked = h[1] & 0x80;
	if (h[0] & 0x70)
		return CADRE_EPARSE;  /* no extension was agreed on */
	if (r->opcode >= WS_CLOSE && (!r->fin || len7 > 125))
		return CADRE_EPARSE;
	if (r->opcode != WS_CONT && r->opcode != WS_BINARY && r->opcode != 0x1 &&
	    r->opcode != WS_CLOSE && r->opcode != WS_PING && r->opcode != WS_PONG)
		return CADRE_EPARSE;
	if (r->opcode < WS_CLOSE && (r->opcode == WS_CONT) != r->in_message)
		return CADRE_EPARSE;  /* a continuation with no message, or a message in one */
	if (len7 < 126) {
		r->left = len7;
	} else {
		r->left = 0;
		for (size_t i = 2; i < (len7 == 126 ? 4u : 10u); i++)
			r->left = r->left << 8 | r->hdr[i];
	}
	if (r->masked)
		memcpy(r->mask, r->hdr + (len7 < 126 ? 2 : len7 == 126 ? 4 : 10), 4);
	r->offset = 0;
	r->control_len = 0;
	r->payload_started = false;
	r->state = WS_PAYLOAD;
	return r->left ? 0 : on_payload(p, NULL, 0);
}

/* Ready for the next frame's header. */
static void next_frame(struct ws_reader *r)
{
	r->state = WS_HEAD;
	r->have = 0;
	r->need = 2;
}

/* Bytes from the server, at any boundaries. 0, or why the connection must end. */
static int ws_feed(struct session_priv *p, unsigned char *data, size_t len)
{
	struct ws_reader *r = &p->reader;
	int e = 0;

	while (len && !e) {
		size_t n;

		if (r->state == WS_PAYLOAD) {
			n = r->left < len ? (size_t)r->left : len;
			e = on_payload(p, data, n);
			if (!r->left)
				next_frame(r);
		} else {
			n = r->need - r->have < len ? r->need - r->have : len;
			memcpy(r->hdr + r->have, data, n);
			r->have += n;
			if (r->have == r->need) {
				size_t len7 = r->hdr[1] & 0x7f;
				size_t want = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) +
					      (r->hdr[1] & 0x80 ? 4 : 0);

				if (want > r->need) {
					r->need = want;
					r->state = WS_EXTLEN;
				} else {
					e = frame_begins(p);
					if (!r->left)
						next_frame(r);
				}
			}
		}
		data += n;
		len -= n;
	}
	return e;
}

/* ---- the handshake (RFC 6455 4.1) ---- */

static void base64_of(const unsigned char *data, size_t len, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, data, (int)len);
}

/* The key, the Sec-WebSocket-Accept it asks for, and the handshake's header lines. */
static int handshake_prepare(struct session_priv *p)
{
	unsigned char raw[16], digest[SHA_DIGEST_LENGTH];
	char key[32], joined[80];

	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return CADRE_EIO;
	base64_of(raw, sizeof(raw), key);
	snprintf(joined, sizeof(joined), "%s" WS_GUID, key);
	SHA1((const unsigned char *)joined, strlen(joined), digest);
	base64_of(digest, sizeof(digest), p->accept);
	snprintf(p->headers, sizeof(p->headers),
		 "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
		 "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Protocol: %s, %s\r\n", key,
		 PODEXEC_PROTO_V5, PODEXEC_PROTO_V4);
	return 0;
}

/* The 101: the key answered, the subprotocol the server chose. 0, or why not. */
static int handshake_check(struct session_priv *p)
{
	struct podexec_session *s = p->s;
	char accept[64];

	if (!kube_upgrade_header(p->up.head, "Sec-WebSocket-Accept", accept, sizeof(accept)) ||
	    strcmp(accept, p->accept))
		return kube_status_set(&s->st, CADRE_EIO, "the server's WebSocket answer does not "
				       "match the key sent");
	if (!kube_upgrade_header(p->up.head, "Sec-WebSocket-Protocol", s->protocol,
				 sizeof(s->protocol)))
		s->protocol[0] = '\0';
	p->v5 = !strcmp(s->protocol, PODEXEC_PROTO_V5);
	return 0;
}

/* The request's path and query: the exec subresource with the command. */
static int session_path(struct session_priv *p)
{
	struct podexec_session *s = p->s;
	struct buf path;
	int e;

	buf_init(&path, (size_t)4 << 20);
	e = podexec_path(&path, s->ns, s->pod, s->container, s->argv, s->argc, s->stdin_fd >= 0,
			 s->tty);
	if (!e && !(p->path = strdup(buf_str(&path))))
		e = CADRE_ENOMEM;
	buf_release(&path);
	return e;
}

/* ---- the sessions ---- */

struct runner {
	const struct podexec_opts *opts;
	struct session_priv *privs;
	size_t n;
	size_t running;
};

static void queue_resize(struct runner *r, struct session_priv *p)
{
	struct buf body;
	unsigned cols, rows;

	if (!r->opts || !r->opts->get_size || !r->opts->get_size(r->opts->size_ctx, &cols, &rows))
		return;
	buf_init(&body, 64);
	if (!podexec_resize_body(cols, rows, &body))
		send_channel(p, PODEXEC_CH_RESIZE, body.data, body.len);
	buf_release(&body);
}

/* Read what the connection has, including what TLS holds decrypted already. */
static void session_read(struct runner *r, struct session_priv *p)
{
	unsigned char chunk[32768];
	size_t n, total = 0;
	int e;

	while (!p->done && total < ((size_t)1 << 20)) {
		e = kube_upgrade_recv(&p->up, chunk, sizeof(chunk), &n);
		if (e == CADRE_EAGAIN)
			return;
		if (e || !n) {
			/* the server closed it: after the Status, that is the end of the command */
			take_status(p);
			session_end(p, &r->running, e && !p->demux.has_status ? CADRE_EIO : 0,
				    "the connection failed");
			return;
		}
		total += n;
		if ((e = ws_feed(p, chunk, n))) {
			session_end(p, &r->running, e, e == CADRE_EPARSE ? "a message the exec "
				    "protocol does not have" : "the output could not be written");
			return;
		}
		if (p->close_seen && !p->out.len) {
			take_status(p);
			session_end(p, &r->running, 0, NULL);
			return;
		}
	}
}

static void session_write(struct runner *r, struct session_priv *p)
{
	size_t n;
	int e;

	while (!p->done && p->out.len) {
		e = kube_upgrade_send(&p->up, p->out.data, p->out.len, &n);
		if (e == CADRE_EAGAIN)
			return;
		if (e) {
			take_status(p);
			session_end(p, &r->running, p->demux.has_status ? 0 : CADRE_EIO,
				    "the connection failed");
			return;
		}
		memmove(p->out.data, p->out.data + n, p->out.len - n);
		p->out.len -= n;
		p->out.data[p->out.len] = '\0';
	}
	if (!p->done && p->close_seen && !p->out.len) {
		take_status(p);
		session_end(p, &r->running, 0, NULL);
	}
}

/* stdin, when it has something, as a channel 0 message; its end as v5's close of channel 0. */
static void session_stdin(struct session_priv *p)
{
	char data[STDIN_CHUNK];
	ssize_t n = read(p->s->stdin_fd, data, sizeof(data));

	if (n > 0) {
		send_channel(p, PODEXEC_CH_STDIN, data, (size_t)n);
		return;
	}
	p->stdin_eof = true;
	if (p->v5 && !p->close_sent) {
		unsigned char which = PODEXEC_CH_STDIN;

		send_channel(p, PODEXEC_CH_CLOSE, &which, 1);
	}
}

static bool wants_stdin(const struct session_priv *p)
{
	return !p->done && p->s->stdin_fd >= 0 && !p->stdin_eof && !p->close_seen &&
	       p->out.len < MAX_PENDING_OUT;
}

static void serve(struct runner *r)
{
	struct pollfd *fds = calloc(2 * r->n, sizeof(*fds));
	struct session_priv **owner = calloc(2 * r->n, sizeof(*owner));

	while (fds && owner && r->running) {
		bool resized = r->opts && r->opts->resized && atomic_exchange(r->opts->resized, false);
		nfds_t nfds = 0;

		if (r->opts && r->opts->stop && atomic_load(r->opts->stop)) {
			for (size_t i = 0; i < r->n; i++)
				session_end(&r->privs[i], &r->running, CADRE_ECANCELED, "stopped");
			break;
		}
		for (size_t i = 0; i < r->n; i++) {
			struct session_priv *p = &r->privs[i];

			if (resized && p->s->tty && !p->done)
				queue_resize(r, p);
			session_read(r, p);
			session_write(r, p);
			if (p->done)
				continue;
			owner[nfds] = p;
			fds[nfds++] = (struct pollfd){ .fd = kube_upgrade_fd(&p->up),
				.events = (short)(POLLIN | (p->out.len ? POLLOUT : 0)) };
			if (wants_stdin(p)) {
				owner[nfds] = p;
				fds[nfds++] = (struct pollfd){ .fd = p->s->stdin_fd, .events = POLLIN };
			}
		}
		if (!r->running)
			break;
		if (poll(fds, nfds, TICK_MS) <= 0)
			continue;
		for (nfds_t i = 0; i < nfds; i++)
			if (fds[i].fd == owner[i]->s->stdin_fd && owner[i]->s->stdin_fd >= 0 &&
			    fds[i].revents && wants_stdin(owner[i]))
				session_stdin(owner[i]);
	}
	if (!fds || !owner)
		for (size_t i = 0; i < r->n; i++)
			session_end(&r->privs[i], &r->running, CADRE_ENOMEM, "out of memory");
	free(fds);
	free(owner);
}

/* The upgrade of every session at once; each one's outcome into its st. */
static int connect_all(struct kube_http *http, struct runner *r)
{
	struct kube_upgrade *ups = calloc(r->n, sizeof(*ups));
	int e = 0;

	if (!ups)
		return CADRE_ENOMEM;
	for (size_t i = 0; i < r->n && !e; i++) {
		struct session_priv *p = &r->privs[i];

		e = session_path(p);
		if (!e)
			e = handshake_prepare(p);
		ups[i].path_and_query = p->path;
		ups[i].headers = p->headers;
	}
	if (!e)
		e = kube_http_upgrade(http, ups, r->n, r->opts ? r->opts->connect_timeout_ms : 0,
				      r->opts ? r->opts->stop : NULL);
	for (size_t i = 0; i < r->n; i++) {
		struct session_priv *p = &r->privs[i];
		struct podexec_session *s = p->s;

		p->up = ups[i];
		if (e)
			continue;
		if (ups[i].st.code) {
			s->st = ups[i].st;
		} else if (!handshake_check(p)) {
			int fe = ws_feed(p, (unsigned char *)ups[i].early.data, ups[i].early.len);

			if (fe)
				kube_status_set(&s->st, fe, "a message the exec protocol does not have");
			else if (s->tty)
				queue_resize(r, p);
		}
		if (!s->st.code)
			r->running++;
		else
			p->done = true;
	}
	free(ups);
	return e;
}

int podexec_run(struct kube_http *http, struct podexec_session *sessions, size_t n,
		const struct podexec_opts *opts)
{
	struct runner r;
	int e;

	memset(&r, 0, sizeof(r));
	r.opts = opts;
	r.n = n;
	for (size_t i = 0; i < n; i++) {
		sessions[i].exit_code = PODEXEC_NO_EXIT_CODE;
		sessions[i].protocol[0] = '\0';
		kube_status_clear(&sessions[i].st);
	}
	if (!n)
		return 0;
	if (!(r.privs = calloc(n, sizeof(*r.privs))))
		return CADRE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		r.privs[i].s = &sessions[i];
		next_frame(&r.privs[i].reader);
		podexec_demux_init(&r.privs[i].demux, sessions[i].on_output, sessions[i].ctx);
		buf_init(&r.privs[i].out, (size_t)64 << 20);
	}
	e = connect_all(http, &r);
	if (e)
		kube_status_set(&sessions[0].st, e, "cannot start the exec: %s", cadre_strerror(e));
	else
		serve(&r);
	for (size_t i = 0; i < n; i++) {
		podexec_demux_release(&r.privs[i].demux);
		kube_upgrade_release(&r.privs[i].up);
		buf_release(&r.privs[i].out);
		free(r.privs[i].path);
	}
	free(r.privs);
	return e;
}
