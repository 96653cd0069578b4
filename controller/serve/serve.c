#include "controller/serve/serve.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"

#include <errno.h>
#include <libwebsockets.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_MAX (64u << 20)
#define CHUNK 16384

struct server {
	const struct serve_opts *opts_ref;
	struct serve_opts opts;
	struct lws_context *ctx;
	struct lws_vhost *vhosts[2];
	char *hosts[2];
	int ports[2];
	pthread_t thread;
	atomic_bool stopping;
	bool started;
};

/* What one HTTP transaction has left to send. */
struct session {
	char *body;
	size_t len;
	size_t sent;
};

int serve_parse_addr(const char *addr, char **host, int *port)
{
	const char *colon;
	char *end;
	long p;

	*host = NULL;
	*port = -1;
	if (!addr || !*addr || !strcmp(addr, "0"))
		return 0;
	colon = strrchr(addr, ':');
	if (!colon)
		return CADRE_EINVAL;
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 0 || p > 65535)
		return CADRE_EINVAL;
	if (colon > addr) {
		const char *start = addr, *stop = colon;

		if (*start == '[' && stop[-1] == ']') {
			start++;
			stop--;
		}
		*host = strndup(start, (size_t)(stop - start));
		if (!*host)
			return CADRE_ENOMEM;
	}
	*port = (int)p;
	return 0;
}

/* Decide status and body for a path. */
static int route(struct server *srv, const char *path, struct buf *body,
		 const char **content_type)
{
	const struct serve_opts *o = &srv->opts;
	int err;

	*content_type = "text/plain; charset=utf-8";
	if (!strcmp(path, "/metrics")) {
		*content_type = "text/plain; version=0.0.4; charset=utf-8";
		err = registry_render(o->registry, body);
		if (err) {
			/* Never a partial exposition: say why instead. */
			*content_type = "text/plain; charset=utf-8";
			buf_reset(body);
			buf_addf(body, "cannot render metrics: %s\n", cadre_strerror(err));
			return HTTP_STATUS_INTERNAL_SERVER_ERROR;
		}
		return HTTP_STATUS_OK;
	}
	if (!strcmp(path, "/healthz") || !strcmp(path, "/livez")) {
		if (o->healthy && !o->healthy(o->ctx)) {
			buf_adds(body, "unhealthy\n");
			return HTTP_STATUS_SERVICE_UNAVAILABLE;
		}
		buf_adds(body, "ok\n");
		return HTTP_STATUS_OK;
	}
	if (!strcmp(path, "/readyz")) {
		if (o->ready && !o->ready(o->ctx)) {
			buf_adds(body, "caches not synced\n");
			return HTTP_STATUS_SERVICE_UNAVAILABLE;
		}
		buf_adds(body, "ok\n");
		return HTTP_STATUS_OK;
	}
	buf_adds(body, "not found\n");
	return HTTP_STATUS_NOT_FOUND;
}

static int begin_response(struct lws *wsi, struct session *ses, const char *path)
{
	struct server *srv = lws_context_user(lws_get_context(wsi));
	unsigned char headers[LWS_PRE + 512], *start = headers + LWS_PRE, *p = start,
		*end = headers + sizeof(headers) - 1;
	const char *content_type;
	struct buf body;
	int status;

	buf_init(&body, METRICS_MAX);
	status = route(srv, path, &body, &content_type);
	if (buf_error(&body)) {
		buf_release(&body);
		return -1;
	}
	ses->body = buf_detach(&body, &ses->len);
	ses->sent = 0;
	if (!ses->body)
		return -1;
	if (lws_add_http_common_headers(wsi, (unsigned int)status, content_type,
					ses->len, &p, end) ||
	    lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	lws_callback_on_writable(wsi);
	return 0;
}

static int send_some(struct lws *wsi, struct session *ses)
{
	unsigned char chunk[LWS_PRE + CHUNK];
	size_t n = ses->len - ses->sent;
	enum lws_write_protocol kind = LWS_WRITE_HTTP_FINAL;

	if (n > CHUNK) {
		n = CHUNK;
		kind = LWS_WRITE_HTTP;
	}
	memcpy(chunk + LWS_PRE, ses->body + ses->sent, n);
	if (lws_write(wsi, chunk + LWS_PRE, n, kind) != (int)n)
		return -1;
	ses->sent += n;
	if (ses->sent < ses->len) {
		lws_callback_on_writable(wsi);
		return 0;
	}
	free(ses->body);
	ses->body = NULL;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int http_callback(struct lws *wsi, enum lws_callback_reasons reason,
			 void *user, void *in, size_t len)
{
	struct session *ses = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		free(ses->body);
		ses->body = NULL;
		return begin_response(wsi, ses, in);
	case LWS_CALLBACK_HTTP_WRITEABLE:
		if (!ses || !ses->body)
			return 0;
		return send_some(wsi, ses);
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		if (ses) {
			free(ses->body);
			ses->body = NULL;
		}
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static const struct lws_protocols protocols[] = {
	{ "http", http_callback, sizeof(struct session), 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static void *service_thread(void *arg)
{
	struct server *srv = arg;

	while (!atomic_load(&srv->stopping))
		if (lws_service(srv->ctx, 0) < 0)
			break;
	return NULL;
}

/* Route libwebsockets' own messages to our log, errors and warnings only. */
static void lws_log_bridge(int level, const char *line)
{
	size_t n = strlen(line);

	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	if (level & LLL_ERR)
		log_error("http", "%.*s", (int)n, line);
	else
		log_warn("http", "%.*s", (int)n, line);
}

int serve_start(const struct serve_opts *opts, struct server **out)
{
	struct lws_context_creation_info info;
	const char *addrs[2] = { opts->metrics_addr, opts->health_addr };
	struct server *srv;
	int err = 0;

	*out = NULL;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return CADRE_ENOMEM;
	srv->opts = *opts;
	srv->ports[0] = srv->ports[1] = -1;
	for (int i = 0; i < 2; i++) {
		err = serve_parse_addr(addrs[i], &srv->hosts[i], &srv->ports[i]);
		if (err)
			goto fail;
	}
	/* One address serving both is one listener. */
	if (srv->ports[0] >= 0 && srv->ports[0] == srv->ports[1] && srv->ports[0] != 0 &&
	    !strcmp(srv->hosts[0] ? srv->hosts[0] : "", srv->hosts[1] ? srv->hosts[1] : "")) {
		free(srv->hosts[1]);
		srv->hosts[1] = NULL;
		srv->ports[1] = -2;
	}

	lws_set_log_level(LLL_ERR | LLL_WARN, lws_log_bridge);
	memset(&info, 0, sizeof(info));
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS |
		       LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS;
	info.user = srv;
	srv->ctx = lws_create_context(&info);
	if (!srv->ctx) {
		err = CADRE_ENOMEM;
		goto fail;
	}
	for (int i = 0; i < 2; i++) {
		if (srv->ports[i] < 0)
			continue;
		memset(&info, 0, sizeof(info));
		info.port = srv->ports[i]; /* 0: the kernel picks a free port */
		info.iface = srv->hosts[i];
		info.protocols = protocols;
		info.vhost_name = i == 0 ? "metrics" : "health";
		info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
		if (srv->hosts[i] && strchr(srv->hosts[i], ':'))
			info.options = 0;
		srv->vhosts[i] = lws_create_vhost(srv->ctx, &info);
		if (!srv->vhosts[i]) {
			log_error("http", "cannot listen on %s", addrs[i]);
			err = CADRE_EIO;
			goto fail;
		}
		srv->ports[i] = lws_get_vhost_listen_port(srv->vhosts[i]);
	}
	if (srv->ports[1] == -2)
		srv->ports[1] = srv->ports[0];
	if (pthread_create(&srv->thread, NULL, service_thread, srv)) {
		err = CADRE_ENOMEM;
		goto fail;
	}
	srv->started = true;
	*out = srv;
	return 0;
fail:
	serve_stop(srv);
	return err;
}

int serve_port(const struct server *srv, int which)
{
	if (!srv || which < 0 || which > 1)
		return -1;
	return srv->ports[which];
}

void serve_stop(struct server *srv)
{
	if (!srv)
		return;
	atomic_store(&srv->stopping, true);
	if (srv->ctx)
		lws_cancel_service(srv->ctx);
	if (srv->started)
		pthread_join(srv->thread, NULL);
	if (srv->ctx)
		lws_context_destroy(srv->ctx);
	free(srv->hosts[0]);
	free(srv->hosts[1]);
	free(srv);
}
