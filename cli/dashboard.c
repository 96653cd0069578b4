/*
 * dashboard.c - `cadre dashboard`: the flags, the four reflectors that keep
 * the stores (TrainingJobs, cadre's pods, nodes, the jobs' Events) with the
 * user's own kubeconfig, and the server until Ctrl-C.
 */
#include "cli/dashboard.h"

#include "cli/dash_server.h"
#include "cli/jobs.h"

#include "api/labels.h"
#include "base/err.h"
#include "base/log.h"
#include "kube/reflector.h"
#include "api/pod_trim.h"
#include "kube/store.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>

#define DASHBOARD "cadre dashboard"

extern char **environ;

static _Atomic bool stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop_flag, true);
}

struct dash_flags {
	const char *port, *address;
	bool open, allow_remote, all, help;
	int port_n;
};

/* The flags; 0, or the exit code after one line on err. */
static int read_flags(struct cli_globals *g, struct dash_flags *f, char **args, int n,
		      FILE *err)
{
	const struct cli_opt opts[] = {
		{ "port", 0, &f->port, NULL },
		{ "address", 0, &f->address, NULL },
		{ "open", 0, NULL, &f->open },
		{ "allow-remote", 0, NULL, &f->allow_remote },
		{ NULL, 0, NULL, NULL },
	};
	char **pos = calloc((size_t)n + 1, sizeof(*pos)), *end;
	int n_pos = 0, code;
	long p = 0;

	if (!pos)
		return CLI_EXIT_FAILED;
	code = cli_opts_parse(DASHBOARD, opts, args, n, g, &f->all, &f->help, pos, &n_pos, err);
	if (!code && n_pos) {
		fprintf(err, "%s: unexpected argument \"%s\"\n", DASHBOARD, pos[0]);
		code = CLI_EXIT_USAGE;
	}
	free(pos);
	if (code)
		return code;
	if (f->port) {
		errno = 0;
		p = strtol(f->port, &end, 10);
		if (errno || end == f->port || *end || p < 0 || p > 65535) {
			fprintf(err, "%s: --port: \"%s\" is not a port (0-65535; 0 picks a free one)\n",
				DASHBOARD, f->port);
			return CLI_EXIT_USAGE;
		}
	}
	f->port_n = (int)p;
	if (!f->address)
		f->address = "127.0.0.1";
	if (!dash_is_loopback(f->address) && !f->allow_remote) {
		fprintf(err, "%s: --address %s is reachable from other machines, and the page "
			"acts with your credentials: add --allow-remote if that is what you want\n",
			DASHBOARD, f->address);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

struct dash_cache {
	struct store *stores[DASH_MAX_REFLECTORS];
	struct reflector *reflectors[DASH_MAX_REFLECTORS];
};

static void cache_release(struct dash_cache *c)
{
	for (int i = 0; i < DASH_MAX_REFLECTORS; i++)
		reflector_free(c->reflectors[i]);
	for (int i = 0; i < DASH_MAX_REFLECTORS; i++)
		store_free(c->stores[i]);
}

/* The stores and (not yet started) reflectors; ns NULL for every namespace. */
static int cache_new(struct cli_kube *k, const char *ns, struct dash_cache *c)
{
	const struct reflector_options ro[DASH_MAX_REFLECTORS] = {
		{ .resource = &kube_resource_trainingjobs, .namespace = ns },
		{ .resource = &kube_resource_pods, .namespace = ns,
		  .label_selector = LABEL_JOB_NAME },
		{ .resource = &kube_resource_nodes },
		{ .resource = &kube_resource_core_events, .namespace = ns,
		  .field_selector = "involvedObject.kind=TrainingJob" },
	};
	const struct store_options so[DASH_MAX_REFLECTORS] = {
		{ .kind = "trainingjobs", .trim = store_trim_bookkeeping },
		{ .kind = "pods", .trim = pod_trim },
		{ .kind = "nodes", .trim = store_trim_bookkeeping },
		{ .kind = "events", .trim = store_trim_bookkeeping },
	};
	int e = 0;

	for (int i = 0; !e && i < DASH_MAX_REFLECTORS; i++) {
		if (!(c->stores[i] = store_new(&so[i])))
			e = CADRE_ENOMEM;
		else
			e = reflector_new(k->http, c->stores[i], &ro[i], &c->reflectors[i]);
	}
	e = e ? e : store_add_index(c->stores[1], "job", pod_index_job, NULL);
	e = e ? e : store_add_index(c->stores[3], "object", dash_index_event_object, NULL);
	return e;
}

static void open_browser(const char *url, FILE *err)
{
	char *argv[] = { "xdg-open", (char *)url, NULL };
	pid_t pid;

	if (posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ))
		fprintf(err, "%s: --open: cannot run xdg-open; open the URL above\n", DASHBOARD);
}

static int serve(struct cli_kube *k, const struct dash_flags *f, struct dash_cache *c,
		 FILE *out, FILE *err)
{
	struct dash_server_opts o = { .address = f->address, .port = f->port_n,
				      .scope = f->all ? "" : k->ns, .http = k->http,
				      .n_reflectors = DASH_MAX_REFLECTORS };
	struct dash_server *srv = NULL;
	struct store_handlers h, jh;
	char token[DASH_TOKEN_LEN + 1], url[256];
	int e;

	o.jobs = c->stores[0];
	o.pods = c->stores[1];
	o.nodes = c->stores[2];
	o.events = c->stores[3];
	for (int i = 0; i < DASH_MAX_REFLECTORS; i++)
		o.reflectors[i] = c->reflectors[i];
	if (dash_token_new(token)) {
		fprintf(err, "%s: no random bytes for the token\n", DASHBOARD);
		return CLI_EXIT_FAILED;
	}
	o.token = token;
	if ((e = dash_server_start(&o, &srv))) {
		fprintf(err, "%s: cannot listen on %s:%d: %s\n", DASHBOARD, f->address, f->port_n,
			cadre_strerror(e));
		return CLI_EXIT_FAILED;
	}
	dash_server_handlers(srv, &h);
	dash_server_job_handlers(srv, &jh);
	for (int i = 0; !e && i < DASH_MAX_REFLECTORS; i++)
		e = store_add_handlers(c->stores[i], i == 0 ? &jh : &h);
	for (int i = 0; !e && i < DASH_MAX_REFLECTORS; i++)
		e = reflector_start(c->reflectors[i]);
	snprintf(url, sizeof(url), strchr(f->address, ':') ? "http://[%s]:%d/?token=%s" :
		 "http://%s:%d/?token=%s", f->address, dash_server_port(srv), token);
	if (!dash_is_loopback(f->address))
		fprintf(err, "%s: warning: listening on %s, reachable from other machines; "
			"whoever has the URL acts as you\n", DASHBOARD, f->address);
	fprintf(out, "%s: serving %s (namespace %s) at\n%s\n", DASHBOARD,
		k->cfg->server, f->all ? "all" : k->ns, url);
	fflush(out);
	if (f->open)
		open_browser(url, err);
	e = e ? e : dash_server_run(srv, &stop_flag);
	for (int i = 0; i < DASH_MAX_REFLECTORS; i++)
		reflector_stop(c->reflectors[i]);
	dash_server_free(srv);
	if (e)
		fprintf(err, "%s: %s\n", DASHBOARD, cadre_strerror(e));
	return e ? CLI_EXIT_FAILED : 0;
}

int cli_dashboard(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	struct cli_globals gl = *g;
	struct dash_flags f = { 0 };
	struct dash_cache c;
	struct cli_kube k = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	int code;

	memset(&c, 0, sizeof(c));
	if ((code = read_flags(&gl, &f, args, n, err)))
		return code;
	if (f.help) {
		cli_print_help(out, "dashboard");
		return 0;
	}
	if ((code = cli_kube_open(&gl, DASHBOARD, &k, err)))
		return code;
	if (cache_new(&k, f.all ? NULL : k.ns, &c)) {
		fprintf(err, "%s: out of memory\n", DASHBOARD);
		code = CLI_EXIT_FAILED;
		goto out;
	}
	/* The page says when the API server cannot be reached; the terminal stays quiet. */
	log_setup(LOG_ERROR, LOG_TEXT);
	atomic_store(&stop_flag, false);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	code = serve(&k, &f, &c, out, err);
out:
	cache_release(&c);
	cli_kube_close(&k);
	return code;
}
