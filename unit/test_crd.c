/*
 * The CustomResourceDefinitions in crd/ against docs/design.md sections 1 and 4: every field
 * there, described, defaulted and validated as the contract says; printer columns, names
 * and list markers that kubectl and GitOps tools rely on; and the samples use only fields
 * the schema keeps. The API server's own behaviour (CEL, pruning, messages) is checked by
 * e2e/tests/10-crd.bats.
 */
#include <criterion/criterion.h>
#include <regex.h>

#include "base/buf.h"
#include "base/err.h"
#include "unit/support/ytree.h"

#define CRD_DIR CADRE_SOURCE_DIR "/crd/"
#define SAMPLES_DIR CADRE_SOURCE_DIR "/manifests/samples/"

static struct ytree *tj_crd;
static struct ytree *vol_crd;
static struct ytree *part_crd;

static struct ytree *load(const char *path)
{
	struct ytree *t = NULL;
	int rc = ytree_load(path, &t);

	cr_assert_eq(rc, 0, "cannot load %s: %s", path, cadre_strerror(rc));
	return t;
}

static void crds_load(void)
{
	tj_crd = load(CRD_DIR "trainingjobs.cadre.dev.yaml");
	vol_crd = load(CRD_DIR "volumes.cadre.dev.yaml");
	part_crd = load(CRD_DIR "partitions.cadre.dev.yaml");
}

static void crds_free(void)
{
	ytree_free(tj_crd);
	ytree_free(vol_crd);
	ytree_free(part_crd);
	tj_crd = vol_crd = part_crd = NULL;
}

TestSuite(crd, .init = crds_load, .fini = crds_free);

static struct ytree *version_of(const struct ytree *crd)
{
	struct ytree *v = ytree_path(crd, "spec.versions.[0]");

	cr_assert_not_null(v, "spec.versions[0] missing");
	return v;
}

static struct ytree *schema_of(const struct ytree *crd)
{
	struct ytree *s = ytree_path(version_of(crd), "schema.openAPIV3Schema");

	cr_assert_not_null(s, "schema.openAPIV3Schema missing");
	return s;
}

/*
 * The schema of a field, by a dotted path from the root of the object: "spec.numNodes".
 * "[]" steps into the items of an array, "{}" into the values of a map. NULL when absent.
 */
static struct ytree *field_at(const struct ytree *crd, const char *path)
{
	struct ytree *cur = schema_of(crd);
	char seg[128];
	const char *p = path;

	while (cur && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);

		cr_assert_lt(n, sizeof(seg));
		memcpy(seg, p, n);
		seg[n] = '\0';
		if (strcmp(seg, "[]") == 0)
			cur = ytree_get(cur, "items");
		else if (strcmp(seg, "{}") == 0)
			cur = ytree_get(cur, "additionalProperties");
		else
			cur = ytree_get(ytree_get(cur, "properties"), seg);
		p = dot ? dot + 1 : p + n;
	}
	return cur;
}

static struct ytree *field(const struct ytree *crd, const char *path)
{
	struct ytree *f = field_at(crd, path);

	cr_assert_not_null(f, "field %s is missing from the schema", path);
	return f;
}

static const char *attr(const struct ytree *crd, const char *path, const char *key)
{
	return ytree_str(ytree_get(field(crd, path), key));
}

static void assert_attr(const struct ytree *crd, const char *path, const char *key,
			const char *want)
{
	const char *got = attr(crd, path, key);

	cr_assert_not_null(got, "%s has no %s (want %s)", path, key, want);
	cr_assert_str_eq(got, want, "%s.%s is %s, want %s", path, key, got, want);
}

static int seq_has(const struct ytree *seq, const char *value)
{
	size_t i;

	for (i = 0; seq && seq->kind == YTREE_SEQ && i < seq->len; i++)
		if (ytree_str(seq->items[i]) && strcmp(ytree_str(seq->items[i]), value) == 0)
			return 1;
	return 0;
}

static void assert_seq_is(const struct ytree *seq, const char *const *want, size_t n,
			  const char *what)
{
	size_t i;

	cr_assert_not_null(seq, "%s missing", what);
	cr_assert_eq(seq->kind, YTREE_SEQ, "%s is not a list", what);
	cr_assert_eq(seq->len, n, "%s has %zu entries, want %zu", what, seq->len, n);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(ytree_str(seq->items[i]), want[i], "%s[%zu]", what, i);
}

/* A description kubectl explain can show: a sentence, not a placeholder. */
static void assert_described(const struct ytree *schema, const char *path)
{
	const char *d = ytree_str(ytree_get(schema, "description"));

	cr_assert_not_null(d, "%s has no description", path);
	cr_assert_geq(strlen(d), 10, "%s has a description too short to help: \"%s\"", path, d);
	cr_assert(strchr(d, ' '), "%s has a one-word description: \"%s\"", path, d);
}

/* The fields of docs/design.md, with the type each must have. */
struct field_spec {
	const char *path;
	const char *type;   /* "int-or-string" for quantities */
};

static const struct field_spec tj_fields[] = {
	{"spec", "object"},
	{"spec.numNodes", "integer"},
	{"spec.tasksPerNode", "integer"},
	{"spec.resources", "object"},
	{"spec.resources.accelerators", "string"},
	{"spec.resources.cpus", "int-or-string"},
	{"spec.resources.memory", "int-or-string"},
	{"spec.resources.acceleratorResource", "string"},
	{"spec.image", "string"},
	{"spec.setup", "string"},
	{"spec.run", "string"},
	{"spec.workdir", "string"},
	{"spec.envs", "object"},
	{"spec.secretEnvs", "array"},
	{"spec.secretEnvs.[].name", "string"},
	{"spec.secretEnvs.[].secretKeyRef", "object"},
	{"spec.secretEnvs.[].secretKeyRef.name", "string"},
	{"spec.secretEnvs.[].secretKeyRef.key", "string"},
	{"spec.volumes", "object"},
	{"spec.queue", "string"},
	{"spec.priority", "integer"},
	{"spec.priorityClassName", "string"},
	{"spec.maxRestarts", "integer"},
	{"spec.successPolicy", "string"},
	{"spec.restartStrategy", "string"},
	{"spec.suspend", "boolean"},
	{"spec.activeDeadlineSeconds", "integer"},
	{"spec.ttlSecondsAfterFinished", "integer"},
	{"spec.gang", "object"},
	{"spec.gang.timeoutSeconds", "integer"},
	{"spec.masterPort", "integer"},
	{"spec.podTemplate", "object"},
	{"spec.podTemplate.metadata", "object"},
	{"spec.podTemplate.metadata.labels", "object"},
	{"spec.podTemplate.metadata.annotations", "object"},
	{"spec.podTemplate.spec", "object"},
	{"spec.podTemplate.spec.nodeSelector", "object"},
	{"spec.podTemplate.spec.tolerations", "array"},
	{"spec.podTemplate.spec.tolerations.[].key", "string"},
	{"spec.podTemplate.spec.tolerations.[].operator", "string"},
	{"spec.podTemplate.spec.tolerations.[].value", "string"},
	{"spec.podTemplate.spec.tolerations.[].effect", "string"},
	{"spec.podTemplate.spec.tolerations.[].tolerationSeconds", "integer"},
	{"spec.podTemplate.spec.affinity", "object"},
	{"spec.podTemplate.spec.affinity.nodeAffinity", "object"},
	{"spec.podTemplate.spec.affinity.podAffinity", "object"},
	{"spec.podTemplate.spec.affinity.podAntiAffinity", "object"},
	{"spec.podTemplate.spec.serviceAccountName", "string"},
	{"spec.podTemplate.spec.imagePullSecrets", "array"},
	{"spec.podTemplate.spec.imagePullSecrets.[].name", "string"},
	{"spec.podTemplate.spec.runtimeClassName", "string"},
	{"spec.podTemplate.spec.schedulerName", "string"},
	{"spec.podTemplate.spec.securityContext", "object"},
	{"spec.podTemplate.spec.securityContext.runAsUser", "integer"},
	{"spec.podTemplate.spec.securityContext.runAsGroup", "integer"},
	{"spec.podTemplate.spec.securityContext.runAsNonRoot", "boolean"},
	{"spec.podTemplate.spec.securityContext.fsGroup", "integer"},
	{"spec.podTemplate.spec.securityContext.seccompProfile", "object"},
	{"spec.podTemplate.spec.securityContext.seccompProfile.type", "string"},
	{"spec.podTemplate.spec.securityContext.seccompProfile.localhostProfile", "string"},
	{"spec.podTemplate.spec.containerSecurityContext", "object"},
	{"spec.podTemplate.spec.containerSecurityContext.allowPrivilegeEscalation", "boolean"},
	{"spec.podTemplate.spec.containerSecurityContext.capabilities", "object"},
	{"spec.podTemplate.spec.containerSecurityContext.capabilities.drop", "array"},
	{"spec.podTemplate.spec.containerSecurityContext.runAsNonRoot", "boolean"},
	{"spec.podTemplate.spec.containerSecurityContext.readOnlyRootFilesystem", "boolean"},
	{"status", "object"},
	{"status.phase", "string"},
	{"status.conditions", "array"},
	{"status.observedGeneration", "integer"},
	{"status.jobId", "string"},
	{"status.taskId", "string"},
	{"status.readyNodes", "integer"},
	{"status.restarts", "integer"},
	{"status.infraRestarts", "integer"},
	{"status.admittedTime", "string"},
	{"status.startTime", "string"},
	{"status.completionTime", "string"},
	{"status.nodes", "array"},
	{"status.nodes.[].rank", "integer"},
	{"status.nodes.[].pod", "string"},
	{"status.nodes.[].node", "string"},
	{"status.nodes.[].ip", "string"},
	{"status.nodes.[].phase", "string"},
	{"status.lastFailure", "object"},
	{"status.lastFailure.rank", "integer"},
	{"status.lastFailure.pod", "string"},
	{"status.lastFailure.node", "string"},
	{"status.lastFailure.exitCode", "integer"},
	{"status.lastFailure.reason", "string"},
	{"status.lastFailure.message", "string"},
	{"status.lastFailure.time", "string"},
	{"status.message", "string"},
};

static const struct field_spec vol_fields[] = {
	{"spec", "object"},
	{"spec.type", "string"},
	{"spec.size", "int-or-string"},
	{"spec.accessMode", "string"},
	{"spec.storageClassName", "string"},
	{"spec.claimName", "string"},
	{"spec.nfs", "object"},
	{"spec.nfs.server", "string"},
	{"spec.nfs.path", "string"},
	{"spec.nfs.readOnly", "boolean"},
	{"spec.reclaimPolicy", "string"},
	{"status", "object"},
	{"status.phase", "string"},
	{"status.claimName", "string"},
	{"status.capacity", "string"},
	{"status.accessModes", "array"},
	{"status.usedBy", "array"},
	{"status.conditions", "array"},
};

static void assert_fields(const struct ytree *crd, const struct field_spec *fields, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct ytree *f = field(crd, fields[i].path);

		assert_described(f, fields[i].path);
		if (strcmp(fields[i].type, "int-or-string") == 0) {
			cr_assert_str_eq(ytree_str(ytree_get(f, "x-kubernetes-int-or-string")),
					 "true", "%s is not int-or-string", fields[i].path);
		} else {
			const char *type = ytree_str(ytree_get(f, "type"));

			cr_assert_not_null(type, "%s has no type", fields[i].path);
			cr_assert_str_eq(type, fields[i].type, "%s has type %s, want %s",
					 fields[i].path, type, fields[i].type);
		}
	}
}

Test(crd, trainingjob_has_every_field_of_the_design_typed_and_described)
{
	assert_fields(tj_crd, tj_fields, sizeof(tj_fields) / sizeof(tj_fields[0]));
}

Test(crd, volume_has_every_field_of_the_design_typed_and_described)
{
	assert_fields(vol_crd, vol_fields, sizeof(vol_fields) / sizeof(vol_fields[0]));
}

/*
 * Every property anywhere in the schema, however deep, has a description, so that no
 * `kubectl explain` page shows an empty one. Root metadata is ObjectMeta, which the API
 * server describes itself. Returns how many properties it checked.
 */
static size_t walk_described(const struct ytree *schema, struct buf *path)
{
	const struct ytree *props = ytree_get(schema, "properties");
	const struct ytree *sub;
	size_t checked = 0, i, mark = path->len;

	for (i = 0; props && props->kind == YTREE_MAP && i < props->len; i++) {
		cr_assert_eq(buf_addf(path, "%s%s", mark ? "." : "", props->keys[i]), 0);
		if (!(mark == 0 && strcmp(props->keys[i], "metadata") == 0)) {
			assert_described(props->items[i], buf_str(path));
			checked++;
			checked += walk_described(props->items[i], path);
		}
		path->len = mark;
		path->data[mark] = '\0';
	}
	sub = ytree_get(schema, "items");
	if (sub) {
		cr_assert_eq(buf_adds(path, ".[]"), 0);
		checked += walk_described(sub, path);
		path->len = mark;
		path->data[mark] = '\0';
	}
	sub = ytree_get(schema, "additionalProperties");
	if (sub && sub->kind == YTREE_MAP) {
		cr_assert_eq(buf_adds(path, ".{}"), 0);
		checked += walk_described(sub, path);
		path->len = mark;
		path->data[mark] = '\0';
	}
	return checked;
}

Test(crd, every_property_at_every_depth_has_a_description)
{
	struct buf path;
	size_t checked;

	buf_init(&path, 4096);
	cr_assert_eq(buf_adds(&path, ""), 0);
	assert_described(schema_of(tj_crd), "TrainingJob");
	checked = walk_described(schema_of(tj_crd), &path);
	cr_assert_geq(checked, sizeof(tj_fields) / sizeof(tj_fields[0]));
	assert_described(schema_of(vol_crd), "Volume");
	checked = walk_described(schema_of(vol_crd), &path);
	cr_assert_geq(checked, sizeof(vol_fields) / sizeof(vol_fields[0]));
	buf_release(&path);
}

static void assert_names(const struct ytree *crd, const char *name, const char *kind,
			 const char *plural, const char *singular, const char *short_name)
{
	const char *shorts[] = {short_name};
	const char *categories[] = {"cadre"};
	struct ytree *v = version_of(crd);

	cr_assert_str_eq(ytree_str(ytree_path(crd, "apiVersion")), "apiextensions.k8s.io/v1");
	cr_assert_str_eq(ytree_str(ytree_path(crd, "kind")), "CustomResourceDefinition");
	cr_assert_str_eq(ytree_str(ytree_path(crd, "metadata.name")), name);
	cr_assert_str_eq(ytree_str(ytree_path(crd, "spec.group")), "cadre.dev");
	cr_assert_str_eq(ytree_str(ytree_path(crd, "spec.scope")), "Namespaced");
	cr_assert_str_eq(ytree_str(ytree_path(crd, "spec.names.kind")), kind);
	cr_assert_str_eq(ytree_str(ytree_path(crd, "spec.names.plural")), plural);
	cr_assert_str_eq(ytree_str(ytree_path(crd, "spec.names.singular")), singular);
	assert_seq_is(ytree_path(crd, "spec.names.shortNames"), shorts, 1, "shortNames");
	assert_seq_is(ytree_path(crd, "spec.names.categories"), categories, 1, "categories");

	cr_assert_eq(ytree_path(crd, "spec.versions")->len, 1, "one version only");
	cr_assert_str_eq(ytree_str(ytree_get(v, "name")), "v1alpha1");
	cr_assert_str_eq(ytree_str(ytree_get(v, "served")), "true");
	cr_assert_str_eq(ytree_str(ytree_get(v, "storage")), "true");
	cr_assert_not_null(ytree_path(v, "subresources.status"), "no status subresource");
	cr_assert_eq(ytree_path(v, "subresources.status")->kind, YTREE_MAP);
}

Test(crd, names_short_names_categories_and_status_subresource)
{
	assert_names(tj_crd, "trainingjobs.cadre.dev", "TrainingJob", "trainingjobs",
		     "trainingjob", "tj");
	assert_names(vol_crd, "volumes.cadre.dev", "Volume", "volumes", "volume", "cvol");
}

struct default_spec {
	const char *path;
	const char *value;
};

Test(crd, defaults_are_those_of_the_design)
{
	static const struct default_spec tj_defaults[] = {
		{"spec.numNodes", "1"},
		{"spec.tasksPerNode", "1"},
		{"spec.resources.acceleratorResource", "nvidia.com/gpu"},
		{"spec.priority", "0"},
		{"spec.maxRestarts", "0"},
		{"spec.successPolicy", "All"},
		{"spec.restartStrategy", "Recreate"},
		{"spec.suspend", "false"},
		{"spec.gang.timeoutSeconds", "600"},
		{"spec.masterPort", "29500"},
	};
	static const struct default_spec vol_defaults[] = {
		{"spec.accessMode", "ReadWriteMany"},
		{"spec.reclaimPolicy", "Retain"},
	};
	size_t i;

	for (i = 0; i < sizeof(tj_defaults) / sizeof(tj_defaults[0]); i++)
		assert_attr(tj_crd, tj_defaults[i].path, "default", tj_defaults[i].value);
	for (i = 0; i < sizeof(vol_defaults) / sizeof(vol_defaults[0]); i++)
		assert_attr(vol_crd, vol_defaults[i].path, "default", vol_defaults[i].value);

	/* Nested defaults apply only where their parent exists: default the parents to {}. */
	cr_assert_eq(field(tj_crd, "spec.resources")->kind, YTREE_MAP);
	cr_assert_eq(ytree_get(field(tj_crd, "spec.resources"), "default")->kind, YTREE_MAP);
	cr_assert_eq(ytree_get(field(tj_crd, "spec.gang"), "default")->kind, YTREE_MAP);
}

struct column_spec {
	const char *name;
	const char *json_path;
	const char *type;
	int priority;
};

static void assert_columns(const struct ytree *crd, const struct column_spec *want, size_t n)
{
	struct ytree *cols = ytree_get(version_of(crd), "additionalPrinterColumns");
	size_t i;

	cr_assert_not_null(cols, "no additionalPrinterColumns");
	cr_assert_eq(cols->len, n, "%zu printer columns, want %zu", cols->len, n);
	for (i = 0; i < n; i++) {
		struct ytree *c = ytree_at(cols, i);
		const char *prio = ytree_str(ytree_get(c, "priority"));

		cr_assert_str_eq(ytree_str(ytree_get(c, "name")), want[i].name, "column %zu", i);
		cr_assert_str_eq(ytree_str(ytree_get(c, "jsonPath")), want[i].json_path,
				 "column %s", want[i].name);
		cr_assert_str_eq(ytree_str(ytree_get(c, "type")), want[i].type,
				 "column %s", want[i].name);
		if (want[i].priority)
			cr_assert(prio && strtol(prio, NULL, 10) == want[i].priority,
				  "column %s must have priority %d (shown by -o wide)",
				  want[i].name, want[i].priority);
		else
			cr_assert(!prio || strcmp(prio, "0") == 0,
				  "column %s must show without -o wide", want[i].name);
	}
}

Test(crd, trainingjob_printer_columns_and_wide_ones)
{
	static const struct column_spec want[] = {
		{"PHASE", ".status.phase", "string", 0},
		{"NODES", ".spec.numNodes", "integer", 0},
		{"READY", ".status.readyNodes", "integer", 0},
		{"ACCELERATORS", ".spec.resources.accelerators", "string", 0},
		{"RESTARTS", ".status.restarts", "integer", 0},
		{"AGE", ".metadata.creationTimestamp", "date", 0},
		{"JOBID", ".status.jobId", "string", 1},
		{"PARTITION", ".status.partition", "string", 1},
		{"QUEUE", ".spec.queue", "string", 1},
		{"TOPOLOGY", ".status.topology.domains", "string", 1},
		{"MESSAGE", ".status.message", "string", 1},
	};

	assert_columns(tj_crd, want, sizeof(want) / sizeof(want[0]));
}

Test(crd, volume_printer_columns)
{
	static const struct column_spec want[] = {
		{"TYPE", ".spec.type", "string", 0},
		{"SIZE", ".spec.size", "string", 0},
		{"ACCESS", ".spec.accessMode", "string", 0},
		{"PHASE", ".status.phase", "string", 0},
		{"USED-BY", ".status.usedBy", "string", 0},
		{"AGE", ".metadata.creationTimestamp", "date", 0},
	};

	assert_columns(vol_crd, want, sizeof(want) / sizeof(want[0]));
}

static void assert_list_type(const struct ytree *crd, const char *path, const char *type,
			     const char *key)
{
	assert_attr(crd, path, "x-kubernetes-list-type", type);
	if (key) {
		const char *keys[] = {key};

		assert_seq_is(ytree_get(field(crd, path), "x-kubernetes-list-map-keys"), keys, 1,
			      path);
		cr_assert(seq_has(ytree_get(ytree_get(field(crd, path), "items"), "required"), key),
			  "%s: map key %s must be required", path, key);
	}
}

Test(crd, lists_carry_the_markers_gitops_tools_merge_by)
{
	assert_list_type(tj_crd, "spec.secretEnvs", "map", "name");
	assert_list_type(tj_crd, "spec.podTemplate.spec.tolerations", "atomic", NULL);
	assert_list_type(tj_crd, "spec.podTemplate.spec.imagePullSecrets", "map", "name");
	assert_list_type(tj_crd, "status.conditions", "map", "type");
	assert_list_type(tj_crd, "status.nodes", "map", "rank");
	assert_list_type(vol_crd, "status.usedBy", "set", NULL);
	assert_list_type(vol_crd, "status.accessModes", "atomic", NULL);
	assert_list_type(vol_crd, "status.conditions", "map", "type");
}

Test(crd, numeric_limits_name_the_field)
{
	assert_attr(tj_crd, "spec.numNodes", "minimum", "1");
	assert_attr(tj_crd, "spec.tasksPerNode", "minimum", "1");
	assert_attr(tj_crd, "spec.tasksPerNode", "maximum", "1024");
	assert_attr(tj_crd, "spec.masterPort", "minimum", "1");
	assert_attr(tj_crd, "spec.masterPort", "maximum", "65535");
	assert_attr(tj_crd, "spec.gang.timeoutSeconds", "minimum", "1");
	assert_attr(tj_crd, "spec.maxRestarts", "minimum", "0");
	assert_attr(tj_crd, "spec.activeDeadlineSeconds", "minimum", "1");
	assert_attr(tj_crd, "spec.ttlSecondsAfterFinished", "minimum", "0");
	assert_attr(tj_crd, "spec.priority", "format", "int32");
	assert_attr(tj_crd, "spec.priority", "minimum", "-2147483648");
	assert_attr(tj_crd, "spec.priority", "maximum", "2147483647");
	/* The bounds api/trainingjob.h validates with (TJ_MAX_*). */
	assert_attr(tj_crd, "spec.numNodes", "maximum", "16384");
	assert_attr(tj_crd, "spec.maxRestarts", "maximum", "10000");
	assert_attr(tj_crd, "spec.maxInfraRestarts", "maximum", "10000");
	assert_attr(tj_crd, "spec.activeDeadlineSeconds", "maximum", "315360000");
	assert_attr(tj_crd, "spec.ttlSecondsAfterFinished", "maximum", "315360000");
	assert_attr(tj_crd, "spec.gang.timeoutSeconds", "maximum", "604800");
}

static regex_t compile_pattern(const struct ytree *crd, const char *path)
{
	const char *pattern = attr(crd, path, "pattern");
	regex_t re;

	cr_assert_not_null(pattern, "%s has no pattern", path);
	cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0,
		     "%s: pattern %s is not a valid regular expression", path, pattern);
	return re;
}

static void assert_matches(const struct ytree *crd, const char *path,
			   const char *const *good, const char *const *bad)
{
	regex_t re = compile_pattern(crd, path);

	for (; *good; good++)
		cr_expect_eq(regexec(&re, *good, 0, NULL, 0), 0, "%s must accept \"%s\"", path,
			     *good);
	for (; *bad; bad++)
		cr_expect_neq(regexec(&re, *bad, 0, NULL, 0), 0, "%s must reject \"%s\"", path,
			      *bad);
	regfree(&re);
}

Test(crd, accelerators_are_type_and_optional_positive_count)
{
	static const char *const good[] = {"H100:8", "H100", "A100-80GB:1", "tpu-v5p.x:16",
					   "h100:10", NULL};
	static const char *const bad[] = {"H100:0", "H100:08", "H100:", ":8", "H100:-1",
					  "H100 :8", "-H100", "", "H100:8:1", NULL};

	assert_attr(tj_crd, "spec.resources.accelerators", "pattern",
		    "^[A-Za-z0-9][A-Za-z0-9._-]*(:[1-9][0-9]*)?$");
	assert_matches(tj_crd, "spec.resources.accelerators", good, bad);
}

Test(crd, quantities_are_int_or_string_kubernetes_quantities)
{
	static const char *const good[] = {"500Gi", "32", "500m", "1.5", ".5", "1e3", "2Ti",
					   "256G", "1E", NULL};
	static const char *const bad[] = {"lots", "-1", "5 Gi", "Gi", "1GB", "1.2.3", "", NULL};
	const char *paths[] = {"spec.resources.cpus", "spec.resources.memory"};
	size_t i;

	for (i = 0; i < 2; i++) {
		assert_attr(tj_crd, paths[i], "x-kubernetes-int-or-string", "true");
		assert_matches(tj_crd, paths[i], good, bad);
	}
	assert_attr(vol_crd, "spec.size", "x-kubernetes-int-or-string", "true");
	assert_matches(vol_crd, "spec.size", good, bad);
}

Test(crd, job_names_fit_the_service_and_pod_names_made_from_them)
{
	struct ytree *rules = ytree_get(schema_of(tj_crd), "x-kubernetes-validations");
	const char *rule = ytree_str(ytree_get(ytree_at(rules, 0), "rule"));
	const char *message = ytree_str(ytree_get(ytree_at(rules, 0), "message"));

	cr_assert_not_null(rule, "the TrainingJob needs a rule on metadata.name");
	cr_assert(strstr(rule, "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')"),
		  "the name must be a DNS-1035 label, as a Service name is: %s", rule);
	cr_assert(strstr(rule, "size(self.metadata.name) <= 50"),
		  "<name>-<rank> and <name>-<attempt> must stay within 63 characters: %s", rule);
	cr_assert(message && strstr(message, "metadata.name"), "the message must name the field");
}

Test(crd, run_is_required_and_non_empty_image_is_optional)
{
	struct ytree *required = ytree_get(field(tj_crd, "spec"), "required");

	cr_assert(seq_has(required, "run"), "spec.run must be required");
	cr_assert(!seq_has(required, "image"),
		  "spec.image must be optional: the controller may have --default-image");
	assert_attr(tj_crd, "spec.run", "minLength", "1");
	cr_assert(seq_has(ytree_get(schema_of(tj_crd), "required"), "spec"));
}

/* The x-kubernetes-validations of a field, or NULL. */
static struct ytree *rules_of(const struct ytree *crd, const char *path)
{
	return ytree_get(field(crd, path), "x-kubernetes-validations");
}

/* The first rule of path whose text contains needle, or NULL. */
static struct ytree *rule_with(const struct ytree *crd, const char *path, const char *needle)
{
	struct ytree *rules = rules_of(crd, path);
	size_t i;

	for (i = 0; rules && i < rules->len; i++) {
		const char *rule = ytree_str(ytree_get(ytree_at(rules, i), "rule"));

		if (rule && strstr(rule, needle))
			return ytree_at(rules, i);
	}
	return NULL;
}

#define C_IDENTIFIER "^[A-Za-z_][A-Za-z0-9_]*$"

Test(crd, env_names_are_c_identifiers)
{
	static const char *const good[] = {"BATCH_SIZE", "_x", "HF_TOKEN", "a1", NULL};
	static const char *const bad[] = {"1A", "BATCH-SIZE", "A.B", "", "A B", NULL};

	cr_assert_not_null(rule_with(tj_crd, "spec.envs", "k.matches('" C_IDENTIFIER "')"),
			   "spec.envs needs a rule that every key is a C identifier");
	assert_attr(tj_crd, "spec.secretEnvs.[].name", "pattern", C_IDENTIFIER);
	assert_matches(tj_crd, "spec.secretEnvs.[].name", good, bad);
}

static const char *const reserved_names[] = {
	"SKYPILOT_NUM_NODES", "NNODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES",
	"SKYPILOT_NODE_RANK", "NODE_RANK", "SLURM_NODEID", "SLURM_PROCID",
	"SKYPILOT_NUM_GPUS_PER_NODE", "SLURM_GPUS_PER_NODE", "SKYPILOT_NODE_IPS",
	"SLURM_JOB_NODELIST", "SKYPILOT_TASK_ID", "CADRE_TASK_ID", "SLURM_JOB_ID",
	"CADRE_JOB_ID", "SLURM_JOB_NAME", "CADRE_JOB_NAME", "MASTER_ADDR", "MASTER_PORT",
	"CADRE_RESTART_ATTEMPT", "CADRE_ATTEMPT_FILE", "SLURM_NODELIST", "SLURM_JOBID",
	"SLURM_NTASKS", "SLURM_NPROCS",
	"SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE", "SLURM_CPUS_PER_TASK",
	"SLURM_CPUS_ON_NODE", "SLURM_GPUS_ON_NODE", "SLURM_LOCALID", "SLURM_SUBMIT_DIR",
	"SLURM_JOB_PARTITION", "SLURM_RESTART_COUNT", "SLURM_CLUSTER_NAME", "CADRE_PEERS",
	"CADRE_PEER_DOMAIN", "CADRE_GANG_TIMEOUT_SECONDS", "CADRE_WORKDIR", "CADRE_SETUP", "CADRE_RUN",
	"CADRE_TERMINATION_LOG", "CADRE_BIN_DIR", "CADRE_HEARTBEAT_FILE",
	"CADRE_HANG_STARTUP_SECONDS", "CADRE_HANG_PROGRESS_SECONDS", "CADRE_NCCL_DUMP_DIR",
	"CADRE_SIGNAL", "CADRE_SIGNAL_SECONDS_BEFORE", "CADRE_DEADLINE",
	"SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
	"SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP",
	"CADRE_OUTPUT", "CADRE_ERROR", "CADRE_STAGE_IN", "CADRE_CODE",
};

/* The rule lists every name as a quoted CEL string, so NNODES is not found in SLURM_NNODES. */
static void assert_lists_reserved(const struct ytree *rule, const char *what)
{
	const char *text = ytree_str(ytree_get(rule, "rule"));
	const char *message = ytree_str(ytree_get(rule, "messageExpression"));
	char quoted[64];
	size_t i;

	cr_assert_not_null(text, "%s has no reserved-name rule", what);
	for (i = 0; i < sizeof(reserved_names) / sizeof(reserved_names[0]); i++) {
		snprintf(quoted, sizeof(quoted), "'%s'", reserved_names[i]);
		cr_assert(strstr(text, quoted), "%s: the reserved-name rule misses %s", what,
			  reserved_names[i]);
	}
	cr_assert_not_null(message, "%s: the reserved-name rule must say which name", what);
}

Test(crd, user_envs_cannot_set_any_injected_name)
{
	cr_assert_eq(sizeof(reserved_names) / sizeof(reserved_names[0]), 61);
	assert_lists_reserved(rule_with(tj_crd, "spec.envs", "'CADRE_RESTART_ATTEMPT'"),
			      "spec.envs");
	assert_lists_reserved(rule_with(tj_crd, "spec.secretEnvs.[].name",
					"'CADRE_RESTART_ATTEMPT'"),
			      "spec.secretEnvs[].name");
}

Test(crd, volume_mount_paths_are_absolute)
{
	struct ytree *rule = rule_with(tj_crd, "spec.volumes", "startsWith('/')");

	cr_assert_not_null(rule, "spec.volumes needs a rule that keys are absolute paths");
	cr_assert(strstr(ytree_str(ytree_get(rule, "rule")), "self.all(k,"),
		  "the rule must check every key");
	assert_attr(vol_crd, "spec.nfs.path", "pattern", "^/");
}

static void assert_enum(const struct ytree *crd, const char *path, const char *const *want,
			size_t n)
{
	assert_seq_is(ytree_get(field(crd, path), "enum"), want, n, path);
}

Test(crd, enumerations)
{
	static const char *const success[] = {"All", "Rank0"};
	static const char *const types[] = {"k8s-pvc", "nfs"};
	static const char *const modes[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
					    "ReadWriteOncePod"};
	static const char *const reclaim[] = {"Retain", "Delete"};
	static const char *const restart[] = {"Recreate", "InPlace"};
	static const char *const tj_phases[] = {"Pending", "Queued", "Starting", "Running",
						"Restarting", "Succeeded", "Failed", "Suspended"};
	static const char *const vol_phases[] = {"Pending", "Bound", "Failed"};

	assert_enum(tj_crd, "spec.successPolicy", success, 2);
	assert_enum(tj_crd, "spec.restartStrategy", restart, 2);
	assert_enum(vol_crd, "spec.type", types, 2);
	assert_enum(vol_crd, "spec.accessMode", modes, 4);
	assert_enum(vol_crd, "spec.reclaimPolicy", reclaim, 2);
	assert_enum(tj_crd, "status.phase", tj_phases, 8);
	assert_enum(vol_crd, "status.phase", vol_phases, 3);
}

Test(crd, volume_requires_what_its_type_needs)
{
	struct ytree *nfs_required = ytree_get(field(vol_crd, "spec.nfs"), "required");
	struct ytree *size_rule = rule_with(vol_crd, "spec", "has(self.size) ||");
	struct ytree *nfs_rule = rule_with(vol_crd, "spec", "self.type != 'nfs' || has(self.nfs)");

	cr_assert(seq_has(ytree_get(field(vol_crd, "spec"), "required"), "type"));
	cr_assert(seq_has(nfs_required, "server") && seq_has(nfs_required, "path"),
		  "nfs needs server and path");
	assert_attr(vol_crd, "spec.nfs.server", "minLength", "1");
	cr_assert_not_null(size_rule, "size must be required for k8s-pvc without claimName");
	cr_assert(strstr(ytree_str(ytree_get(size_rule, "rule")), "claimName"));
	cr_assert_str_eq(ytree_str(ytree_get(size_rule, "fieldPath")), ".size");
	cr_assert_not_null(nfs_rule, "nfs must be required for type nfs");
	cr_assert_str_eq(ytree_str(ytree_get(nfs_rule, "fieldPath")), ".nfs");
}

/* path has a transition rule `self == oldSelf` that says "field is immutable". */
static int has_immutable_rule(const struct ytree *crd, const char *path)
{
	struct ytree *rule = rule_with(crd, path, "self == oldSelf");

	return rule && ytree_str(ytree_get(rule, "message")) &&
	       strcmp(ytree_str(ytree_get(rule, "message")), "field is immutable") == 0;
}

/* spec has a rule that adding or removing the optional field name is an error on it. */
static void assert_presence_immutable(const struct ytree *crd, const char *name)
{
	char needle[128], field_path[128];
	struct ytree *rule;

	snprintf(needle, sizeof(needle), "has(self.%s) == has(oldSelf.%s)", name, name);
	snprintf(field_path, sizeof(field_path), ".%s", name);
	rule = rule_with(crd, "spec", needle);
	cr_assert_not_null(rule, "spec needs rule %s", needle);
	cr_assert_str_eq(ytree_str(ytree_get(rule, "message")), "field is immutable");
	cr_assert_str_eq(ytree_str(ytree_get(rule, "fieldPath")), field_path,
			 "the error for %s must name the field", name);
}

/*
 * Every spec field is either immutable (with its rule) or explicitly mutable, so a new
 * field cannot be added without deciding which.
 */
static void assert_mutability(const struct ytree *crd, const char *const *immutable,
			      size_t n_immutable, const char *const *mutable, size_t n_mutable)
{
	struct ytree *props = ytree_get(field(crd, "spec"), "properties");
	char path[128], needle[128];
	size_t i, j;

	for (i = 0; i < props->len; i++) {
		int found = 0;

		snprintf(path, sizeof(path), "spec.%s", props->keys[i]);
		for (j = 0; j < n_immutable; j++) {
			if (strcmp(immutable[j], props->keys[i]) != 0)
				continue;
			found = 1;
			cr_assert(has_immutable_rule(crd, path),
				  "%s must have rule self == oldSelf, \"field is immutable\"", path);
			/* A defaulted or required field is always there; the rest may come and go. */
			if (!ytree_get(field(crd, path), "default") &&
			    !seq_has(ytree_get(field(crd, "spec"), "required"), props->keys[i]))
				assert_presence_immutable(crd, props->keys[i]);
		}
		for (j = 0; j < n_mutable; j++) {
			if (strcmp(mutable[j], props->keys[i]) != 0)
				continue;
			found = 1;
			cr_assert_null(rule_with(crd, path, "oldSelf"),
				       "%s must stay mutable", path);
			/* Cross-field checks may read it; none may tie it to its old value. */
			snprintf(needle, sizeof(needle), "has(oldSelf.%s)", props->keys[i]);
			cr_assert_null(rule_with(crd, "spec", needle), "no spec rule may pin %s",
				       path);
		}
		cr_assert(found, "%s is neither immutable nor mutable: decide", path);
	}
}

Test(crd, trainingjob_spec_is_immutable_except_the_knobs_of_a_running_job)
{
	static const char *const immutable[] = {
		"numNodes", "tasksPerNode", "resources", "image", "setup", "run", "workdir", "envs",
		"secretEnvs", "volumes", "queue", "priorityClassName", "successPolicy",
		"restartStrategy", "masterPort", "podTemplate", "hang", "signal", "terminationGracePeriodSeconds",
		"partition", "array", "dependency", "output", "error",
		"topology", "scratch", "stageIn", "code", "nodeList", "excludeNodes", "exclusive",
		"constraint", "resourceClaimsPerNode", "computeDomain",
	};
	static const char *const mutable[] = {
		"suspend", "maxRestarts", "priority", "activeDeadlineSeconds",
		"ttlSecondsAfterFinished", "gang", "maxInfraRestarts", "failurePolicy",
	};

	assert_mutability(tj_crd, immutable, sizeof(immutable) / sizeof(immutable[0]), mutable,
			  sizeof(mutable) / sizeof(mutable[0]));
	/* The design's mutable fields, and the long-run knobs (docs/design.md 1.3): exactly these. */
	cr_assert_eq(sizeof(immutable) / sizeof(immutable[0]) +
			     sizeof(mutable) / sizeof(mutable[0]),
		     ytree_get(field(tj_crd, "spec"), "properties")->len);
}

Test(crd, volume_spec_is_immutable_except_reclaim_policy)
{
	static const char *const immutable[] = {
		"type", "size", "accessMode", "storageClassName", "claimName", "nfs",
	};
	static const char *const mutable[] = {"reclaimPolicy"};

	assert_mutability(vol_crd, immutable, sizeof(immutable) / sizeof(immutable[0]), mutable,
			  sizeof(mutable) / sizeof(mutable[0]));
}

static void assert_exact_properties(const struct ytree *crd, const char *path,
				    const char *const *want, size_t n)
{
	struct ytree *props = ytree_get(field(crd, path), "properties");
	size_t i;

	cr_assert_not_null(props, "%s has no properties", path);
	cr_assert_eq(props->len, n, "%s has %zu properties, want exactly %zu", path,
		     props->len, n);
	for (i = 0; i < n; i++)
		cr_assert_not_null(ytree_get(props, want[i]), "%s lacks %s", path, want[i]);
}

/* No x-kubernetes-preserve-unknown-fields anywhere below schema: nothing unknown passes. */
static void assert_no_unknown_fields(const struct ytree *schema, const char *what)
{
	size_t i;

	if (!schema || schema->kind != YTREE_MAP)
		return;
	cr_assert_null(ytree_get(schema, "x-kubernetes-preserve-unknown-fields"),
		       "%s: x-kubernetes-preserve-unknown-fields lets unknown pod fields through",
		       what);
	cr_assert_null(ytree_get(schema, "x-kubernetes-embedded-resource"), "%s", what);
	for (i = 0; i < schema->len; i++)
		if (strcmp(schema->keys[i], "default") != 0 &&
		    strcmp(schema->keys[i], "enum") != 0)
			assert_no_unknown_fields(schema->items[i], what);
}

Test(crd, pod_template_accepts_only_the_safe_subset)
{
	static const char *const top[] = {"metadata", "spec"};
	static const char *const meta[] = {"labels", "annotations"};
	static const char *const spec[] = {"nodeSelector", "tolerations", "affinity",
					   "serviceAccountName", "imagePullSecrets",
					   "runtimeClassName", "schedulerName", "securityContext",
					   "containerSecurityContext", "resourceClaims"};
	static const char *const toleration[] = {"key", "operator", "value", "effect",
						 "tolerationSeconds"};

	assert_exact_properties(tj_crd, "spec.podTemplate", top, 2);
	assert_exact_properties(tj_crd, "spec.podTemplate.metadata", meta, 2);
	assert_exact_properties(tj_crd, "spec.podTemplate.spec", spec, 10);
	assert_exact_properties(tj_crd, "spec.podTemplate.spec.tolerations.[]", toleration, 5);
	/* cadre selects its pods by cadre.dev/ labels and sets kueue.x-k8s.io/ from spec.queue. */
	cr_assert_not_null(rule_with(tj_crd, "spec.podTemplate.metadata.labels",
				     "!k.startsWith('cadre.dev/') && !k.startsWith('kueue.x-k8s.io/')"),
			   "pod labels must not take cadre's or Kueue's keys");
	cr_assert_not_null(rule_with(tj_crd, "spec.podTemplate.metadata.annotations",
				     "!k.startsWith('cadre.dev/') && !k.startsWith('kueue.x-k8s.io/')"),
			   "pod annotations must not take cadre's or Kueue's keys");
	assert_no_unknown_fields(schema_of(tj_crd), "TrainingJob");
	assert_no_unknown_fields(schema_of(vol_crd), "Volume");
	cr_assert_null(field_at(tj_crd, "spec.podTemplate.spec.hostNetwork"));
}

/*
 * The API server refuses a CRD whose CEL rules could cost more than its budget; the
 * estimate is bounded only where sizes are. So under spec every list has maxItems, every
 * map maxProperties and every string maxLength (or an enum).
 */
static void assert_bounded(const struct ytree *schema, struct buf *path)
{
	const char *type = ytree_str(ytree_get(schema, "type"));
	const struct ytree *props = ytree_get(schema, "properties");
	const struct ytree *sub;
	size_t i, mark = path->len;

	if (ytree_get(schema, "x-kubernetes-int-or-string") || (type && !strcmp(type, "string")))
		cr_assert(ytree_get(schema, "maxLength") || ytree_get(schema, "enum"),
			  "%s: string without maxLength", buf_str(path));
	if (type && strcmp(type, "array") == 0)
		cr_assert_not_null(ytree_get(schema, "maxItems"), "%s: list without maxItems",
				   buf_str(path));
	/*
	 * Every number a user sets has a top, so that no sum it goes into overflows
	 * (a deadline at int64's maximum was an instant one). A toleration's
	 * seconds are Kubernetes' own field, handed to the pod as they are.
	 */
	if (type && !strcmp(type, "integer") && !strstr(buf_str(path), "tolerationSeconds"))
		cr_assert(ytree_get(schema, "maximum") && ytree_get(schema, "minimum"),
			  "%s: integer without minimum and maximum", buf_str(path));
	sub = ytree_get(schema, "additionalProperties");
	if (sub) {
		cr_assert_not_null(ytree_get(schema, "maxProperties"),
				   "%s: map without maxProperties", buf_str(path));
		cr_assert_eq(buf_adds(path, ".{}"), 0);
		assert_bounded(sub, path);
		path->len = mark;
		path->data[mark] = '\0';
	}
	sub = ytree_get(schema, "items");
	if (sub) {
		cr_assert_eq(buf_adds(path, ".[]"), 0);
		assert_bounded(sub, path);
		path->len = mark;
		path->data[mark] = '\0';
	}
	for (i = 0; props && i < props->len; i++) {
		cr_assert_eq(buf_addf(path, ".%s", props->keys[i]), 0);
		assert_bounded(props->items[i], path);
		path->len = mark;
		path->data[mark] = '\0';
	}
}

/*
 * The security settings a restricted namespace asks for, and none that grant privilege:
 * what the schema does not list (privileged, capabilities.add, sysctls, ...) is an
 * unknown field to a strict client and pruned otherwise; what it lists cannot be
 * turned around (allowPrivilegeEscalation true, seccomp Unconfined, uid below 0).
 */
Test(crd, pod_template_security_settings_only_take_privilege_away)
{
	static const char *const pod[] = {"runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup",
					  "seccompProfile"};
	static const char *const container[] = {"allowPrivilegeEscalation", "capabilities",
						"runAsNonRoot", "readOnlyRootFilesystem"};
	static const char *const caps[] = {"drop"};
	static const char *const seccomp[] = {"RuntimeDefault", "Localhost"};
	static const char *const ids[] = {"runAsUser", "runAsGroup", "fsGroup"};
	const char *base = "spec.podTemplate.spec.containerSecurityContext";
	char path[256];

	assert_exact_properties(tj_crd, "spec.podTemplate.spec.securityContext", pod, 5);
	assert_exact_properties(tj_crd, base, container, 4);
	snprintf(path, sizeof(path), "%s.capabilities", base);
	assert_exact_properties(tj_crd, path, caps, 1);
	snprintf(path, sizeof(path), "%s.allowPrivilegeEscalation", base);
	cr_assert_not_null(rule_with(tj_crd, path, "!self"), "allowPrivilegeEscalation: only false");
	snprintf(path, sizeof(path), "%s.capabilities.drop", base);
	assert_attr(tj_crd, path, "x-kubernetes-list-type", "set");
	assert_enum(tj_crd, "spec.podTemplate.spec.securityContext.seccompProfile.type", seccomp,
		    2);
	cr_assert_not_null(rule_with(tj_crd, "spec.podTemplate.spec.securityContext.seccompProfile",
				     "has(self.localhostProfile)"));
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "spec.podTemplate.spec.securityContext.%s", ids[i]);
		assert_attr(tj_crd, path, "minimum", "0");
		assert_attr(tj_crd, path, "maximum", "2147483647");
	}
	cr_assert_null(field_at(tj_crd, "spec.podTemplate.spec.securityContext.privileged"));
	cr_assert_null(field_at(tj_crd, "spec.podTemplate.spec.containerSecurityContext.privileged"));
	cr_assert_null(field_at(tj_crd, "spec.podTemplate.spec.securityContext.sysctls"));
}

Test(crd, spec_sizes_are_bounded_for_the_cel_cost_budget)
{
	struct buf path;

	buf_init(&path, 4096);
	cr_assert_eq(buf_adds(&path, "spec"), 0);
	assert_bounded(field(tj_crd, "spec"), &path);
	assert_bounded(field(vol_crd, "spec"), &path);
	buf_release(&path);
}

/*
 * What the API server can say of a Partition's tenancy fields by itself (docs/design.md
 * 6): namespace names, each once, a bounded list that is never empty (absent is
 * "every namespace"), and a maxJobPriority of spec.priority's own range.
 */
Test(crd, partition_tenancy_fields_are_bounded_namespace_names_and_an_int32)
{
	struct buf path;

	assert_attr(part_crd, "spec.allowedNamespaces", "type", "array");
	assert_attr(part_crd, "spec.allowedNamespaces", "minItems", "1");
	assert_attr(part_crd, "spec.allowedNamespaces", "maxItems", "256");
	assert_attr(part_crd, "spec.allowedNamespaces", "x-kubernetes-list-type", "set");
	assert_attr(part_crd, "spec.allowedNamespaces.[]", "maxLength", "63");
	assert_attr(part_crd, "spec.allowedNamespaces.[]", "pattern",
		    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
	assert_attr(part_crd, "spec.maxJobPriority", "type", "integer");
	assert_attr(part_crd, "spec.maxJobPriority", "format", "int32");
	assert_attr(part_crd, "spec.maxJobPriority", "minimum",
		    attr(tj_crd, "spec.priority", "minimum"));
	assert_attr(part_crd, "spec.maxJobPriority", "maximum",
		    attr(tj_crd, "spec.priority", "maximum"));
	cr_assert_null(attr(part_crd, "spec.maxJobPriority", "default"), "absent means any");
	buf_init(&path, 4096);
	cr_assert_eq(buf_adds(&path, "spec.allowedNamespaces"), 0);
	assert_bounded(field(part_crd, "spec.allowedNamespaces"), &path);
	buf_reset(&path);
	cr_assert_eq(buf_adds(&path, "spec.maxJobPriority"), 0);
	assert_bounded(field(part_crd, "spec.maxJobPriority"), &path);
	buf_release(&path);
}

/*
 * A Partition's preemption fields, under Slurm's names (docs/api.md): bounds, the
 * defaults the contract gives (none for graceTimeSeconds, whose absence the controller
 * resolves per job), and an Off written in quotes, which a YAML 1.1 reader (kubectl's)
 * would otherwise read as false and never match.
 */
Test(crd, partition_preemption_fields_are_bounded_with_the_contracts_defaults)
{
	static const char *const modes[] = {"Off", "Requeue", "Cancel"};
	static const struct { const char *path, *max, *def; } ints[] = {
		{"spec.priorityTier", "65533", "0"},
		{"spec.graceTimeSeconds", "86400", NULL},
		{"spec.preemptExemptTimeSeconds", "31536000", "0"},
	};
	const struct ytree *mode = field(part_crd, "spec.preemptMode");

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		assert_attr(part_crd, ints[i].path, "type", "integer");
		assert_attr(part_crd, ints[i].path, "minimum", "0");
		assert_attr(part_crd, ints[i].path, "maximum", ints[i].max);
		if (ints[i].def)
			assert_attr(part_crd, ints[i].path, "default", ints[i].def);
		else
			cr_assert_null(attr(part_crd, ints[i].path, "default"), "%s has no default",
				       ints[i].path);
		assert_described(field(part_crd, ints[i].path), ints[i].path);
	}
	assert_attr(part_crd, "spec.preemptMode", "type", "string");
	assert_enum(part_crd, "spec.preemptMode", modes, 3);
	assert_attr(part_crd, "spec.preemptMode", "default", "Off");
	cr_assert(ytree_at(ytree_get(mode, "enum"), 0)->quoted, "enum value Off must be quoted");
	cr_assert(ytree_get(mode, "default")->quoted, "default Off must be quoted");
	assert_described(mode, "spec.preemptMode");
}

Test(crd, partition_printer_columns_and_wide_ones)
{
	static const struct column_spec want[] = {
		{"DEFAULT", ".spec.default", "boolean", 0},
		{"TIMELIMIT", ".spec.maxTime", "string", 0},
		{"TIER", ".spec.priorityTier", "integer", 0},
		{"PREEMPT", ".spec.preemptMode", "string", 0},
		{"IMAGE", ".spec.defaultImage", "string", 0},
		{"QUEUE", ".spec.queue", "string", 1},
		{"NAMESPACES", ".spec.allowedNamespaces", "string", 1},
		{"MAXPRIORITY", ".spec.maxJobPriority", "integer", 1},
		{"AGE", ".metadata.creationTimestamp", "date", 0},
	};

	assert_columns(part_crd, want, sizeof(want) / sizeof(want[0]));
}

static void assert_condition_shape(const struct ytree *crd)
{
	static const char *const statuses[] = {"True", "False", "Unknown"};
	struct ytree *required = ytree_get(field(crd, "status.conditions.[]"), "required");
	const char *must[] = {"type", "status", "lastTransitionTime", "reason", "message"};
	size_t i;

	for (i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		cr_assert(seq_has(required, must[i]), "conditions: %s must be required", must[i]);
	cr_assert(!seq_has(required, "observedGeneration"));
	assert_enum(crd, "status.conditions.[].status", statuses, 3);
	/* Unquoted, YAML 1.1 readers make True and False booleans and the enum never matches. */
	for (i = 0; i < 2; i++)
		cr_assert(ytree_at(ytree_get(field(crd, "status.conditions.[].status"), "enum"), i)
				  ->quoted,
			  "conditions: enum value %s must be quoted", statuses[i]);
	assert_attr(crd, "status.conditions.[].lastTransitionTime", "format", "date-time");
	assert_attr(crd, "status.conditions.[].observedGeneration", "format", "int64");
	assert_attr(crd, "status.conditions.[].type", "type", "string");
	assert_attr(crd, "status.conditions.[].reason", "type", "string");
	assert_attr(crd, "status.conditions.[].message", "type", "string");
}

Test(crd, conditions_have_the_shape_of_metav1_condition)
{
	assert_condition_shape(tj_crd);
	assert_condition_shape(vol_crd);
}

/* Every key a sample sets exists in the schema: the API server would prune it silently. */
static void assert_known(const struct ytree *value, const struct ytree *schema,
			 const char *file, struct buf *path)
{
	size_t i, mark = path->len;

	cr_assert_not_null(schema, "%s: %s is not in the schema and would be pruned", file,
			   buf_str(path));
	if (value->kind == YTREE_MAP) {
		const struct ytree *props = ytree_get(schema, "properties");
		const struct ytree *extra = ytree_get(schema, "additionalProperties");

		for (i = 0; i < value->len; i++) {
			const struct ytree *sub = extra ? extra : ytree_get(props, value->keys[i]);

			cr_assert_eq(buf_addf(path, ".%s", value->keys[i]), 0);
			assert_known(value->items[i], sub, file, path);
			path->len = mark;
			path->data[mark] = '\0';
		}
	} else if (value->kind == YTREE_SEQ) {
		for (i = 0; i < value->len; i++) {
			cr_assert_eq(buf_addf(path, "[%zu]", i), 0);
			assert_known(value->items[i], ytree_get(schema, "items"), file, path);
			path->len = mark;
			path->data[mark] = '\0';
		}
	}
}

static struct ytree *sample(const char *name, const struct ytree *crd)
{
	char path[512];
	struct ytree *doc;
	struct buf where;

	snprintf(path, sizeof(path), "%s%s", SAMPLES_DIR, name);
	doc = load(path);
	cr_assert_str_eq(ytree_str(ytree_get(doc, "apiVersion")), "cadre.dev/v1alpha1", "%s", name);
	cr_assert_str_eq(ytree_str(ytree_get(doc, "kind")),
			 ytree_str(ytree_path(crd, "spec.names.kind")), "%s", name);
	buf_init(&where, 4096);
	cr_assert_eq(buf_adds(&where, "spec"), 0);
	assert_known(ytree_get(doc, "spec"), field(crd, "spec"), name, &where);
	buf_release(&where);
	return doc;
}

Test(crd, samples_use_only_fields_the_schema_keeps)
{
	static const char *const listed[] = {"shared-checkpoints.yaml", "nfs-volume.yaml",
					     "llama-pretrain.yaml", "smoke-test.yaml"};
	struct ytree *llama = sample("llama-pretrain.yaml", tj_crd);
	struct ytree *ckpt = sample("shared-checkpoints.yaml", vol_crd);
	struct ytree *nfs = sample("nfs-volume.yaml", vol_crd);
	struct ytree *smoke = sample("smoke-test.yaml", tj_crd);
	struct ytree *kustomization = load(SAMPLES_DIR "kustomization.yaml");

	/* The seed example, one to one. */
	cr_assert_str_eq(ytree_str(ytree_path(llama, "metadata.name")), "llama-pretrain");
	cr_assert_str_eq(ytree_str(ytree_path(llama, "spec.numNodes")), "2");
	cr_assert_str_eq(ytree_str(ytree_path(llama, "spec.resources.accelerators")), "H100:8");
	cr_assert_str_eq(ytree_str(ytree_get(ytree_path(llama, "spec.volumes"),
					     "/mnt/checkpoints")),
			 "shared-checkpoints");
	cr_assert(strstr(ytree_str(ytree_path(llama, "spec.run")), "$SKYPILOT_NODE_RANK"));
	cr_assert_str_eq(ytree_str(ytree_path(ckpt, "metadata.name")), "shared-checkpoints");
	cr_assert_str_eq(ytree_str(ytree_path(ckpt, "spec.size")), "500Gi");
	cr_assert_str_eq(ytree_str(ytree_path(nfs, "spec.type")), "nfs");
	cr_assert_str_eq(ytree_str(ytree_path(smoke, "spec.numNodes")), "1");
	cr_assert(strstr(ytree_str(ytree_path(smoke, "spec.run")), "nvidia-smi"));
	assert_seq_is(ytree_get(kustomization, "resources"), listed, 4, "kustomization resources");

	/* A status in a sample would be dropped by the API server: only cadre writes it. */
	cr_assert_null(ytree_get(llama, "status"));
	cr_assert_null(ytree_get(ckpt, "status"));
	cr_assert_null(ytree_get(nfs, "status"));
	cr_assert_null(ytree_get(smoke, "status"));
	ytree_free(llama);
	ytree_free(ckpt);
	ytree_free(nfs);
	ytree_free(smoke);
	ytree_free(kustomization);
}

TestSuite(ytree);

Test(ytree, builds_maps_sequences_and_scalars_and_refuses_aliases)
{
	static const char text[] = "a:\n  b: [1, 'two', {c: d}]\n  e: |\n    x\n";
	struct ytree *t = NULL;

	cr_assert_eq(ytree_parse(text, sizeof(text) - 1, &t), 0);
	cr_assert_str_eq(ytree_str(ytree_path(t, "a.b.[0]")), "1");
	cr_assert(!ytree_path(t, "a.b.[0]")->quoted);
	cr_assert_str_eq(ytree_str(ytree_path(t, "a.b.[1]")), "two");
	cr_assert(ytree_path(t, "a.b.[1]")->quoted);
	cr_assert_str_eq(ytree_str(ytree_path(t, "a.b.[2].c")), "d");
	cr_assert_str_eq(ytree_str(ytree_path(t, "a.e")), "x\n");
	cr_assert_null(ytree_path(t, "a.b.[3]"));
	cr_assert_null(ytree_path(t, "a.zz"));
	cr_assert_null(ytree_path(t, "a.b.[x]"));
	cr_assert_eq(ytree_path(t, "a.b")->line, 2);
	ytree_free(t);

	cr_assert_eq(ytree_parse("a: &x 1\nb: *x\n", 14, &t), CADRE_EPARSE);
	cr_assert_null(t);
	cr_assert_eq(ytree_parse("a: [1, 2\n", 9, &t), CADRE_EPARSE);
	cr_assert_eq(ytree_parse("? [1]\n: 2\n", 10, &t), CADRE_EPARSE);
	cr_assert_eq(ytree_parse("", 0, &t), 0);
	cr_assert_eq(t->kind, YTREE_MAP);
	cr_assert_eq(t->len, 0);
	ytree_free(t);
	cr_assert_eq(ytree_load(CADRE_SOURCE_DIR "/no/such/file.yaml", &t), CADRE_EIO);
}
