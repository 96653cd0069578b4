/*
 * kube.c - the cluster the kubeconfig names, API errors as one line, and a
 * job submitted until its Slurm job id is known.
 */
#include "cli/kube.h"

#include "base/err.h"
#include "convert/convert.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A command waits on a person: fail fast rather than in a minute. */
#define CLI_CONNECT_TIMEOUT_MS 5000
#define CLI_REQUEST_TIMEOUT_MS 30000
#define CLI_POLL_MS 200

int cli_kube_open(const struct cli_globals *g, const char *cmd, struct cli_kube *k, FILE *err)
{
	/*
	 * A person runs this: an exec plugin may ask them at the terminal (a
	 * device-code login) and take the time they need.
	 */
	struct kube_config_opts copts = { .kubeconfig = g->kubeconfig, .context = g->context,
					  .exec_terminal = true, .exec_timeout_ms = -1 };
	struct kube_http_opts hopts;
	struct kube_status st;
	int e;

	memset(k, 0, sizeof(*k));
	k->cmd = cmd;
	kube_status_clear(&st);
	if ((e = kube_config_load(&copts, &k->cfg, &st))) {
		fprintf(err, "%s: no usable kubeconfig: %s\n", cmd,
			*st.message ? st.message : cadre_strerror(e));
		return CLI_EXIT_FAILED;
	}
	kube_http_opts_init(&hopts);
	hopts.connect_timeout_ms = CLI_CONNECT_TIMEOUT_MS;
	hopts.request_timeout_ms = CLI_REQUEST_TIMEOUT_MS;
	/* an API server shedding load (429, 503 with Retry-After) is waited out as
	 * kubectl's client does: ten times */
	hopts.max_retries = 10;
	hopts.max_retry_after_ms = 5000;
	hopts.user_agent = "cadre-cli";
	/* a person waits: a connection that stopped answering is given up in seconds */
	hopts.liveness_idle_ms = 5000;
	hopts.liveness_timeout_ms = 5000;
	if ((e = kube_http_new(k->cfg, &hopts, &k->http))) {
		fprintf(err, "%s: %s: server %s: %s\n", cmd, k->cfg->source, k->cfg->server,
			cadre_strerror(e));
		cli_kube_close(k);
		return CLI_EXIT_FAILED;
	}
	k->ns = g->namespace && *g->namespace ? g->namespace :
		k->cfg->namespace && *k->cfg->namespace ? k->cfg->namespace : "default";
	return 0;
}

void cli_kube_close(struct cli_kube *k)
{
	kube_http_free(k->http);
	kube_config_free(k->cfg);
	k->http = NULL;
	k->cfg = NULL;
}

int cli_kube_error(const struct cli_kube *k, const char *what, const struct kube_status *st,
		   FILE *err)
{
	const char *server = k->cfg ? k->cfg->server : "?";
	const char *msg = *st->message ? st->message : cadre_strerror(st->code);

	switch (st->code) {
	case CADRE_EIO:
	case CADRE_ETIMEDOUT:
		if (st->http_status)
			break;
		fprintf(err, "%s: cannot reach the API server %s: %s\n", k->cmd, server, msg);
		return CLI_EXIT_FAILED;
	case CADRE_EUNAUTHORIZED:
		fprintf(err, "%s: the API server %s does not accept these credentials (401 "
			"Unauthorized): %s\n", k->cmd, server, msg);
		return CLI_EXIT_FAILED;
	case CADRE_EFORBIDDEN:
		fprintf(err, "%s: %s: not allowed (403 Forbidden): %s\n", k->cmd, what, msg);
		return CLI_EXIT_FAILED;
	case CADRE_EINVAL:
	case CADRE_EREJECTED:
		fprintf(err, "%s: %s: the API server rejects it: %s\n", k->cmd, what, msg);
		return CLI_EXIT_USAGE;
	default:
		break;
	}
	fprintf(err, "%s: %s: %s\n", k->cmd, what, msg);
	return CLI_EXIT_FAILED;
}

char *cli_kube_whoami(struct cli_kube *k)
{
	static const char body[] =
		"{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}";
	struct kube_response resp;
	json_t *obj = NULL;
	char *user = NULL;
	const char *name;

	kube_response_init(&resp);
	if (kube_http_request(k->http, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
			      NULL, body, sizeof(body) - 1, &resp))
		goto out;
	obj = json_loadb(resp.body.data, resp.body.len, 0, NULL);
	name = json_string_value(json_object_get(json_object_get(json_object_get(obj, "status"),
								 "userInfo"), "username"));
	if (name && *name)
		user = strdup(name);
out:
	json_decref(obj);
	kube_response_release(&resp);
	return user;
}

bool cli_parse_timeout(const char *text, double *seconds)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(v) || v <= 0 || v > 86400)
		return false;
	*seconds = v;
	return true;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* status.jobId of the job into id, "" while the controller has not set it. */
static int poll_job_id(struct cli_kube *k, const char *name, char *id, size_t size,
		       struct kube_status *st)
{
	json_t *obj = NULL;
	const char *v;
	int e;

	if ((e = kube_client_get(k->http, &kube_resource_trainingjobs, k->ns, name, &obj, st)))
		return e;
	v = json_string_value(json_object_get(json_object_get(obj, "status"), "jobId"));
	snprintf(id, size, "%s", v ? v : "");
	json_decref(obj);
	return 0;
}

int cli_submit_job(struct cli_kube *k, json_t *obj, const struct cli_notes *notes,
		   double timeout_s, char *job_id, size_t size, FILE *err)
{
	const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"),
							     "name"));
	struct kube_status st;
	char what[160];
	double deadline;
	int e;

	kube_status_clear(&st);
	snprintf(what, sizeof(what), "create trainingjob \"%s\" in namespace \"%s\"", name, k->ns);
	if ((e = kube_client_create(k->http, &kube_resource_trainingjobs, k->ns, obj, NULL, &st))) {
		if (e != CADRE_EEXIST)
			return cli_kube_error(k, what, &st, err);
		fprintf(err, "%s: a job named \"%s\" exists already in namespace \"%s\"; sbatch "
			"never replaces a job: name this one with --job-name, or delete that one "
			"first\n", k->cmd, name, k->ns);
		return CLI_EXIT_FAILED;
	}
	cli_notes_print(notes, err);
	deadline = now_s() + timeout_s;
	for (;;) {
		if ((e = poll_job_id(k, name, job_id, size, &st))) {
			snprintf(what, sizeof(what), "read trainingjob \"%s\"", name);
			return cli_kube_error(k, what, &st, err);
		}
		if (*job_id)
			break;
		if (now_s() >= deadline) {
			fprintf(err, "%s: trainingjob \"%s\" was created in namespace \"%s\", but "
				"the controller gave it no job id within %g s: is cadre's "
				"controller running?\n", k->cmd, name, k->ns, timeout_s);
			return CLI_EXIT_FAILED;
		}
		nanosleep(&(struct timespec){ .tv_nsec = CLI_POLL_MS * 1000000L }, NULL);
	}
	return 0;
}

void cli_notes_print(const struct cli_notes *n, FILE *err)
{
	for (size_t i = 0; n && i < n->r->notes.len; i++)
		cli_print_note(err, n->file, &n->r->notes.items[i]);
}
