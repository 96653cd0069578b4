/*
 * kube.h - internal to cli/: the cluster as the user's kubeconfig names it,
 * and API errors as the one line a command prints.
 *
 * The kubeconfig is found as kubectl finds it (--kubeconfig, else
 * KUBECONFIG, else ~/.kube/config; --context, else its current-context);
 * the namespace is -n/--namespace, else the context's, else "default".
 * Requests carry the user's own credentials; nothing is retried beyond what
 * kube/http.c retries (429, 503 with Retry-After).
 */
#ifndef CADRE_CLI_KUBE_H
#define CADRE_CLI_KUBE_H

#include <jansson.h>
#include <stdio.h>

#include "cli/cli.h"
#include "kube/client.h"
/* After kube/: cadre's kinds for the client (api/kinds.h). */
#include "api/kinds.h"

struct cli_kube {
	struct kube_config *cfg;
	struct kube_http *http;
	const char *ns;   /* borrowed from the flags or cfg */
	const char *cmd;  /* "cadre sbatch", for messages */
};

/*
 * Load the kubeconfig and make a client. On failure prints one line on err
 * ("cadre sbatch: no kubeconfig: ...") and returns CLI_EXIT_FAILED; on
 * success 0, and k is released with cli_kube_close.
 */
int cli_kube_open(const struct cli_globals *g, const char *cmd, struct cli_kube *k, FILE *err);
void cli_kube_close(struct cli_kube *k);

struct cluster_topology;

/*
 * The cluster's topology levels into t (released by the caller): the
 * ClusterTopology named default, or cadre's built-in levels when there is
 * none or it cannot be read or parsed (docs/topology.md); t->source says
 * which, and t->default_level is NULL for the built-in ones.
 */
void cli_cluster_topology(struct cli_kube *k, struct cluster_topology *t);

/*
 * Print what st says went wrong, as one line naming the server when it
 * could not be reached or refused the credentials; what is "doing"
 * ("create trainingjob \"train\""). Returns the exit code: CLI_EXIT_USAGE
 * when the server rejected the object as invalid (400, 422), else
 * CLI_EXIT_FAILED.
 */
int cli_kube_error(const struct cli_kube *k, const char *what, const struct kube_status *st,
		   FILE *err);

/*
 * The user the API server sees for these credentials (SelfSubjectReview's
 * status.userInfo.username), a new string; NULL when it cannot tell (an API
 * server without the API, or one that refuses it): the caller goes on.
 */
char *cli_kube_whoami(struct cli_kube *k);

/*
 * The notes of a conversion, printed once the object exists: they say what
 * of the file the cluster now holds does not honour, and a submission that
 * fails says one line only.
 */
struct convert_result;
struct cli_placement;
struct cli_notes {
	const struct convert_result *r;
	const char *file;
	const struct cli_placement *placement;  /* where it runs; NULL: as converted */
};

/* Each note as "FILE:LINE: ..." on err; n may be NULL. */
void cli_notes_print(const struct cli_notes *n, FILE *err);

/*
 * Create obj (a TrainingJob; borrowed) and wait up to timeout_s for the
 * controller to set its status.jobId (numeric text). 0 with the id in
 * job_id, else the exit code after printing one line; a name that is taken
 * is an error (sbatch never replaces a job). The notes are printed once the
 * job is created.
 */
int cli_submit_job(struct cli_kube *k, json_t *obj, const struct cli_notes *notes,
		   double timeout_s, char *job_id, size_t size, FILE *err);

/* How long a submission waits for its job id unless --submit-timeout says. */
#define CLI_SUBMIT_TIMEOUT_S 30.0

/*
 * Submit the converted job notes->r with the globals g: connect, annotate it
 * cadre.dev/submitted-by with the user the API server sees, create it and
 * wait for its job id (cli_submit_job). 0, else the exit code after one
 * line on err.
 */
int cli_submit(const struct cli_globals *g, const char *cmd, const struct cli_notes *notes,
	       double timeout_s, char *job_id, size_t size, FILE *err);

/* cli_submit on a client already open (k stays open, for a command that goes on with it). */
int cli_submit_on(struct cli_kube *k, const struct cli_notes *notes, double timeout_s,
		  char *job_id, size_t size, FILE *err);

/*
 * Where a submitted job's pods may run: cadre's --node-selector and
 * --toleration flags of sbatch, salloc and launch (cli/placement.c), which
 * become the job's spec.podTemplate.spec.nodeSelector and tolerations.
 * Both are text as given (borrowed); NULL when not given.
 */
struct cli_placement {
	const char *node_selector;  /* "KEY=VALUE[,KEY=VALUE...]" */
	const char *tolerations;    /* "KEY[=VALUE][:EFFECT][,...]": Equal with a value, else Exists */
};

/*
 * Check the flags' form, as cmd's, before any request: 0, or
 * CLI_EXIT_USAGE after one line on err naming the flag.
 */
int cli_placement_check(const struct cli_placement *p, const char *cmd, FILE *err);

/*
 * Write p (checked; NULL or empty: nothing) into obj's
 * spec.podTemplate.spec, replacing nodeSelector and tolerations there.
 * 0, CADRE_EINVAL when obj has no spec, or CADRE_ENOMEM.
 */
int cli_placement_put(const struct cli_placement *p, json_t *obj);

/* "30", "2.5": seconds > 0, at most a day; false for anything else. */
bool cli_parse_timeout(const char *text, double *seconds);

/* `cadre status` with no job: the clusters of cadre launch -c, as sky status lists them. */
int cli_clusters(struct cli_kube *k, bool all, FILE *out, FILE *err);

#endif
