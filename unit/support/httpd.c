#include "unit/support/httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"

/* Requests larger than these are a test bug; the connection is dropped. */
#define MAX_HEAD (64 * 1024)
#define MAX_BODY (16 * 1024 * 1024)

struct script_chunk {
	char *data;
	size_t len;
	int delay_ms;
};

/* A response as stored: every string owned. */
struct script_entry {
	int status;
	char *headers;
	char *body;
	size_t body_len;
	struct script_chunk *chunks;
	size_t nchunks;
	int delay_ms;
	bool torn;
	int hold_ms;
	bool close;
	struct script_entry *next;
};

struct conn {
	struct httpd *server;
	int fd;
	int id;
	pthread_t thread;
	struct conn *next;
};

struct httpd {
	int listen_fd;
	int port;
	char url[64];
	/*
	 * Written once at stop and never read, so it stays readable: every
	 * poll() that includes it wakes up, which ends all delays and holds.
	 */
	int wake[2];
	atomic_bool stopping;
	pthread_t accept_thread;

	pthread_mutex_t lock;
	pthread_cond_t cond;          /* signalled when a request is recorded */
	struct script_entry *head, *tail;
	httpd_handler_fn handler;
	void *handler_ctx;
	struct httpd_request **reqs;
	size_t nreqs, reqs_cap;
	struct conn *conns;
	int nconns;
};

static void entry_free(struct script_entry *e)
{
	if (!e)
		return;
	free(e->headers);
	free(e->body);
	for (size_t i = 0; i < e->nchunks; i++)
		free(e->chunks[i].data);
	free(e->chunks);
	free(e);
}

static char *dup_bytes(const char *data, size_t len)
{
	char *p = malloc(len + 1);

	if (!p)
		return NULL;
	if (len)
		memcpy(p, data, len);
	p[len] = '\0';
	return p;
}

static struct script_entry *entry_copy(const struct httpd_response *r)
{
	struct script_entry *e = calloc(1, sizeof(*e)), *copy = NULL;

	if (!e)
		return NULL;
	e->status = r->status ? r->status : 200;
	e->delay_ms = r->delay_ms;
	e->torn = r->torn;
	e->hold_ms = r->hold_ms;
	e->close = r->close;
	e->headers = dup_bytes(r->headers ? r->headers : "",
			       r->headers ? strlen(r->headers) : 0);
	e->body_len = r->body ? strlen(r->body) : 0;
	e->body = dup_bytes(r->body ? r->body : "", e->body_len);
	if (!e->headers || !e->body)
		goto out;
	if (r->chunks && r->nchunks) {
		e->chunks = calloc(r->nchunks, sizeof(*e->chunks));
		if (!e->chunks)
			goto out;
		e->nchunks = r->nchunks;
		for (size_t i = 0; i < r->nchunks; i++) {
			const struct httpd_chunk *c = &r->chunks[i];
			size_t len = c->len ? c->len : strlen(c->data);

			e->chunks[i].data = dup_bytes(c->data, len);
			if (!e->chunks[i].data)
				goto out;
			e->chunks[i].len = len;
			e->chunks[i].delay_ms = c->delay_ms;
		}
	}
	copy = e;
	e = NULL;
out:
	entry_free(e);
	return copy;
}

static void request_free(struct httpd_request *req)
{
	if (!req)
		return;
	free(req->method);
	free(req->target);
	for (size_t i = 0; i < req->nheaders; i++) {
		free(req->names[i]);
		free(req->values[i]);
	}
	free(req->names);
	free(req->values);
	free(req->body);
	free(req);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Stay silent for ms milliseconds (-1 = forever). Returns 0 when the time
 * passed, -1 when the server is stopping or the client closed the
 * connection (the caller then drops it).
 */
static int conn_pause(struct conn *c, int ms)
{
	int64_t deadline = ms < 0 ? -1 : now_ms() + ms;
	bool watch_client = true;

	for (;;) {
		struct pollfd fds[2] = {
			{ .fd = c->server->wake[0], .events = POLLIN },
			{ .fd = c->fd, .events = POLLIN },
		};
		int timeout = -1, n;

		if (deadline >= 0) {
			int64_t left = deadline - now_ms();

			if (left <= 0)
				return 0;
			timeout = (int)left;
		}
		n = poll(fds, watch_client ? 2 : 1, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || fds[0].revents)
			return -1;
		if (watch_client && fds[1].revents) {
			char byte;
			ssize_t got = recv(c->fd, &byte, 1, MSG_PEEK);

			if (got <= 0)
				return -1;
			/* The client sent more; it can wait until we are done. */
			watch_client = false;
		}
	}
}

static int send_all(struct conn *c, const char *data, size_t len)
{
	while (len) {
		ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Read more bytes into in. Returns the count, 0 at EOF, -1 on error or
 * when the server stops.
 */
static ssize_t conn_read(struct conn *c, struct buf *in)
{
	char tmp[16384];

	for (;;) {
		struct pollfd fds[2] = {
			{ .fd = c->server->wake[0], .events = POLLIN },
			{ .fd = c->fd, .events = POLLIN },
		};
		ssize_t n;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (fds[0].revents)
			return -1;
		n = recv(c->fd, tmp, sizeof(tmp), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n;
		if (buf_add(in, tmp, (size_t)n))
			return -1;
		return n;
	}
}

static char *trim_dup(const char *s, size_t len)
{
	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' ||
		       s[len - 1] == '\r'))
		len--;
	return dup_bytes(s, len);
}

/* Parse the head (request line and headers, without the blank line). */
static struct httpd_request *parse_head(const char *head, size_t len)
{
	struct httpd_request *req = calloc(1, sizeof(*req)), *parsed = NULL;
	const char *end = head + len, *line, *eol, *sp1, *sp2;

	if (!req)
		return NULL;
	eol = memchr(head, '\n', len);
	if (!eol)
		eol = end;
	sp1 = memchr(head, ' ', (size_t)(eol - head));
	if (!sp1)
		goto out;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
	if (!sp2)
		goto out;
	req->method = dup_bytes(head, (size_t)(sp1 - head));
	req->target = dup_bytes(sp1 + 1, (size_t)(sp2 - sp1 - 1));
	if (!req->method || !req->target)
		goto out;
	for (line = eol + 1; line < end; line = eol + 1) {
		const char *colon;
		char **names, **values;

		eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		colon = memchr(line, ':', (size_t)(eol - line));
		if (!colon)
			continue;
		names = realloc(req->names, (req->nheaders + 1) * sizeof(*names));
		if (!names)
			goto out;
		req->names = names;
		values = realloc(req->values, (req->nheaders + 1) * sizeof(*values));
		if (!values)
			goto out;
		req->values = values;
		req->names[req->nheaders] = trim_dup(line, (size_t)(colon - line));
		req->values[req->nheaders] = trim_dup(colon + 1,
						      (size_t)(eol - colon - 1));
		req->nheaders++;
		if (!req->names[req->nheaders - 1] || !req->values[req->nheaders - 1])
			goto out;
	}
	parsed = req;
	req = NULL;
out:
	request_free(req);
	return parsed;
}

/*
 * Decode a chunked body from in (starting at offset pos), reading more as
 * needed. On success the decoded body is in out and *consumed says where
 * the message ended. Returns 0 or -1.
 */
static int read_chunked(struct conn *c, struct buf *in, size_t pos,
			struct buf *out, size_t *consumed)
{
	for (;;) {
		char *eol, *endp;
		unsigned long size;

		while (!(eol = memchr(in->data + pos, '\n', in->len - pos)))
			if (conn_read(c, in) <= 0)
				return -1;
		size = strtoul(in->data + pos, &endp, 16);
		if (endp == in->data + pos)
			return -1;
		pos = (size_t)(eol - in->data) + 1;
		if (size == 0) {
			/* Trailers (none expected) end with an empty line. */
			while (in->len - pos < 2)
				if (conn_read(c, in) <= 0)
					return -1;
			*consumed = pos + 2;
			return 0;
		}
		while (in->len - pos < size + 2)
			if (conn_read(c, in) <= 0)
				return -1;
		if (buf_add(out, in->data + pos, size))
			return -1;
		pos += size + 2;
	}
}

/*
 * Read one request from the connection (in carries bytes left over from
 * the previous one). Returns it, or NULL when the connection ended.
 */
static struct httpd_request *read_request(struct conn *c, struct buf *in)
{
	struct httpd_request *req = NULL, *complete = NULL;
	struct buf body;
	const char *te, *cl;
	char *head_end;
	size_t head_len, consumed;

	buf_init(&body, MAX_BODY);
	while (!in->data || !(head_end = strstr(in->data, "\r\n\r\n")))
		if (conn_read(c, in) <= 0)
			goto out;
	head_len = (size_t)(head_end - in->data);
	req = parse_head(in->data, head_len);
	if (!req)
		goto out;
	consumed = head_len + 4;
	te = httpd_request_header(req, "Transfer-Encoding");
	cl = httpd_request_header(req, "Content-Length");
	if (te && !strcasecmp(te, "chunked")) {
		if (read_chunked(c, in, consumed, &body, &consumed))
			goto out;
	} else if (cl) {
		char *endp;
		unsigned long long n = strtoull(cl, &endp, 10);

		if (*endp || n > MAX_BODY)
			goto out;
		while (in->len - consumed < n)
			if (conn_read(c, in) <= 0)
				goto out;
		if (buf_add(&body, in->data + consumed, (size_t)n))
			goto out;
		consumed += (size_t)n;
	}
	req->body = buf_detach(&body, &req->body_len);
	if (!req->body)
		goto out;
	req->connection = c->id;
	buf_consume(in, consumed);
	complete = req;
	req = NULL;
out:
	request_free(req);
	buf_release(&body);
	return complete;
}

static const char *status_text(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	}
	return "Status";
}

/* Record req and pick its answer; takes ownership of req. */
static struct script_entry *answer(struct httpd *s, struct httpd_request *req)
{
	struct script_entry *e = NULL;
	httpd_handler_fn handler;
	void *ctx;
	struct httpd_request **reqs;

	pthread_mutex_lock(&s->lock);
	if (s->nreqs == s->reqs_cap) {
		size_t cap = s->reqs_cap ? s->reqs_cap * 2 : 16;

		reqs = realloc(s->reqs, cap * sizeof(*reqs));
		if (!reqs) {
			pthread_mutex_unlock(&s->lock);
			request_free(req);
			return NULL;
		}
		s->reqs = reqs;
		s->reqs_cap = cap;
	}
	s->reqs[s->nreqs++] = req;
	pthread_cond_broadcast(&s->cond);
	if (s->head) {
		e = s->head;
		s->head = e->next;
		if (!s->head)
			s->tail = NULL;
		e->next = NULL;
	}
	handler = s->handler;
	ctx = s->handler_ctx;
	pthread_mutex_unlock(&s->lock);

	if (!e && handler) {
		struct httpd_response r;

		memset(&r, 0, sizeof(r));
		handler(ctx, req, &r);
		e = entry_copy(&r);
		free(r.owned);
	}
	if (!e) {
		struct httpd_response r = {
			.status = 500,
			.headers = "Content-Type: text/plain\r\n",
			.body = "httpd: script exhausted",
		};

		e = entry_copy(&r);
	}
	return e;
}

/*
 * Send e. Returns 0 when the connection may serve another request, -1 when
 * it must be closed.
 */
static int send_response(struct conn *c, const struct script_entry *e)
{
	struct buf out;
	bool chunked = e->nchunks > 0;
	bool closing = e->close || e->torn || (!chunked && e->hold_ms < 0);
	int ret = -1;

	buf_init(&out, MAX_HEAD + 1024);
	if (e->delay_ms && conn_pause(c, e->delay_ms))
		goto out;
	buf_addf(&out, "HTTP/1.1 %d %s\r\n", e->status, status_text(e->status));
	if (!strcasestr(e->headers, "content-type:"))
		buf_adds(&out, "Content-Type: application/json\r\n");
	buf_adds(&out, e->headers);
	if (chunked)
		buf_adds(&out, "Transfer-Encoding: chunked\r\n");
	else
		buf_addf(&out, "Content-Length: %zu\r\n",
			 e->body_len + (e->torn ? 16 : 0));
	if (closing)
		buf_adds(&out, "Connection: close\r\n");
	if (buf_adds(&out, "\r\n") || send_all(c, out.data, out.len))
		goto out;

	if (!chunked) {
		if (e->hold_ms && conn_pause(c, e->hold_ms))
			goto out;
		if (send_all(c, e->body, e->body_len))
			goto out;
		ret = closing ? -1 : 0;
		goto out;
	}
	for (size_t i = 0; i < e->nchunks; i++) {
		const struct script_chunk *ch = &e->chunks[i];
		bool last = i + 1 == e->nchunks;

		if (ch->delay_ms && conn_pause(c, ch->delay_ms))
			goto out;
		buf_reset(&out);
		buf_addf(&out, "%zx\r\n", ch->len + (e->torn && last ? 16 : 0));
		if (send_all(c, out.data, out.len) ||
		    send_all(c, ch->data, ch->len))
			goto out;
		if (e->torn && last)
			goto out;
		if (send_all(c, "\r\n", 2))
			goto out;
	}
	if (e->hold_ms && conn_pause(c, e->hold_ms))
		goto out;
	if (send_all(c, "0\r\n\r\n", 5))
		goto out;
	ret = closing ? -1 : 0;
out:
	buf_release(&out);
	return ret;
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct buf in;

	buf_init(&in, MAX_HEAD + MAX_BODY);
	while (!atomic_load(&c->server->stopping)) {
		struct httpd_request *req = read_request(c, &in);
		struct script_entry *e;
		int keep;

		if (!req)
			break;
		e = answer(c->server, req);
		if (!e)
			break;
		keep = send_response(c, e);
		entry_free(e);
		if (keep)
			break;
	}
	/* Tell the client at once; the fd itself is closed at httpd_free. */
	shutdown(c->fd, SHUT_RDWR);
	buf_release(&in);
	return NULL;
}

static void *accept_main(void *arg)
{
	struct httpd *s = arg;

	for (;;) {
		struct pollfd fds[2] = {
			{ .fd = s->wake[0], .events = POLLIN },
			{ .fd = s->listen_fd, .events = POLLIN },
		};
		struct conn *c;
		int fd, one = 1;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[0].revents)
			break;
		fd = accept(s->listen_fd, NULL, NULL);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->server = s;
		c->fd = fd;
		pthread_mutex_lock(&s->lock);
		c->id = s->nconns++;
		if (pthread_create(&c->thread, NULL, conn_main, c)) {
			s->nconns--;
			pthread_mutex_unlock(&s->lock);
			close(fd);
			free(c);
			continue;
		}
		c->next = s->conns;
		s->conns = c;
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

int httpd_new(struct httpd **out)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t addr_len = sizeof(addr);
	struct httpd *s;
	int err = CADRE_EIO;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return CADRE_ENOMEM;
	s->listen_fd = -1;
	s->wake[0] = s->wake[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (pipe2(s->wake, O_CLOEXEC))
		goto out;
	s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0)
		goto out;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(s->listen_fd, 64) ||
	    getsockname(s->listen_fd, (struct sockaddr *)&addr, &addr_len))
		goto out;
	s->port = ntohs(addr.sin_port);
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", s->port);
	if (pthread_create(&s->accept_thread, NULL, accept_main, s))
		goto out;
	*out = s;
	s = NULL;
	err = 0;
out:
	if (s) {
		if (s->listen_fd >= 0)
			close(s->listen_fd);
		if (s->wake[0] >= 0) {
			close(s->wake[0]);
			close(s->wake[1]);
		}
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		free(s);
	}
	return err;
}

void httpd_free(struct httpd *s)
{
	struct script_entry *e;
	struct conn *c;

	if (!s)
		return;
	atomic_store(&s->stopping, true);
	if (write(s->wake[1], "x", 1) < 0) {
		/* Nothing else would wake the threads; shut sockets down instead. */
		shutdown(s->listen_fd, SHUT_RDWR);
	}
	pthread_join(s->accept_thread, NULL);
	/* No new connections now; the list is stable. */
	while ((c = s->conns)) {
		s->conns = c->next;
		shutdown(c->fd, SHUT_RDWR);
		pthread_join(c->thread, NULL);
		close(c->fd);
		free(c);
	}
	while ((e = s->head)) {
		s->head = e->next;
		entry_free(e);
	}
	for (size_t i = 0; i < s->nreqs; i++)
		request_free(s->reqs[i]);
	free(s->reqs);
	close(s->listen_fd);
	close(s->wake[0]);
	close(s->wake[1]);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

const char *httpd_url(struct httpd *s)
{
	return s->url;
}

int httpd_port(struct httpd *s)
{
	return s->port;
}

int httpd_push(struct httpd *s, const struct httpd_response *resp)
{
	struct script_entry *e = entry_copy(resp);

	if (!e)
		return CADRE_ENOMEM;
	pthread_mutex_lock(&s->lock);
	if (s->tail)
		s->tail->next = e;
	else
		s->head = e;
	s->tail = e;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void httpd_set_handler(struct httpd *s, httpd_handler_fn handler, void *ctx)
{
	pthread_mutex_lock(&s->lock);
	s->handler = handler;
	s->handler_ctx = ctx;
	pthread_mutex_unlock(&s->lock);
}

size_t httpd_request_count(struct httpd *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->nreqs;
	pthread_mutex_unlock(&s->lock);
	return n;
}

const struct httpd_request *httpd_request_at(struct httpd *s, size_t i)
{
	const struct httpd_request *req = NULL;

	pthread_mutex_lock(&s->lock);
	if (i < s->nreqs)
		req = s->reqs[i];
	pthread_mutex_unlock(&s->lock);
	return req;
}

const char *httpd_request_header(const struct httpd_request *req,
				 const char *name)
{
	for (size_t i = 0; i < req->nheaders; i++)
		if (!strcasecmp(req->names[i], name))
			return req->values[i];
	return NULL;
}

bool httpd_wait_requests(struct httpd *s, size_t n, int timeout_ms)
{
	struct timespec deadline;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&s->lock);
	while (s->nreqs < n)
		if (pthread_cond_timedwait(&s->cond, &s->lock, &deadline))
			break;
	ok = s->nreqs >= n;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

int httpd_connection_count(struct httpd *s)
{
	int n;

	pthread_mutex_lock(&s->lock);
	n = s->nconns;
	pthread_mutex_unlock(&s->lock);
	return n;
}
