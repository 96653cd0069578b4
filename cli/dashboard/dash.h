/*
 * dash.h - internal to cli/: `cadre dashboard` (docs/design.md 10), a live page
 * served on loopback and fed by reflectors that read with the user's own
 * kubeconfig.
 *
 * Three parts, each in its own file:
 *   dash_json.c    pure: TrainingJobs, pods, nodes and events (as the stores
 *                  hold them) in, the JSON the page reads out. What reaches
 *                  the page is only the fields named here: no environment,
 *                  no Secret, no credential ever does.
 *   dash_auth.c    pure: the one-time code, the sessions it is traded for,
 *                  and the Host and Origin checks that stop CSRF and DNS
 *                  rebinding.
 *   dash_route.c   pure: what an HTTP request or a WebSocket message from
 *                  the browser asks for, decided from its bytes alone (so
 *                  it is unit-tested and fuzzed without a socket).
 *   dash_server.c  libwebsockets: the HTTP routes, the WebSocket that
 *                  pushes a snapshot then coalesced deltas, the actions.
 *   dashboard.c    the command: flags, stores, reflectors, the URL.
 */
#ifndef CADRE_CLI_DASH_H
#define CADRE_CLI_DASH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the page's files, embedded at build time (web/dashboard/, cmake/embed.cmake) ---- */

struct dash_asset {
	const char *path;          /* "/app.js" ("/index.html" is also "/") */
	const char *content_type;
	const unsigned char *data;
	size_t len;
};

extern const struct dash_asset dash_assets[];
extern const size_t dash_assets_len;

/* The asset served at path ("/" is "/index.html"); NULL when there is none. */
const struct dash_asset *dash_asset_find(const char *path);

/* ---- JSON for the page (dash_json.c): pure, every json_t * returned is a NEW reference ---- */

/*
 * The waiting jobs of jobs (an array of TrainingJobs, borrowed) in the order
 * gang admission looks at them (controller/admission/admission.h: priority, higher
 * first; creation time, older first; then namespace and name): an array of
 * "namespace/name" keys. Waiting is phase Queued or Pending and not
 * suspended. NULL when out of memory.
 */
json_t *dash_queue_order(const json_t *jobs);

/*
 * One row of the job list for tj (borrowed): key, namespace, name, jobId,
 * phase, ready, total, accelerators, queue, priority, reason and message
 * (why it waits, from the Admitted condition or status.message), created,
 * restarts, infraRestarts, requeues, preemptions, preemptedBy (the last
 * preemptor's "namespace/name", "" when none), preempting (how many jobs
 * it is stopping to make room), suspended; queuePosition (1-based) when
 * queue_pos > 0. NULL when out of memory or tj has no name.
 */
json_t *dash_job_summary(const json_t *tj, int queue_pos);

/*
 * Every row of the job list as an object keyed "namespace/name", with the
 * queue positions of dash_queue_order. NULL when out of memory.
 */
json_t *dash_job_map(const json_t *jobs);

/*
 * What changed from old_map to new_map (both from dash_job_map; old_map may
 * be NULL): {"upsert": [rows new or changed], "delete": [keys gone]}, rows
 * sorted by key. *out is NULL when nothing changed. 0 or CADRE_ENOMEM.
 */
int dash_job_delta(const json_t *old_map, const json_t *new_map, json_t **out);

/*
 * A job's page: {"job": row, "ranks": [...], "conditions": [...],
 * "events": [...], "lastFailure": {...} | null, "preemption": {preemptor,
 * attempt, time, graceSeconds, mode, tier} | null, "preempting": [{job,
 * attempt}]} (status.preemption and status.preempting). Ranks come from
 * status.nodes, completed with the pods (borrowed array, the job's pods as
 * pod_trim keeps them): rank, pod, node, ip, phase, exitCode (of the
 * main container once it ended), reason. Conditions are sorted by
 * lastTransitionTime (a timeline); events (borrowed array of core/v1
 * Events about the job) by time, at most the last 50. NULL when out of
 * memory.
 */
json_t *dash_job_detail(const json_t *tj, const json_t *pods, const json_t *events,
			int queue_pos);

/*
 * The GPU nodes: nodes (borrowed array of Nodes) with an allocatable
 * extended resource whose name ends in "/gpu" (nvidia.com/gpu, amd.com/gpu),
 * and pods (borrowed array of cadre's pods) that hold them:
 * [{"name", "ready", "product", "resource", "allocatable", "used", "free",
 *   "jobs": [{"key", "count"}]}], sorted by name. A pod holds its requests
 * while it is bound to the node and neither Succeeded nor Failed.
 *
 * A node without such a resource is a GPU node too when dra (borrowed; NULL:
 * none) has devices of the GPU classes on it (api/dra_nodes.h, as cadre
 * sinfo counts them where a partition names no class): "resource" is then
 * the first one's DeviceClass, "product" its productName, and a pod holds
 * a device while the claim allocated it is reserved for the pod (its
 * status.reservedFor) and the pod holds as above. NULL when out of memory.
 */
struct dra_nodes;
json_t *dash_gpu_nodes(const json_t *nodes, const json_t *pods, const struct dra_nodes *dra);

/*
 * The cluster's topology for the cluster page (docs/topology.md): for each of
 * levels ([{nodeLabel, name}], coarse to fine) that some GPU node carries,
 * {label, name, domains: [{value, nodes, freeNodes, freeGpus, gpus}]}, the
 * domains by value; a free node is Ready with every GPU free. gpu_rows are
 * dash_gpu_nodes' rows, nodes the Node objects they came from. A new array,
 * NULL when out of memory.
 */
json_t *dash_topology(const json_t *levels, const json_t *nodes, const json_t *gpu_rows);

/* Sum of "used" and "allocatable" over dash_gpu_nodes' rows. */
void dash_gpu_totals(const json_t *gpu_nodes, long long *used, long long *total);

/* GPUs in use over the last hour, sampled every DASH_SAMPLE_S seconds. */
#define DASH_SAMPLE_S 30
#define DASH_SAMPLES (3600 / DASH_SAMPLE_S)

struct dash_history {
	struct { int64_t t; long long used, total; } s[DASH_SAMPLES];
	size_t start, len;  /* a ring: the oldest at start */
};

/* Add a sample at Unix time t; the oldest goes when the ring is full. */
void dash_history_add(struct dash_history *h, int64_t t, long long used, long long total);

/* The samples, oldest first, as [[t, used, total], ...]. NULL when out of memory. */
json_t *dash_history_json(const struct dash_history *h);

/* ---- whether the API server can be reached (dash_json.c) ---- */

/*
 * The page's "disconnected" banner. Each second the server looks at the
 * reflectors' failure counters (watch restarts other than the server's
 * normal close, failed lists): when they moved, or while it is
 * disconnected, it probes the API server (GET /version) once. The state
 * is:
 *   connected     until a failure is counted and the probe fails;
 *   disconnected  until a probe succeeds with no new failure counted in
 *                 that second.
 * Pure; the caller does the probing.
 */
struct dash_health {
	bool connected;
	uint64_t failures;  /* the counters' sum at the last step */
};

/* Starts connected with the counters at failures. */
void dash_health_init(struct dash_health *h, uint64_t failures);

/* Whether this step must probe, given the counters' sum now. */
bool dash_health_needs_probe(const struct dash_health *h, uint64_t failures);

/*
 * One step: failures is the counters' sum now; probe_ok whether the probe
 * (when needs_probe said so) succeeded. Returns whether the state changed.
 */
bool dash_health_step(struct dash_health *h, uint64_t failures, bool probe_ok);

/* ---- access (dash_auth.c): pure but for dash_token_new and dash_names_for ---- */

/*
 * A random secret: 32 random bytes as 64 lowercase hex digits. The printed
 * URL carries a one-time code; a browser that brings it gets a session of
 * its own (a cookie), and the code is spent: a new one is made for the
 * next browser. So what a URL leaks (a shell history, a screen) opens
 * nothing once used, and the cookie that does is no secret ever printed.
 */
#define DASH_TOKEN_LEN 64
/* The session's cookie. */
#define DASH_COOKIE "cadre_dashboard"
/* Browsers with a session at once; a new one past this ends the oldest's. */
#define DASH_MAX_SESSIONS 32

/* A new random secret into out (DASH_TOKEN_LEN + 1 bytes). 0 or CADRE_EIO. */
int dash_token_new(char out[DASH_TOKEN_LEN + 1]);

/* Whether given equals token, in time that does not depend on where they differ. */
bool dash_token_equal(const char *given, const char *token);

/* The one-time code and the sessions it was traded for. Not thread-safe: the service thread's. */
struct dash_auth {
	char code[DASH_TOKEN_LEN + 1];
	char sessions[DASH_MAX_SESSIONS][DASH_TOKEN_LEN + 1];
	size_t nsessions, oldest;
};

/* No session, and code as the first code (copied; NULL: a random one). 0 or CADRE_EIO. */
int dash_auth_init(struct dash_auth *a, const char *code);

/*
 * Trade code for a new session: 0 with the session (the cookie's value) in
 * session, and a new code in a->code; CADRE_EUNAUTHORIZED when code is not
 * the one outstanding (used already, or never this dashboard's);
 * CADRE_EIO without random bytes.
 */
int dash_auth_redeem(struct dash_auth *a, const char *code, char session[DASH_TOKEN_LEN + 1]);

/* Whether a Cookie header (may be NULL) carries one of a's sessions as DASH_COOKIE. */
bool dash_auth_cookie_ok(const struct dash_auth *a, const char *cookie);

/*
 * Whether a Cookie header carries DASH_COOKIE=token (among other cookies,
 * "a=1; cadre_dashboard=...; b=2"). cookie may be NULL.
 */
bool dash_cookie_ok(const char *cookie, const char *token);

/*
 * The Set-Cookie value that keeps a session: HttpOnly (no script reads
 * it), SameSite=Strict (no other site's page sends it), Path=/.
 */
int dash_cookie_header(const char *session, char *out, size_t size);

/*
 * The names a request's Host may carry: what the server listens on is
 * reachable by these, and a DNS-rebinding page's own name is none of them.
 */
#define DASH_MAX_NAMES 64
struct dash_names {
	char v[DASH_MAX_NAMES][256];
	size_t n;
};

/* Add name (once; cut when longer than 255 bytes). */
void dash_names_add(struct dash_names *names, const char *name);

/*
 * The names for a server bound to address: the address itself; with a
 * loopback address also localhost and 127.0.0.1; with a wildcard address
 * (0.0.0.0, or :: for both families) every address of this machine's
 * interfaces (getifaddrs: IPv4 for 0.0.0.0, both for ::), its host name
 * (gethostname) and that name's canonical form, and localhost. Not pure:
 * it asks the system.
 */
void dash_names_for(const char *address, struct dash_names *out);

/* Whether address listens on every interface (0.0.0.0, ::). */
bool dash_is_wildcard(const char *address);

/*
 * Whether a Host header is "<name>:<port>" for one of names (case-insensitive;
 * an IPv6 address in brackets). host may be NULL (refused).
 */
bool dash_host_ok(const char *host, const struct dash_names *names, int port);

/*
 * Whether an Origin header is the page's own: "http://" plus a Host that
 * dash_host_ok accepts. NULL or "null" is refused: a WebSocket or POST
 * from a browser always carries one.
 */
bool dash_origin_ok(const char *origin, const struct dash_names *names, int port);

/* Whether address is a loopback address (127.0.0.0/8, ::1, localhost). */
bool dash_is_loopback(const char *address);

/* ---- what a request asks for (dash_route.c): pure ---- */

/* An HTTP request as the browser sent it; every field is untrusted. */
struct dash_request {
	bool post;
	const char *path;    /* the URL path, without the query */
	const char *code;    /* the query's code= argument; NULL when absent */
	const char *host;    /* the headers; NULL when absent (or too long to read) */
	const char *origin;
	const char *cookie;
};

/* The server a request must be for. */
struct dash_site {
	const struct dash_names *names;  /* what Host may name */
	int port;
	const struct dash_auth *auth;    /* the outstanding code and the sessions */
};

/* The answer to a code that is not the one outstanding. */
#define DASH_CODE_REFUSAL "401 this link was used already or is not this dashboard's: " \
			  "open the one cadre dashboard printed last"

enum dash_route_kind {
	DASH_ROUTE_REFUSE,       /* answer refusal */
	DASH_ROUTE_FIRST_VISIT,  /* the printed URL: trade the code for a session */
	DASH_ROUTE_ACTION,       /* POST /api/jobs/NS/NAME/VERB */
	DASH_ROUTE_ASSET,        /* one of the page's files */
};

struct dash_route {
	enum dash_route_kind kind;
	const char *refusal;   /* DASH_ROUTE_REFUSE: "<status> <text>", a static string */
	char ns[64];           /* DASH_ROUTE_ACTION: the job, each part free of '/' */
	char name[254];
	char verb[16];         /* "cancel", "suspend" or "resume" */
	const struct dash_asset *asset;  /* DASH_ROUTE_ASSET */
};

/*
 * Decide req for site into *out. Only the printed URL's visit (GET / with
 * the outstanding code) is let through without a session's cookie; every
 * other route needs a Host that names the site and the cookie, and a POST
 * an Origin of the site as well (dash_refusal). Never fails.
 */
void dash_route(const struct dash_request *req, const struct dash_site *site,
		struct dash_route *out);

/*
 * Why a request or a WebSocket upgrade with these headers is refused,
 * "<status> <text>" (a static string), or NULL when it is not. need_origin
 * for a POST and an upgrade: a browser always sends one there, and another
 * site's page is refused by it.
 */
const char *dash_refusal(const char *host, const char *origin, const char *cookie,
			 bool need_origin, const struct dash_site *site);

enum dash_ws_kind {
	DASH_WS_IGNORE,   /* not a message the page sends: nothing changes */
	DASH_WS_WATCH,    /* {"watch": "NS/NAME"}: follow that job */
	DASH_WS_UNWATCH,  /* {"watch": anything else}: follow none */
};

/*
 * What a WebSocket message from the page (len bytes, any) asks for; for
 * DASH_WS_WATCH the job's key into watch (size bytes, terminated). A key
 * that does not fit is DASH_WS_UNWATCH.
 */
enum dash_ws_kind dash_ws_message(const char *in, size_t len, char *watch, size_t size);

/* ---- the server (dash_server.c) ---- */

struct store;
struct reflector;
struct kube_http;
struct dash_server;

/* TrainingJobs, pods, nodes, Events; then DeviceClasses, ResourceSlices, ResourceClaims. */
#define DASH_MAX_REFLECTORS 7

struct dash_server_opts {
	const char *address;      /* the bound address */
	int port;                 /* 0: the kernel picks one */
	const struct dash_names *names;  /* what Host may name (copied); NULL: dash_names_for */
	const char *code;         /* the first one-time code (copied); NULL: a random one */
	/* Called on the service thread with each new code once the last was used. May be NULL. */
	void (*on_code)(void *ctx, const char *code);
	void *code_ctx;
	const char *scope;        /* the namespace read, or "" for every one; copied */
	struct kube_http *http;   /* borrowed: actions, logs and probes, user's credentials */
	/* borrowed stores: TrainingJobs, cadre's pods (indexed "job"), nodes, Events */
	struct store *jobs, *pods, *nodes, *events;
	/*
	 * Borrowed stores of Dynamic Resource Allocation, the claims of the pods'
	 * namespaces: NULL when the cluster has none, or the user may not list
	 * them (the GPU nodes are then the extended resources').
	 */
	struct store *device_classes, *resource_slices, *resource_claims;
	struct reflector *reflectors[DASH_MAX_REFLECTORS];  /* borrowed, for their counters */
	size_t n_reflectors;
	/* The topology levels ([{nodeLabel, name}], coarse to fine); borrowed; may be NULL. */
	const json_t *levels;
	/* Probe the API server (GET /version): 0 when it answers. NULL: via http. */
	int (*probe)(void *ctx);
	void *probe_ctx;
};

/*
 * Listen on opts->address:opts->port. 0 and *out, CADRE_EIO when it cannot
 * listen, CADRE_ENOMEM. Nothing is served until dash_server_run.
 */
int dash_server_start(const struct dash_server_opts *opts, struct dash_server **out);

/* The port listened on. */
int dash_server_port(const struct dash_server *srv);

/*
 * Serve until *stop is set (checked at least every 250 ms): HTTP, the
 * WebSocket pushes (every 250 ms when something changed), the health
 * probes (every second, on a thread of their own). 0 or CADRE_EIO.
 */
int dash_server_run(struct dash_server *srv, const _Atomic bool *stop);

/* Whether the page is told the API server answers (for tests). Thread-safe. */
bool dash_server_connected(struct dash_server *srv);

/* The one-time code outstanding now (the printed URL's). Service thread, or before run. */
const char *dash_server_code(const struct dash_server *srv);

/* The names Host may carry (for the startup line). */
const struct dash_names *dash_server_names(const struct dash_server *srv);

/* Free; not while dash_server_run runs. NULL is a no-op. */
void dash_server_free(struct dash_server *srv);

/*
 * Store handlers that tell srv something changed (ctx is srv); the jobs'
 * store takes dash_server_job_handlers, which also keep each job's phases.
 */
void dash_server_handlers(struct dash_server *srv, void *handlers /* struct store_handlers */);
void dash_server_job_handlers(struct dash_server *srv, void *handlers);

#endif
