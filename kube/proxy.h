/*
 * proxy.h - which proxy a connection to the API server goes through, as
 * client-go chooses it.
 *
 * A cluster's proxy-url (http, https or socks5) is used for every request
 * to that server, whatever the environment says. Without one, the
 * environment decides as Go's http.ProxyFromEnvironment does
 * (golang.org/x/net/http/httpproxy), which is not what libcurl would do on
 * its own:
 *   - HTTPS_PROXY (else https_proxy) for an https:// server, HTTP_PROXY
 *     (else http_proxy) for http://; ALL_PROXY is not read;
 *   - a value without a scheme is http:// ("proxy.corp:3128");
 *   - "localhost" and loopback addresses (127.0.0.0/8, ::1) never go
 *     through a proxy;
 *   - NO_PROXY (else no_proxy) lists exceptions, separated by commas: "*"
 *     for every host, an IP address or a CIDR block, or a domain
 *     ("corp.example" matches it and its subdomains, ".corp.example" and
 *     "*.corp.example" its subdomains only), each optionally with ":PORT".
 * The answer is a URL for libcurl: socks5:// becomes socks5h://, so names
 * are resolved by the proxy, as Go's SOCKS5 dialer has them.
 *
 * Pure (the environment is passed in); thread-safe.
 */
#ifndef CADRE_KUBE_PROXY_H
#define CADRE_KUBE_PROXY_H

#include <stdbool.h>
#include <stddef.h>

/* The environment the choice reads; any may be NULL (unset). */
struct kube_proxy_env {
	const char *https_proxy;   /* HTTPS_PROXY, else https_proxy */
	const char *http_proxy;    /* HTTP_PROXY, else http_proxy */
	const char *no_proxy;      /* NO_PROXY, else no_proxy */
};

/* This process's environment, read now (the strings are getenv's). */
void kube_proxy_env_get(struct kube_proxy_env *env);

/*
 * Whether url is a proxy URL cadre can use: http://, https://, socks5:// or
 * socks5h:// with a host. 0, or CADRE_EINVAL with why ("the scheme must be
 * http, https or socks5") written to why.
 */
int kube_proxy_check(const char *url, char *why, size_t size);

/*
 * The proxy for server (the cluster's URL): proxy_url when set, else what
 * env says. Writes the URL libcurl takes into out, "" for a direct
 * connection. 0, CADRE_EINVAL (a proxy URL that kube_proxy_check refuses;
 * why says which and why), CADRE_ETOOBIG (out too small).
 */
int kube_proxy_select(const char *server, const char *proxy_url, const struct kube_proxy_env *env,
		      char *out, size_t size, char *why, size_t why_size);

/* url with any user:password@ taken out, for messages. */
void kube_proxy_redact(const char *url, char *out, size_t size);

#endif
