/*
 * sinfo.c - cadre sinfo: the partitions and their nodes, as Slurm's sinfo
 * prints them (cli/sinfo.h; src/sinfo/opts.c, print.c, sort.c).
 *
 * Rows: without -N, one per partition and group of nodes that agree on
 * every node field of the format (the state, for the default one), sorted
 * as sinfo's "#P,-t" (partitions in their order, here the API server's, by
 * name; then the state, highest first); with -N, one per node and
 * partition, by node name. A field "%[.][WIDTH|#]X": "." right-justifies,
 * WIDTH pads and cuts, "#" is the width sinfo computes for PARTITION (the
 * longest name with its "*", at least 9) and NODELIST (-N).
 */
#include "cli/sinfo.h"
#include "cli/cli.h"
#include "cli/jobs.h"
#include "cli/kube.h"
#include "cli/code.h"

#include "api/clustertopology.h"
#include "api/dra_nodes.h"
#include "api/fielderr.h"
#include "api/hostlist.h"
#include "api/labels.h"
#include "api/partition.h"
#include "api/quantity.h"
#include "api/slurm.h"
#include "base/buf.h"
#include "base/err.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SINFO "sinfo"
#define CMD "cadre sinfo"

/*
 * Slurm's enum node_states and flags, for the sort (sort.c _sort_by_state).
 * ST_UNKNOWN: the pods are not readable (sinfo_query.usage_unknown), or
 * for a node of DRA GPUs the claims (dra_claims_unknown), so alloc, mix
 * and idle cannot be told apart.
 */
enum { ST_UNKNOWN = 0, ST_DOWN = 1, ST_IDLE = 2, ST_ALLOC = 3, ST_MIX = 5, ST_DRAIN = 0x200,
       ST_NO_RESPOND = 0x800 };

struct node {
	const char *name;
	const json_t *labels;
	unsigned state;
	long long cpus, mem_mb, disk_mb, gpus, gpus_used;
	char gres[96];
	const char *reason;
};

struct part {
	struct partition p;
	bool ok;
	size_t view;  /* its nodes: model.nodes[view * n_nodes ...], as its device class has them */
};

/* A row: a partition and its nodes (indices into the node array). */
struct row {
	const struct part *part;
	size_t part_index;
	size_t *nodes;
	size_t n;
	char key[1024];
};

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static long long quantity(const json_t *q, bool milli_out)
{
	int64_t milli = 0;

	if (json_is_string(q) && !quantity_parse(json_string_value(q), &milli))
		return (long long)(milli_out ? milli : milli / 1000);
	if (json_is_integer(q))
		return (long long)json_integer_value(q) * (milli_out ? 1000 : 1);
	return 0;
}

static bool is_gpu_resource(const char *name)
{
	size_t n = strlen(name);

	return strchr(name, '/') && n > 4 && !strcmp(name + n - 4, "/gpu");
}

void sinfo_gres_type(const char *product, char out[64])
{
	/* Each before a '-' (a label's words) or a ' ' (a DRA productName's). */
	static const char *const prefixes[] = { "NVIDIA", "Tesla", "GeForce", "Quadro" };
	const char *p = product ? product : "";
	size_t n = 0;
	bool again = true;

	while (again) {
		again = false;
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
			size_t len = strlen(prefixes[i]);

			if (!strncasecmp(p, prefixes[i], len) && (p[len] == '-' || p[len] == ' ')) {
				p += len + 1;
				again = true;
			}
		}
	}
	while (p[n] && p[n] != '-' && p[n] != ' ' && p[n] != '_' && n < 63) {
		out[n] = (char)tolower((unsigned char)p[n]);
		n++;
	}
	out[n] = '\0';
}

/* ---- nodes ---- */

static const char *ready_status(const json_t *node)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c)
		if (str(c, "type") && !strcmp(str(c, "type"), "Ready"))
			return str(c, "status") ? str(c, "status") : "Unknown";
	return "Unknown";
}

static long long pod_request(const json_t *pod, const char *resource, bool milli)
{
	const json_t *c;
	long long sum = 0;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, c)
		sum += quantity(json_object_get(json_object_get(json_object_get(c, "resources"),
								"requests"), resource), milli);
	return sum;
}

static bool pod_live_on(const json_t *pod, const char *node)
{
	const char *on = str(json_object_get(pod, "spec"), "nodeName");
	const char *phase = str(json_object_get(pod, "status"), "phase");

	return on && !strcmp(on, node) &&
	       !(phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")));
}

/* What a node's state is read against. */
struct usage {
	const json_t *pods;         /* NULL: none, or not readable (pods_unknown) */
	bool pods_unknown;
	const struct dra_nodes *dra;  /* NULL: no DRA devices */
	bool claims_unknown;
	const char *device_class;   /* its partition's deviceClassName; NULL: the GPU classes */
};

/*
 * The node's GPUs: the "/gpu" extended resource of its allocatable, held
 * by the requests of the pods bound to it; without one, the DRA devices of
 * u's class on it, held by the claims allocated them. A node that lists
 * both is a device plugin's (KEP-5004: the scheduler then takes the
 * extended resource's path too).
 */
static void node_read(const json_t *obj, const struct usage *u, struct node *n)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const json_t *status = json_object_get(obj, "status");
	const json_t *cap = json_object_get(status, "capacity");
	const json_t *alloc = json_object_get(status, "allocatable");
	const char *gpu_res = NULL, *key, *ready, *product;
	const json_t *v, *pod, *pods = u->pods;
	struct dra_node_gpus dra = { 0 };
	long long cpu_milli, cpu_used = 0;
	bool anything = false, usage_unknown = u->pods_unknown;
	size_t i;

	memset(n, 0, sizeof(*n));
	n->name = str(meta, "name") ? str(meta, "name") : "";
	n->labels = json_object_get(meta, "labels");
	n->cpus = quantity(json_object_get(cap, "cpu"), false);
	n->mem_mb = quantity(json_object_get(cap, "memory"), false) / (1024 * 1024);
	n->disk_mb = quantity(json_object_get(cap, "ephemeral-storage"), false) / (1024 * 1024);
	cpu_milli = quantity(json_object_get(alloc ? alloc : cap, "cpu"), true);
	json_object_foreach((json_t *)(alloc ? alloc : cap), key, v)
		if (is_gpu_resource(key) && quantity(v, false) > 0) {
			gpu_res = key;
			n->gpus = quantity(v, false);
		}
	product = str(n->labels, "nvidia.com/gpu.product");
	if (!gpu_res && u->dra) {
		dra_nodes_gpus(u->dra, n->name, u->device_class, &dra);
		n->gpus = dra.devices;
		n->gpus_used = dra.held;
		product = dra.product;
		/* What the claims hold is known, or not, whoever may list pods. */
		if (dra.devices)
			usage_unknown = u->claims_unknown;
	}
	if (gpu_res || dra.devices) {
		char type[64];

		sinfo_gres_type(product, type);
		if (*type)
			snprintf(n->gres, sizeof(n->gres), "gpu:%s:%lld", type, n->gpus);
		else
			snprintf(n->gres, sizeof(n->gres), "gpu:%lld", n->gpus);
	} else {
		snprintf(n->gres, sizeof(n->gres), "(null)");
	}
	json_array_foreach(pods, i, pod) {
		if (!pod_live_on(pod, n->name))
			continue;
		if (gpu_res)
			n->gpus_used += pod_request(pod, gpu_res, false);
		if (str(json_object_get(json_object_get(pod, "metadata"), "labels"), LABEL_JOB_NAME)) {
			cpu_used += pod_request(pod, "cpu", true);
			anything = true;
		}
	}
	if (usage_unknown) {
		n->state = ST_UNKNOWN;
	} else if (gpu_res || dra.devices) {
		n->state = !n->gpus_used ? ST_IDLE : n->gpus_used >= n->gpus ? ST_ALLOC : ST_MIX;
		anything = n->gpus_used > 0;
	} else {
		n->state = !anything ? ST_IDLE : cpu_used >= cpu_milli ? ST_ALLOC : ST_MIX;
	}
	ready = ready_status(obj);
	if (json_is_true(json_object_get(json_object_get(obj, "spec"), "unschedulable"))) {
		/* Slurm: DRAINED unless something is known to run (UNKNOWN+DRAIN too). */
		n->state = (usage_unknown ? ST_UNKNOWN : anything ? ST_ALLOC : ST_IDLE) | ST_DRAIN;
		n->reason = "cordoned";
	} else if (!strcmp(ready, "False")) {
		n->state = ST_DOWN;
		n->reason = "NotReady";
	} else if (strcmp(ready, "True")) {
		n->state = ST_DOWN | ST_NO_RESPOND;
		n->reason = "Not responding";
	}
}

static const char *state_compact(unsigned s)
{
	switch (s) {
	case ST_IDLE: return "idle";
	case ST_ALLOC: return "alloc";
	case ST_MIX: return "mix";
	case ST_DOWN: return "down";
	case ST_DOWN | ST_NO_RESPOND: return "down*";
	case ST_IDLE | ST_DRAIN: case ST_UNKNOWN | ST_DRAIN: return "drain";
	case ST_UNKNOWN: return "unk";
	default: return "drng";
	}
}

static const char *state_long(unsigned s)
{
	switch (s) {
	case ST_IDLE: return "idle";
	case ST_ALLOC: return "allocated";
	case ST_MIX: return "mixed";
	case ST_DOWN: return "down";
	case ST_DOWN | ST_NO_RESPOND: return "down*";
	case ST_IDLE | ST_DRAIN: case ST_UNKNOWN | ST_DRAIN: return "drained";
	case ST_UNKNOWN: return "unknown";
	default: return "draining";
	}
}

static bool in_partition(const struct node *n, const struct partition *p)
{
	const char *key;
	const json_t *v;

	json_object_foreach(p->spec.node_selector, key, v) {
		const char *have = str(n->labels, key);

		if (!have || !json_is_string(v) || strcmp(have, json_string_value(v)))
			return false;
	}
	return true;
}

/* ---- formats ---- */

struct field {
	char letter;
	bool right, computed;
	int width;
	const char *suffix;  /* into the format, suffix_len bytes */
	size_t suffix_len;
};

static const char known[] = "PRalLDtTNcmGFAsrhgzdwfEipy";

/* Parse format into fields (at most max); *prefix_len bytes of text before the first. */
static int parse_format(const char *format, struct field *f, size_t max, size_t *n,
			size_t *prefix_len, size_t *bad)
{
	const char *p = strchr(format, '%');

	*n = 0;
	*prefix_len = p ? (size_t)(p - format) : strlen(format);
	while (p) {
		const char *start = p++;
		struct field x = { 0 };

		if (*p == '.') {
			x.right = true;
			p++;
		}
		if (*p == '#') {
			x.computed = true;
			p++;
		}
		while (isdigit((unsigned char)*p))
			x.width = x.width * 10 + (*p++ - '0');
		if (!*p || !strchr(known, *p) || *n == max) {
			if (bad)
				*bad = (size_t)(start - format);
			return CADRE_EINVAL;
		}
		x.letter = *p++;
		x.suffix = p;
		x.suffix_len = strcspn(p, "%");
		p = p[x.suffix_len] ? p + x.suffix_len : NULL;
		f[(*n)++] = x;
	}
	return 0;
}

static bool format_has(const char *format, char letter)
{
	struct field f[64];
	size_t n = 0, prefix;

	if (parse_format(format, f, 64, &n, &prefix, NULL))
		return false;
	for (size_t i = 0; i < n; i++)
		if (f[i].letter == letter)
			return true;
	return false;
}

bool sinfo_format_ok(const char *format, size_t *bad)
{
	struct field f[64];
	size_t n, prefix;

	return !parse_format(format, f, 64, &n, &prefix, bad);
}

bool sinfo_states_ok(const char *list)
{
	static const char *const names[] = { "idle", "alloc", "allocated", "mix", "mixed", "down",
					     "drain", "drained", "draining", "drng", "unk", "unknown",
					     "all" };

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		bool found = false;

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !found; i++)
			found = len && len <= strlen(names[i]) && !strncasecmp(p, names[i], len);
		if (!found)
			return false;
		p += len + (p[len] == ',');
	}
	return true;
}

/* Whether node state s is one -t names (a prefix of a compact or long name, as sinfo). */
static bool state_wanted(unsigned s, const char *list)
{
	if (!list)
		return true;
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		unsigned base = s & ~(unsigned)(ST_DRAIN | ST_NO_RESPOND);

		if (len && (!strncasecmp(p, "all", len) ||
			    !strncasecmp(p, state_compact(s), len) ||
			    !strncasecmp(p, state_long(s), len) ||
			    ((s & ST_DRAIN) && !strncasecmp(p, "drain", len)) ||
			    (!(s & ST_DRAIN) && base == ST_DOWN && !strncasecmp(p, "down", len))))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

/* print.c _print_str: right-justified or padded to width, cut to width when cut. */
static int cell(struct buf *out, const char *s, int width, bool right, bool cut)
{
	size_t len = strlen(s);
	int e = 0;

	if (!width)
		return buf_adds(out, s);
	if (cut && len > (size_t)width)
		len = (size_t)width;
	for (size_t i = len; right && i < (size_t)width && !e; i++)
		e = buf_addc(out, ' ');
	if (!e)
		e = buf_add(out, s, len);
	for (size_t i = len; !right && i < (size_t)width && !e; i++)
		e = buf_addc(out, ' ');
	return e;
}

/* %y: "name=value" of every topology level whose label the node carries, else "-". */
static void topology_text(const struct sinfo_query *q, const struct node *n, char *out,
			  size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < q->n_topo && used + 1 < size; i++) {
		const char *v = str(n->labels, q->topo_labels[i]);
		const char *name = q->topo_names && q->topo_names[i] ? q->topo_names[i] : NULL;
		const char *slash;

		if (!v)
			continue;
		if (!name)
			name = (slash = strrchr(q->topo_labels[i], '/')) ? slash + 1 :
			       q->topo_labels[i];
		used += (size_t)snprintf(out + used, size - used, "%s%s=%s", used ? "," : "", name,
					 v);
	}
	if (!used)
		snprintf(out, size, "-");
}

/*
 * A partition's priority tier as sinfo's %p prints it: _build_min_max_16_string
 * through convert_num_unit with CONVERT_NUM_UNIT_EXACT, which goes up a unit
 * of 1024 while no more than half of one is lost, so 1024 is "1K" and 1536
 * "1.50K" (the ceiling, 65533, never reaches "M").
 */
static void tier_text(int32_t tier, char out[48])
{
	if (tier >= 1024 && tier % 1024 == 0)
		snprintf(out, 48, "%dK", (int)(tier / 1024));
	else if (tier >= 1024 && tier % 512 == 0)
		snprintf(out, 48, "%.2fK", tier / 1024.0);
	else
		snprintf(out, 48, "%d", (int)tier);
}

/* "96" or "96+" for the lowest of a group that differs (_build_min_max_32_string). */
static void min_plus(long long lo, long long hi, char out[48])
{
	snprintf(out, 48, lo == hi ? "%lld" : "%lld+", lo);
}

struct ctx {
	const struct sinfo_query *q;
	const struct node *nodes;
	const struct part *parts;
	int part_width, node_width;
	struct buf tmp;
};

static int nodelist(const struct ctx *c, const struct row *r, struct buf *out)
{
	const char **names = calloc(r->n + 1, sizeof(*names));
	int e;

	if (!names)
		return CADRE_ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		names[i] = c->nodes[r->nodes[i]].name;
	e = hostlist_compress(names, r->n, out);
	free(names);
	return e;
}

/* One field's text for row r (NULL: the header) into out. */
static int field_text(struct ctx *c, char letter, const struct row *r, struct buf *out)
{
	const struct partition *p = r ? &r->part->p : NULL;
	const struct node *first = r && r->n ? &c->nodes[r->nodes[0]] : NULL;
	long long lo = 0, hi = 0;
	char t[48];
	size_t alloc = 0, idle = 0, other = 0;

	if (!r) {
		static const char *const heads[][2] = {
			{ "P", "PARTITION" }, { "R", "PARTITION" }, { "a", "AVAIL" },
			{ "l", "TIMELIMIT" }, { "L", "DEFAULTTIME" }, { "D", "NODES" },
			{ "t", "STATE" }, { "T", "STATE" }, { "N", "NODELIST" }, { "c", "CPUS" },
			{ "m", "MEMORY" }, { "G", "GRES" }, { "F", "NODES(A/I/O/T)" },
			{ "A", "NODES(A/I)" }, { "s", "JOB_SIZE" }, { "r", "ROOT" },
			{ "h", "OVERSUBSCRIBE" }, { "g", "GROUPS" }, { "z", "S:C:T" },
			{ "d", "TMP_DISK" }, { "w", "WEIGHT" }, { "f", "AVAIL_FEATURES" },
			{ "E", "REASON" }, { "i", "RESERVATION" }, { "p", "PRIO_TIER" },
			{ "y", "TOPOLOGY" },
		};

		for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
			if (heads[i][0][0] == letter)
				return buf_adds(out, heads[i][1]);
		return 0;
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct node *n = &c->nodes[r->nodes[i]];
		unsigned base = n->state & ~(unsigned)(ST_DRAIN | ST_NO_RESPOND);

		if (n->state & (ST_DRAIN | ST_NO_RESPOND) || base == ST_DOWN || base == ST_UNKNOWN)
			other++;
		else if (base == ST_IDLE)
			idle++;
		else
			alloc++;
	}
	switch (letter) {
	case 'P':
		return buf_addf(out, "%s%s", p->meta.name, p->spec.is_default ? "*" : "");
	case 'R': return buf_adds(out, p->meta.name);
	case 'a': return buf_adds(out, "up");
	case 'l':
		slurm_time_sinfo(p->spec.max_time_s, t);
		return buf_adds(out, t);
	case 'L':
		slurm_time_sinfo(p->spec.default_time_s ? p->spec.default_time_s : -1, t);
		return buf_adds(out, p->spec.default_time_s ? t : "n/a");
	case 'D': return buf_addf(out, "%zu", r->n);
	case 't': return buf_adds(out, first ? state_compact(first->state) : "n/a");
	case 'T': return buf_adds(out, first ? state_long(first->state) : "n/a");
	case 'N': return nodelist(c, r, out);
	case 'c': case 'm': case 'd':
		for (size_t i = 0; i < r->n; i++) {
			const struct node *n = &c->nodes[r->nodes[i]];
			long long v = letter == 'c' ? n->cpus : letter == 'm' ? n->mem_mb : n->disk_mb;

			lo = !i || v < lo ? v : lo;
			hi = !i || v > hi ? v : hi;
		}
		min_plus(lo, hi, t);
		return buf_adds(out, t);
	case 'G': return buf_adds(out, first ? first->gres : "(null)");
	case 'F': return buf_addf(out, "%zu/%zu/%zu/%zu", alloc, idle, other, r->n);
	case 'A': return buf_addf(out, "%zu/%zu", alloc, idle);
	case 's': return buf_adds(out, "1-infinite");
	case 'r': return buf_adds(out, "no");
	case 'h': return buf_adds(out, "NO");
	case 'g': return buf_adds(out, "all");
	case 'z': return buf_addf(out, "%lld:1:1", first ? first->cpus : 0);
	case 'w': return buf_adds(out, "1");
	case 'f': return buf_adds(out, "(null)");
	case 'E': return buf_adds(out, first && first->reason ? first->reason : "none");
	case 'i': return 0;
	case 'p':
		tier_text(p->spec.priority_tier, t);
		return buf_adds(out, t);
	case 'y': {
		char where[512];

		if (!first)
			return buf_adds(out, "-");
		topology_text(c->q, first, where, sizeof(where));
		return buf_adds(out, where);
	}
	}
	return 0;
}

/* The node fields of format: rows group the nodes that agree on them. */
static void group_key(const struct sinfo_query *q, const struct field *f, size_t nf,
		      const struct node *n, char *key, size_t size)
{
	size_t used = 0;

	key[0] = '\0';
	for (size_t i = 0; i < nf && used + 1 < size; i++) {
		const char *v = NULL;
		char t[512];

		switch (f[i].letter) {
		case 't': v = state_compact(n->state); break;
		case 'T': v = state_long(n->state); break;
		case 'G': v = n->gres; break;
		case 'E': v = n->reason ? n->reason : "none"; break;
		case 'c': snprintf(t, sizeof(t), "%lld", n->cpus); v = t; break;
		case 'm': snprintf(t, sizeof(t), "%lld", n->mem_mb); v = t; break;
		case 'd': snprintf(t, sizeof(t), "%lld", n->disk_mb); v = t; break;
		case 'z': snprintf(t, sizeof(t), "%lld", n->cpus); v = t; break;
		case 'y': topology_text(q, n, t, sizeof(t)); v = t; break;
		default: break;
		}
		if (v)
			used += (size_t)snprintf(key + used, size - used, "%c=%s;", f[i].letter, v);
	}
}

/* Host name order (hostlist.c's sort): the prefix, then the number. */
static int host_cmp(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), da = la, db = lb;
	int c;

	while (da && isdigit((unsigned char)a[da - 1]))
		da--;
	while (db && isdigit((unsigned char)b[db - 1]))
		db--;
	if (da != db || (c = strncmp(a, b, da)))
		return strcmp(a, b);
	if (la - da != lb - db)
		return (la - da > lb - db) - (la - da < lb - db);
	return strcmp(a + da, b + db);
}

static const struct node *sort_nodes;

static int node_index_cmp(const void *x, const void *y)
{
	return host_cmp(sort_nodes[*(const size_t *)x].name, sort_nodes[*(const size_t *)y].name);
}

static int row_cmp_part_state(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	unsigned sa = a->n ? sort_nodes[a->nodes[0]].state : 0;
	unsigned sb = b->n ? sort_nodes[b->nodes[0]].state : 0;

	if (a->part_index != b->part_index)
		return a->part_index < b->part_index ? -1 : 1;
	if (sa != sb)
		return sa > sb ? -1 : 1;
	return strcmp(a->key, b->key);
}

static int row_cmp_node(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int c = host_cmp(sort_nodes[a->nodes[0]].name, sort_nodes[b->nodes[0]].name);

	return c ? c : (a->part_index > b->part_index) - (a->part_index < b->part_index);
}

/*
 * The nodes are read once per view: the GPU classes (view 0), then each
 * deviceClassName a listed partition names, since a node's DRA GPUs are
 * those of its partition's class. Without DRA devices there is one view.
 */
struct model {
	struct node *nodes;  /* n_views * n_nodes */
	size_t n_nodes, n_views;
	struct part *parts;
	size_t n_parts;
	struct row *rows;
	size_t n_rows;
};

static void model_release(struct model *m)
{
	for (size_t i = 0; i < m->n_parts; i++)
		partition_release(&m->parts[i].p);
	for (size_t i = 0; i < m->n_rows; i++)
		free(m->rows[i].nodes);
	free(m->nodes);
	free(m->parts);
	free(m->rows);
	memset(m, 0, sizeof(*m));
}

/*
 * The partitions q lists into m->parts, each with its view: 0, or the
 * index in views (the class names, views[0] NULL; room for every
 * partition) of its deviceClassName, added when new. 0 or CADRE_ENOMEM.
 */
static int model_parts(const struct sinfo_query *q, const json_t *partitions, struct model *m,
		       const char **views)
{
	const json_t *obj;
	size_t i;

	m->n_views = 1;
	json_array_foreach(partitions, i, obj) {
		struct field_errors errs;
		struct part *p = &m->parts[m->n_parts];
		int e;

		field_errors_init(&errs);
		e = partition_parse(obj, &p->p, &errs);
		field_errors_release(&errs);
		if (e == CADRE_ENOMEM) {
			partition_release(&p->p);
			return e;
		}
		if (!p->p.meta.name || (q->partitions && !cli_in_list(p->p.meta.name, q->partitions,
								      false))) {
			partition_release(&p->p);
			continue;
		}
		p->view = 0;
		if (q->dra && p->p.spec.device_class_name) {
			const char *class_name = p->p.spec.device_class_name;

			for (p->view = 1; p->view < m->n_views && strcmp(views[p->view], class_name);
			     p->view++)
				continue;
			if (p->view == m->n_views)
				views[m->n_views++] = class_name;
		}
		m->n_parts++;
	}
	return 0;
}

static int model_build(const struct sinfo_query *q, const struct field *f, size_t nf,
		       const json_t *partitions, const json_t *nodes, const json_t *pods,
		       struct model *m)
{
	const json_t *obj;
	const char **views = calloc(json_array_size(partitions) + 1, sizeof(*views));
	size_t i;
	int e = 0;

	memset(m, 0, sizeof(*m));
	m->parts = calloc(json_array_size(partitions) + 1, sizeof(*m->parts));
	m->rows = calloc((json_array_size(nodes) + 1) * (json_array_size(partitions) + 1),
			 sizeof(*m->rows));
	if (!views || !m->parts || !m->rows) {
		e = CADRE_ENOMEM;
		goto out;
	}
	if ((e = model_parts(q, partitions, m, views)))
		goto out;
	m->n_nodes = json_array_size(nodes);
	if (!(m->nodes = calloc(m->n_views * m->n_nodes + 1, sizeof(*m->nodes)))) {
		e = CADRE_ENOMEM;
		goto out;
	}
	for (size_t v = 0; v < m->n_views; v++) {
		const struct usage u = { .pods = pods, .pods_unknown = q->usage_unknown,
					 .dra = q->dra, .claims_unknown = q->dra_claims_unknown,
					 .device_class = views[v] };

		json_array_foreach(nodes, i, obj)
			node_read(obj, &u, &m->nodes[v * m->n_nodes + i]);
	}
	free(views);
	views = NULL;
	sort_nodes = m->nodes;
	for (size_t pi = 0; pi < m->n_parts; pi++) {
		size_t first_row = m->n_rows;

		for (size_t nv = 0; nv < m->n_nodes; nv++) {
			size_t ni = m->parts[pi].view * m->n_nodes + nv;
			const struct node *n = &m->nodes[ni];
			struct row *r = NULL;
			char key[1024];

			if (!in_partition(n, &m->parts[pi].p) || !state_wanted(n->state, q->states))
				continue;
			group_key(q, f, nf, n, key, sizeof(key));
			for (size_t k = first_row; !q->node_flag && k < m->n_rows && !r; k++)
				if (!strcmp(m->rows[k].key, key))
					r = &m->rows[k];
			if (!r) {
				r = &m->rows[m->n_rows++];
				r->part = &m->parts[pi];
				r->part_index = pi;
				snprintf(r->key, sizeof(r->key), "%s", key);
				if (!(r->nodes = calloc(m->n_nodes, sizeof(*r->nodes)))) {
					e = CADRE_ENOMEM;
					goto out;
				}
			}
			r->nodes[r->n++] = ni;
		}
		/* A partition without nodes is still a row (sinfo: 0 nodes, n/a). */
		if (m->n_rows == first_row && !q->node_flag && !q->states) {
			struct row *r = &m->rows[m->n_rows++];

			r->part = &m->parts[pi];
			r->part_index = pi;
			if (!(r->nodes = calloc(1, sizeof(*r->nodes)))) {
				e = CADRE_ENOMEM;
				goto out;
			}
		}
	}
	for (size_t k = 0; k < m->n_rows; k++)
		qsort(m->rows[k].nodes, m->rows[k].n, sizeof(size_t), node_index_cmp);
	qsort(m->rows, m->n_rows, sizeof(*m->rows), q->node_flag ? row_cmp_node :
	      row_cmp_part_state);
out:
	free(views);
	return e;
}

static const char *format_of(const struct sinfo_query *q)
{
	if (q->format)
		return q->format;
	if (q->node_flag)
		return q->long_output ? SINFO_FORMAT_NODE_LONG : SINFO_FORMAT_NODE;
	return q->long_output ? SINFO_FORMAT_LONG : SINFO_FORMAT;
}

static int line(struct ctx *c, const char *format, const struct field *f, size_t nf,
		size_t prefix, const struct row *r, struct buf *out)
{
	int e = buf_add(out, format, prefix);

	for (size_t i = 0; i < nf && !e; i++) {
		int width = f[i].width;

		buf_reset(&c->tmp);
		if ((e = field_text(c, f[i].letter, r, &c->tmp)))
			break;
		if (f[i].computed && (f[i].letter == 'P' || f[i].letter == 'R'))
			width = c->part_width;
		else if (f[i].computed && f[i].letter == 'N')
			width = c->node_width;
		e = cell(out, buf_str(&c->tmp), width, f[i].right, true);
		if (!e && f[i].suffix_len)
			e = buf_add(out, f[i].suffix, f[i].suffix_len);
	}
	return e ? e : buf_addc(out, '\n');
}

int sinfo_table(const struct sinfo_query *q, const json_t *partitions, const json_t *nodes,
		const json_t *pods, struct buf *out)
{
	const char *format = format_of(q);
	struct field f[64];
	struct model m;
	struct ctx c = { 0 };
	size_t nf, prefix;
	int e;

	if (parse_format(format, f, 64, &nf, &prefix, NULL))
		return CADRE_EINVAL;
	if ((e = model_build(q, f, nf, partitions, nodes, pods, &m)))
		goto out;
	c.q = q;
	c.nodes = m.nodes;
	c.parts = m.parts;
	c.part_width = c.node_width = 9;  /* MIN_PART_FIELD_SIZE, MIN_NODE_FIELD_SIZE */
	buf_init(&c.tmp, 1 << 20);
	for (size_t k = 0; k < m.n_rows && !e; k++) {
		int w = (int)strlen(m.rows[k].part->p.meta.name) + m.rows[k].part->p.spec.is_default;

		c.part_width = w > c.part_width ? w : c.part_width;
		buf_reset(&c.tmp);
		if (!(e = nodelist(&c, &m.rows[k], &c.tmp)) && (int)c.tmp.len > c.node_width)
			c.node_width = (int)c.tmp.len;
	}
	if (!e && !q->noheader)
		e = line(&c, format, f, nf, prefix, NULL, out);
	for (size_t k = 0; k < m.n_rows && !e; k++)
		e = line(&c, format, f, nf, prefix, &m.rows[k], out);
	buf_release(&c.tmp);
out:
	model_release(&m);
	return e;
}

int sinfo_json(const struct sinfo_query *q, const json_t *partitions, const json_t *nodes,
	       const json_t *pods, struct buf *out)
{
	static const struct field f[] = { { .letter = 't' }, { .letter = 'G' } };
	struct model m;
	struct ctx c = { 0 };
	json_t *rows = json_array(), *doc;
	char *text;
	int e;

	if (!rows)
		return CADRE_ENOMEM;
	if ((e = model_build(q, f, 2, partitions, nodes, pods, &m)))
		goto out;
	c.q = q;
	c.nodes = m.nodes;
	buf_init(&c.tmp, 1 << 20);
	for (size_t k = 0; k < m.n_rows && !e; k++) {
		const struct row *r = &m.rows[k];
		const struct partition *p = &r->part->p;
		const struct node *first = r->n ? &m.nodes[r->nodes[0]] : NULL;
		json_t *names = json_array(), *o;
		size_t alloc = 0, idle = 0;

		for (size_t i = 0; names && i < r->n; i++) {
			const struct node *n = &m.nodes[r->nodes[i]];

			json_array_append_new(names, json_string(n->name));
			alloc += n->state == ST_ALLOC || n->state == ST_MIX;
			idle += n->state == ST_IDLE;
		}
		buf_reset(&c.tmp);
		e = nodelist(&c, r, &c.tmp);
		o = json_pack("{s:{s:s,s:b,s:{s:{s:b,s:b,s:I}}},s:{s:I,s:I,s:I,s:I,s:o,s:s},"
			      "s:{s:[s]},s:{s:I},s:{s:I},s:{s:s}}",
			      "partition", "name", p->meta.name, "default", p->spec.is_default,
			      "maximums", "time", "set", 1, "infinite", p->spec.max_time_s < 0,
			      "number", (json_int_t)(p->spec.max_time_s < 0 ? 0 :
						     p->spec.max_time_s / 60),
			      "nodes", "allocated", (json_int_t)alloc, "idle", (json_int_t)idle,
			      "other", (json_int_t)(r->n - alloc - idle), "total", (json_int_t)r->n,
			      "nodes", names ? names : json_null(), "hostlist", buf_str(&c.tmp),
			      "node", "state", first ? state_long(first->state) : "n/a",
			      "cpus", "maximum", (json_int_t)(first ? first->cpus : 0),
			      "memory", "maximum", (json_int_t)(first ? first->mem_mb : 0),
			      "gres", "total", first ? first->gres : "");
		/* data_parser's "accounts/allowed": AllowAccounts as slurm.conf has it, "" for all. */
		buf_reset(&c.tmp);
		for (size_t i = 0; !e && i < p->spec.n_allowed_namespaces; i++)
			e = buf_addf(&c.tmp, "%s%s", i ? "," : "", p->spec.allowed_namespaces[i]);
		if (o && json_object_set_new(json_object_get(o, "partition"), "accounts",
					     json_pack("{s:s,s:s}", "allowed", buf_str(&c.tmp),
						       "deny", "")))
			e = CADRE_ENOMEM;
		if (!o || json_array_append_new(rows, o))
			e = CADRE_ENOMEM;
	}
	buf_release(&c.tmp);
	if (!e && (!(doc = json_pack("{s:O,s:[],s:[]}", "sinfo", rows, "errors", "warnings")) ||
		   !(text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER)))) {
		json_decref(doc);
		e = CADRE_ENOMEM;
	} else if (!e) {
		json_decref(doc);
		e = buf_addf(out, "%s\n", text);
		free(text);
	}
out:
	json_decref(rows);
	model_release(&m);
	return e;
}

/* ---- the command ---- */


/* ---- scontrol show partition ---- */

/*
 * Megabytes as slurmctld's TRES string has them: convert_num_unit with
 * CONVERT_NUM_UNIT_EXACT (src/common/slurm_protocol_api.c), which goes up a
 * unit while no more than half a unit is lost: "1000M", "2G", "1.50G".
 */
static void mem_exact(long long mb, char out[32])
{
	static const char units[] = "MGTP?";
	double num = (double)mb;
	size_t u = 0;

	if (mb <= 0) {
		snprintf(out, 32, "0");
		return;
	}
	while (num >= 1024 && (unsigned long long)num % 512 == 0 && u + 1 < sizeof(units) - 1) {
		num /= 1024;
		u++;
	}
	if ((double)(unsigned long long)num == num)
		snprintf(out, 32, "%llu%c", (unsigned long long)num, units[u]);
	else
		snprintf(out, 32, "%.2f%c", num, units[u]);
}

/* slurm_protocol_defs.c preempt_mode_string: Slurm's words for a partition's PreemptMode. */
static const char *preempt_mode_slurm(enum partition_preempt_mode mode)
{
	switch (mode) {
	case PARTITION_PREEMPT_REQUEUE: return "REQUEUE";
	case PARTITION_PREEMPT_CANCEL: return "CANCEL";
	case PARTITION_PREEMPT_OFF: break;
	}
	return "OFF";
}

static int node_name_cmp(const void *x, const void *y)
{
	return host_cmp(((const struct node *)x)->name, ((const struct node *)y)->name);
}

/* One record of slurm_sprint_partition_info (not one_liner), for p over nodes[0..n). */
static int show_record(const struct partition *p, const struct node *nodes, size_t n,
		       const char **names, struct buf *out)
{
	const struct partition_spec *s = &p->spec;
	long long cpus = 0, mem_mb = 0, gpus = 0;
	char deftime[32], maxtime[32], mem[32];
	size_t members = 0;
	struct buf list;
	int e = 0;

	for (size_t i = 0; i < n; i++)
		if (in_partition(&nodes[i], p)) {
			names[members++] = nodes[i].name;
			cpus += nodes[i].cpus;
			mem_mb += nodes[i].mem_mb;
			gpus += nodes[i].gpus;
		}
	if (s->default_time_s != 0)
		slurm_time_hms(s->default_time_s, deftime);
	else
		snprintf(deftime, sizeof(deftime), "NONE");
	slurm_time_hms(s->max_time_s, maxtime);
	mem_exact(mem_mb, mem);
	buf_init(&list, 1 << 20);
	e = buf_addf(out, "PartitionName=%s\n   AllowGroups=ALL AllowAccounts=", p->meta.name);
	/* slurm.conf's AllowAccounts, a comma-separated list; none: ALL. */
	for (size_t i = 0; !e && i < s->n_allowed_namespaces; i++)
		e = buf_addf(out, "%s%s", i ? "," : "", s->allowed_namespaces[i]);
	e = e ? e : buf_addf(out, "%s AllowQos=ALL\n", s->allowed_namespaces ? "" : "ALL");
	e = e ? e : buf_addf(out, "   AllocNodes=ALL Default=%s QoS=N/A\n",
			     s->is_default ? "YES" : "NO");
	/* GraceTime: the partition's own, else what a job without spec.signal gets. */
	e = e ? e : buf_addf(out, "   DefaultTime=%s DisableRootJobs=NO Exclusive=NO "
			     "GraceTime=%lld Hidden=NO\n", deftime,
			     (long long)partition_grace_seconds(s, false, 0));
	e = e ? e : buf_addf(out, "   MaxNodes=UNLIMITED MaxTime=%s MinNodes=0 LLN=NO "
			     "MaxCPUsPerNode=UNLIMITED MaxCPUsPerSocket=UNLIMITED\n", maxtime);
	e = e ? e : hostlist_compress(names, members, &list);
	e = e ? e : buf_addf(out, "   Nodes=%s\n", members ? buf_str(&list) : "(null)");
	e = e ? e : buf_addf(out, "   PriorityJobFactor=1 PriorityTier=%d RootOnly=NO ReqResv=NO "
			     "OverSubscribe=NO\n   OverTimeLimit=NONE PreemptMode=%s\n",
			     (int)s->priority_tier, preempt_mode_slurm(s->preempt_mode));
	e = e ? e : buf_addf(out, "   State=UP TotalCPUs=%lld TotalNodes=%zu "
			     "SelectTypeParameters=NONE\n   JobDefaults=(null)\n"
			     "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n", cpus, members);
	if (!e && members) {
		e = buf_addf(out, "   TRES=cpu=%lld,mem=%s,node=%zu,billing=%lld", cpus, mem,
			     members, cpus);
		e = e ? e : gpus ? buf_addf(out, ",gres/gpu=%lld\n\n", gpus) : buf_adds(out, "\n\n");
	} else if (!e) {
		e = buf_adds(out, "   TRES=(null)\n\n");
	}
	buf_release(&list);
	return e;
}

int sinfo_show_partition(const char *name, const json_t *partitions, const json_t *nodes,
			 const json_t *pods, const struct dra_nodes *dra, struct buf *out)
{
	struct node *all = calloc(json_array_size(nodes) + 1, sizeof(*all));
	const char **names = calloc(json_array_size(nodes) + 1, sizeof(*names));
	const json_t *obj;
	size_t i, shown = 0;
	int e = 0;

	if (!all || !names) {
		e = CADRE_ENOMEM;
		goto out;
	}
	json_array_foreach(partitions, i, obj) {
		struct field_errors errs;
		struct partition p;

		field_errors_init(&errs);
		e = partition_parse(obj, &p, &errs) == CADRE_ENOMEM ? CADRE_ENOMEM : 0;
		field_errors_release(&errs);
		if (!e && p.meta.name && (!name || !strcmp(name, p.meta.name))) {
			/* Its nodes' GPUs as its own device class has them. */
			const struct usage u = { .pods = pods, .dra = dra,
						 .device_class = p.spec.device_class_name };
			const json_t *node;
			size_t j, n = 0;

			json_array_foreach(nodes, j, node)
				node_read(node, &u, &all[n++]);
			qsort(all, n, sizeof(*all), node_name_cmp);
			e = show_record(&p, all, n, names, out);
			shown++;
		}
		partition_release(&p);
		if (e)
			goto out;
	}
	if (!shown)
		e = CADRE_ENOTFOUND;
out:
	free(all);
	free(names);
	return e;
}

/*
 * The items of a cluster-wide list, or the CLI's exit code after saying
 * why not. missing_ok: a kind not installed is an empty list. *forbidden,
 * when not NULL: a refusal is no error; *items stays NULL and *forbidden
 * true, for the caller to say what it cannot show.
 */
static int list(struct cli_kube *k, const struct kube_resource *res, const char *what,
		json_t **items, bool missing_ok, bool *forbidden, FILE *err)
{
	struct kube_status st;
	int e;

	kube_status_clear(&st);
	e = kube_client_list(k->http, res, NULL, NULL, items, NULL, &st);
	if (!e)
		return 0;
	/* No Partition kind installed: no partitions. A refusal is said, never read as none. */
	if (missing_ok && e == CADRE_ENOTFOUND) {
		*items = json_array();
		return *items ? 0 : CLI_EXIT_FAILED;
	}
	if (forbidden && e == CADRE_EFORBIDDEN) {
		*forbidden = true;
		return 0;
	}
	if (!st.code)
		st.code = e;
	return cli_kube_error(k, what, &st, err);
}

/* What Dynamic Resource Allocation publishes, as read for sinfo and scontrol. */
struct dra_lists {
	json_t *classes, *slices, *claims;
	struct dra_nodes nodes;
	bool any;               /* nodes holds devices: pass it on */
	bool claims_forbidden;
};

static void dra_lists_release(struct dra_lists *d)
{
	dra_nodes_release(&d->nodes);
	json_decref(d->classes);
	json_decref(d->slices);
	json_decref(d->claims);
	memset(d, 0, sizeof(*d));
}

/*
 * The DeviceClasses, then, when there is one, the ResourceSlices and (with
 * claims) the ResourceClaims of every namespace, into d. A cluster that
 * does not serve resource.k8s.io/v1 (404) has no DRA devices, and neither
 * has a user who may not list the classes, without a word: nothing else
 * tells whether the cluster uses DRA, and one that does not must print
 * what it printed before. A class readable but not the slices, or (with
 * devices to show) not the claims, is said once on err, but not with -h
 * (quiet); the claims' devices are then unk. 0, or the exit code after
 * one line on err.
 */
static int dra_read(struct cli_kube *k, bool claims, bool quiet, struct dra_lists *d, FILE *err)
{
	bool forbidden = false;
	int code;

	memset(d, 0, sizeof(*d));
	if ((code = list(k, &kube_resource_deviceclasses, "list deviceclasses", &d->classes, true,
			 &forbidden, err)) || forbidden || !json_array_size(d->classes))
		return code;
	if ((code = list(k, &kube_resource_resourceslices, "list resourceslices", &d->slices, true,
			 &forbidden, err)))
		return code;
	if (forbidden) {
		if (!quiet)
			fprintf(err, "%s: GPUs of Dynamic Resource Allocation not shown: not allowed "
				"to list resourceslices (resource.k8s.io, docs/install.md)\n", k->cmd);
		return 0;
	}
	if (claims && (code = list(k, &kube_resource_resourceclaims, "list resourceclaims",
				   &d->claims, true, &d->claims_forbidden, err)))
		return code;
	if (dra_nodes_build(d->classes, d->slices, d->claims, &d->nodes)) {
		fprintf(err, "%s: %s\n", k->cmd, cadre_strerror(CADRE_ENOMEM));
		return CLI_EXIT_FAILED;
	}
	d->any = d->nodes.n_devices > 0;
	if (d->any && d->claims_forbidden && !quiet)
		fprintf(err, "%s: usage of DRA devices unknown (unk): not allowed to list "
			"resourceclaims in every namespace (docs/install.md)\n", k->cmd);
	return 0;
}

/*
 * sinfo -l's footer, cadre's own: what the code bundles of the namespace
 * hold in the API server's etcd (docs/code.md), when they hold anything and
 * the user may list them. Not with -h, --json or a format of one's own.
 */
static void long_footer(const struct sinfo_query *q, bool json, struct cli_kube *k, FILE *out)
{
	uint64_t bytes;
	size_t parts;

	if (!q->long_output || q->noheader || json || q->format ||
	    cli_code_usage(k, &bytes, &parts) || !bytes)
		return;
	fprintf(out, "\nCode bundles in namespace %s: %.1f %s in %zu ConfigMap%s "
		"(cadre.dev/code)\n", k->ns,
		(double)bytes / (bytes < (1u << 20) ? 1024 : 1 << 20), bytes < (1u << 20) ? "KiB" : "MiB",
		parts, parts == 1 ? "" : "s");
}

/*
 * The words after the options (extra: the first positional one, or NULL),
 * SINFO_FORMAT, --format and --states: 0, or CLI_EXIT_USAGE said on err.
 */
static int sinfo_check(struct sinfo_query *q, const char *extra, FILE *err)
{
	size_t bad;

	if (extra) {
		fprintf(err, "%s: unexpected argument \"%s\"\n", CMD, extra);
		return CLI_EXIT_USAGE;
	}
	if (!q->format && getenv("SINFO_FORMAT") && *getenv("SINFO_FORMAT") &&
	    !q->node_flag && !q->long_output)
		q->format = getenv("SINFO_FORMAT");
	if (q->format && !sinfo_format_ok(q->format, &bad)) {
		fprintf(err, "%s: --format: unknown field at \"%s\" (known: %%P %%R %%a %%l %%L %%D "
			"%%t %%T %%N %%c %%m %%G %%F %%A %%s %%r %%h %%g %%z %%d %%w %%f %%E %%i "
			"%%p %%y)\n",
			CMD, q->format + bad);
		return CLI_EXIT_USAGE;
	}
	if (q->states && !sinfo_states_ok(q->states)) {
		/* opts.c _build_state_list's words. */
		fprintf(err, "%s: error: Bad state string: \"%s\"\n", SINFO, q->states);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

int cli_sinfo(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err)
{
	struct sinfo_query q = { 0 };
	bool json = false, all = false, help = false, topology = false;
	struct cluster_topology levels;
	char *with_topology = NULL;
	const struct cli_opt opts[] = {
		{ "Node", 'N', NULL, &q.node_flag }, { "long", 'l', NULL, &q.long_output },
		{ "noheader", 'h', NULL, &q.noheader }, { "format", 'o', &q.format, NULL },
		{ "partition", 'p', &q.partitions, NULL }, { "states", 't', &q.states, NULL },
		{ "json", 0, NULL, &json }, { "topology", 0, NULL, &topology },
		{ NULL, 0, NULL, NULL },
	};
	struct cli_globals gl = *g;
	struct cli_kube k = { 0 };
	json_t *parts = NULL, *nodes = NULL, *pods = NULL;
	char **pos = calloc((size_t)n + 1, sizeof(*pos));
	struct dra_lists dra = { 0 };
	struct buf text;
	int n_pos = 0, code, e;

	buf_init(&text, (size_t)64 << 20);
	cluster_topology_init(&levels);
	if (!pos)
		return CLI_EXIT_FAILED;
	code = cli_opts_parse(CMD, opts, args, n, &gl, &all, &help, pos, &n_pos, err);
	if (!code && help) {
		cli_print_help(out, "sinfo");
		goto done;
	}
	if (!code && !help)
		code = sinfo_check(&q, n_pos ? pos[0] : NULL, err);
	if (code || (code = cli_kube_open(&gl, CMD, &k, err)))
		goto done;
	/* --topology: the TOPOLOGY column after the format's own. */
	if (topology) {
		const char *base = q.format ? q.format : q.node_flag ?
				   (q.long_output ? SINFO_FORMAT_NODE_LONG : SINFO_FORMAT_NODE) :
				   (q.long_output ? SINFO_FORMAT_LONG : SINFO_FORMAT);

		if (!(with_topology = malloc(strlen(base) + 5))) {
			code = CLI_EXIT_FAILED;
			goto close;
		}
		snprintf(with_topology, strlen(base) + 5, "%s %%y", base);
		q.format = with_topology;
	}
	if (topology || (q.format && format_has(q.format, 'y'))) {
		cli_cluster_topology(&k, &levels);
		q.topo_labels = (const char *const *)levels.labels;
		q.topo_names = (const char *const *)levels.names;
		q.n_topo = levels.n_levels;
	}
	/*
	 * The pods of every namespace only tell alloc, mix and idle apart; a user
	 * who may not list them (cadre-cluster-view alone: a pod list carries every
	 * pod's env) still sees the partitions, the nodes and down/drain, and the
	 * rest as unk (docs/install.md 4). Said once on stderr, but not with -h,
	 * which scripts use.
	 */
	if ((code = list(&k, &kube_resource_partitions, "list partitions", &parts, true, NULL,
			 err)) ||
	    (code = list(&k, &kube_resource_nodes, "list nodes", &nodes, false, NULL, err)) ||
	    (code = list(&k, &kube_resource_pods, "list pods", &pods, false, &q.usage_unknown,
			 err)))
		goto close;
	if (q.usage_unknown && !q.noheader)
		fprintf(err, "%s: node usage unknown (unk): not allowed to list pods in every "
			"namespace (the ClusterRole cadre-cluster-usage, docs/install.md)\n", CMD);
	if ((code = dra_read(&k, true, q.noheader, &dra, err)))
		goto close;
	q.dra = dra.any ? &dra.nodes : NULL;
	q.dra_claims_unknown = dra.claims_forbidden;
	if (q.long_output && !q.noheader && !json) {
		/* sinfo.c print_date: slurm_ctime2_r's "%a %b %d %T %Y". */
		time_t now = time(NULL);
		struct tm tm;
		char date[64];

		localtime_r(&now, &tm);
		strftime(date, sizeof(date), "%a %b %d %T %Y", &tm);
		buf_addf(&text, "%s\n", date);
	}
	e = json ? sinfo_json(&q, parts, nodes, pods, &text) :
		   sinfo_table(&q, parts, nodes, pods, &text);
	if (e) {
		fprintf(err, "%s: %s\n", CMD, cadre_strerror(e));
		code = CLI_EXIT_FAILED;
	} else {
		fputs(buf_str(&text), out);
		long_footer(&q, json, &k, out);
	}
close:
	cli_kube_close(&k);
done:
	dra_lists_release(&dra);
	cluster_topology_release(&levels);
	free(with_topology);
	json_decref(parts);
	json_decref(nodes);
	json_decref(pods);
	buf_release(&text);
	free(pos);
	return code;
}

int cli_show_partition(struct cli_kube *k, const char *name, FILE *out, FILE *err)
{
	json_t *parts = NULL, *nodes = NULL;
	struct dra_lists dra = { 0 };
	struct buf text;
	int code, e;

	/*
	 * A partition's record is its nodes' sizes: no pod and no claim is read
	 * (cadre-cluster-view is enough), only what DRA publishes.
	 */
	buf_init(&text, 16u << 20);
	if ((code = list(k, &kube_resource_partitions, "list partitions", &parts, true, NULL, err)) ||
	    (code = list(k, &kube_resource_nodes, "list nodes", &nodes, false, NULL, err)) ||
	    (code = dra_read(k, false, false, &dra, err)))
		goto out;
	e = sinfo_show_partition(name, parts, nodes, NULL, dra.any ? &dra.nodes : NULL, &text);
	if (e == CADRE_ENOTFOUND) {
		/* scontrol's info_part.c: on stdout, and exit 1 when one was named. */
		if (name)
			fprintf(out, "Partition %s not found\n", name);
		else
			fputs("No partitions in the system\n", out);
		code = name ? CLI_EXIT_FAILED : 0;
	} else if (e) {
		fprintf(err, "cadre scontrol: %s\n", cadre_strerror(e));
		code = CLI_EXIT_FAILED;
	} else {
		fputs(buf_str(&text), out);
	}
out:
	dra_lists_release(&dra);
	json_decref(parts);
	json_decref(nodes);
	buf_release(&text);
	return code;
}
