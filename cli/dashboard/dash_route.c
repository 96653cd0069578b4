/*
 * dash_route.c - what a request to the dashboard asks for, and whether it
 * may: the decisions of dash_http.c and dash_server.c taken out of
 * libwebsockets' callbacks, so that they see only bytes. A browser is the
 * client, and any page it has open may send requests here: the Host, Origin
 * and cookie checks (dash_auth.c) are what keep those pages out.
 */
#include "cli/dashboard/dash.h"

#include <stdio.h>
#include <string.h>

const char *dash_refusal(const char *host, const char *origin, const char *cookie,
			 bool need_origin, const struct dash_site *site)
{
	if (!dash_host_ok(host, site->names, site->port))
		return "403 this dashboard answers only to the names it listens on";
	if ((need_origin || origin) && !dash_origin_ok(origin, site->names, site->port))
		return "403 requests from other sites' pages are refused";
	if (!dash_auth_cookie_ok(site->auth, cookie))
		return "401 open the URL cadre dashboard printed last (each one opens one browser)";
	return NULL;
}

static void refuse(struct dash_route *out, const char *why)
{
	out->kind = DASH_ROUTE_REFUSE;
	out->refusal = why;
}

/* POST /api/jobs/NS/NAME/VERB: three parts, none empty, VERB one of three. */
static void action(const char *path, struct dash_route *out)
{
	static const char *const verbs[] = { "cancel", "suspend", "resume" };

	if (sscanf(path, "/api/jobs/%63[^/]/%253[^/]/%15s", out->ns, out->name, out->verb) != 3)
		goto none;
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(out->verb, verbs[i])) {
			out->kind = DASH_ROUTE_ACTION;
			return;
		}
none:
	refuse(out, "404 no such action");
}

void dash_route(const struct dash_request *req, const struct dash_site *site,
		struct dash_route *out)
{
	const char *path = req->path ? req->path : "";
	const char *why;

	memset(out, 0, sizeof(*out));
	if (!req->post && !strcmp(path, "/") && req->code) {
		if (!dash_host_ok(req->host, site->names, site->port))
			refuse(out, "403 this dashboard answers only to the names it listens on");
		else if (!dash_token_equal(req->code, site->auth->code))
			refuse(out, DASH_CODE_REFUSAL);
		else
			out->kind = DASH_ROUTE_FIRST_VISIT;
		return;
	}
	if ((why = dash_refusal(req->host, req->origin, req->cookie, req->post, site))) {
		refuse(out, why);
		return;
	}
	if (req->post && !strncmp(path, "/api/jobs/", 10)) {
		action(path, out);
		return;
	}
	if (!req->post && (out->asset = dash_asset_find(path))) {
		out->kind = DASH_ROUTE_ASSET;
		return;
	}
	refuse(out, "404 not found");
}

enum dash_ws_kind dash_ws_message(const char *in, size_t len, char *watch, size_t size)
{
	json_t *msg = json_loadb(in, len, 0, NULL);
	const char *key = json_string_value(json_object_get(msg, "watch"));
	enum dash_ws_kind kind = DASH_WS_IGNORE;

	if (key && strlen(key) < size) {
		snprintf(watch, size, "%s", key);
		kind = DASH_WS_WATCH;
	} else if (json_object_get(msg, "watch")) {
		kind = DASH_WS_UNWATCH;
	}
	json_decref(msg);
	return kind;
}
