/*
 * dashboard.c - `cadre dashboard`: the flags, the reflectors that keep the
 * stores (TrainingJobs, cadre's pods, nodes, the jobs' Events; and, on a
 * cluster of Dynamic Resource Allocation, its DeviceClasses, ResourceSlices
 * and ResourceClaims) with the user's own kubeconfig, and the server until
 * Ctrl-C.
 */
#include "cli/dashboard/dashboard.h"

#include "cli/dashboard/dash_server.h"
#include "cli/jobs.h"

#include "api/clustertopology.h"
#include "api/labels.h"
#include "base/err.h"
#include "base/log.h"
#include "kube/client.h"
#include "kube/reflector.h"
#include "api/pod_trim.h"
#include "kube/store.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* The first four always; the three of DRA when dra_watchable says so. */
#define DASH_BASE_REFLECTORS 4

struct dash_cache {
	struct store *stores[DASH_MAX_REFLECTORS];
	struct reflector *reflectors[DASH_MAX_REFLECTORS];
	size_t n;
};

static void cache_release(struct dash_cache *c)
{
	for (int i = 0; i < DASH_MAX_REFLECTORS; i++)
		reflector_free(c->reflectors[i]);
	for (int i = 0; i < DASH_MAX_REFLECTORS; i++)
		store_free(c->stores[i]);
}

/* A list's first item was seen: enough to know the list answers and is not empty. */
static int first_item(void *ctx, json_t *item)
{
	(void)item;
	*(bool *)ctx = true;
	return CADRE_ECANCELED;
}

/*
 * Whether to watch Dynamic Resource Allocation: the cluster serves
 * resource.k8s.io/v1, has a DeviceClass, and the user may list the
 * classes, the slices and the claims of ns (NULL: every namespace). A
 * watch the user may not make would fail and retry for ever, which the
 * page reads as the API server being away; so one short list of each,
 * before any watch, and the page shows the extended resources alone when
 * one is refused, as sinfo does.
 */
static bool dra_watchable(struct cli_kube *k, const char *ns)
{
	const struct kube_resource *const kinds[] = { &kube_resource_deviceclasses,
						      &kube_resource_resourceslices,
						      &kube_resource_resourceclaims };
	const struct kube_list_opts one = { .limit = 1 };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct kube_status st;
		bool seen = false;
		int e;

		kube_status_clear(&st);
		e = kube_client_list_each(k->http, kinds[i], kinds[i]->namespaced ? ns : NULL, &one,
					  first_item, &seen, NULL, &st);
		if ((e && e != CADRE_ECANCELED) || (i == 0 && !seen))
			return false;
	}
	return true;
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
		{ .resource = &kube_resource_deviceclasses },
		{ .resource = &kube_resource_resourceslices },
		/* Those of cadre's pods' namespaces: a device is used while one of them holds it. */
		{ .resource = &kube_resource_resourceclaims, .namespace = ns },
	};
	const struct store_options so[DASH_MAX_REFLECTORS] = {
		{ .kind = "trainingjobs", .trim = store_trim_bookkeeping },
		{ .kind = "pods", .trim = pod_trim },
		{ .kind = "nodes", .trim = store_trim_bookkeeping },
		{ .kind = "events", .trim = store_trim_bookkeeping },
		{ .kind = "deviceclasses", .trim = store_trim_bookkeeping },
		{ .kind = "resourceslices", .trim = store_trim_bookkeeping },
		{ .kind = "resourceclaims", .trim = store_trim_bookkeeping },
	};
	int e = 0;

	c->n = dra_watchable(k, ns) ? DASH_MAX_REFLECTORS : DASH_BASE_REFLECTORS;
	for (size_t i = 0; !e && i < c->n; i++) {
		if (!(c->stores[i] = store_new(&so[i])))
			e = CADRE_ENOMEM;
		else
			e = reflector_new(k->http, c->stores[i], &ro[i], &c->reflectors[i]);
	}
	e = e ? e : store_add_index(c->stores[1], "job", pod_index_job, NULL);
	e = e ? e : store_add_index(c->stores[3], "object", dash_index_event_object, NULL);
	return e;
}

/* Where the URL is printed, and how its host is spelt; for the codes that follow. */
struct url_printer {
	FILE *out;
	char host[300];   /* "127.0.0.1", "[::1]", "vm" */
	int port;
};

static int url_of(const struct url_printer *p, const char *code, char *url, size_t size)
{
	int n = snprintf(url, size, "http://%s:%d/?code=%s", p->host, p->port, code);

	return n < 0 || (size_t)n >= size ? CADRE_ETOOBIG : 0;
}

/* A browser used the printed URL: the next one gets another, printed here. */
static void print_next_code(void *ctx, const char *code)
{
	struct url_printer *p = ctx;
	char url[400];

	if (url_of(p, code, url, sizeof(url)))
		return;
	fprintf(p->out, "%s: that URL is used up; for another browser:\n%s\n", DASHBOARD, url);
	fflush(p->out);
	OPENSSL_cleanse(url, sizeof(url));
}

/*
 * The host the printed URL names: the address; for a wildcard one a name
 * another machine can reach it by: the first of the names that is not
 * loopback (the host name when it resolves to an address of this machine's
 * interfaces, else an interface's address).
 */
static void url_host(const char *address, const struct dash_names *names, char *out,
		     size_t size)
{
	const char *host = address;

	if (dash_is_wildcard(address)) {
		host = "127.0.0.1";
		for (size_t i = 0; i < names->n; i++) {
			const char *n = names->v[i];
			struct addrinfo *res = NULL;
			bool reachable = false;

			if (dash_is_wildcard(n) || dash_is_loopback(n))
				continue;
			/* a name: only when it leads away from loopback */
			if (!getaddrinfo(n, NULL, NULL, &res) && res) {
				char text[INET6_ADDRSTRLEN] = "";
				const struct sockaddr *sa = res->ai_addr;

				if (sa->sa_family == AF_INET)
					inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
						  text, sizeof(text));
				else if (sa->sa_family == AF_INET6)
					inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr,
						  text, sizeof(text));
				reachable = *text && !dash_is_loopback(text);
			}
			if (res)
				freeaddrinfo(res);
			if (reachable) {
				host = n;
				break;
			}
		}
	}
	snprintf(out, size, strchr(host, ':') ? "[%s]" : "%s", host);
}

/*
 * --open: xdg-open gets a file that sends the browser to the URL, never the
 * URL: every local user can read any process's arguments
 * (/proc/PID/cmdline), and the file is the user's own (0600, in a 0700
 * directory). The code in it opens one browser; the file goes when the
 * dashboard stops. *dir gets the directory to remove.
 */
static void open_browser(const char *url, char *dir, size_t dir_size, FILE *err)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	char path[512], *argv[] = { "xdg-open", path, NULL };
	FILE *f = NULL;
	pid_t pid;
	int fd;

	snprintf(dir, dir_size, "%s/cadre-dashboard-XXXXXX",
		 runtime && *runtime && !access(runtime, W_OK) ? runtime : "/tmp");
	if (!mkdtemp(dir)) {
		*dir = '\0';
		fprintf(err, "%s: --open: cannot make a directory for the page; open the URL "
			"above\n", DASHBOARD);
		return;
	}
	snprintf(path, sizeof(path), "%s/open.html", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		f = fdopen(fd, "w");
	if (!f || fprintf(f, "<!doctype html><meta charset=utf-8>"
			  "<meta http-equiv=refresh content=\"0;url=%s\">"
			  "<title>cadre dashboard</title><a href=\"%s\">cadre dashboard</a>\n",
			  url, url) < 0 || fclose(f)) {
		if (!f && fd >= 0)
			close(fd);
		fprintf(err, "%s: --open: cannot write %s; open the URL above\n", DASHBOARD, path);
		return;
	}
	if (posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ))
		fprintf(err, "%s: --open: cannot run xdg-open; open the URL above\n", DASHBOARD);
}

static void remove_open_page(const char *dir)
{
	char path[512];

	if (!*dir)
		return;
	snprintf(path, sizeof(path), "%s/open.html", dir);
	unlink(path);
	rmdir(dir);
}

/* "vm, 192.0.2.2, [fd00::2]": the names other than the wildcard, for the startup line. */
static void names_text(const struct dash_names *names, char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < names->n && used < size; i++) {
		int n;

		if (dash_is_wildcard(names->v[i]))
			continue;
		n = snprintf(out + used, size - used, strchr(names->v[i], ':') ? "%s[%s]" : "%s%s",
			     used ? ", " : "", names->v[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

/*
 * The cluster's topology levels for the cluster page, read once: the
 * ClusterTopology named default, or cadre's built-in levels when there is
 * none or it cannot be read (docs/topology.md). [{nodeLabel, name}], new.
 */
static json_t *topology_levels(struct cli_kube *k)
{
	struct cluster_topology t;
	json_t *out = json_array();

	cli_cluster_topology(k, &t);
	for (size_t i = 0; out && i < t.n_levels; i++)
		json_array_append_new(out, json_pack("{s:s, s:s?}", "nodeLabel", t.labels[i],
						     "name", t.names[i]));
	cluster_topology_release(&t);
	return out;
}

static int serve(struct cli_kube *k, const struct dash_flags *f, struct dash_cache *c,
		 FILE *out, FILE *err)
{
	struct dash_server_opts o = { .address = f->address, .port = f->port_n,
				      .scope = f->all ? "" : k->ns, .http = k->http,
				      .n_reflectors = c->n };
	struct url_printer printer = { .out = out };
	struct dash_server *srv = NULL;
	json_t *levels = NULL;
	struct store_handlers h, jh;
	char url[400], names[2048], open_dir[512] = "";
	int e;

	o.jobs = c->stores[0];
	o.pods = c->stores[1];
	o.nodes = c->stores[2];
	o.events = c->stores[3];
	o.device_classes = c->stores[4];
	o.resource_slices = c->stores[5];
	o.resource_claims = c->stores[6];
	for (size_t i = 0; i < c->n; i++)
		o.reflectors[i] = c->reflectors[i];
	o.on_code = print_next_code;
	o.code_ctx = &printer;
	o.levels = levels = topology_levels(k);
	if ((e = dash_server_start(&o, &srv))) {
		fprintf(err, "%s: cannot listen on %s:%d: %s\n", DASHBOARD, f->address, f->port_n,
			e == CADRE_EIO ? "the address is not this machine's, or the port is taken"
				       : cadre_strerror(e));
		json_decref(levels);
		return CLI_EXIT_FAILED;
	}
	dash_server_handlers(srv, &h);
	dash_server_job_handlers(srv, &jh);
	for (size_t i = 0; !e && i < c->n; i++)
		e = store_add_handlers(c->stores[i], i == 0 ? &jh : &h);
	for (size_t i = 0; !e && i < c->n; i++)
		e = reflector_start(c->reflectors[i]);
	printer.port = dash_server_port(srv);
	url_host(f->address, dash_server_names(srv), printer.host, sizeof(printer.host));
	url_of(&printer, dash_server_code(srv), url, sizeof(url));
	names_text(dash_server_names(srv), names, sizeof(names));
	if (!dash_is_loopback(f->address))
		fprintf(err, "%s: warning: listening on %s port %d, reachable from other machines "
			"as %s; whoever opens the URL acts as you\n", DASHBOARD, f->address,
			printer.port, names);
	fprintf(out, "%s: serving %s (namespace %s) at\n%s\n", DASHBOARD,
		k->cfg->server, f->all ? "all" : k->ns, url);
	fflush(out);
	if (f->open)
		open_browser(url, open_dir, sizeof(open_dir), err);
	OPENSSL_cleanse(url, sizeof(url));
	e = e ? e : dash_server_run(srv, &stop_flag);
	for (size_t i = 0; i < c->n; i++)
		reflector_stop(c->reflectors[i]);
	dash_server_free(srv);
	json_decref(levels);
	remove_open_page(open_dir);
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
