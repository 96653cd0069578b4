/*
 * options.h - the controller's flags (docs/design.md section 5).
 *
 * Every flag can also be given as an environment variable: --kube-api-qps is
 * CADRE_KUBE_API_QPS. A flag on the command line wins over the variable, the
 * variable over the default. --kubeconfig also falls back to KUBECONFIG,
 * which the kube/ config loader reads itself.
 */
#ifndef CADRE_OPTIONS_H
#define CADRE_OPTIONS_H

#include <stdbool.h>

#include "base/buf.h"
#include "base/log.h"

#define OPTIONS_DEFAULT_CLUSTER_DOMAIN "cluster.local"

/*
 * GANG_NATIVE: kube-scheduler's own gang scheduling (a scheduling.k8s.io
 * PodGroup per attempt, docs/gang-admission.md); the API must be served (main.c
 * checks at start).
 */
enum gang_mode { GANG_BUILTIN, GANG_KUEUE, GANG_NONE, GANG_NATIVE };

struct options {
	char *kubeconfig;            /* NULL: KUBECONFIG, ~/.kube/config, in-cluster */
	char *context;               /* NULL: the kubeconfig's current-context */
	char *namespace;             /* NULL: all namespaces */
	int workers;
	bool leader_elect;
	char *leader_election_namespace;
	char *leader_election_id;
	char *metrics_addr;          /* host:port, "0" disables */
	char *health_addr;
	enum gang_mode gang_scheduler;
	char *accelerator_label;
	char *device_class_name;     /* DRA DeviceClass of a job whose partition names none; NULL: none */
	char *device_attribute;      /* the ResourceSlice device attribute naming its type */
	/* --cluster-domain: <job>.<ns>.svc.<this> is each pod's DNS search entry */
	char *cluster_domain;
	char *default_image;         /* NULL: spec.image is required */
	int starvation_seconds;
	/* --max-array-size: an array's indices stop below this (Slurm's MaxArraySize) */
	int max_array_size;
	/* --code-retention: seconds a bundle outlives the last of its jobs (docs/code.md) */
	int code_retention_seconds;
	/* --code-orphan-seconds: seconds a bundle no job names is kept after its upload */
	int code_orphan_seconds;
	double kube_api_qps;
	int kube_api_burst;
	enum log_format log_format;
	enum log_level log_level;
	bool show_version;
	bool show_help;
};

/*
 * Fill opts from argv and the environment (getenv_fn lets tests pass their
 * own). Returns 0, or CADRE_EINVAL with a message naming the flag in err.
 * The strings in opts are owned by opts: release with options_release.
 */
int options_parse(struct options *opts, int argc, char *const argv[],
		  const char *(*getenv_fn)(const char *name), struct buf *err);

void options_release(struct options *opts);

/* The --help text. */
const char *options_usage(void);

const char *gang_mode_name(enum gang_mode mode);

#endif
