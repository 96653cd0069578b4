/*
 * dash_http.c - the dashboard's HTTP routes: the one-time code's visit, the
 * embedded page, the actions on a job (each on a thread of its own); and who
 * may ask.
 */
#include "cli/dashboard/dash_server.h"

#include "base/err.h"
#include "cli/kube.h"
#include "kube/client.h"
#include "kube/resource.h"
#include "kube/store.h"

#include <openssl/crypto.h>
#include <pthread.h>

#define MAX_BODY (4u << 20)

static const char *header(struct lws *wsi, enum lws_token_indexes h, char *out, size_t size)
{
	int n = lws_hdr_total_length(wsi, h);

	if (n <= 0 || (size_t)n >= size || lws_hdr_copy(wsi, out, (int)size, h) < 0)
		return NULL;
	return out;
}

/* The server as dash_route sees it. */
static struct dash_site site_of(const struct dash_server *srv)
{
	return (struct dash_site){ .names = &srv->names, .port = srv->port, .auth = &srv->auth };
}

const char *dash_http_refusal(struct dash_server *srv, struct lws *wsi, bool need_origin)
{
	char host[320], origin[400], cookie[4096];
	struct dash_site site = site_of(srv);

	return dash_refusal(header(wsi, WSI_TOKEN_HOST, host, sizeof(host)),
			    header(wsi, WSI_TOKEN_ORIGIN, origin, sizeof(origin)),
			    header(wsi, WSI_TOKEN_HTTP_COOKIE, cookie, sizeof(cookie)),
			    need_origin, &site);
}

/* Start the answer: status, headers, then the body from the writeable callback. */
static int respond(struct lws *wsi, struct dash_http *h, unsigned status, const char *type,
		   const char *set_cookie, const char *location, const void *body, size_t len)
{
	unsigned char hdr[LWS_PRE + 2048], *start = hdr + LWS_PRE, *p = start,
		*end = hdr + sizeof(hdr) - 1;
	static const char csp[] = "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
				  "frame-ancestors 'none'";

	free(h->body);
	h->body = NULL;
	h->sent = 0;
	h->len = len;
	if (len && !(h->body = malloc(len)))
		return -1;
	if (len)
		memcpy(h->body, body, len);
	if (lws_add_http_common_headers(wsi, status, type, len, &p, end) ||
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
					(const unsigned char *)"no-store", 8, &p, end) ||
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"x-content-type-options:",
					(const unsigned char *)"nosniff", 7, &p, end) ||
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"content-security-policy:",
					(const unsigned char *)csp, (int)strlen(csp), &p, end) ||
	    (set_cookie && lws_add_http_header_by_name(wsi, (const unsigned char *)"set-cookie:",
					(const unsigned char *)set_cookie, (int)strlen(set_cookie),
					&p, end)) ||
	    (location && lws_add_http_header_by_name(wsi, (const unsigned char *)"location:",
					(const unsigned char *)location, (int)strlen(location),
					&p, end)) ||
	    lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	if (!len)
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	lws_callback_on_writable(wsi);
	return 0;
}

static int respond_text(struct lws *wsi, struct dash_http *h, const char *refusal)
{
	/* refusal is "<status> <text>" */
	unsigned status = (unsigned)strtoul(refusal, NULL, 10);
	char body[300];
	int n = snprintf(body, sizeof(body), "%s\n", refusal + 4);

	return respond(wsi, h, status, "text/plain; charset=utf-8", NULL, NULL, body,
		       n > 0 ? (size_t)n : 0);
}

/*
 * The printed URL's visit: its one-time code becomes a session cookie of
 * this browser's own, the URL loses the code, and the next browser needs
 * the next code (printed through opts.on_code).
 */
static int first_visit(struct dash_server *srv, struct lws *wsi, struct dash_http *h,
		       const char *code)
{
	char session[DASH_TOKEN_LEN + 1], cookie[200];
	int e = dash_auth_redeem(&srv->auth, code, session);

	if (e == CADRE_EUNAUTHORIZED)
		return respond_text(wsi, h, DASH_CODE_REFUSAL);
	if (e || dash_cookie_header(session, cookie, sizeof(cookie)))
		return -1;
	OPENSSL_cleanse(session, sizeof(session));
	if (srv->opts.on_code)
		srv->opts.on_code(srv->opts.code_ctx, srv->auth.code);
	e = respond(wsi, h, 303, "text/plain; charset=utf-8", cookie, "/", NULL, 0);
	OPENSSL_cleanse(cookie, sizeof(cookie));
	return e;
}

static const struct kube_resource *tj_res(void)
{
	return &kube_resource_trainingjobs;
}

/* An action's API call, on its own thread; the answer is the service thread's to send. */
static void *action_main(void *arg)
{
	struct dash_action *a = arg;
	struct dash_server *srv = a->srv;
	struct kube_status st;
	json_t *patch = NULL, *answer;
	int e;

	kube_status_clear(&st);
	if (!strcmp(a->verb, "cancel")) {
		e = kube_client_delete(srv->opts.http, tj_res(), a->ns, a->name, NULL, NULL, &st);
	} else {
		patch = json_pack("{s:{s:b}}", "spec", "suspend", !strcmp(a->verb, "suspend"));
		e = patch ? kube_client_patch(srv->opts.http, tj_res(), a->ns, a->name, NULL,
					      KUBE_PATCH_MERGE, patch, NULL, &st) : CADRE_ENOMEM;
		json_decref(patch);
	}
	a->status = e ? (st.http_status >= 400 ? (unsigned)st.http_status : 502) : 200;
	answer = json_pack("{s:b, s:i, s:s, s:s}", "ok", !e, "status", (int)a->status,
			   "reason", st.reason, "message",
			   e ? (*st.message ? st.message : cadre_strerror(e)) : "");
	a->answer = answer ? json_dumps(answer, JSON_COMPACT) : NULL;
	json_decref(answer);
	atomic_store(&a->done, true);
	dash_server_wake(srv);
	return NULL;
}

/*
 * POST /api/jobs/NS/NAME/VERB with the user's credentials (dash_route
 * checked the words): the call goes to a thread of its own (up to the
 * client's 30 s against a slow API server), and this transaction is
 * answered when it returns.
 */
static int action(struct dash_server *srv, struct lws *wsi, struct dash_http *h,
		  const struct dash_route *r)
{
	struct dash_action *a = calloc(1, sizeof(*a));

	if (!a)
		return -1;
	snprintf(a->ns, sizeof(a->ns), "%s", r->ns);
	snprintf(a->name, sizeof(a->name), "%s", r->name);
	snprintf(a->verb, sizeof(a->verb), "%s", r->verb);
	a->srv = srv;
	a->wsi = wsi;
	if (pthread_create(&a->thread, NULL, action_main, a)) {
		free(a);
		return respond_text(wsi, h, "503 the dashboard cannot start the action now");
	}
	a->next = srv->actions;
	srv->actions = a;
	h->action = a;
	return 0;
}

void dash_actions_reap(struct dash_server *srv, bool all)
{
	for (struct dash_action **p = &srv->actions; *p;) {
		struct dash_action *a = *p;

		if (!all && !atomic_load(&a->done)) {
			p = &a->next;
			continue;
		}
		if (a->wsi && !all) {
			/* its answer goes out from the connection's writeable callback */
			lws_callback_on_writable(a->wsi);
			p = &a->next;
			continue;
		}
		pthread_join(a->thread, NULL);
		if (a->wsi) {
			struct dash_http *h = lws_wsi_user(a->wsi);

			if (h)
				h->action = NULL;
		}
		*p = a->next;
		free(a->answer);
		free(a);
	}
}

/* The action this transaction waited for is done: its answer, and the action lets go of it. */
static int answer_action(struct lws *wsi, struct dash_http *h)
{
	struct dash_action *a = h->action;
	int e;

	h->action = NULL;
	a->wsi = NULL;
	if (!a->answer)
		return -1;
	e = respond(wsi, h, a->status, "application/json", NULL, NULL, a->answer,
		    strlen(a->answer));
	return e;
}

static int route(struct dash_server *srv, struct lws *wsi, struct dash_http *h,
		 const char *path)
{
	char code[DASH_TOKEN_LEN + 8], host[320], origin[400], cookie[4096];
	struct dash_site site = site_of(srv);
	struct dash_request req = {
		.post = lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0,
		.path = path,
		.code = lws_get_urlarg_by_name(wsi, "code=", code, (int)sizeof(code)),
		.host = header(wsi, WSI_TOKEN_HOST, host, sizeof(host)),
		.origin = header(wsi, WSI_TOKEN_ORIGIN, origin, sizeof(origin)),
		.cookie = header(wsi, WSI_TOKEN_HTTP_COOKIE, cookie, sizeof(cookie)),
	};
	struct dash_route r;
	int e;

	dash_route(&req, &site, &r);
	switch (r.kind) {
	case DASH_ROUTE_FIRST_VISIT:
		e = first_visit(srv, wsi, h, req.code);
		OPENSSL_cleanse(code, sizeof(code));
		return e;
	case DASH_ROUTE_ACTION:
		return action(srv, wsi, h, &r);
	case DASH_ROUTE_ASSET:
		return respond(wsi, h, 200, r.asset->content_type, NULL, NULL, r.asset->data,
			       r.asset->len);
	case DASH_ROUTE_REFUSE:
		break;
	}
	OPENSSL_cleanse(code, sizeof(code));
	return respond_text(wsi, h, r.refusal);
}

static int send_some(struct lws *wsi, struct dash_http *h)
{
	unsigned char chunk[LWS_PRE + 16384];
	size_t n = h->len - h->sent;
	enum lws_write_protocol kind = LWS_WRITE_HTTP_FINAL;

	if (n > sizeof(chunk) - LWS_PRE) {
		n = sizeof(chunk) - LWS_PRE;
		kind = LWS_WRITE_HTTP;
	}
	memcpy(chunk + LWS_PRE, h->body + h->sent, n);
	if (lws_write(wsi, chunk + LWS_PRE, n, kind) != (int)n)
		return -1;
	h->sent += n;
	if (h->sent < h->len) {
		lws_callback_on_writable(wsi);
		return 0;
	}
	free(h->body);
	h->body = NULL;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

int dash_http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
		       void *in, size_t len)
{
	struct dash_server *srv = lws_context_user(lws_get_context(wsi));
	struct dash_http *h = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		return route(srv, wsi, h, in);
	case LWS_CALLBACK_HTTP_BODY:
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		/*
		 * A POST's (empty) body ends after the answer was started: the
		 * default handler would answer again and drop the connection.
		 */
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		if (h && h->action && atomic_load(&h->action->done) && !h->body)
			return answer_action(wsi, h);
		return h && h->body ? send_some(wsi, h) : 0;
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		if (h) {
			free(h->body);
			h->body = NULL;
			/* gone before its action's answer: the action is joined without it */
			if (h->action)
				h->action->wsi = NULL;
			h->action = NULL;
		}
		return 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		/* an action's thread woke the service: its answer can go */
		if (srv)
			dash_actions_reap(srv, false);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

const struct dash_asset *dash_asset_find(const char *path)
{
	if (!strcmp(path, "/"))
		path = "/index.html";
	for (size_t i = 0; i < dash_assets_len; i++)
		if (!strcmp(path, dash_assets[i].path))
			return &dash_assets[i];
	return NULL;
}

int dash_index_event_object(const json_t *ev, json_t *values, void *arg)
{
	const json_t *o = json_object_get(ev, "involvedObject");
	const char *ns = json_string_value(json_object_get(o, "namespace"));
	const char *name = json_string_value(json_object_get(o, "name"));
	char key[320];

	(void)arg;
	if (!ns || !name)
		return 0;
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	return json_array_append_new(values, json_string(key)) ? CADRE_ENOMEM : 0;
}

json_t *dash_events_of(struct dash_server *srv, const json_t *tj)
{
	const json_t *m = json_object_get(tj, "metadata");
	char key[320];
	json_t *out = NULL;

	snprintf(key, sizeof(key), "%s/%s", json_string_value(json_object_get(m, "namespace")),
		 json_string_value(json_object_get(m, "name")));
	if (!srv->opts.events || store_by_index(srv->opts.events, "object", key, &out))
		return json_array();
	return out;
}
