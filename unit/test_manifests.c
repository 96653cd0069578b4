/*
 * What the shipped YAML promises about who may do what (docs/install.md 4, docs/design.md
 * 6), read from the files themselves: the roles meant for every user read no pods, and the
 * CRDs come with the policy that makes a job's ServiceAccount need `use`. The API server's
 * answers to real users are e2e/tests/40-install.bats's.
 */
#include <criterion/criterion.h>

#include "base/err.h"
#include "unit/support/oapi.h"
#include "unit/support/ytree.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USER_ROLES CADRE_SOURCE_DIR "/manifests/user-roles.yaml"
#define CRD_KUSTOMIZATION CADRE_SOURCE_DIR "/crd/kustomization.yaml"
#define SA_POLICY CADRE_SOURCE_DIR "/crd/serviceaccount-policy.yaml"

/* Every document of the multi-document file at path, as a JSON array (new reference). */
static json_t *documents(const char *path)
{
	FILE *f = fopen(path, "r");
	json_t *docs = json_array();
	char *text = NULL, *doc;
	size_t len = 0;
	long size;

	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	rewind(f);
	text = calloc((size_t)size + 1, 1);
	cr_assert_not_null(text);
	len = fread(text, 1, (size_t)size, f);
	fclose(f);
	text[len] = '\0';
	for (doc = text; doc;) {
		char *next = strstr(doc, "\n---\n");
		struct ytree *t = NULL;
		json_t *obj;

		if (next)
			*next = '\0';
		cr_assert_eq(ytree_parse(doc, strlen(doc), &t), 0, "%s", path);
		obj = oapi_json_from_yaml(t);
		ytree_free(t);
		cr_assert_not_null(obj);
		if (json_object_size(obj))
			json_array_append_new(docs, obj);
		else
			json_decref(obj);
		doc = next ? next + 5 : NULL;
	}
	free(text);
	return docs;
}

static const json_t *object(const json_t *docs, const char *kind, const char *name)
{
	const json_t *d;
	size_t i;

	json_array_foreach(docs, i, d)
		if (!strcmp(json_string_value(json_object_get(d, "kind")), kind) &&
		    !strcmp(json_string_value(json_object_get(json_object_get(d, "metadata"),
							      "name")), name))
			return d;
	cr_assert_fail("no %s %s", kind, name);
	return NULL;
}

static bool has_string(const json_t *list, const char *s)
{
	const json_t *v;
	size_t i;

	json_array_foreach(list, i, v)
		if (!strcmp(json_string_value(v), s))
			return true;
	return false;
}

/* Whether a rule of role grants a verb on resource of the core group. */
static bool grants(const json_t *role, const char *resource)
{
	const json_t *rule;
	size_t i;

	json_array_foreach(json_object_get(role, "rules"), i, rule)
		if (has_string(json_object_get(rule, "resources"), resource))
			return true;
	return false;
}

TestSuite(manifests);

Test(manifests, the_role_meant_for_every_user_reads_partitions_and_nodes_and_no_pods)
{
	json_t *docs = documents(USER_ROLES);
	const json_t *view = object(docs, "ClusterRole", "cadre-cluster-view");
	const json_t *usage = object(docs, "ClusterRole", "cadre-cluster-usage");
	const json_t *rule, *d;
	size_t i;

	cr_assert(grants(view, "partitions"));
	cr_assert(grants(view, "nodes"));
	/* A pod list is whole pods, env included: never in a role docs bind to everyone. */
	cr_assert_not(grants(view, "pods"));
	json_array_foreach(json_object_get(view, "rules"), i, rule)
		cr_assert_not(has_string(json_object_get(rule, "resources"), "*"));
	/* The GPUs DRA publishes are no secret; which claims hold them is usage. */
	cr_assert(grants(view, "resourceslices"));
	cr_assert(grants(view, "deviceclasses"));
	cr_assert_not(grants(view, "resourceclaims"));
	/* sinfo's usage: pods and DRA claims, list only, in a role of its own. */
	cr_assert_eq(json_array_size(json_object_get(usage, "rules")), 2);
	json_array_foreach(json_object_get(usage, "rules"), i, rule) {
		cr_assert(has_string(json_object_get(rule, "resources"), i ? "resourceclaims" :
				     "pods"));
		cr_assert_eq(json_array_size(json_object_get(rule, "verbs")), 1);
		cr_assert(has_string(json_object_get(rule, "verbs"), "list"));
	}
	/* manifests/ binds neither: the site decides who holds them. */
	json_array_foreach(docs, i, d) {
		const char *ref = json_string_value(json_object_get(json_object_get(d, "roleRef"),
								    "name"));

		cr_assert(!ref || (strcmp(ref, "cadre-cluster-view") &&
				   strcmp(ref, "cadre-cluster-usage")),
			  "manifests/user-roles.yaml binds %s", ref);
	}
	json_decref(docs);
}

Test(manifests, the_crds_come_with_the_policy_that_a_named_serviceaccount_needs_use)
{
	json_t *kustomization = documents(CRD_KUSTOMIZATION);
	json_t *docs = documents(SA_POLICY);
	const json_t *policy = object(docs, "ValidatingAdmissionPolicy",
				      "trainingjob-serviceaccount.cadre.dev");
	const json_t *binding = object(docs, "ValidatingAdmissionPolicyBinding",
				       "trainingjob-serviceaccount.cadre.dev");
	const json_t *spec = json_object_get(policy, "spec");
	const json_t *match = json_object_get(spec, "matchConstraints");
	const json_t *rule = json_array_get(json_object_get(match, "resourceRules"), 0);
	const json_t *check = json_array_get(json_object_get(spec, "validations"), 0);
	const char *cond = json_string_value(json_object_get(json_array_get(
		json_object_get(spec, "matchConditions"), 0), "expression"));
	const char *expr = json_string_value(json_object_get(check, "expression"));
	const char *msg = json_string_value(json_object_get(check, "messageExpression"));

	/* Installed as users install the CRDs: kubectl apply -k crd/ (and manifests/). */
	cr_assert(has_string(json_object_get(json_array_get(kustomization, 0), "resources"),
			     "serviceaccount-policy.yaml"));
	cr_assert_str_eq(json_string_value(json_object_get(policy, "apiVersion")),
			 "admissionregistration.k8s.io/v1");
	cr_assert_str_eq(json_string_value(json_object_get(spec, "failurePolicy")), "Fail");
	cr_assert(has_string(json_object_get(rule, "resources"), "trainingjobs"));
	cr_assert(has_string(json_object_get(rule, "operations"), "CREATE"));
	/* Only a name other than default is checked. */
	cr_assert(cond && strstr(cond, "serviceAccountName != 'default'"), "%s", cond);
	/* The request's own authorizer, verb use on that ServiceAccount of the namespace. */
	cr_assert(expr && strstr(expr, "authorizer.group('').resource('serviceaccounts')"),
		  "%s", expr);
	cr_assert(strstr(expr, ".name(variables.name).check('use').allowed()"), "%s", expr);
	cr_assert(strstr(expr, ".namespace(request.namespace)"), "%s", expr);
	cr_assert(msg && strstr(msg, "'spec.podTemplate.spec.serviceAccountName: "), "%s", msg);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(binding, "spec"),
							   "policyName")),
			 "trainingjob-serviceaccount.cadre.dev");
	cr_assert(has_string(json_object_get(json_object_get(binding, "spec"), "validationActions"),
			     "Deny"));
	json_decref(docs);
	json_decref(kustomization);
}
