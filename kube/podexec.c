/*
 * podexec.c - pods/exec over WebSocket with libwebsockets (podexec.h).
 *
 * One lws context holds every session's connection; its one client vhost
 * gets an SSL_CTX built here from the config's PEM bytes (libwebsockets'
 * own *_mem loaders take RSA keys only in some versions; cluster keys are
 * often EC). A 10 ms timer reads stdin, watches *stop and *resized, and
 * asks for a write when there is something to send: libwebsockets writes
 * only from the WRITEABLE callback.
 */
#include "kube/podexec.h"

#include "base/err.h"
#include "kube/resource.h"

#include <jansson.h>
#include <libwebsockets.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TICK_US (10 * LWS_US_PER_MS)
#define STDIN_CHUNK 4096

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

/* ---- the connection ---- */

struct session_priv {
	struct podexec_session *s;
	struct podexec_demux demux;
	struct lws *wsi;
	char *path;
	bool done;
	bool v5;
	bool stdin_eof;          /* read end reached; v5 then sends a close of channel 0 */
	bool close_sent;
	bool resize_pending;
	/* One outgoing message at a time: LWS_PRE bytes of room, the channel, the data. */
	unsigned char out[LWS_PRE + 1 + STDIN_CHUNK];
	size_t out_len;          /* channel byte + data; 0 = nothing pending */
};

struct runner {
	struct lws_context *ctx;
	struct lws_vhost *vhost;
	SSL_CTX *ssl;
	struct kube_config *cfg;
	struct kube_config_creds creds;
	const struct podexec_opts *opts;
	struct session_priv *privs;
	size_t n;
	size_t running;
	lws_sorted_usec_list_t tick;
	char auth[8192];
	char host[256];
	char prefix[512];        /* a path the server URL carries before /api */
	int port;
	bool tls;
};

static void session_end(struct runner *r, struct session_priv *p, int code, const char *why)
{
	struct podexec_session *s = p->s;

	if (p->done)
		return;
	p->done = true;
	p->wsi = NULL;
	r->running--;
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

/* The upgrade was refused: the HTTP status says why, as for any request. */
static void connect_failed(struct runner *r, struct session_priv *p, struct lws *wsi,
			   const char *why)
{
	unsigned int http = wsi ? lws_http_client_http_response(wsi) : 0;
	int code = http ? kube_status_code((long)http, NULL, false) : CADRE_EIO;
	char text[320];

	if (!code)  /* a 2xx that is not 101: the server does not speak WebSocket here */
		code = CADRE_EHTTP;
	if (http)
		snprintf(text, sizeof(text), "the API server answered the exec upgrade with HTTP "
			 "%u", http);
	else
		snprintf(text, sizeof(text), "%s", why && *why ? why : "connection failed");
	p->s->st.http_status = (long)http;
	session_end(r, p, code, text);
}

static int write_pending(struct session_priv *p, struct lws *wsi)
{
	unsigned char msg[LWS_PRE + 64];
	struct buf body;
	unsigned cols, rows;
	int n;

	if (p->resize_pending) {
		struct runner *r = lws_context_user(lws_get_context(wsi));

		p->resize_pending = false;
		if (!r->opts || !r->opts->get_size || !r->opts->get_size(r->opts->size_ctx, &cols,
									  &rows))
			return 0;
		buf_init(&body, 60);
		if (podexec_resize_body(cols, rows, &body)) {
			buf_release(&body);
			return 0;
		}
		msg[LWS_PRE] = PODEXEC_CH_RESIZE;
		memcpy(msg + LWS_PRE + 1, body.data, body.len);
		n = lws_write(wsi, msg + LWS_PRE, body.len + 1, LWS_WRITE_BINARY);
		buf_release(&body);
		if (n < 0)
			return -1;
		if (p->out_len || (p->stdin_eof && p->v5 && !p->close_sent))
			lws_callback_on_writable(wsi);
		return 0;
	}
	if (p->out_len) {
		n = lws_write(wsi, p->out + LWS_PRE, p->out_len, LWS_WRITE_BINARY);
		p->out_len = 0;
		return n < 0 ? -1 : 0;
	}
	if (p->stdin_eof && p->v5 && !p->close_sent) {
		msg[LWS_PRE] = PODEXEC_CH_CLOSE;
		msg[LWS_PRE + 1] = PODEXEC_CH_STDIN;
		p->close_sent = true;
		return lws_write(wsi, msg + LWS_PRE, 2, LWS_WRITE_BINARY) < 0 ? -1 : 0;
	}
	return 0;
}

static int add_headers(struct runner *r, struct lws *wsi, void *in, size_t len)
{
	unsigned char **p = (unsigned char **)in, *end = *p + len;

	if (!r->auth[0])
		return 0;
	return lws_add_http_header_by_name(wsi, (const unsigned char *)"authorization:",
					   (const unsigned char *)r->auth, (int)strlen(r->auth),
					   p, end) ? -1 : 0;
}

static int on_established(struct session_priv *p, struct lws *wsi)
{
	struct podexec_session *s = p->s;

	if (s->tty) {
		p->resize_pending = true;
		lws_callback_on_writable(wsi);
	}
	return 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		    size_t len)
{
	struct runner *r = lws_context_user(lws_get_context(wsi));
	struct session_priv *p = lws_get_opaque_user_data(wsi);
	int e;

	switch (reason) {
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
		return r && p ? add_headers(r, wsi, in, len) : 0;
	case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
		/* the response headers are still there: which subprotocol the server chose */
		if (p && lws_hdr_copy(wsi, p->s->protocol, sizeof(p->s->protocol),
				      WSI_TOKEN_PROTOCOL) < 0)
			p->s->protocol[0] = '\0';
		if (p)
			p->v5 = !strcmp(p->s->protocol, PODEXEC_PROTO_V5);
		return 0;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		return p ? on_established(p, wsi) : 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (!p || p->done)
			return -1;
		e = podexec_demux_feed(&p->demux, in, len, lws_is_first_fragment(wsi),
				       lws_is_final_fragment(wsi));
		if (e) {
			session_end(r, p, e, e == CADRE_EPARSE ? "a message the exec protocol "
				    "does not have" : "the output could not be written");
			return -1;
		}
		return 0;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return p && !p->done ? write_pending(p, wsi) : 0;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		if (p && !p->done)
			connect_failed(r, p, wsi, in ? (const char *)in : NULL);
		return 0;
	case LWS_CALLBACK_CLIENT_CLOSED:
		if (p && !p->done) {
			take_status(p);
			session_end(r, p, 0, NULL);
		}
		return 0;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols protocols[] = {
	{ PODEXEC_PROTO_V5, callback, 0, 65536, 0, NULL, 0 },
	{ PODEXEC_PROTO_V4, callback, 0, 65536, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 },
};

/* ---- TLS from the config's PEM bytes ---- */

static int add_ca(SSL_CTX *ssl, const char *pem, size_t len)
{
	X509_STORE *store = SSL_CTX_get_cert_store(ssl);
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	X509 *x;
	int added = 0;

	if (!bio)
		return CADRE_ENOMEM;
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
		if (X509_STORE_add_cert(store, x) == 1)
			added++;
		X509_free(x);
	}
	ERR_clear_error();
	BIO_free(bio);
	return added ? 0 : CADRE_EPARSE;
}

static int add_client_cert(SSL_CTX *ssl, const struct kube_config_creds *c)
{
	BIO *bio = BIO_new_mem_buf(c->cert_pem, (int)c->cert_len);
	BIO *kbio = BIO_new_mem_buf(c->key_pem, (int)c->key_len);
	EVP_PKEY *key = NULL;
	X509 *x = NULL;
	int e = CADRE_EPARSE;

	if (!bio || !kbio) {
		e = CADRE_ENOMEM;
		goto out;
	}
	if (!(x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) || SSL_CTX_use_certificate(ssl, x) != 1)
		goto out;
	/* the rest of the file is the chain up to the CA */
	for (X509 *chain; (chain = PEM_read_bio_X509(bio, NULL, NULL, NULL));)
		if (SSL_CTX_add0_chain_cert(ssl, chain) != 1)
			X509_free(chain);
	if (!(key = PEM_read_bio_PrivateKey(kbio, NULL, NULL, NULL)) ||
	    SSL_CTX_use_PrivateKey(ssl, key) != 1 || SSL_CTX_check_private_key(ssl) != 1)
		goto out;
	e = 0;
out:
	ERR_clear_error();
	X509_free(x);
	EVP_PKEY_free(key);
	BIO_free(bio);
	BIO_free(kbio);
	return e;
}

/* The name the server's certificate must carry: tls-server-name, else the URL's host. */
static int set_verify_name(SSL_CTX *ssl, const char *name)
{
	X509_VERIFY_PARAM *param = SSL_CTX_get0_param(ssl);

	if (X509_VERIFY_PARAM_set1_ip_asc(param, name) == 1)
		return 0;
	ERR_clear_error();
	X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	return X509_VERIFY_PARAM_set1_host(param, name, 0) == 1 ? 0 : CADRE_EINVAL;
}

static int make_ssl(struct runner *r, struct kube_status *st)
{
	struct kube_config *cfg = r->cfg;
	int e;

	if (!(r->ssl = SSL_CTX_new(TLS_client_method())))
		return kube_status_set(st, CADRE_ENOMEM, "no TLS context");
	SSL_CTX_set_min_proto_version(r->ssl, TLS1_2_VERSION);
	if (cfg->insecure) {
		SSL_CTX_set_verify(r->ssl, SSL_VERIFY_NONE, NULL);
	} else {
		SSL_CTX_set_verify(r->ssl, SSL_VERIFY_PEER, NULL);
		e = cfg->ca_pem ? add_ca(r->ssl, cfg->ca_pem, cfg->ca_len) :
				  (SSL_CTX_set_default_verify_paths(r->ssl) == 1 ? 0 : CADRE_EIO);
		if (e)
			return kube_status_set(st, e, "%s: the certificate authority does not load",
					       cfg->source);
		if (set_verify_name(r->ssl, cfg->tls_server_name ? cfg->tls_server_name : r->host))
			return kube_status_set(st, CADRE_EINVAL, "cannot verify the name %s",
					       r->host);
	}
	if (r->creds.cert_pem && r->creds.key_pem && (e = add_client_cert(r->ssl, &r->creds)))
		return kube_status_set(st, e, "%s: the client certificate or key does not load",
				       cfg->source);
	return 0;
}

/* ---- the run ---- */

/* "https://host:port/prefix" into r. */
static int parse_server(struct runner *r, const char *server)
{
	const char *rest, *slash, *colon;
	size_t host_len;

	if (!strncmp(server, "https://", 8)) {
		r->tls = true;
		rest = server + 8;
	} else if (!strncmp(server, "http://", 7)) {
		rest = server + 7;
	} else {
		return CADRE_EINVAL;
	}
	slash = strchr(rest, '/');
	host_len = slash ? (size_t)(slash - rest) : strlen(rest);
	snprintf(r->prefix, sizeof(r->prefix), "%s", slash ? slash : "");
	if (r->prefix[0] && r->prefix[strlen(r->prefix) - 1] == '/')
		r->prefix[strlen(r->prefix) - 1] = '\0';
	r->port = r->tls ? 443 : 80;
	if (rest[0] == '[') {  /* [::1]:6443 */
		const char *close = memchr(rest, ']', host_len);

		if (!close)
			return CADRE_EINVAL;
		snprintf(r->host, sizeof(r->host), "%.*s", (int)(close - rest - 1), rest + 1);
		colon = close + 1 < rest + host_len && close[1] == ':' ? close + 1 : NULL;
	} else {
		colon = memchr(rest, ':', host_len);
		snprintf(r->host, sizeof(r->host), "%.*s",
			 (int)(colon ? (size_t)(colon - rest) : host_len), rest);
	}
	if (colon) {
		char *end;
		long port = strtol(colon + 1, &end, 10);

		if (end != rest + host_len || port < 1 || port > 65535)
			return CADRE_EINVAL;
		r->port = (int)port;
	}
	return r->host[0] ? 0 : CADRE_EINVAL;
}

static void read_stdin(struct session_priv *p)
{
	struct pollfd pfd = { .fd = p->s->stdin_fd, .events = POLLIN };
	ssize_t n;

	if (p->s->stdin_fd < 0 || p->stdin_eof || p->out_len || !p->wsi)
		return;
	if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	n = read(p->s->stdin_fd, p->out + LWS_PRE + 1, STDIN_CHUNK);
	if (n <= 0) {
		p->stdin_eof = true;
	} else {
		p->out[LWS_PRE] = PODEXEC_CH_STDIN;
		p->out_len = (size_t)n + 1;
	}
	lws_callback_on_writable(p->wsi);
}

static void tick(lws_sorted_usec_list_t *sul)
{
	struct runner *r = lws_container_of(sul, struct runner, tick);
	bool resized = r->opts && r->opts->resized && atomic_exchange(r->opts->resized, false);

	for (size_t i = 0; i < r->n; i++) {
		struct session_priv *p = &r->privs[i];

		if (p->done || !p->wsi)
			continue;
		if (resized && p->s->tty) {
			p->resize_pending = true;
			lws_callback_on_writable(p->wsi);
		}
		read_stdin(p);
	}
	lws_sul_schedule(r->ctx, 0, &r->tick, tick, TICK_US);
}

static int connect_one(struct runner *r, struct session_priv *p)
{
	struct podexec_session *s = p->s;
	struct lws_client_connect_info i;
	struct buf path;
	int e;

	buf_init(&path, (size_t)1 << 20);
	e = buf_adds(&path, r->prefix);
	if (!e) {
		struct buf rest;

		buf_init(&rest, (size_t)1 << 20);
		e = podexec_path(&rest, s->ns, s->pod, s->container, s->argv, s->argc,
				 s->stdin_fd >= 0, s->tty);
		if (!e)
			e = buf_adds(&path, buf_str(&rest));
		buf_release(&rest);
	}
	if (!e && !(p->path = strdup(buf_str(&path))))
		e = CADRE_ENOMEM;
	buf_release(&path);
	if (e)
		return kube_status_set(&s->st, e, "cannot build the exec request");
	memset(&i, 0, sizeof(i));
	i.context = r->ctx;
	i.vhost = r->vhost;
	i.address = r->host;
	i.port = r->port;
	i.path = p->path;
	i.host = r->host;
	i.origin = r->host;
	i.protocol = PODEXEC_PROTO_V5 "," PODEXEC_PROTO_V4;
	i.local_protocol_name = PODEXEC_PROTO_V5;
	i.ietf_version_or_minus_one = -1;
	i.alpn = "http/1.1";  /* the API server upgrades HTTP/1.1 only */
	i.opaque_user_data = p;
	i.pwsi = &p->wsi;
	if (r->tls) {
		i.ssl_connection = LCCSCF_USE_SSL | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK;
		if (r->cfg->insecure)
			i.ssl_connection |= LCCSCF_ALLOW_SELFSIGNED | LCCSCF_ALLOW_EXPIRED |
					    LCCSCF_ALLOW_INSECURE;
	}
	r->running++;
	if (!lws_client_connect_via_info(&i) && !p->done)
		session_end(r, p, CADRE_EIO, "cannot start the connection");
	return 0;
}

static int runner_open(struct runner *r, struct kube_status *st)
{
	struct lws_context_creation_info info;
	int e;

	if (parse_server(r, r->cfg->server))
		return kube_status_set(st, CADRE_EINVAL, "the server URL %s is not http(s)://HOST[:PORT]",
				       r->cfg->server);
	if ((e = kube_config_credentials(r->cfg, &r->creds, st)))
		return e;
	if (r->creds.token)
		snprintf(r->auth, sizeof(r->auth), "Bearer %s", r->creds.token);
	if (r->tls && (e = make_ssl(r, st)))
		return e;
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS |
		       (r->tls ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0);
	info.user = r;
	info.timeout_secs = (unsigned)((r->opts && r->opts->connect_timeout_ms > 0 ?
					r->opts->connect_timeout_ms : 10000) + 999) / 1000;
	info.connect_timeout_secs = info.timeout_secs;
	if (!(r->ctx = lws_create_context(&info)))
		return kube_status_set(st, CADRE_EIO, "no WebSocket context");
	if (r->tls)
		info.provided_client_ssl_ctx = r->ssl;
	info.vhost_name = "podexec";
	if (!(r->vhost = lws_create_vhost(r->ctx, &info)))
		return kube_status_set(st, CADRE_EIO, "no WebSocket client");
	return 0;
}

static void runner_close(struct runner *r)
{
	if (r->ctx)
		lws_context_destroy(r->ctx);
	r->ctx = NULL;
	/* libwebsockets does not free a provided SSL_CTX */
	if (r->ssl)
		SSL_CTX_free(r->ssl);
	r->ssl = NULL;
	for (size_t i = 0; r->privs && i < r->n; i++) {
		podexec_demux_release(&r->privs[i].demux);
		free(r->privs[i].path);
	}
	free(r->privs);
	r->privs = NULL;
	kube_config_creds_release(&r->creds);
	OPENSSL_cleanse(r->auth, sizeof(r->auth));
}

int podexec_run(struct kube_config *cfg, struct podexec_session *sessions, size_t n,
		const struct podexec_opts *opts)
{
	struct runner r;
	struct kube_status st;
	int e = 0;

	memset(&r, 0, sizeof(r));
	kube_status_clear(&st);
	r.cfg = cfg;
	r.opts = opts;
	r.n = n;
	for (size_t i = 0; i < n; i++) {
		sessions[i].exit_code = PODEXEC_NO_EXIT_CODE;
		sessions[i].protocol[0] = '\0';
		kube_status_clear(&sessions[i].st);
	}
	if (!n)
		return 0;
	if (!(r.privs = calloc(n, sizeof(*r.privs)))) {
		e = CADRE_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		r.privs[i].s = &sessions[i];
		podexec_demux_init(&r.privs[i].demux, sessions[i].on_output, sessions[i].ctx);
	}
	if ((e = runner_open(&r, &st))) {
		sessions[0].st = st;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		connect_one(&r, &r.privs[i]);
	lws_sul_schedule(r.ctx, 0, &r.tick, tick, TICK_US);
	while (r.running > 0) {
		if (opts && opts->stop && atomic_load(opts->stop)) {
			for (size_t i = 0; i < n; i++)
				session_end(&r, &r.privs[i], CADRE_ECANCELED, "stopped");
			break;
		}
		if (lws_service(r.ctx, 0) < 0)
			break;
	}
	for (size_t i = 0; i < n; i++)
		session_end(&r, &r.privs[i], CADRE_EIO, "the WebSocket service failed");
	lws_sul_cancel(&r.tick);
out:
	runner_close(&r);
	return e;
}

static void drop_log(int level, const char *line)
{
	(void)level;
	(void)line;
}

void podexec_quiet(void)
{
	lws_set_log_level(LLL_ERR, drop_log);
}
