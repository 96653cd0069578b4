/*
 * unit/support/oapi.c, the CRD schema check that the converters' property
 * tests and fuzz targets rely on: it must accept what the API server
 * accepts (the samples, the e2e jobs) and refuse what the API server
 * refuses (e2e/testdata/invalid, which e2e/tests/10-crd.bats sends to a real
 * one), at the field the file names.
 */
#include <criterion/criterion.h>

#include "base/buf.h"
#include "unit/support/oapi.h"
#include "unit/support/ytree.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#define CRD_DIR CADRE_SOURCE_DIR "/crd/"

static const struct ytree *schema_for(const struct ytree *doc)
{
	const char *kind = ytree_str(ytree_get(doc, "kind"));

	if (kind && !strcmp(kind, "TrainingJob"))
		return oapi_crd_schema(CRD_DIR "trainingjobs.cadre.dev.yaml");
	if (kind && !strcmp(kind, "Volume"))
		return oapi_crd_schema(CRD_DIR "volumes.cadre.dev.yaml");
	return NULL;
}

/* Problems of the first document of path; -1 when it is no cadre kind. */
static long problems_of(const char *path, struct buf *errors)
{
	struct ytree *doc;
	const struct ytree *schema;
	json_t *obj;
	long n = -1;

	cr_assert_eq(ytree_load(path, &doc), 0, "%s", path);
	if ((schema = schema_for(doc))) {
		cr_assert_not_null(obj = oapi_json_from_yaml(doc));
		n = (long)oapi_validate(schema, obj, errors);
		json_decref(obj);
	}
	ytree_free(doc);
	return n;
}

/* Call fn on every *.yaml of dir; returns how many files. */
static size_t each_yaml(const char *dir, void (*fn)(const char *path))
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;
	char path[1024];

	cr_assert_not_null(d, "%s", dir);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		fn(path);
		n++;
	}
	closedir(d);
	return n;
}

static size_t accepted;

static void assert_accepted(const char *path)
{
	struct buf errors;
	long n;

	buf_init(&errors, 1 << 20);
	n = problems_of(path, &errors);
	cr_assert_leq(n, 0, "%s is refused:\n%s", path, buf_str(&errors));
	accepted += n == 0;
	buf_release(&errors);
}

Test(oapi, accepts_every_sample_and_every_e2e_job)
{
	accepted = 0;
	each_yaml(CADRE_SOURCE_DIR "/manifests/samples", assert_accepted);
	each_yaml(CADRE_SOURCE_DIR "/manifests/samples/kueue", assert_accepted);
	each_yaml(CADRE_SOURCE_DIR "/e2e/testdata/jobs", assert_accepted);
	cr_assert_geq(accepted, 15, "only %zu objects checked", accepted);
}

/* The "# field: F" line an invalid file starts with. */
static void field_of(const char *path, char *field, size_t size)
{
	FILE *f = fopen(path, "r");
	char line[256];

	field[0] = '\0';
	cr_assert_not_null(f, "%s", path);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "# field: ", 9)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(field, size, "%s", line + 9);
			break;
		}
	fclose(f);
}

static void assert_refused(const char *path)
{
	struct buf errors;
	char field[256], at[260];
	long n;

	buf_init(&errors, 1 << 20);
	field_of(path, field, sizeof(field));
	cr_assert_neq(field[0], '\0', "%s has no '# field:' line", path);
	n = problems_of(path, &errors);
	cr_assert_gt(n, 0, "%s is accepted, but the API server refuses it", path);
	/* The problem is at the field, or (a rule of the parent) names it. */
	snprintf(at, sizeof(at), "%s", field);
	cr_assert(strstr(buf_str(&errors), at) || (!strcmp(field, "metadata.name") &&
						    strstr(buf_str(&errors), "metadata.name")),
		  "%s: nothing about %s in:\n%s", path, field, buf_str(&errors));
	cr_assert_null(strstr(buf_str(&errors), "cannot be evaluated"), "%s", buf_str(&errors));
	buf_release(&errors);
}

Test(oapi, refuses_every_object_the_api_server_refuses_at_its_field)
{
	cr_assert_geq(each_yaml(CADRE_SOURCE_DIR "/e2e/testdata/invalid", assert_refused), 20);
}

Test(oapi, an_unknown_field_a_null_and_a_wrong_type_are_problems)
{
	const struct ytree *schema = oapi_crd_schema(CRD_DIR "trainingjobs.cadre.dev.yaml");
	const char *bad[] = {
		"{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		"\"metadata\":{\"name\":\"a\"},\"spec\":{\"run\":\"x\",\"nodes\":2}}",
		"{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		"\"metadata\":{\"name\":\"a\"},\"spec\":{\"run\":\"x\",\"image\":null}}",
		"{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		"\"metadata\":{\"name\":\"a\"},\"spec\":{\"run\":\"x\",\"numNodes\":\"2\"}}",
		"{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		"\"metadata\":{\"name\":\"a\"},\"spec\":{\"run\":\"x\",\"numNodes\":3000000000}}",
		"{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
		"\"metadata\":{\"name\":\"a\"},\"spec\":{\"run\":\"x\",\"volumes\":{\"/dev/shm/x\":\"v\"}}}",
	};
	const char *good = "{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
			   "\"metadata\":{\"name\":\"a\"},\"spec\":{\"run\":\"x\",\"numNodes\":2}}";
	struct buf errors;
	json_t *obj;

	cr_assert_not_null(schema);
	buf_init(&errors, 1 << 20);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_not_null(obj = json_loads(bad[i], 0, NULL));
		cr_assert_gt(oapi_validate(schema, obj, &errors), 0, "%s", bad[i]);
		json_decref(obj);
	}
	cr_assert_not_null(obj = json_loads(good, 0, NULL));
	buf_reset(&errors);
	cr_assert_eq(oapi_validate(schema, obj, &errors), 0, "%s", buf_str(&errors));
	json_decref(obj);
	buf_release(&errors);
}

Test(oapi, cel_subset_evaluates_the_forms_the_crds_use)
{
	json_t *self = json_loads("{\"type\":\"nfs\",\"n\":3,\"m\":{\"/a\":1,\"/b\":2},"
				  "\"l\":[\"x\",\"y\"],\"s\":\"abc\"}", 0, NULL);
	static const struct { const char *rule; int want; } cases[] = {
		{ "self.type == 'nfs'", 1 },
		{ "self.type != 'nfs' || has(self.nfs)", 0 },
		{ "self.type == 'nfs' ? has(self.n) : !has(self.n)", 1 },
		{ "self.m.all(k, k.startsWith('/'))", 1 },
		{ "self.m.all(k, k.matches('^/a$'))", 0 },
		{ "self.l.exists(x, x == 'y')", 1 },
		{ "!(self.s in ['abc', 'd'])", 0 },
		{ "size(self.s) <= 3 && size(self.l) == 2 && size(self.m) > 1", 1 },
		{ "self.s.contains('b') && self.s.endsWith('bc') && !self.s.contains('..')", 1 },
		{ "self.missing == 1 || true", -1 },   /* no such key: an error, as in CEL */
		{ "true || self.missing == 1", 1 },    /* short-circuit */
		{ "self.n < 'a'", -1 },
		{ "self.s.frobnicate('x')", -1 },
		{ "self.s ==", -1 },
	};
	char why[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_assert_eq(oapi_cel_eval(cases[i].rule, self, why, sizeof(why)), cases[i].want,
			     "%s (%s)", cases[i].rule, why);
	json_decref(self);
}
