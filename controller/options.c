#include "controller/options.h"
#include "api/dra.h"
#include "api/slurm.h"
#include "base/err.h"
#include "api/name.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/*
 * OPT_INT is a count (>= 1); OPT_SECONDS any whole number, where 0 and
 * negative mean something; OPT_DOMAIN a string that is a DNS subdomain;
 * OPT_ATTRIBUTE a device attribute's name (dra_attribute_valid).
 */
enum opt_kind { OPT_STRING, OPT_DOMAIN, OPT_ATTRIBUTE, OPT_INT, OPT_SECONDS, OPT_DOUBLE, OPT_BOOL, OPT_GANG,
		OPT_LOGFMT, OPT_LOGLEVEL };

struct opt_spec {
	const char *flag;      /* without the leading "--" */
	const char *env;
	enum opt_kind kind;
	size_t offset;
	const char *help;
};

#define OPT(flag, env, kind, field, help) \
	{ flag, env, kind, offsetof(struct options, field), help }

static const struct opt_spec specs[] = {
	OPT("kubeconfig", "CADRE_KUBECONFIG", OPT_STRING, kubeconfig,
	    "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)"),
	OPT("context", "CADRE_CONTEXT", OPT_STRING, context,
	    "kubeconfig context to use instead of current-context"),
	OPT("namespace", "CADRE_NAMESPACE", OPT_STRING, namespace,
	    "watch only this namespace (default: all)"),
	OPT("workers", "CADRE_WORKERS", OPT_INT, workers,
	    "reconcile workers (default 4)"),
	OPT("leader-elect", "CADRE_LEADER_ELECT", OPT_BOOL, leader_elect,
	    "take a Lease before writing, so replicas can stand by"),
	OPT("leader-election-namespace", "CADRE_LEADER_ELECTION_NAMESPACE", OPT_STRING,
	    leader_election_namespace, "namespace of the Lease (default cadre-system)"),
	OPT("leader-election-id", "CADRE_LEADER_ELECTION_ID", OPT_STRING,
	    leader_election_id, "name of the Lease (default cadre-controller)"),
	OPT("metrics-addr", "CADRE_METRICS_ADDR", OPT_STRING, metrics_addr,
	    "serve /metrics on host:port; 0 disables (default :8080)"),
	OPT("health-addr", "CADRE_HEALTH_ADDR", OPT_STRING, health_addr,
	    "serve /healthz and /readyz on host:port; 0 disables (default :8081)"),
	OPT("gang-scheduler", "CADRE_GANG_SCHEDULER", OPT_GANG, gang_scheduler,
	    "builtin | native | kueue | none (default builtin)"),
	OPT("accelerator-label", "CADRE_ACCELERATOR_LABEL", OPT_STRING, accelerator_label,
	    "node label naming the accelerator type (default nvidia.com/gpu.product)"),
	OPT("device-class-name", "CADRE_DEVICE_CLASS_NAME", OPT_DOMAIN, device_class_name,
	    "DeviceClass (DRA) of the accelerators of a job whose partition names none "
	    "(default: none, a device plugin's extended resource)"),
	OPT("device-attribute", "CADRE_DEVICE_ATTRIBUTE", OPT_ATTRIBUTE, device_attribute,
	    "ResourceSlice device attribute naming the accelerator type: NAME in the driver's "
	    "domain, or DOMAIN/NAME (default productName)"),
	OPT("cluster-domain", "CADRE_CLUSTER_DOMAIN", OPT_DOMAIN, cluster_domain,
	    "the cluster's DNS domain, for the pods' DNS search path (default cluster.local)"),
	OPT("default-image", "CADRE_DEFAULT_IMAGE", OPT_STRING, default_image,
	    "image for jobs that do not set spec.image"),
	OPT("starvation-seconds", "CADRE_STARVATION_SECONDS", OPT_SECONDS, starvation_seconds,
	    "after this long a waiting head job reserves the capacity it needs; 0 = strict "
	    "order, negative = never (default 600)"),
	OPT("max-array-size", "CADRE_MAX_ARRAY_SIZE", OPT_INT, max_array_size,
	    "an array job's indices stop below this, as Slurm's MaxArraySize (default 1001)"),
	OPT("code-retention", "CADRE_CODE_RETENTION", OPT_SECONDS, code_retention_seconds,
	    "a code bundle whose jobs have all finished is deleted this long after the last "
	    "one ended (default 86400: a day)"),
	OPT("code-orphan-seconds", "CADRE_CODE_ORPHAN_SECONDS", OPT_SECONDS, code_orphan_seconds,
	    "a code bundle no job names is deleted this long after its upload (default 3600)"),
	OPT("kube-api-qps", "CADRE_KUBE_API_QPS", OPT_DOUBLE, kube_api_qps,
	    "client-side request rate limit (default 100)"),
	OPT("kube-api-burst", "CADRE_KUBE_API_BURST", OPT_INT, kube_api_burst,
	    "client-side burst (default 200)"),
	OPT("log-format", "CADRE_LOG_FORMAT", OPT_LOGFMT, log_format,
	    "text | json (default text)"),
	OPT("log-level", "CADRE_LOG_LEVEL", OPT_LOGLEVEL, log_level,
	    "debug | info | warn | error (default info)"),
	OPT("version", NULL, OPT_BOOL, show_version, "print the version and exit"),
	OPT("help", NULL, OPT_BOOL, show_help, "print this help and exit"),
};

#define NSPECS (sizeof(specs) / sizeof(specs[0]))

const char *gang_mode_name(enum gang_mode mode)
{
	switch (mode) {
	case GANG_BUILTIN: return "builtin";
	case GANG_KUEUE: return "kueue";
	case GANG_NONE: return "none";
	case GANG_NATIVE: return "native";
	}
	return "builtin";
}

static void options_defaults(struct options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->workers = 4;
	opts->leader_election_namespace = strdup("cadre-system");
	opts->leader_election_id = strdup("cadre-controller");
	opts->metrics_addr = strdup(":8080");
	opts->health_addr = strdup(":8081");
	opts->gang_scheduler = GANG_BUILTIN;
	opts->accelerator_label = strdup("nvidia.com/gpu.product");
	opts->device_attribute = strdup(DRA_DEFAULT_ATTRIBUTE);
	opts->cluster_domain = strdup(OPTIONS_DEFAULT_CLUSTER_DOMAIN);
	opts->starvation_seconds = 600;
	opts->max_array_size = SLURM_DEFAULT_MAX_ARRAY_SIZE;
	opts->code_retention_seconds = 86400;
	opts->code_orphan_seconds = 3600;
	opts->kube_api_qps = 100;
	opts->kube_api_burst = 200;
	opts->log_format = LOG_TEXT;
	opts->log_level = LOG_INFO;
}

static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return CADRE_EINVAL;
	*out = v;
	return 0;
}

/* Store value into the field spec describes; where names the source. */
static int set_option(struct options *opts, const struct opt_spec *spec,
		      const char *value, const char *where, struct buf *err)
{
	void *field = (char *)opts + spec->offset;
	long n;
	char *end;
	double d;

	switch (spec->kind) {
	case OPT_ATTRIBUTE:
		/* It ends up in a CEL expression of every DRA job's claim template. */
		if (!dra_attribute_valid(value))
			goto bad;
		goto string;
	case OPT_DOMAIN:
		/* It ends up in every pod's dnsConfig, which the API server checks. */
		if (!name_is_dns1123_subdomain(value))
			goto bad;
		/* fall through */
	case OPT_STRING:
	string: {
		char *copy = strdup(value);

		if (!copy)
			return CADRE_ENOMEM;
		free(*(char **)field);
		*(char **)field = copy;
		return 0;
	}
	case OPT_INT:
	case OPT_SECONDS:
		if (parse_long(value, spec->kind == OPT_INT ? 1 : INT_MIN, INT_MAX, &n))
			goto bad;
		*(int *)field = (int)n;
		return 0;
	case OPT_DOUBLE:
		errno = 0;
		d = strtod(value, &end);
		if (errno || end == value || *end || !(d > 0))
			goto bad;
		*(double *)field = d;
		return 0;
	case OPT_BOOL:
		if (!strcmp(value, "true") || !strcmp(value, "1"))
			*(bool *)field = true;
		else if (!strcmp(value, "false") || !strcmp(value, "0"))
			*(bool *)field = false;
		else
			goto bad;
		return 0;
	case OPT_GANG:
		if (!strcmp(value, "builtin"))
			*(enum gang_mode *)field = GANG_BUILTIN;
		else if (!strcmp(value, "kueue"))
			*(enum gang_mode *)field = GANG_KUEUE;
		else if (!strcmp(value, "none"))
			*(enum gang_mode *)field = GANG_NONE;
		else if (!strcmp(value, "native"))
			*(enum gang_mode *)field = GANG_NATIVE;
		else
			goto bad;
		return 0;
	case OPT_LOGFMT:
		if (log_parse_format(value, field))
			goto bad;
		return 0;
	case OPT_LOGLEVEL:
		if (log_parse_level(value, field))
			goto bad;
		return 0;
	}
bad:
	buf_addf_cut(err, "%s: invalid value \"%s\" for --%s (%s)", where, value,
		 spec->flag, spec->help);
	return CADRE_EINVAL;
}

static const struct opt_spec *find_spec(const char *name, size_t len)
{
	for (size_t i = 0; i < NSPECS; i++)
		if (strlen(specs[i].flag) == len && !strncmp(specs[i].flag, name, len))
			return &specs[i];
	return NULL;
}

int options_parse(struct options *opts, int argc, char *const argv[],
		  const char *(*getenv_fn)(const char *name), struct buf *err)
{
	int ret;

	options_defaults(opts);
	if (!opts->leader_election_namespace || !opts->leader_election_id ||
	    !opts->metrics_addr || !opts->health_addr || !opts->accelerator_label ||
	    !opts->cluster_domain || !opts->device_attribute)
		return CADRE_ENOMEM;

	for (size_t i = 0; i < NSPECS; i++) {
		const char *value;

		if (!specs[i].env || !getenv_fn)
			continue;
		value = getenv_fn(specs[i].env);
		if (value && *value) {
			ret = set_option(opts, &specs[i], value, specs[i].env, err);
			if (ret)
				return ret;
		}
	}

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *name, *eq, *value;
		const struct opt_spec *spec;
		size_t len;

		if (strncmp(arg, "--", 2) != 0) {
			buf_addf_cut(err, "unexpected argument \"%s\"", arg);
			return CADRE_EINVAL;
		}
		name = arg + 2;
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		spec = find_spec(name, len);
		if (!spec) {
			buf_addf_cut(err, "unknown flag \"%s\" (see --help)", arg);
			return CADRE_EINVAL;
		}
		if (eq) {
			value = eq + 1;
		} else if (spec->kind == OPT_BOOL) {
			value = "true";
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			buf_addf_cut(err, "flag --%s needs a value", spec->flag);
			return CADRE_EINVAL;
		}
		ret = set_option(opts, spec, value, "command line", err);
		if (ret)
			return ret;
	}
	return 0;
}

void options_release(struct options *opts)
{
	for (size_t i = 0; i < NSPECS; i++)
		if (specs[i].kind == OPT_STRING || specs[i].kind == OPT_DOMAIN ||
		    specs[i].kind == OPT_ATTRIBUTE) {
			char **field = (char **)((char *)opts + specs[i].offset);

			free(*field);
			*field = NULL;
		}
}

const char *options_usage(void)
{
	static char text[4096];
	struct buf b;

	if (text[0])
		return text;
	buf_init(&b, sizeof(text) - 1);
	buf_adds(&b, "usage: cadre-controller [flags]\n\n"
		 "Runs the cadre operator: TrainingJobs and Volumes (cadre.dev/v1alpha1).\n"
		 "Each flag may also be set by the environment variable shown.\n\n");
	for (size_t i = 0; i < NSPECS; i++) {
		/* Cut with "..." if the text ever outgrows its array (buf.h). */
		buf_addf_cut(&b, "  --%-28s %s", specs[i].flag, specs[i].help);
		if (specs[i].env)
			buf_addf_cut(&b, " [$%s]", specs[i].env);
		buf_addf_cut(&b, "\n");
	}
	memcpy(text, buf_str(&b), b.len + 1);
	buf_release(&b);
	return text;
}
