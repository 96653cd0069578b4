/*
 * dash_auth.c - who may talk to the dashboard: the holder of the token
 * printed with its URL, from a page the dashboard itself served.
 *
 * The token proves the request comes from the person who started it (any
 * local user can reach a loopback port). The Host check stops DNS
 * rebinding: a page on evil.example whose name now resolves to 127.0.0.1
 * sends Host: evil.example. The Origin check stops CSRF on the WebSocket
 * and the actions; SameSite=Strict keeps other sites from sending the
 * cookie at all.
 */
#include "cli/dash.h"

#include "base/err.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <strings.h>

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

int dash_cookie_header(const char *token, char *out, size_t size)
{
	int n = snprintf(out, size, "%s=%s; Path=/; HttpOnly; SameSite=Strict", DASH_COOKIE,
			 token);

	return n < 0 || (size_t)n >= size ? CADRE_ETOOBIG : 0;
}

bool dash_is_loopback(const char *address)
{
	return address && (!strncmp(address, "127.", 4) || !strcmp(address, "::1") ||
			   !strcasecmp(address, "localhost"));
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

static bool host_ok_n(const char *host, size_t len, const char *address, int port)
{
	if (!host || !address || port <= 0)
		return false;
	if (is_name_port(host, len, address, port))
		return true;
	return dash_is_loopback(address) &&
	       (is_name_port(host, len, "localhost", port) ||
		is_name_port(host, len, "127.0.0.1", port));
}

bool dash_host_ok(const char *host, const char *address, int port)
{
	return host && host_ok_n(host, strlen(host), address, port);
}

bool dash_origin_ok(const char *origin, const char *address, int port)
{
	static const char scheme[] = "http://";

	if (!origin || strncasecmp(origin, scheme, sizeof(scheme) - 1))
		return false;
	origin += sizeof(scheme) - 1;
	return host_ok_n(origin, strlen(origin), address, port);
}
