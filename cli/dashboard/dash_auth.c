/*
 * dash_auth.c - who may talk to the dashboard: a browser that brought the
 * one-time code of the printed URL, and so holds a session of its own,
 * from a page the dashboard itself served.
 *
 * The code proves the request comes from the person who started it (any
 * local user can reach a loopback port); once used it opens nothing, and
 * the session cookie it is traded for was never printed nor put in any
 * process's arguments. The Host check stops DNS rebinding: a page on
 * evil.example whose name now resolves to 127.0.0.1 sends Host:
 * evil.example. The Origin check stops CSRF on the WebSocket and the
 * actions; SameSite=Strict keeps other sites from sending the cookie at all.
 */
#include "cli/dashboard/dash.h"

#include "base/err.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

int dash_token_new(char out[DASH_TOKEN_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[DASH_TOKEN_LEN / 2];

	if (RAND_bytes(raw, (int)sizeof(raw)) != 1)
		return CADRE_EIO;
	for (size_t i = 0; i < sizeof(raw); i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[DASH_TOKEN_LEN] = '\0';
	OPENSSL_cleanse(raw, sizeof(raw));
	return 0;
}

bool dash_token_equal(const char *given, const char *token)
{
	size_t n = strlen(token);

	if (!given || !n || strlen(given) != n)
		return false;
	return CRYPTO_memcmp(given, token, n) == 0;
}

bool dash_cookie_ok(const char *cookie, const char *token)
{
	static const char name[] = DASH_COOKIE "=";
	const char *p = cookie;

	while (p && *p) {
		size_t n;

		p += strspn(p, " \t");
		n = strcspn(p, ";");
		if (n > sizeof(name) - 1 && !strncmp(p, name, sizeof(name) - 1)) {
			char value[DASH_TOKEN_LEN + 2];
			size_t vlen = n - (sizeof(name) - 1);

			while (vlen && (p[sizeof(name) - 1 + vlen - 1] == ' '))
				vlen--;
			if (vlen < sizeof(value)) {
				memcpy(value, p + sizeof(name) - 1, vlen);
				value[vlen] = '\0';
				if (dash_token_equal(value, token))
					return true;
			}
		}
		p += n;
		if (*p == ';')
			p++;
	}
	return false;
}

int dash_cookie_header(const char *session, char *out, size_t size)
{
	int n = snprintf(out, size, "%s=%s; Path=/; HttpOnly; SameSite=Strict", DASH_COOKIE,
			 session);

	return n < 0 || (size_t)n >= size ? CADRE_ETOOBIG : 0;
}

int dash_auth_init(struct dash_auth *a, const char *code)
{
	OPENSSL_cleanse(a, sizeof(*a));
	if (code) {
		snprintf(a->code, sizeof(a->code), "%s", code);
		return 0;
	}
	return dash_token_new(a->code);
}

int dash_auth_redeem(struct dash_auth *a, const char *code, char session[DASH_TOKEN_LEN + 1])
{
	size_t slot;

	if (!*a->code || !dash_token_equal(code, a->code))
		return CADRE_EUNAUTHORIZED;
	/* spent, whatever follows: a code opens one session at most */
	OPENSSL_cleanse(a->code, sizeof(a->code));
	if (dash_token_new(session))
		return CADRE_EIO;
	if (a->nsessions < DASH_MAX_SESSIONS) {
		slot = a->nsessions++;
	} else {
		slot = a->oldest;
		a->oldest = (a->oldest + 1) % DASH_MAX_SESSIONS;
	}
	memcpy(a->sessions[slot], session, DASH_TOKEN_LEN + 1);
	return dash_token_new(a->code);
}

bool dash_auth_cookie_ok(const struct dash_auth *a, const char *cookie)
{
	bool ok = false;

	/* every session is compared, so the time taken says nothing of which one matched */
	for (size_t i = 0; i < a->nsessions; i++)
		ok |= dash_cookie_ok(cookie, a->sessions[i]);
	return ok;
}

bool dash_is_loopback(const char *address)
{
	return address && (!strncmp(address, "127.", 4) || !strcmp(address, "::1") ||
			   !strcasecmp(address, "localhost"));
}

bool dash_is_wildcard(const char *address)
{
	return address && (!strcmp(address, "0.0.0.0") || !strcmp(address, "::"));
}

void dash_names_add(struct dash_names *names, const char *name)
{
	if (!name || !*name || names->n == DASH_MAX_NAMES)
		return;
	for (size_t i = 0; i < names->n; i++)
		if (!strcasecmp(names->v[i], name))
			return;
	snprintf(names->v[names->n++], sizeof(names->v[0]), "%s", name);
}

/* The addresses of this machine's interfaces, in the families a bind to address reaches. */
static void interface_addresses(bool v6, struct dash_names *out)
{
	struct ifaddrs *list = NULL;
	char text[INET6_ADDRSTRLEN];

	if (getifaddrs(&list))
		return;
	for (struct ifaddrs *i = list; i; i = i->ifa_next) {
		const struct sockaddr *sa = i->ifa_addr;

		if (!sa || !(i->ifa_flags & IFF_UP))
			continue;
		if (sa->sa_family == AF_INET &&
		    inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, text, sizeof(text)))
			dash_names_add(out, text);
		/* a link-local address needs its zone in a URL, which no browser sends in Host */
		else if (v6 && sa->sa_family == AF_INET6 &&
			 !IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)sa)->sin6_addr) &&
			 inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, text,
				   sizeof(text)))
			dash_names_add(out, text);
	}
	freeifaddrs(list);
}

/* This machine's host name, and the canonical name the resolver gives it. */
static void host_names(struct dash_names *out)
{
	struct addrinfo hints = { .ai_flags = AI_CANONNAME }, *res = NULL;
	char name[256];

	if (gethostname(name, sizeof(name)))
		return;
	name[sizeof(name) - 1] = '\0';
	dash_names_add(out, name);
	if (!getaddrinfo(name, NULL, &hints, &res) && res && res->ai_canonname)
		dash_names_add(out, res->ai_canonname);
	if (res)
		freeaddrinfo(res);
}

void dash_names_for(const char *address, struct dash_names *out)
{
	memset(out, 0, sizeof(*out));
	dash_names_add(out, address);
	if (dash_is_wildcard(address)) {
		host_names(out);
		interface_addresses(!strcmp(address, "::"), out);
		dash_names_add(out, "localhost");
	} else if (dash_is_loopback(address)) {
		dash_names_add(out, "localhost");
		dash_names_add(out, "127.0.0.1");
	}
}

/* Whether text is exactly "<name>:<port>" (name case-insensitive). */
static bool is_name_port(const char *text, size_t len, const char *name, int port)
{
	char want[320];
	int n;

	if (strchr(name, ':'))
		n = snprintf(want, sizeof(want), "[%s]:%d", name, port);
	else
		n = snprintf(want, sizeof(want), "%s:%d", name, port);
	return n > 0 && (size_t)n == len && !strncasecmp(text, want, len);
}

static bool host_ok_n(const char *host, size_t len, const struct dash_names *names, int port)
{
	if (!host || !names || port <= 0)
		return false;
	for (size_t i = 0; i < names->n; i++)
		/* the wildcard is no name a browser can go to */
		if (!dash_is_wildcard(names->v[i]) && is_name_port(host, len, names->v[i], port))
			return true;
	return false;
}

bool dash_host_ok(const char *host, const struct dash_names *names, int port)
{
	return host && host_ok_n(host, strlen(host), names, port);
}

bool dash_origin_ok(const char *origin, const struct dash_names *names, int port)
{
	static const char scheme[] = "http://";

	if (!origin || strncasecmp(origin, scheme, sizeof(scheme) - 1))
		return false;
	origin += sizeof(scheme) - 1;
	return host_ok_n(origin, strlen(origin), names, port);
}
