/*
 * cadre sbatch, cadre launch and cadre volumes apply against a fake API
 * server: what they send, the exact lines they print, and one line with
 * the right exit code for every way a submission fails.
 */
#include <criterion/criterion.h>

#include "cli/cli.h"
#include "unit/support/clirun.h"
#include "support/httpd.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define TESTDATA CADRE_SOURCE_DIR "/unit/testdata/convert"
#define JOBS "/apis/cadre.dev/v1alpha1/namespaces/ml/trainingjobs"
#define VOLUMES "/apis/cadre.dev/v1alpha1/namespaces/ml/volumes"
#define PARTITIONS "/apis/cadre.dev/v1alpha1/partitions"
#define CONFIGMAPS "/api/v1/namespaces/ml/configmaps"

/* The API server's side: what it answers, what it was sent. */
static struct fake {
	int review_status;   /* 0: answers the SelfSubjectReview */
	int create_status;   /* 0: creates */
	const char *create_reason;
	const char *create_message;
	int gets_before_id;  /* GETs answered without status.jobId; -1: never set */
	int job_gets;
	json_t *created;     /* the body of the last create */
	const char *volume_rv;  /* NULL: no Volume yet */
	bool volume_changes;    /* an apply changes the stored Volume */
	const char *partitions; /* the items of the Partition list; NULL: no such kind (404) */
	const char *nodes;      /* the items of the Node list; NULL: forbidden (403) */
	const char *jobs;       /* the items of the TrainingJob list; NULL: none */
	const char *job_status; /* the job's status once it has its id, besides jobId */
	bool job_exists;        /* GET of one job answers before any create */
	json_t *cms;            /* the ConfigMaps created, as a real server keeps them */
	char body[65536];
} fake;

static struct httpd *server;
static char dir[64], kubeconfig[128], *out, *err;

static void status_body(int code, const char *reason, const char *message)
{
	snprintf(fake.body, sizeof(fake.body), "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		 "\"status\":\"Failure\",\"reason\":\"%s\",\"message\":\"%s\",\"code\":%d}",
		 reason, message, code);
}

static void answer_job(const struct httpd_request *req, struct httpd_response *resp)
{
	if (!strcmp(req->method, "POST")) {
		if (fake.create_status) {
			resp->status = fake.create_status;
			status_body(fake.create_status, fake.create_reason, fake.create_message);
			return;
		}
		json_decref(fake.created);
		fake.created = json_loads(req->body, 0, NULL);
		resp->status = 201;
		snprintf(fake.body, sizeof(fake.body), "%s", req->body);
		return;
	}
	resp->status = 200;
	if (!strcmp(req->target, JOBS) || !strncmp(req->target, JOBS "?", strlen(JOBS) + 1)) {
		snprintf(fake.body, sizeof(fake.body), "{\"items\":[%s]}", fake.jobs ? fake.jobs : "");
		return;
	}
	/* Before any create, no job of that name exists (sbatch names its job apart otherwise). */
	const char *was = json_string_value(json_object_get(json_object_get(fake.created,
									    "metadata"), "name"));
	const char *asked = strrchr(req->target, '/') + 1;

	if (!fake.job_exists && (!was || strncmp(asked, was, strcspn(asked, "?")) ||
				 strlen(was) != strcspn(asked, "?"))) {
		resp->status = 404;
		status_body(404, "NotFound", "trainingjobs.cadre.dev not found");
		return;
	}
	fake.job_gets++;
	snprintf(fake.body, sizeof(fake.body), "{\"metadata\":{\"name\":\"x\"}%s%s%s}",
		 fake.gets_before_id >= 0 && fake.job_gets > fake.gets_before_id ?
		 ",\"status\":{\"jobId\":\"4242\"" : "",
		 fake.gets_before_id >= 0 && fake.job_gets > fake.gets_before_id && fake.job_status ?
		 fake.job_status : "",
		 fake.gets_before_id >= 0 && fake.job_gets > fake.gets_before_id ? "}" : "");
}

static void answer_volume(const struct httpd_request *req, struct httpd_response *resp)
{
	const char *rv = fake.volume_rv;

	if (!strcmp(req->method, "GET") && !rv) {
		resp->status = 404;
		status_body(404, "NotFound", "volumes.cadre.dev \\\"shared-checkpoints\\\" not found");
		return;
	}
	if (!strcmp(req->method, "PATCH") && (!rv || fake.volume_changes))
		rv = fake.volume_rv = fake.volume_rv ? "9" : "8";
	resp->status = 200;
	snprintf(fake.body, sizeof(fake.body), "{\"metadata\":{\"name\":\"shared-checkpoints\","
		 "\"resourceVersion\":\"%s\"}}", rv);
}

/* ConfigMaps: created and listed (metadata only, as the CLI asks) as an API server would. */
static void answer_configmap(const struct httpd_request *req, struct httpd_response *resp)
{
	json_t *list = json_array(), *cm, *copy;
	char *text;
	size_t i;

	if (!strcmp(req->method, "POST")) {
		if (!fake.cms)
			fake.cms = json_array();
		json_array_append_new(fake.cms, json_loads(req->body, 0, NULL));
		resp->status = 201;
		snprintf(fake.body, sizeof(fake.body), "{}");
		json_decref(list);
		return;
	}
	json_array_foreach(fake.cms, i, cm) {
		copy = json_pack("{s:O}", "metadata", json_object_get(cm, "metadata"));
		json_array_append_new(list, copy);
	}
	text = json_dumps(list, JSON_COMPACT);
	resp->status = 200;
	snprintf(fake.body, sizeof(fake.body), "{\"items\":%s}", text);
	free(text);
	json_decref(list);
}

static void handler(void *ctx, const struct httpd_request *req, struct httpd_response *resp)
{
	(void)ctx;
	fake.body[0] = '\0';
	if (strstr(req->target, "/selfsubjectreviews")) {
		resp->status = fake.review_status ? fake.review_status : 201;
		if (fake.review_status)
			status_body(fake.review_status, "Forbidden", "no");
		else
			snprintf(fake.body, sizeof(fake.body), "{\"status\":{\"userInfo\":"
				 "{\"username\":\"alice@example.com\"}}}");
	} else if (!strncmp(req->target, JOBS, strlen(JOBS))) {
		answer_job(req, resp);
	} else if (!strncmp(req->target, VOLUMES, strlen(VOLUMES))) {
		answer_volume(req, resp);
	} else if (!strncmp(req->target, "/api/v1/namespaces/", 19) &&
		   strstr(req->target, "/configmaps")) {
		answer_configmap(req, resp);
	} else if (!strncmp(req->target, "/api/v1/nodes", 13)) {
		resp->status = fake.nodes ? 200 : 403;
		if (fake.nodes)
			snprintf(fake.body, sizeof(fake.body), "{\"items\":[%s]}", fake.nodes);
		else
			status_body(403, "Forbidden", "nodes is forbidden");
	} else if (!strncmp(req->target, PARTITIONS, strlen(PARTITIONS)) && fake.partitions) {
		resp->status = 200;
		snprintf(fake.body, sizeof(fake.body), "{\"items\":[%s]}", fake.partitions);
	} else {
		resp->status = 404;
		status_body(404, "NotFound", "not here");
	}
	resp->body = fake.body;
}

/* A kubeconfig for server with contexts "fake" (namespace ml) and "plain" (none). */
static void setup(void)
{
	memset(&fake, 0, sizeof(fake));
	snprintf(dir, sizeof(dir), "/tmp/cadre-cli-XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(kubeconfig, sizeof(kubeconfig), "%s/config", dir);
	cr_assert_eq(httpd_new(&server), 0);
	httpd_set_handler(server, handler, NULL);
	clirun_kubeconfig(kubeconfig, httpd_url(server));
	unsetenv("KUBECONFIG");
}

static void teardown(void)
{
	char path[160];

	httpd_free(server);
	server = NULL;
	json_decref(fake.created);
	fake.created = NULL;
	json_decref(fake.cms);
	fake.cms = NULL;
	snprintf(path, sizeof(path), "%s/config", dir);
	unlink(path);
	rmdir(dir);
	free(out);
	free(err);
	out = err = NULL;
}

TestSuite(cli_submit, .init = setup, .fini = teardown);

/* Run cadre with the words of line (split at spaces; KC is the kubeconfig) in the test data. */
static int cadre(const char *line)
{
	return clirun(TESTDATA, line, kubeconfig, &out, &err);
}

static void assert_one_line(const char *text)
{
	cr_assert(strstr(err, text), "stderr: %s", err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
}

/* A field of the created object, as a path of keys. */
static json_t *created(const char *a, const char *b, const char *c)
{
	json_t *v = json_object_get(fake.created, a);

	v = b ? json_object_get(v, b) : v;
	return c ? json_object_get(v, c) : v;
}

static const char *created_str(const char *a, const char *b, const char *c)
{
	return json_string_value(created(a, b, c));
}

static long long created_int(const char *a, const char *b, const char *c)
{
	return json_integer_value(created(a, b, c));
}

static size_t count_requests(const char *method, const char *target_prefix)
{
	size_t n = 0;

	for (size_t i = 0; i < httpd_request_count(server); i++) {
		const struct httpd_request *r = httpd_request_at(server, i);

		n += !strcmp(r->method, method) &&
		     !strncmp(r->target, target_prefix, strlen(target_prefix));
	}
	return n;
}

Test(cli_submit, sbatch_prints_submitted_batch_job_with_the_id_the_controller_set)
{
	fake.gets_before_id = 2;
	cr_assert_eq(cadre("sbatch --kubeconfig KC --container-image=registry.invalid/pytorch:24.05 "
			   "train.sh"), CLI_EXIT_OK, "%s", err);
	cr_assert_str_eq(out, "Submitted batch job 4242\n");
	cr_assert_eq(count_requests("POST", JOBS), 1);
	/* One to see that the name is free, then until the id is there. */
	cr_assert_eq(count_requests("GET", JOBS "/llama-pretrain"), 4);
	cr_assert_str_eq(created_str("kind", NULL, NULL), "TrainingJob");
	cr_assert_str_eq(created_str("metadata", "name", NULL), "llama-pretrain");
	cr_assert_str_eq(created_str("spec", "image", NULL), "registry.invalid/pytorch:24.05");
	cr_assert_eq(created_int("spec", "numNodes", NULL), 2);
	cr_assert_str_eq(created_str("spec", "resources", "accelerators"), "NVIDIA:8");
	cr_assert_str_eq(created_str("metadata", "annotations", "cadre.dev/submitted-by"),
			 "alice@example.com");
	cr_assert_str_eq(httpd_request_header(httpd_request_at(server, 1), "Authorization"),
			 "Bearer secret-token");
	/* The notes of cadre convert, and no line about the image: the flag gave one. */
	cr_assert(strstr(err, "train.sh:4: --gpus-per-node: no GPU type"), "%s", err);
	cr_assert_null(strstr(err, "image"), "%s", err);
}

Test(cli_submit, parsable_prints_the_id_alone)
{
	cr_assert_eq(cadre("sbatch --parsable --kubeconfig KC --image img:1 train.sh"), 0, "%s",
		     err);
	cr_assert_str_eq(out, "4242\n");
	cr_assert_str_eq(created_str("spec", "image", NULL), "img:1");
}

Test(cli_submit, command_line_options_win_over_sbatch_lines_in_every_form)
{
	cr_assert_eq(cadre("sbatch --kubeconfig KC -N 4 --time 10 --gpus-per-node=h100:4 "
			   "-Jfinetune --export=A=1 train.sh"), 0, "%s", err);
	cr_assert_str_eq(created_str("metadata", "name", NULL), "finetune");
	cr_assert_eq(created_int("spec", "numNodes", NULL), 4);
	cr_assert_eq(created_int("spec", "activeDeadlineSeconds", NULL), 600);
	cr_assert_str_eq(created_str("spec", "resources", "accelerators"), "h100:4");
	cr_assert_str_eq(created_str("spec", "envs", "A"), "1");

	cr_assert_eq(cadre("sbatch --kubeconfig KC --nodes=3 -N1 --job-name second -- train.sh"), 0);
	cr_assert_eq(created_int("spec", "numNodes", NULL), 1, "the last one wins, as in getopt");
	cr_assert_str_eq(created_str("metadata", "name", NULL), "second");
}

/* Write text to dir/name (dir is this test's), its path into path. */
static void write_script(const char *name, const char *text, char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", dir, name);
	cr_assert_not_null(f = fopen(path, "w"));
	cr_assert_geq(fputs(text, f), 0);
	cr_assert_eq(fclose(f), 0);
}

/* docs/migrating.md: comments read as Latin-1; a command that is not UTF-8 is refused. */
Test(cli_submit, a_script_not_in_utf8_submits_its_latin1_comments_and_refuses_the_rest,
     .timeout = 10)
{
	char path[160], line[256];
	size_t requests;

	write_script("latin1.sh", "#!/bin/bash\n#SBATCH -N 2\n# r\xe9sultats\necho ok\n", path,
		     sizeof(path));
	snprintf(line, sizeof(line), "sbatch --kubeconfig KC --image img:1 %s", path);
	cr_assert_eq(cadre(line), CLI_EXIT_OK, "%s", err);
	cr_assert_str_eq(out, "Submitted batch job 4242\n");
	cr_assert_str_eq(created_str("spec", "run", NULL), "# r\xc3\xa9sultats\necho ok\n");
	cr_assert(strstr(err, "latin1.sh:3: comment not in UTF-8, read as Latin-1 (ISO 8859-1)\n"),
		  "%s", err);
	unlink(path);

	requests = httpd_request_count(server);
	write_script("latin1.sh", "#!/bin/bash\n#SBATCH -N 2\necho r\xe9sultats > out\n", path,
		     sizeof(path));
	cr_assert_eq(cadre(line), CLI_EXIT_USAGE);
	snprintf(line, sizeof(line), "%s:3:7: byte 0xE9 is not UTF-8", path);
	assert_one_line(line);
	cr_assert_str_eq(out, "");
	cr_assert_eq(httpd_request_count(server), requests, "nothing is sent");
	unlink(path);
}

Test(cli_submit, a_command_line_option_that_sbatch_refuses_is_one_line_exit_two_and_sends_nothing)
{
	cr_assert_eq(cadre("sbatch --kubeconfig KC --time=soon train.sh"), CLI_EXIT_USAGE);
	assert_one_line("command line: --time: \"soon\" is not a time");
	cr_assert_str_eq(out, "");
	cr_assert_eq(httpd_request_count(server), 0);

	cr_assert_eq(cadre("sbatch --kubeconfig KC --bogus train.sh"), CLI_EXIT_USAGE);
	assert_one_line("command line: unrecognized option '--bogus'");
	cr_assert_eq(cadre("sbatch --kubeconfig KC train.sh extra"), CLI_EXIT_USAGE);
	assert_one_line("\"extra\" after the script");
	cr_assert_eq(cadre("sbatch --kubeconfig KC"), CLI_EXIT_USAGE);
	assert_one_line("SCRIPT is required");
	cr_assert_eq(cadre("sbatch --kubeconfig KC missing.sh"), CLI_EXIT_USAGE);
	assert_one_line("missing.sh: No such file or directory");
	cr_assert_eq(cadre("sbatch --kubeconfig KC task.yaml"), CLI_EXIT_USAGE);
	assert_one_line("task.yaml:1:1: not a batch script");
	cr_assert_eq(httpd_request_count(server), 0);
}

Test(cli_submit, command_line_notes_come_after_the_scripts_and_before_the_files)
{
	cr_assert_eq(cadre("sbatch --kubeconfig KC --mem=0 train.sh"), 0, "%s", err);
	cr_assert(strstr(err, "train.sh:4: --gpus-per-node") < strstr(err, "command line: --mem:"),
		  "%s", err);
	cr_assert(strstr(err, "command line: --mem:") < strstr(err, "train.sh: no image"), "%s", err);
}

Test(cli_submit, without_an_image_a_note_says_the_controllers_default_image_runs_it)
{
	cr_assert_eq(cadre("sbatch --kubeconfig KC train.sh"), 0, "%s", err);
	cr_assert(strstr(err, "train.sh: no image: neither #SBATCH --container-image nor --image "
			 "names one, so the controller's --default-image runs the job (no "
			 "partition gives one); without one the job fails\n"), "%s", err);
	cr_assert_null(created("spec", "image", NULL));
}

/* docs/design.md 11: the default Partition's image runs a script that names none, and the note says so. */
Test(cli_submit, without_an_image_the_note_names_the_default_partitions_image)
{
	fake.partitions = "{\"metadata\":{\"name\":\"gpu\"},\"spec\":{\"default\":true,"
			  "\"defaultImage\":\"img:demo\"}}";
	cr_assert_eq(cadre("sbatch --kubeconfig KC train.sh"), 0, "%s", err);
	cr_assert(strstr(err, "train.sh: no image: neither #SBATCH --container-image nor --image "
			 "names one, so partition gpu's defaultImage img:demo runs the job\n"),
		  "%s", err);
	cr_assert_str_eq(out, "Submitted batch job 4242\n");
}

/* Slurm's words for a partition that does not exist (slurmctld's job_mgr.c), nothing submitted. */
Test(cli_submit, an_unknown_partition_is_refused_in_slurms_words_and_nothing_is_created)
{
	fake.partitions = "{\"metadata\":{\"name\":\"gpu\"}}";
	cr_assert_eq(cadre("sbatch --kubeconfig KC -p gpu2 train.sh"), CLI_EXIT_FAILED);
	cr_assert_str_eq(err, "sbatch: error: invalid partition specified: gpu2\n");
	cr_assert_str_eq(out, "");
	cr_assert_eq(count_requests("POST", JOBS), 0);
	/* Without the Partition kind at all, no partition exists. */
	fake.partitions = NULL;
	cr_assert_eq(cadre("sbatch --kubeconfig KC -p gpu train.sh"), CLI_EXIT_FAILED);
	cr_assert_str_eq(err, "sbatch: error: invalid partition specified: gpu\n");
	cr_assert_eq(count_requests("POST", JOBS), 0);
	/* A known one goes through, named in the job. */
	fake.partitions = "{\"metadata\":{\"name\":\"gpu\"},\"spec\":{\"maxTime\":\"1:00:00\"}}";
	cr_assert_eq(cadre("sbatch --kubeconfig KC -p gpu --image i:1 train.sh"), 0, "%s", err);
	cr_assert_str_eq(created_str("spec", "partition", NULL), "gpu");
	/* Past its MaxTime: Slurm's EnforcePartLimits refusal. */
	cr_assert_eq(cadre("sbatch --kubeconfig KC -p gpu -t 2:00:00 train.sh"), CLI_EXIT_FAILED);
	cr_assert_str_eq(err, "sbatch: error: Batch job submission failed: Requested time limit is "
			 "invalid (missing or exceeds some limit)\n");
}

/*
 * -w/-x name nodes that exist and -C features some node has, or nothing is
 * submitted: slurmctld's "Invalid node name specified" and "Invalid feature
 * specification", then what is wrong.
 */
Test(cli_submit, node_choices_name_nodes_and_features_that_exist_or_nothing_is_submitted)
{
	fake.partitions = "{\"metadata\":{\"name\":\"gpu\"},\"spec\":{\"default\":true,"
			  "\"features\":{\"a100\":{\"gpu\":\"a100\"},\"h100\":{\"gpu\":\"h100\"}}}}";
	fake.nodes = "{\"metadata\":{\"name\":\"gpu-node-1\",\"labels\":{\"gpu\":\"h100\"}}},"
		     "{\"metadata\":{\"name\":\"gpu-node-2\",\"labels\":{\"gpu\":\"h100\"}}}";
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i:1 -w gpu-node-[1-3] train.sh"),
		     CLI_EXIT_FAILED);
	cr_assert_str_eq(err, "sbatch: error: Batch job submission failed: Invalid node name "
			 "specified (no node gpu-node-3)\n");
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i:1 -C nvme train.sh"),
		     CLI_EXIT_FAILED);
	cr_assert_str_eq(err, "sbatch: error: Batch job submission failed: Invalid feature "
			 "specification (feature nvme of spec.constraint is not one of partition "
			 "gpu's spec.features)\n");
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i:1 -C a100 train.sh"),
		     CLI_EXIT_FAILED);
	cr_assert_str_eq(err, "sbatch: error: Batch job submission failed: Invalid feature "
			 "specification (no node has a100)\n");
	cr_assert_eq(count_requests("POST", JOBS), 0);
	/* What exists goes through, as the job's fields. */
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i:1 -w gpu-node-1 -x gpu-node-2 "
			   "--exclusive -C a100|h100 train.sh"), 0, "%s", err);
	cr_assert_str_eq(created_str("spec", "constraint", NULL), "a100|h100");
	cr_assert(json_is_true(created("spec", "exclusive", NULL)));
	/* Nodes the user may not list are the controller's to check. */
	fake.nodes = NULL;
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i:1 -w gpu-node-9 train.sh"), 0, "%s",
		     err);
}

/* Slurm's AllowAccounts: refused at submission in Slurm's words, then the field's. */
Test(cli_submit, a_namespace_the_partition_does_not_allow_is_refused_naming_the_field)
{
	fake.partitions = "{\"metadata\":{\"name\":\"gpu\"},\"spec\":{\"allowedNamespaces\":"
			  "[\"vision\"]}}";
	cr_assert_eq(cadre("sbatch --kubeconfig KC -p gpu --image i:1 train.sh"), CLI_EXIT_FAILED);
	cr_assert_str_eq(err, "sbatch: error: Batch job submission failed: Invalid account or "
			 "account/partition combination specified (partition gpu: namespace ml is "
			 "not in spec.allowedNamespaces)\n");
	cr_assert_str_eq(out, "");
	cr_assert_eq(count_requests("POST", JOBS), 0);
	/* Listed, it goes through. */
	fake.partitions = "{\"metadata\":{\"name\":\"gpu\"},\"spec\":{\"allowedNamespaces\":"
			  "[\"vision\",\"ml\"]}}";
	cr_assert_eq(cadre("sbatch --kubeconfig KC -p gpu --image i:1 train.sh"), 0, "%s", err);
}

/* The default partition's rules hold for a job that names none. */
Test(cli_submit, a_priority_above_the_partitions_max_is_refused_naming_the_field)
{
	fake.partitions = "{\"metadata\":{\"name\":\"gpu\"},\"spec\":{\"default\":true,"
			  "\"maxJobPriority\":50}}";
	cr_assert_eq(cadre("sbatch --kubeconfig KC --priority 100 --image i:1 train.sh"),
		     CLI_EXIT_FAILED);
	cr_assert_str_eq(err, "sbatch: error: Batch job submission failed: Access/permission "
			 "denied (spec.priority 100 is above partition gpu's maxJobPriority 50)\n");
	cr_assert_eq(count_requests("POST", JOBS), 0);
	cr_assert_eq(cadre("sbatch --kubeconfig KC --priority 50 --image i:1 train.sh"), 0, "%s",
		     err);
}

/* A dependency names jobs that exist; a name is written as that job's id, as Slurm keeps it. */
Test(cli_submit, a_dependency_names_existing_jobs_and_a_name_becomes_its_id)
{
	fake.jobs = "{\"metadata\":{\"name\":\"prep\",\"namespace\":\"ml\"},\"spec\":{\"run\":\"x\"},"
		    "\"status\":{\"jobId\":\"482913307\"}}";
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i:1 -d afterok:prep train.sh"), 0, "%s",
		     err);
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(json_array_get(
		created("spec", "dependency", "items"), 0), "jobs"), 0)), "482913307");
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i:1 -d afterok:482913307 train.sh"), 0);
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i:1 -d afterany:nope train.sh"),
		     CLI_EXIT_FAILED);
	cr_assert(strstr(err, "sbatch: error: Batch job submission failed: Job dependency problem"),
		  "%s", err);
	cr_assert_eq(count_requests("POST", JOBS), 2, "the refused one is not created");
	/* A malformed one is one line naming the option, exit 2, before any request. */
	cr_assert_eq(cadre("sbatch --kubeconfig KC -d afterok train.sh"), CLI_EXIT_USAGE);
	assert_one_line("command line: --dependency: afterok needs at least one job");
}

/* sbatch --wait exits with the job's exit code. */
Test(cli_submit, wait_returns_the_jobs_exit_code)
{
	fake.job_status = ",\"phase\":\"Failed\",\"lastFailure\":{\"exitCode\":3}";
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i:1 --wait train.sh"), 3, "%s", err);
	cr_assert_str_eq(out, "Submitted batch job 4242\n");
	fake.job_status = ",\"phase\":\"Succeeded\"";
	fake.job_gets = 0;
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i:1 -W train.sh"), 0, "%s", err);
}

Test(cli_submit, the_job_is_named_after_the_script_when_nothing_names_it)
{
	FILE *f;
	char path[160], line[256];

	snprintf(path, sizeof(path), "%s/My_Run.v2.sh", dir);
	cr_assert(f = fopen(path, "w"));
	fputs("#!/bin/bash\n#SBATCH -N 1\nsrun true\n", f);
	fclose(f);
	snprintf(line, sizeof(line), "sbatch --kubeconfig KC %s", path);
	cr_assert_eq(cadre(line), 0, "%s", err);
	unlink(path);
	cr_assert_str_eq(created_str("metadata", "name", NULL), "my-run");
	cr_assert(strstr(err, "the job is named \"my-run\""), "%s", err);
}

Test(cli_submit, the_namespace_is_the_flag_else_the_contexts_else_default)
{
	cr_assert_eq(cadre("sbatch --kubeconfig KC --namespace team train.sh"), CLI_EXIT_FAILED);
	cr_assert_eq(count_requests("POST", "/apis/cadre.dev/v1alpha1/namespaces/team/"), 1);
	cr_assert_eq(cadre("-n team2 sbatch --kubeconfig KC train.sh"), CLI_EXIT_FAILED);
	cr_assert_eq(count_requests("POST", "/apis/cadre.dev/v1alpha1/namespaces/team2/"), 1);
	cr_assert_eq(cadre("sbatch --kubeconfig KC --context plain train.sh"), CLI_EXIT_FAILED);
	cr_assert_eq(count_requests("POST", "/apis/cadre.dev/v1alpha1/namespaces/default/"), 1);
	/* -n after "sbatch" is sbatch's --ntasks. */
	cr_assert_eq(cadre("sbatch --kubeconfig KC -n 16 train.sh"), 0, "%s", err);
	cr_assert_eq(created_int("spec", "tasksPerNode", NULL), 8);
}

Test(cli_submit, the_kubeconfig_comes_from_KUBECONFIG_as_kubectl_reads_it)
{
	cr_assert_eq(setenv("KUBECONFIG", kubeconfig, 1), 0);
	cr_assert_eq(cadre("sbatch --parsable train.sh"), 0, "%s", err);
	unsetenv("KUBECONFIG");
	cr_assert_str_eq(out, "4242\n");
}

Test(cli_submit, a_name_that_exists_is_an_error_as_sbatch_never_replaces_a_job)
{
	fake.create_status = 409;
	fake.create_reason = "AlreadyExists";
	fake.create_message = "trainingjobs.cadre.dev \\\"llama-pretrain\\\" already exists";
	cr_assert_eq(cadre("sbatch --kubeconfig KC train.sh"), CLI_EXIT_FAILED);
	cr_assert(strstr(err, "cadre sbatch: a job named \"llama-pretrain\" exists already in "
			 "namespace \"ml\""), "%s", err);
	cr_assert_eq(strchr(strstr(err, "cadre sbatch:"), '\n'), err + strlen(err) - 1, "%s", err);
	cr_assert_str_eq(out, "");
}

/* Slurm's job names need not be unique: a taken one is named apart, its Slurm name kept. */
Test(cli_submit, a_taken_name_is_named_apart_and_keeps_its_slurm_name)
{
	const char *name;

	fake.job_exists = true;
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i:1 train.sh"), 0, "%s", err);
	cr_assert_str_eq(out, "Submitted batch job 4242\n");
	name = created_str("metadata", "name", NULL);
	cr_assert_eq(strlen(name), strlen("llama-pretrain-") + 5, "%s", name);
	cr_assert(!strncmp(name, "llama-pretrain-", 15), "%s", name);
	cr_assert_str_eq(created_str("metadata", "labels", "cadre.dev/slurm-name"),
			 "llama-pretrain");
	cr_assert(strstr(err, "cadre sbatch: job name llama-pretrain is taken in namespace ml: "
			 "the TrainingJob is llama-pretrain-"), "%s", err);
}

Test(cli_submit, a_job_the_controller_never_numbers_is_one_line_naming_it_and_exit_one)
{
	fake.gets_before_id = -1;
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i --submit-timeout=0.5 train.sh"),
		     CLI_EXIT_FAILED);
	cr_assert(strstr(err, "cadre sbatch: trainingjob \"llama-pretrain\" was created in "
			 "namespace \"ml\", but the controller gave it no job id within 0.5 s"),
		  "%s", err);
	cr_assert_eq(strchr(strstr(err, "cadre sbatch:"), '\n'), err + strlen(err) - 1, "%s", err);
	cr_assert_str_eq(out, "");
	cr_assert_gt(fake.job_gets, 1);
	cr_assert_eq(cadre("sbatch --kubeconfig KC --submit-timeout=soon train.sh"), CLI_EXIT_USAGE);
	assert_one_line("--submit-timeout \"soon\": not a number of seconds");
}

Test(cli_submit, a_refused_selfsubjectreview_submits_without_the_annotation)
{
	fake.review_status = 403;
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i train.sh"), 0, "%s", err);
	cr_assert_str_eq(out, "Submitted batch job 4242\n");
	cr_assert_null(created("metadata", "annotations", NULL));
	cr_assert_str_eq(err, "train.sh:4: --gpus-per-node: no GPU type: cadre writes NVIDIA:8, "
			 "which matches every node whose GPU product label holds \"NVIDIA\"; name "
			 "a type (h100:8) to pin one\n");
}

Test(cli_submit, forbidden_is_one_line_with_the_api_servers_message)
{
	fake.create_status = 403;
	fake.create_reason = "Forbidden";
	fake.create_message = "trainingjobs.cadre.dev is forbidden: User \\\"bob\\\" cannot create "
			      "resource \\\"trainingjobs\\\" in API group \\\"cadre.dev\\\" in the "
			      "namespace \\\"ml\\\"";
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i train.sh"), CLI_EXIT_FAILED);
	assert_one_line("cadre sbatch: create trainingjob \"llama-pretrain\" in namespace \"ml\": "
			"not allowed (403 Forbidden): trainingjobs.cadre.dev is forbidden: User "
			"\"bob\" cannot create resource");
	cr_assert_str_eq(out, "");
}

Test(cli_submit, unauthorized_is_one_line_naming_the_server)
{
	fake.create_status = 401;
	fake.create_reason = "Unauthorized";
	fake.create_message = "Unauthorized";
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i train.sh"), CLI_EXIT_FAILED);
	assert_one_line("does not accept these credentials (401 Unauthorized)");
	cr_assert(strstr(err, httpd_url(server)), "%s", err);
}

Test(cli_submit, an_unreachable_server_is_one_line_and_exit_one)
{
	char url[64];

	snprintf(url, sizeof(url), "%s", httpd_url(server));
	httpd_free(server);
	server = NULL;
	cr_assert_eq(cadre("sbatch --kubeconfig KC --image i train.sh"), CLI_EXIT_FAILED);
	cr_assert(strstr(err, "cadre sbatch: cannot reach the API server "), "%s", err);
	cr_assert(strstr(err, url), "%s", err);
	cr_assert_eq(strchr(strstr(err, "cadre sbatch:"), '\n'), err + strlen(err) - 1, "%s", err);
	cr_assert_eq(cadre("launch --kubeconfig KC --image i task.yaml"), CLI_EXIT_FAILED);
	assert_one_line("cadre launch: cannot reach the API server ");
	cr_assert_eq(cadre("volumes apply -f volume.yaml --kubeconfig KC"), CLI_EXIT_FAILED);
	assert_one_line("cadre volumes apply: cannot reach the API server ");
}

Test(cli_submit, no_kubeconfig_is_one_line_and_exit_one)
{
	cr_assert_eq(cadre("sbatch --kubeconfig /nonexistent/config --image i train.sh"),
		     CLI_EXIT_FAILED);
	cr_assert(strstr(err, "cadre sbatch: no usable kubeconfig: kubeconfig /nonexistent/config"),
		  "%s", err);
	cr_assert_eq(strchr(strstr(err, "cadre sbatch:"), '\n'), err + strlen(err) - 1, "%s", err);
}

Test(cli_submit, launch_prints_the_job_name_and_its_id)
{
	cr_assert_eq(cadre("launch --kubeconfig KC --image img:2 task.yaml"), 0, "%s", err);
	cr_assert_str_eq(out, "Submitted job llama-pretrain (jobId 4242)\n");
	cr_assert_str_eq(created_str("spec", "image", NULL), "img:2");
	cr_assert_str_eq(created_str("spec", "resources", "accelerators"), "H100:8");
	cr_assert_str_eq(created_str("metadata", "annotations", "cadre.dev/submitted-by"),
			 "alice@example.com");

	cr_assert_eq(cadre("launch task.yaml --kubeconfig KC --name second-run"), 0, "%s", err);
	cr_assert_str_eq(out, "Submitted job second-run (jobId 4242)\n");
	cr_assert(strstr(err, "task.yaml: no image"), "%s", err);
	cr_assert_eq(cadre("launch task.yaml --kubeconfig KC --name Bad_Name"), CLI_EXIT_USAGE);
	assert_one_line("--name \"Bad_Name\": a job's name is a DNS label");
	cr_assert_eq(cadre("launch --kubeconfig KC train.sh"), CLI_EXIT_USAGE);
	cr_assert_eq(cadre("launch --kubeconfig KC"), CLI_EXIT_USAGE);
	assert_one_line("TASK.yaml is required");
}

Test(cli_submit, volumes_apply_says_created_then_unchanged_then_configured)
{
	const struct httpd_request *patch = NULL;

	cr_assert_eq(cadre("volumes apply -f volume.yaml --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(out, "volume/shared-checkpoints created\n");
	for (size_t i = 0; i < httpd_request_count(server); i++)
		if (!strcmp(httpd_request_at(server, i)->method, "PATCH"))
			patch = httpd_request_at(server, i);
	cr_assert(patch);
	cr_assert_str_eq(patch->target, VOLUMES "/shared-checkpoints?fieldManager=cadre-cli");
	cr_assert_str_eq(httpd_request_header(patch, "Content-Type"),
			 "application/apply-patch+yaml");
	cr_assert(strstr(patch->body, "\"kind\":\"Volume\""), "%s", patch->body);
	cr_assert(strstr(patch->body, "\"size\":\"500Gi\""), "%s", patch->body);

	cr_assert_eq(cadre("volumes apply -f volume.yaml --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(out, "volume/shared-checkpoints unchanged\n");
	fake.volume_changes = true;
	cr_assert_eq(cadre("volumes apply --filename=volume.yaml --kubeconfig KC"), 0, "%s", err);
	cr_assert_str_eq(out, "volume/shared-checkpoints configured\n");
}

Test(cli_submit, volumes_usage_errors_are_one_line_and_exit_two)
{
	cr_assert_eq(cadre("volumes --kubeconfig KC"), CLI_EXIT_USAGE);
	assert_one_line("a subcommand is required: apply");
	cr_assert_eq(cadre("volumes delete x"), CLI_EXIT_USAGE);
	assert_one_line("the one subcommand is apply");
	cr_assert_eq(cadre("volumes apply"), CLI_EXIT_USAGE);
	assert_one_line("-f VOLUME.yaml is required");
	cr_assert_eq(cadre("volumes apply -f train.sh --kubeconfig KC"), CLI_EXIT_USAGE);
	cr_assert_eq(cadre("sbatch -f volume.yaml train.sh"), CLI_EXIT_USAGE);
	cr_assert_eq(httpd_request_count(server), 0);
}

Test(cli_submit, every_submission_command_has_help_with_an_example)
{
	const char *const commands[] = { "sbatch --help", "sbatch -h", "help sbatch",
					 "launch --help", "volumes --help", "help volumes" };

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		cr_assert_eq(cadre(commands[i]), 0, "%s", commands[i]);
		cr_assert(strstr(out, "Usage: cadre "), "%s: %s", commands[i], out);
		cr_assert(strstr(out, "Examples:\n  cadre "), "%s: %s", commands[i], out);
		cr_assert(strstr(out, "--kubeconfig"), "%s", commands[i]);
	}
	cr_assert_eq(cadre("--help"), 0);
	cr_assert(strstr(out, "  sbatch ") && strstr(out, "  launch ") && strstr(out, "  volumes "));
}

/* sky launch -c: a named cluster that stays up, waited for until UP. */
Test(cli_submit, launch_c_keeps_a_named_cluster_up)
{
	fake.job_status = ",\"phase\":\"Running\"";
	cr_assert_eq(cadre("launch --kubeconfig KC -c dev-node --gpus H100:1 --image i:1"), 0, "%s",
		     err);
	cr_assert_str_eq(out, "Launching cluster dev-node (jobId 4242)...\n"
			      "Cluster dev-node is UP: cadre exec dev-node CMD runs on it, cadre down "
			      "dev-node ends it.\n");
	cr_assert_str_eq(created_str("metadata", "name", NULL), "dev-node");
	cr_assert_str_eq(created_str("metadata", "labels", "cadre.dev/cluster"), "dev-node");
	cr_assert_str_eq(created_str("spec", "resources", "accelerators"), "H100:1");
	cr_assert(strstr(created_str("spec", "run", NULL), "while :; do sleep 3600; done"));
	cr_assert_eq(cadre("launch --kubeconfig KC -c Bad_Name"), CLI_EXIT_USAGE);
	cr_assert_eq(cadre("launch --kubeconfig KC --gpus H100:1 x.yaml"), CLI_EXIT_USAGE);
}

/* cadre's --node-selector and --toleration: where the pods may run, in spec.podTemplate.spec. */
Test(cli_submit, node_selector_and_toleration_put_the_pods_where_they_say)
{
	json_t *pod_spec, *t;

	cr_assert_eq(cadre("sbatch --kubeconfig KC --image img:1 --node-selector=pool=cpu,zone=a "
			   "--toleration pool=cpu:NoSchedule,cadre.dev/real-node train.sh"), 0, "%s",
		     err);
	pod_spec = created("spec", "podTemplate", "spec");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pod_spec, "nodeSelector"),
							   "pool")), "cpu");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pod_spec, "nodeSelector"),
							   "zone")), "a");
	cr_assert_eq(json_array_size(json_object_get(pod_spec, "tolerations")), 2);
	t = json_array_get(json_object_get(pod_spec, "tolerations"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(t, "key")), "pool");
	cr_assert_str_eq(json_string_value(json_object_get(t, "operator")), "Equal");
	cr_assert_str_eq(json_string_value(json_object_get(t, "value")), "cpu");
	cr_assert_str_eq(json_string_value(json_object_get(t, "effect")), "NoSchedule");
	t = json_array_get(json_object_get(pod_spec, "tolerations"), 1);
	cr_assert_str_eq(json_string_value(json_object_get(t, "key")), "cadre.dev/real-node");
	cr_assert_str_eq(json_string_value(json_object_get(t, "operator")), "Exists");
	cr_assert_null(json_object_get(t, "value"));
	cr_assert_null(json_object_get(t, "effect"));
	/* The rest of the job is the script's, as without them. */
	cr_assert_eq(created_int("spec", "numNodes", NULL), 2);

	cr_assert_eq(cadre("launch --kubeconfig KC --image img:2 --toleration=gpu:NoExecute "
			   "--node-selector pool=h100 task.yaml"), 0, "%s", err);
	pod_spec = created("spec", "podTemplate", "spec");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(pod_spec, "nodeSelector"),
							   "pool")), "h100");
	t = json_array_get(json_object_get(pod_spec, "tolerations"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(t, "effect")), "NoExecute");
	cr_assert_str_eq(json_string_value(json_object_get(t, "operator")), "Exists");

	cr_assert_eq(cadre("sbatch --kubeconfig KC --image img:1 train.sh"), 0, "%s", err);
	cr_assert_null(created("spec", "podTemplate", NULL), "none without the flags");
}

Test(cli_submit, a_placement_flag_of_the_wrong_form_is_one_line_exit_two_and_sends_nothing)
{
	const char *const lines[] = {
		"sbatch --kubeconfig KC --node-selector pool train.sh",
		"sbatch --kubeconfig KC --node-selector =cpu train.sh",
		"sbatch --kubeconfig KC --node-selector a=b,,c=d train.sh",
		"sbatch --kubeconfig KC --toleration pool:Sometimes train.sh",
		"sbatch --kubeconfig KC --toleration =x train.sh",
		"launch --kubeconfig KC --toleration a=b=c task.yaml",
		"launch --kubeconfig KC --node-selector= task.yaml",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		cr_assert_eq(cadre(lines[i]), CLI_EXIT_USAGE, "%s", lines[i]);
		cr_assert(strstr(err, strstr(lines[i], "--toleration") ? "--toleration \"" :
				 "--node-selector \""), "%s: %s", lines[i], err);
		cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
		cr_assert_str_eq(out, "");
	}
	cr_assert_eq(httpd_request_count(server), 0);
}

/* --- the code that goes with a job (docs/code.md) --- */

/* A project directory: the seed's script, a train.py, and what must not go. */
static void make_project(char *proj, size_t size)
{
	char path[512];
	FILE *f;

	snprintf(proj, size, "/tmp/cadre-proj-XXXXXX");
	cr_assert(mkdtemp(proj));
	snprintf(path, sizeof(path), "cp %s/train.sh %s/ && mkdir %s/out && echo big > %s/out/x "
		 "&& printf 'out/\\n' > %s/.gitignore", TESTDATA, proj, proj, proj, proj);
	cr_assert_eq(system(path), 0);
	snprintf(path, sizeof(path), "%s/train.py", proj);
	cr_assert(f = fopen(path, "w"));
	fputs("print('training')\n", f);
	fclose(f);
}

static void remove_tree(const char *dir_path)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir_path);
	cr_assert_eq(system(cmd), 0);
}

Test(cli_submit, sbatch_takes_the_submit_directory_along_once_per_content)
{
	char proj[64], real[4096], digest[80];
	const json_t *code;

	make_project(proj, sizeof(proj));
	cr_assert(realpath(proj, real));
	fake.gets_before_id = 0;
	cr_assert_eq(clirun(proj, "sbatch --kubeconfig KC --image i train.sh", kubeconfig, &out,
			    &err), CLI_EXIT_OK, "%s", err);
	cr_assert_str_eq(out, "Submitted batch job 4242\n");
	code = created("spec", "code", NULL);
	cr_assert_eq(json_array_size(code), 1);
	snprintf(digest, sizeof(digest), "%s",
		 json_string_value(json_object_get(json_array_get(code, 0), "digest")));
	cr_assert(!strncmp(digest, "sha256:", 7) && strlen(digest) == 71, "%s", digest);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(code, 0), "path")), real);
	cr_assert_str_eq(created_str("spec", "workdir", NULL), real,
			 "the script runs in the submit directory, at its own path");
	/* One part, immutable, labelled with the digest's first 40 hex digits. */
	cr_assert_eq(count_requests("POST", CONFIGMAPS), 1);
	cr_assert_eq(json_array_size(fake.cms), 1);
	json_t *cm = json_array_get(fake.cms, 0);
	cr_assert(json_is_true(json_object_get(cm, "immutable")));
	cr_assert_eq(strncmp(json_string_value(json_object_get(json_object_get(
		json_object_get(cm, "metadata"), "labels"), "cadre.dev/code")), digest + 7, 40), 0);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
		json_object_get(cm, "metadata"), "annotations"), "cadre.dev/code-digest")), digest);
	cr_assert_not_null(json_object_get(json_object_get(cm, "binaryData"), "part"));
	/* The list asks for metadata only: the bytes never come back. */
	for (size_t i = 0; i < httpd_request_count(server); i++) {
		const struct httpd_request *r = httpd_request_at(server, i);
		bool meta = false;

		if (strcmp(r->method, "GET") || strncmp(r->target, CONFIGMAPS, strlen(CONFIGMAPS)))
			continue;
		for (size_t h = 0; h < r->nheaders; h++)
			meta |= !strcasecmp(r->names[h], "accept") &&
				strstr(r->values[h], "as=PartialObjectMetadataList");
		cr_assert(meta, "the list of bundles asks for metadata only");
	}

	/* The same code again: nothing uploaded, the same digest named. */
	cr_assert_eq(clirun(proj, "sbatch --kubeconfig KC --image i -J again train.sh", kubeconfig,
			    &out, &err), CLI_EXIT_OK, "%s", err);
	cr_assert_eq(count_requests("POST", CONFIGMAPS), 1, "a digest present is not sent again");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(
		created("spec", "code", NULL), 0), "digest")), digest);
	remove_tree(proj);
}

Test(cli_submit, no_upload_and_a_chdir_on_a_volume_send_nothing)
{
	char proj[64];

	make_project(proj, sizeof(proj));
	fake.gets_before_id = 0;
	cr_assert_eq(clirun(proj, "sbatch --kubeconfig KC --image i --no-upload train.sh",
			    kubeconfig, &out, &err), CLI_EXIT_OK, "%s", err);
	cr_assert_null(created("spec", "code", NULL));
	cr_assert_null(created("spec", "workdir", NULL));
	cr_assert_eq(count_requests("POST", CONFIGMAPS), 0);
	cr_assert_eq(count_requests("GET", CONFIGMAPS), 0);
	cr_assert_eq(clirun(proj, "sbatch --kubeconfig KC --image i --chdir=/mnt/shared/proj "
			    "--container-mounts=ckpt:/mnt/shared -J onvol train.sh", kubeconfig, &out,
			    &err), CLI_EXIT_OK, "%s", err);
	cr_assert_null(created("spec", "code", NULL), "the Volume has the code already");
	cr_assert_str_eq(created_str("spec", "workdir", NULL), "/mnt/shared/proj");
	cr_assert_eq(count_requests("POST", CONFIGMAPS), 0);
	/* salloc runs in the image as it is: the flags are sbatch's. */
	cr_assert_eq(clirun(proj, "salloc --kubeconfig KC --no-upload true", kubeconfig, &out,
			    &err), CLI_EXIT_USAGE);
	assert_one_line("--no-upload and --max-upload are cadre sbatch's");
	remove_tree(proj);
}

Test(cli_submit, a_directory_over_the_cap_is_refused_in_one_line_and_nothing_is_created)
{
	char proj[64], cmd[256];
	size_t requests;

	make_project(proj, sizeof(proj));
	snprintf(cmd, sizeof(cmd), "head -c 300000 /dev/urandom > %s/weights.bin", proj);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(clirun(proj, "sbatch --kubeconfig KC --image i --max-upload 100K train.sh",
			    kubeconfig, &out, &err), CLI_EXIT_FAILED);
	assert_one_line("cadre sbatch: ");
	cr_assert(strstr(err, "weights.bin"), "names the largest entries: %s", err);
	cr_assert(strstr(err, "--no-upload") && strstr(err, ".cadreignore"), "%s", err);
	cr_assert_eq(count_requests("POST", CONFIGMAPS), 0);
	cr_assert_eq(count_requests("POST", JOBS), 0, "no job without its code");
	/* A cap is a size, at most the ceiling; refused before any request. */
	requests = httpd_request_count(server);
	cr_assert_eq(clirun(proj, "sbatch --kubeconfig KC --image i --max-upload lots train.sh",
			    kubeconfig, &out, &err), CLI_EXIT_USAGE);
	assert_one_line("--max-upload \"lots\": a size like 64M");
	cr_assert_eq(clirun(proj, "sbatch --kubeconfig KC --image i --max-upload 129M train.sh",
			    kubeconfig, &out, &err), CLI_EXIT_USAGE);
	assert_one_line("at most 128 MiB");
	cr_assert_eq(httpd_request_count(server), requests, "nothing is sent");
	remove_tree(proj);
}

Test(cli_submit, launch_sends_workdir_and_local_file_mounts_and_push_prints_the_digest)
{
	char proj[64], path[512];
	const json_t *code;
	FILE *f;

	make_project(proj, sizeof(proj));
	snprintf(path, sizeof(path), "%s/task.yaml", proj);
	cr_assert(f = fopen(path, "w"));
	fputs("name: sync\nnum_nodes: 2\nworkdir: .\nfile_mounts:\n  /etc/app/conf.yaml: train.py\n"
	      "  /data: s3://bucket/data\nrun: python train.py\n", f);
	fclose(f);
	fake.gets_before_id = 0;
	cr_assert_eq(clirun(proj, "launch --kubeconfig KC --image i task.yaml", kubeconfig, &out,
			    &err), CLI_EXIT_OK, "%s", err);
	code = created("spec", "code", NULL);
	cr_assert_eq(json_array_size(code), 2);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(code, 0), "path")),
			 "/root/sky_workdir");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(code, 1), "path")),
			 "/etc/app/conf.yaml");
	cr_assert_str_eq(created_str("spec", "workdir", NULL), "/root/sky_workdir");
	cr_assert(strstr(err, "/data is not copied"), "a bucket is still a note: %s", err);
	cr_assert_eq(count_requests("POST", CONFIGMAPS), 2);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(
		json_array_get(fake.cms, 1), "metadata"), "annotations"), "cadre.dev/code-kind")),
		"file");

	/* push: the workdir's bundle is there already; its digest is printed, nothing sent. */
	cr_assert_eq(clirun(proj, "push --kubeconfig KC .", kubeconfig, &out, &err), CLI_EXIT_OK,
		     "%s", err);
	cr_assert_eq(strlen(out), 72);
	cr_assert_eq(strncmp(out, json_string_value(json_object_get(json_array_get(code, 0),
								    "digest")), 71), 0);
	cr_assert_eq(count_requests("POST", CONFIGMAPS), 2);
	cr_assert_eq(clirun(proj, "push --kubeconfig KC", kubeconfig, &out, &err), CLI_EXIT_USAGE);
	assert_one_line("DIR is required");
	cr_assert_eq(clirun(proj, "push --kubeconfig KC /nonexistent/dir", kubeconfig, &out, &err),
		     CLI_EXIT_FAILED);
	assert_one_line("/nonexistent/dir");
	remove_tree(proj);
}

/* sky launch -c with a task: its workdir goes along as sky launch syncs it. */
Test(cli_submit, launch_c_sends_the_tasks_workdir)
{
	char proj[64], path[512];
	FILE *f;

	make_project(proj, sizeof(proj));
	snprintf(path, sizeof(path), "%s/dev.yaml", proj);
	cr_assert(f = fopen(path, "w"));
	fputs("workdir: .\nsetup: pip install -r requirements.txt\nrun: python train.py\n", f);
	fclose(f);
	fake.job_status = ",\"phase\":\"Running\"";
	cr_assert_eq(clirun(proj, "launch --kubeconfig KC -c dev-node --image i:1 dev.yaml",
			    kubeconfig, &out, &err), 0, "%s", err);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(
		created("spec", "code", NULL), 0), "path")), "/root/sky_workdir");
	cr_assert_eq(count_requests("POST", CONFIGMAPS), 1);
	remove_tree(proj);
}

/* A relative --chdir is under the submit directory, as sbatch reads it, and goes along. */
Test(cli_submit, a_relative_chdir_is_under_the_submit_directory_and_goes_along)
{
	char proj[64], real[4096], want[4200], cmd[256];

	make_project(proj, sizeof(proj));
	snprintf(cmd, sizeof(cmd), "mkdir %s/exp && echo x > %s/exp/cfg", proj, proj);
	cr_assert_eq(system(cmd), 0);
	cr_assert(realpath(proj, real));
	snprintf(want, sizeof(want), "%s/exp", real);
	fake.gets_before_id = 0;
	cr_assert_eq(clirun(proj, "sbatch --kubeconfig KC --image i --chdir=exp train.sh", kubeconfig,
			    &out, &err), CLI_EXIT_OK, "%s", err);
	cr_assert_str_eq(created_str("spec", "workdir", NULL), want);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(
		created("spec", "code", NULL), 0), "path")), want);
	/* Without the upload there is no submit directory in the pod: refused, as before. */
	cr_assert_eq(clirun(proj, "sbatch --kubeconfig KC --image i --no-upload --chdir=exp "
			    "train.sh", kubeconfig, &out, &err), CLI_EXIT_USAGE);
	assert_one_line("--chdir: \"exp\" is relative to the directory sbatch ran in");
	remove_tree(proj);
}
