#include <criterion/criterion.h>

#include "base/err.h"
#include "kube/proxy.h"

/* The proxy kube_proxy_select picks for server with proxy_url and env; "" for direct. */
static const char *pick(const char *server, const char *proxy_url, const char *https,
			const char *http, const char *no_proxy)
{
	static char out[512];
	char why[128];
	struct kube_proxy_env env = { .https_proxy = https, .http_proxy = http,
				      .no_proxy = no_proxy };

	cr_assert_eq(kube_proxy_select(server, proxy_url, &env, out, sizeof(out), why, sizeof(why)),
		     0, "%s", why);
	return out;
}

Test(proxy, the_kubeconfigs_proxy_url_is_used_for_every_server_whatever_the_environment)
{
	cr_assert_str_eq(pick("https://127.0.0.1:6443", "http://proxy:3128", NULL, NULL, "*"),
			 "http://proxy:3128");
	cr_assert_str_eq(pick("https://k.example", "https://proxy:3129", "http://other:1", NULL,
			      NULL), "https://proxy:3129");
	/* names are resolved by a SOCKS5 proxy, as Go's dialer has it */
	cr_assert_str_eq(pick("https://k.example", "socks5://u:p@proxy:1080", NULL, NULL, NULL),
			 "socks5h://u:p@proxy:1080");
}

Test(proxy, the_environment_picks_by_the_servers_scheme_and_adds_http_to_a_bare_host)
{
	cr_assert_str_eq(pick("https://k.example:6443", NULL, "proxy.corp:3128", "http://h:1", NULL),
			 "http://proxy.corp:3128");
	cr_assert_str_eq(pick("http://k.example:8080", NULL, "http://s:1", "http://h:1", NULL),
			 "http://h:1");
	cr_assert_str_eq(pick("https://k.example", NULL, NULL, "http://h:1", NULL), "");
	cr_assert_str_eq(pick("https://k.example", NULL, "socks5://s:1080", NULL, NULL),
			 "socks5h://s:1080");
}

Test(proxy, loopback_servers_never_go_through_a_proxy_from_the_environment)
{
	cr_assert_str_eq(pick("https://127.0.0.1:6443", NULL, "http://p:1", NULL, NULL), "");
	cr_assert_str_eq(pick("https://127.9.9.9", NULL, "http://p:1", NULL, NULL), "");
	cr_assert_str_eq(pick("https://[::1]:6443", NULL, "http://p:1", NULL, NULL), "");
	cr_assert_str_eq(pick("https://LOCALHOST:6443", NULL, "http://p:1", NULL, NULL), "");
	/* a name is not looked up: only the literal names and addresses are exempt */
	cr_assert_str_eq(pick("https://vm:6443", NULL, "http://p:1", NULL, NULL), "http://p:1");
}

Test(proxy, no_proxy_exempts_hosts_domains_addresses_blocks_and_ports)
{
	const char *p = "http://p:1";

	cr_assert_str_eq(pick("https://k.example", NULL, p, NULL, "*"), "");
	cr_assert_str_eq(pick("https://k.example", NULL, p, NULL, " other , K.Example "), "");
	/* a domain is itself and its subdomains; with a dot or "*.", its subdomains only */
	cr_assert_str_eq(pick("https://a.k.example", NULL, p, NULL, "example"), "");
	cr_assert_str_eq(pick("https://example", NULL, p, NULL, "example"), "");
	cr_assert_str_eq(pick("https://example", NULL, p, NULL, ".example"), p);
	cr_assert_str_eq(pick("https://a.example", NULL, p, NULL, ".example"), "");
	cr_assert_str_eq(pick("https://a.example", NULL, p, NULL, "*.example"), "");
	cr_assert_str_eq(pick("https://xexample", NULL, p, NULL, "example"), p);
	/* addresses, blocks, and a port that must match the server's (443 by default) */
	cr_assert_str_eq(pick("https://10.1.2.3:6443", NULL, p, NULL, "10.0.0.0/8"), "");
	cr_assert_str_eq(pick("https://11.1.2.3:6443", NULL, p, NULL, "10.0.0.0/8"), p);
	cr_assert_str_eq(pick("https://10.1.2.3:6443", NULL, p, NULL, "10.1.2.3"), "");
	cr_assert_str_eq(pick("https://10.1.2.3:6443", NULL, p, NULL, "10.1.2.3:6443"), "");
	cr_assert_str_eq(pick("https://10.1.2.3:6443", NULL, p, NULL, "10.1.2.3:443"), p);
	cr_assert_str_eq(pick("https://10.1.2.3", NULL, p, NULL, "10.1.2.3:443"), "");
	cr_assert_str_eq(pick("https://k.example:6443", NULL, p, NULL, "k.example:6443"), "");
	cr_assert_str_eq(pick("https://k.example:6443", NULL, p, NULL, "k.example:443"), p);
	cr_assert_str_eq(pick("https://[fd00::5]:6443", NULL, p, NULL, "fd00::/8"), "");
	cr_assert_str_eq(pick("https://[fd00::5]:6443", NULL, p, NULL, "[fd00::5]:6443"), "");
	cr_assert_str_eq(pick("https://[fd00::5]:6443", NULL, p, NULL, "fd00::5"), "");
	cr_assert_str_eq(pick("https://[fd00::6]:6443", NULL, p, NULL, "fd00::5"), p);
}

Test(proxy, a_proxy_it_cannot_use_is_refused_with_the_reason)
{
	struct kube_proxy_env env = { 0 };
	char out[128], why[128] = "";

	cr_assert_eq(kube_proxy_select("https://k", "ftp://p:21", &env, out, sizeof(out), why,
				       sizeof(why)), CADRE_EINVAL);
	cr_assert_str_eq(why, "the scheme must be http, https or socks5");
	cr_assert_eq(kube_proxy_check("http://", why, sizeof(why)), CADRE_EINVAL);
	cr_assert_eq(kube_proxy_check("socks5://p:1080", why, sizeof(why)), 0);
}

Test(proxy, a_password_never_reaches_a_message)
{
	char out[128];

	kube_proxy_redact("http://user:p@ss@proxy:3128/x", out, sizeof(out));
	cr_assert_str_eq(out, "http://proxy:3128/x");
	kube_proxy_redact("socks5://proxy:1080", out, sizeof(out));
	cr_assert_str_eq(out, "socks5://proxy:1080");
}
