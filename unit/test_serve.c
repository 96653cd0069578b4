#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/err.h"
#include "controller/serve/serve.h"

/* A blocking HTTP/1.0 GET against 127.0.0.1; returns the whole response. */
static char *http_get(int port, const char *path)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char req[256], chunk[4096];
	struct buf resp;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: x\r\n\r\n", path);
	cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	buf_init(&resp, 1 << 22);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(&resp, chunk, (size_t)n);
	close(fd);
	return buf_detach(&resp, NULL);
}

static atomic_bool synced;

static bool is_ready(void *ctx)
{
	(void)ctx;
	return atomic_load(&synced);
}

Test(serve, parses_addresses)
{
	char *host;
	int port;

	cr_assert_eq(serve_parse_addr(":8080", &host, &port), 0);
	cr_assert_null(host);
	cr_assert_eq(port, 8080);
	cr_assert_eq(serve_parse_addr("127.0.0.1:9", &host, &port), 0);
	cr_assert_str_eq(host, "127.0.0.1");
	free(host);
	cr_assert_eq(serve_parse_addr("[::1]:9", &host, &port), 0);
	cr_assert_str_eq(host, "::1");
	free(host);
	cr_assert_eq(serve_parse_addr("0", &host, &port), 0);
	cr_assert_eq(port, -1);
	cr_assert_eq(serve_parse_addr("8080", &host, &port), CADRE_EINVAL);
	cr_assert_eq(serve_parse_addr(":http", &host, &port), CADRE_EINVAL);
	cr_assert_eq(serve_parse_addr(":70000", &host, &port), CADRE_EINVAL);
}

Test(serve, readyz_is_503_until_caches_sync_and_metrics_render)
{
	struct registry *reg = registry_new();
	const char *labels[] = { "kind", NULL };
	const char *tj[] = { "TrainingJob" };
	struct metric *m = registry_add(reg, METRIC_COUNTER, "cadre_reconcile_total",
					"Reconciles.", labels, NULL, 0);
	struct serve_opts opts = { .metrics_addr = "127.0.0.1:0",
				   .health_addr = "127.0.0.1:0",
				   .registry = reg, .ready = is_ready };
	struct server *srv;
	char *resp;

	metric_add(m, tj, 5);
	atomic_store(&synced, false);
	cr_assert_eq(serve_start(&opts, &srv), 0);
	cr_assert_gt(serve_port(srv, 0), 0);
	cr_assert_gt(serve_port(srv, 1), 0);

	resp = http_get(serve_port(srv, 1), "/readyz");
	cr_assert(strstr(resp, " 503 "), "%s", resp);
	free(resp);
	atomic_store(&synced, true);
	resp = http_get(serve_port(srv, 1), "/readyz");
	cr_assert(strstr(resp, " 200 "), "%s", resp);
	free(resp);
	resp = http_get(serve_port(srv, 1), "/healthz");
	cr_assert(strstr(resp, " 200 "));
	free(resp);
	resp = http_get(serve_port(srv, 0), "/metrics");
	cr_assert(strstr(resp, "cadre_reconcile_total{kind=\"TrainingJob\"} 5\n"), "%s", resp);
	cr_assert(strstr(resp, "text/plain; version=0.0.4"));
	free(resp);
	resp = http_get(serve_port(srv, 0), "/nope");
	cr_assert(strstr(resp, " 404 "));
	free(resp);
	serve_stop(srv);
	registry_free(reg);
}

static void big_collector(void *ctx, struct buf *out)
{
	(void)ctx;
	for (int i = 0; i < 5000; i++)
		buf_addf(out, "big_series{i=\"%d\"} %d\n", i, i);
}

Test(serve, large_metrics_bodies_arrive_whole)
{
	struct registry *reg = registry_new();
	struct serve_opts opts = { .metrics_addr = "127.0.0.1:0", .health_addr = "0",
				   .registry = reg };
	struct server *srv;
	char *resp;

	registry_add_collector(reg, big_collector, NULL);
	cr_assert_eq(serve_start(&opts, &srv), 0);
	cr_assert_eq(serve_port(srv, 1), -1);
	resp = http_get(serve_port(srv, 0), "/metrics");
	cr_assert(strstr(resp, "big_series{i=\"0\"} 0\n"));
	cr_assert(strstr(resp, "big_series{i=\"4999\"} 4999\n"));
	free(resp);
	serve_stop(srv);
	registry_free(reg);
}

Test(serve, a_port_in_use_is_an_error_not_a_crash)
{
	struct registry *reg = registry_new();
	struct serve_opts opts = { .metrics_addr = "127.0.0.1:0", .health_addr = "0",
				   .registry = reg };
	struct server *a, *b;
	char addr[64];

	cr_assert_eq(serve_start(&opts, &a), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", serve_port(a, 0));
	opts.metrics_addr = addr;
	cr_assert_eq(serve_start(&opts, &b), CADRE_EIO);
	serve_stop(a);
	registry_free(reg);
}
