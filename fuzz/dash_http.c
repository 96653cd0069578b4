/*
 * dash_http.c - a request to `cadre dashboard` from any page a browser has
 * open (cli/dashboard/dash_route.c). The input is the request's fields, one per
 * line: method (POST when it says so), path, code argument, Host, Origin,
 * Cookie; a field "-" is absent. The dashboard's outstanding code, its one
 * session and its names are fixed, and the seeds and dictionary hold them,
 * so the fuzzer reaches every route.
 *
 * Properties (who may do what): an action or a page file needs the cookie
 * that carries the session and a Host that names the dashboard; an action
 * also needs the dashboard's Origin and a POST, and names a job by two
 * parts free of '/' and one of the three verbs; the first visit needs the
 * code itself. Every refusal is "<status> <text>" with a 4xx status.
 */
#include "fuzz/fuzz.h"

#include "cli/dashboard/dash.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TOKEN "5f2b8c0e9d7a4b1c3e6f8a0b2c4d6e8f1a3b5c7d9e0f2a4b6c8d0e1f3a5b7c9d"
#define SESSION "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define HOST "127.0.0.1:8765"

static bool has_cookie(const char *cookie)
{
	return cookie && strstr(cookie, DASH_COOKIE "=" SESSION);
}

/* The dashboard on 127.0.0.1:8765 (and localhost), code TOKEN outstanding, one session. */
static struct dash_site site_of(struct dash_names *names, struct dash_auth *auth)
{
	memset(names, 0, sizeof(*names));
	dash_names_add(names, "127.0.0.1");
	dash_names_add(names, "localhost");
	memset(auth, 0, sizeof(*auth));
	memcpy(auth->code, TOKEN, sizeof(TOKEN));
	memcpy(auth->sessions[0], SESSION, sizeof(SESSION));
	auth->nsessions = 1;
	return (struct dash_site){ .names = names, .port = 8765, .auth = auth };
}

static bool host_names_us(const char *host)
{
	return host && (!strcasecmp(host, HOST) || !strcasecmp(host, "localhost:8765"));
}

int fuzz_dash_http(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size), *field[6] = { 0 }, *p = text;
	static struct dash_names names;
	static struct dash_auth auth;
	struct dash_site site = site_of(&names, &auth);
	struct dash_request req;
	struct dash_route r;

	for (int i = 0; i < 6 && p; i++) {
		char *nl = strchr(p, '\n');

		if (nl)
			*nl = '\0';
		field[i] = strcmp(p, "-") ? p : NULL;
		p = nl ? nl + 1 : NULL;
	}
	req = (struct dash_request){ .post = field[0] && !strcmp(field[0], "POST"),
				     .path = field[1], .code = field[2], .host = field[3],
				     .origin = field[4], .cookie = field[5] };
	dash_route(&req, &site, &r);
	switch (r.kind) {
	case DASH_ROUTE_REFUSE:
		FUZZ_CHECK(r.refusal && r.refusal[0] == '4' && strlen(r.refusal) > 4 &&
			   r.refusal[3] == ' ', "refusal \"%s\"", r.refusal ? r.refusal : "(null)");
		break;
	case DASH_ROUTE_FIRST_VISIT:
		FUZZ_CHECK(!req.post && req.code && !strcmp(req.code, TOKEN) &&
			   host_names_us(req.host), "a first visit without the code or the Host");
		break;
	case DASH_ROUTE_ACTION:
		FUZZ_CHECK(req.post && has_cookie(req.cookie) && host_names_us(req.host) &&
			   req.origin && !strncasecmp(req.origin, "http://", 7) &&
			   host_names_us(req.origin + 7),
			   "an action without the cookie, the Host or the Origin");
		FUZZ_CHECK(*r.ns && *r.name && !strchr(r.ns, '/') && !strchr(r.name, '/') &&
			   (!strcmp(r.verb, "cancel") || !strcmp(r.verb, "suspend") ||
			    !strcmp(r.verb, "resume")), "action %s on %s/%s", r.verb, r.ns, r.name);
		break;
	case DASH_ROUTE_ASSET:
		FUZZ_CHECK(!req.post && has_cookie(req.cookie) && host_names_us(req.host) && r.asset,
			   "a page file without the cookie or the Host");
		break;
	}
	free(text);
	return 0;
}
