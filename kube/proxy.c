/*
 * proxy.c - client-go's choice of proxy (proxy.h), for libcurl.
 */
#include "kube/proxy.h"

#include "base/err.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <strings.h>

#define HOST_MAX 256

/* The first of two variables that is set (Go's getEnvAny: an empty value counts as unset). */
static const char *env_any(const char *upper, const char *lower)
{
	const char *v = getenv(upper);

	return v && *v ? v : getenv(lower);
}

void kube_proxy_env_get(struct kube_proxy_env *env)
{
	env->https_proxy = env_any("HTTPS_PROXY", "https_proxy");
	env->http_proxy = env_any("HTTP_PROXY", "http_proxy");
	env->no_proxy = env_any("NO_PROXY", "no_proxy");
}

/* The scheme's length when url starts with "<scheme>://"; 0 otherwise. */
static size_t scheme_len(const char *url)
{
	const char *sep = strstr(url, "://");
	size_t n;

	if (!sep)
		return 0;
	n = (size_t)(sep - url);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)url[i]) && url[i] != '+' && url[i] != '-' && url[i] != '.')
			return 0;
	return n;
}

/* The authority of "scheme://[user@]host[:port][/...]": host and port (port "" when absent). */
static int split_authority(const char *url, char *host, size_t host_size, char *port,
			   size_t port_size)
{
	const char *p = strstr(url, "://"), *end, *at, *colon;
	size_t n;

	if (!p)
		return CADRE_EINVAL;
	p += 3;
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', (size_t)(end - p));
	if (at) {
		/* the last '@' before the path: a password may hold one */
		for (const char *q = at; q && q < end; q = memchr(q + 1, '@', (size_t)(end - q - 1)))
			at = q;
		p = at + 1;
	}
	if (*p == '[') {
		const char *close = memchr(p, ']', (size_t)(end - p));

		if (!close)
			return CADRE_EINVAL;
		n = (size_t)(close - p - 1);
		colon = close + 1 < end && close[1] == ':' ? close + 1 : NULL;
		p++;
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
		n = colon ? (size_t)(colon - p) : (size_t)(end - p);
	}
	if (!n || n >= host_size)
		return CADRE_EINVAL;
	memcpy(host, p, n);
	host[n] = '\0';
	n = colon ? (size_t)(end - colon - 1) : 0;
	if (n >= port_size)
		return CADRE_EINVAL;
	if (n)
		memcpy(port, colon + 1, n);
	port[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)port[i]))
			return CADRE_EINVAL;
	return 0;
}

int kube_proxy_check(const char *url, char *why, size_t size)
{
	static const char *const schemes[] = { "http", "https", "socks5", "socks5h" };
	char host[HOST_MAX], port[16];
	size_t n = url ? scheme_len(url) : 0;
	bool known = false;

	for (size_t i = 0; n && i < sizeof(schemes) / sizeof(schemes[0]); i++)
		known = known || (strlen(schemes[i]) == n && !strncasecmp(url, schemes[i], n));
	if (!known) {
		snprintf(why, size, "the scheme must be http, https or socks5");
		return CADRE_EINVAL;
	}
	if (split_authority(url, host, sizeof(host), port, sizeof(port))) {
		snprintf(why, size, "no host and port in it");
		return CADRE_EINVAL;
	}
	return 0;
}

void kube_proxy_redact(const char *url, char *out, size_t size)
{
	const char *p = url ? strstr(url, "://") : NULL, *end, *at = NULL;

	if (!p) {
		snprintf(out, size, "%s", url ? url : "");
		return;
	}
	end = p + 3 + strcspn(p + 3, "/?#");
	for (const char *q = p + 3; q < end; q++)
		if (*q == '@')
			at = q;
	if (at)
		snprintf(out, size, "%.*s://%s", (int)(p - url), url, at + 1);
	else
		snprintf(out, size, "%s", url);
}

/* ---- NO_PROXY, as golang.org/x/net/http/httpproxy reads it ---- */

/* An address in any family, for comparing. */
struct addr {
	int family;              /* AF_INET, AF_INET6; 0: not an address */
	unsigned char b[16];
};

static bool parse_addr(const char *text, struct addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, text, a->b) == 1) {
		a->family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, text, a->b) == 1) {
		/* an IPv4-mapped IPv6 address is the IPv4 one (Go's net.IP.Equal) */
		static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

		if (!memcmp(a->b, mapped, 12)) {
			memmove(a->b, a->b + 12, 4);
			memset(a->b + 4, 0, 12);
			a->family = AF_INET;
		} else {
			a->family = AF_INET6;
		}
		return true;
	}
	return false;
}

static bool addr_loopback(const struct addr *a)
{
	static const unsigned char one[16] = { [15] = 1 };

	return a->family == AF_INET ? a->b[0] == 127 : !memcmp(a->b, one, 16);
}

/* Whether the first bits of a and b agree. */
static bool prefix_equal(const struct addr *a, const struct addr *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (a->family != b->family || memcmp(a->b, b->b, whole))
		return false;
	return !rest || ((a->b[whole] ^ b->b[whole]) & (0xff00 >> rest) & 0xff) == 0;
}

/* Whether entry (one NO_PROXY item, trimmed, lower case) exempts host:port (ip when host is one). */
static bool no_proxy_matches(const char *entry, const char *host, const char *port,
			     const struct addr *ip)
{
	char phost[HOST_MAX + 32], pport[16] = "", text[HOST_MAX + 40];
	const char *slash = strchr(entry, '/');
	struct addr pip;
	size_t n;

	if (slash) {  /* a CIDR block */
		char *end;
		unsigned long bits;

		n = (size_t)(slash - entry);
		if (n >= sizeof(phost))
			return false;
		memcpy(phost, entry, n);
		phost[n] = '\0';
		bits = strtoul(slash + 1, &end, 10);
		if (!parse_addr(phost, &pip) || *end || end == slash + 1 ||
		    bits > (pip.family == AF_INET ? 32u : 128u))
			return false;
		return ip->family && prefix_equal(ip, &pip, (unsigned)bits);
	}
	/* host:port or [v6]:port; a bare IPv6 address has colons of its own */
	snprintf(text, sizeof(text), "x://%s", entry);
	if (parse_addr(entry, &pip)) {
		snprintf(phost, sizeof(phost), "%s", entry);
	} else if (split_authority(text, phost, sizeof(phost), pport, sizeof(pport))) {
		return false;
	}
	if (parse_addr(phost, &pip))
		return ip->family && pip.family == ip->family && !memcmp(pip.b, ip->b, 16) &&
		       (!*pport || !strcmp(pport, port));
	if (*pport && strcmp(pport, port))
		return false;
	/* a domain: "corp.example" is it and its subdomains, ".corp.example" the subdomains */
	{
		const char *d = phost[0] == '*' && phost[1] == '.' ? phost + 1 : phost;
		bool match_host = *d != '.';
		char dom[HOST_MAX + 40];
		size_t hl = strlen(host), dl;

		snprintf(dom, sizeof(dom), "%s%s", match_host ? "." : "", d);
		dl = strlen(dom);
		return (hl >= dl && !strcmp(host + hl - dl, dom)) ||
		       (match_host && !strcmp(host, dom + 1));
	}
}

/* Whether the environment's NO_PROXY (or the loopback rule) sends host:port direct. */
static bool direct(const char *host, const char *port, const char *no_proxy)
{
	char lower[HOST_MAX];
	struct addr ip;
	const char *p = no_proxy;

	if (!strcasecmp(host, "localhost"))
		return true;
	if (parse_addr(host, &ip) && addr_loopback(&ip))
		return true;
	snprintf(lower, sizeof(lower), "%s", host);
	for (char *c = lower; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	while (p && *p) {
		char entry[HOST_MAX + 24];
		size_t n = strcspn(p, ","), start = 0, len = n;

		while (start < n && isspace((unsigned char)p[start]))
			start++;
		while (len > start && isspace((unsigned char)p[len - 1]))
			len--;
		if (len > start && len - start < sizeof(entry)) {
			for (size_t i = 0; i < len - start; i++)
				entry[i] = (char)tolower((unsigned char)p[start + i]);
			entry[len - start] = '\0';
			if (!strcmp(entry, "*") || no_proxy_matches(entry, lower, port, &ip))
				return true;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

/* url for libcurl: a scheme always (http:// when it had none), socks5 as socks5h. */
static int for_curl(const char *url, char *out, size_t size)
{
	int n;

	if (!scheme_len(url))
		n = snprintf(out, size, "http://%s", url);
	else if (scheme_len(url) == 6 && !strncasecmp(url, "socks5", 6))
		n = snprintf(out, size, "socks5h%s", url + 6);
	else
		n = snprintf(out, size, "%s", url);
	return n < 0 || (size_t)n >= size ? CADRE_ETOOBIG : 0;
}

int kube_proxy_select(const char *server, const char *proxy_url, const struct kube_proxy_env *env,
		      char *out, size_t size, char *why, size_t why_size)
{
	char host[HOST_MAX], port[16], with_scheme[2048];
	const char *chosen;
	bool https = !strncasecmp(server, "https://", 8);

	if (size)
		out[0] = '\0';
	if (proxy_url && *proxy_url) {
		if (kube_proxy_check(proxy_url, why, why_size))
			return CADRE_EINVAL;
		return for_curl(proxy_url, out, size);
	}
	chosen = https ? env->https_proxy : env->http_proxy;
	if (!chosen || !*chosen)
		return 0;
	if (split_authority(server, host, sizeof(host), port, sizeof(port)))
		return 0;
	if (!*port)
		snprintf(port, sizeof(port), "%s", https ? "443" : "80");
	if (direct(host, port, env->no_proxy))
		return 0;
	if (for_curl(chosen, with_scheme, sizeof(with_scheme)))
		return CADRE_ETOOBIG;
	if (kube_proxy_check(with_scheme, why, why_size))
		return CADRE_EINVAL;
	return for_curl(with_scheme, out, size);
}
