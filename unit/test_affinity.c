/*
 * What built-in admission reads of a job's affinity and of its Volumes'
 * PersistentVolumes (affinity.c), and what built-in mode refuses, each by
 * the rules of kube-scheduler's filter that would otherwise refuse a pinned
 * rank.
 */
#include <criterion/criterion.h>

#include <string.h>

#include "base/buf.h"
#include "api/fielderr.h"
#include "api/trainingjob.h"
#include "controller/admission/affinity.h"
#include "controller/admission/capacity.h"

static const char *const job_text =
	"{\"apiVersion\":\"cadre.dev/v1alpha1\",\"kind\":\"TrainingJob\","
	"\"metadata\":{\"name\":\"llama\",\"namespace\":\"ml\",\"uid\":\"u-1\"},"
	"\"spec\":{\"numNodes\":2,\"image\":\"img\",\"run\":\"train\","
	"\"podTemplate\":{\"metadata\":{\"labels\":{\"app\":\"llm\"}},"
	"\"spec\":{\"affinity\":%s}}}}";

/* The job llama with podTemplate.spec.affinity = affinity (JSON). */
static void job_with(const char *affinity, struct trainingjob *job)
{
	char text[4096];
	struct field_errors errs;
	json_error_t jerr;
	json_t *obj;

	snprintf(text, sizeof(text), job_text, affinity);
	obj = json_loads(text, 0, &jerr);
	cr_assert_not_null(obj, "%s: %s", jerr.text, text);
	field_errors_init(&errs);
	cr_assert_eq(tj_parse(obj, job, &errs), 0);
	cr_assert_eq(tj_validate(job, &errs), 0);
	field_errors_release(&errs);
	json_decref(obj);
}

/* affinity_refuse_builtin's problems, joined ("" when none). */
static void refusal(const char *affinity, char *out, size_t size)
{
	struct trainingjob job;
	struct field_errors errs;
	struct buf text;

	job_with(affinity, &job);
	field_errors_init(&errs);
	buf_init(&text, 1024);
	affinity_refuse_builtin(&job, &errs);
	field_errors_join(&errs, &text);
	snprintf(out, size, "%s", buf_str(&text));
	buf_release(&text);
	field_errors_release(&errs);
	tj_release(&job);
}

#define ANTI(term) "{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[" \
	term "]}}"
#define OWN_RANKS "{\"labelSelector\":{\"matchLabels\":{\"cadre.dev/job-name\":\"llama\"}}," \
	"\"topologyKey\":\"kubernetes.io/hostname\"}"

Test(affinity, built_in_mode_refuses_what_it_cannot_model_naming_the_field)
{
	char msg[2048];

	refusal("{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
		"\"labelSelector\":{\"matchLabels\":{\"app\":\"llm\"}},\"topologyKey\":"
		"\"topology.kubernetes.io/zone\"}]}}", msg, sizeof(msg));
	cr_assert(strstr(msg, "spec.podTemplate.spec.affinity.podAffinity."
			 "requiredDuringSchedulingIgnoredDuringExecution: "), "%s", msg);
	cr_assert(strstr(msg, "spec.topology.required"), "%s", msg);

	refusal(ANTI("{\"labelSelector\":{\"matchLabels\":{\"cadre.dev/job-name\":\"llama\"}},"
		     "\"topologyKey\":\"topology.kubernetes.io/zone\"}"), msg, sizeof(msg));
	cr_assert(strstr(msg, "spec.podTemplate.spec.affinity.podAntiAffinity."
			 "requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "),
		  "%s", msg);

	/* app: llm is this job's label, and any other pod's that carries it. */
	refusal(ANTI(OWN_RANKS ",{\"labelSelector\":{\"matchLabels\":{\"app\":\"llm\"}},"
		     "\"topologyKey\":\"kubernetes.io/hostname\"}"), msg, sizeof(msg));
	cr_assert(strstr(msg, "requiredDuringSchedulingIgnoredDuringExecution[1].labelSelector: "
			 "must select this job's own ranks only"), "%s", msg);
	cr_assert_null(strstr(msg, "[0]"), "%s", msg);

	refusal(ANTI("{\"labelSelector\":{\"matchExpressions\":[{\"key\":\"cadre.dev/job-name\","
		     "\"operator\":\"In\",\"values\":[\"llama\"]},{\"key\":\"cadre.dev/node-rank\","
		     "\"operator\":\"Exists\"}]},\"topologyKey\":\"kubernetes.io/hostname\"}"),
		msg, sizeof(msg));
	cr_assert(strstr(msg, "[0].labelSelector: cadre.dev/node-rank and "), "%s", msg);

	refusal(ANTI("{\"labelSelector\":{\"matchLabels\":{\"cadre.dev/job-name\":\"llama\"}},"
		     "\"namespaces\":[\"ml\",\"other\"],\"topologyKey\":\"kubernetes.io/hostname\"}"),
		msg, sizeof(msg));
	cr_assert(strstr(msg, "[0].namespaces: "), "%s", msg);

	/* The forms it models are not refused: node affinity, and its own ranks per host. */
	refusal(ANTI(OWN_RANKS), msg, sizeof(msg));
	cr_assert_str_empty(msg);
	refusal("{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
		"\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"gen\",\"operator\":"
		"\"Gt\",\"values\":[\"4\"]}]}]}},\"podAntiAffinity\":{"
		"\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":{"
		"\"matchLabels\":{\"cadre.dev/job-name\":\"llama\",\"app\":\"llm\"}},"
		"\"namespaces\":[\"ml\"],\"topologyKey\":\"kubernetes.io/hostname\"}]}}",
		msg, sizeof(msg));
	cr_assert_str_empty(msg);
}

static bool matches(const struct node_selector *s, const char *name,
		    const struct cap_label *labels, size_t n)
{
	return node_selector_matches(s, name, labels, n);
}

Test(affinity, the_template_gives_its_required_node_affinity_and_one_rank_a_host)
{
	static const struct cap_label fast[] = { { "gen", "5" } }, slow[] = { { "gen", "3" } };
	struct trainingjob job;
	struct affinity a;

	job_with("{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
		 "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"gen\",\"operator\":"
		 "\"Gt\",\"values\":[\"4\"]}]},{\"matchFields\":[{\"key\":\"metadata.name\","
		 "\"operator\":\"In\",\"values\":[\"old-but-fine\"]}]}]}},\"podAntiAffinity\":{"
		 "\"requiredDuringSchedulingIgnoredDuringExecution\":[" OWN_RANKS "]}}", &job);
	affinity_init(&a);
	cr_assert_eq(affinity_add_template(&a, &job), 0);
	cr_assert(a.one_per_node);
	cr_assert_eq(a.n_selectors, 1);
	cr_assert_null(a.selectors[0].volume);
	cr_assert(matches(&a.selectors[0], "n0", fast, 1));
	cr_assert_not(matches(&a.selectors[0], "n1", slow, 1));
	cr_assert(matches(&a.selectors[0], "old-but-fine", slow, 1));
	affinity_release(&a);
	tj_release(&job);

	/* An empty term gets cadre's pin ANDed in: every node qualifies. A selector that
	 * names this job but not its labels selects none of its ranks. */
	job_with("{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
		 "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"gen\",\"operator\":"
		 "\"Gt\",\"values\":[\"4\"]}]},{}]}},\"podAntiAffinity\":{"
		 "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":{"
		 "\"matchLabels\":{\"cadre.dev/job-name\":\"llama\",\"app\":\"other\"}},"
		 "\"topologyKey\":\"kubernetes.io/hostname\"}]}}", &job);
	affinity_init(&a);
	cr_assert_eq(affinity_add_template(&a, &job), 0);
	cr_assert_eq(a.n_selectors, 0);
	cr_assert_not(a.one_per_node);
	affinity_release(&a);
	tj_release(&job);
}

/*
 * VolumeBinding: a bound PV's required node affinity; VolumeZone: its zone
 * and region labels, against nodes that carry any zone label ("a__b": a or b;
 * a beta key on the PV also matches the node's topology.kubernetes.io form).
 */
Test(affinity, a_persistent_volumes_node_affinity_and_zone_labels_bound_where_it_mounts)
{
	static const struct cap_label zone_a[] = { { "topology.kubernetes.io/zone", "a" },
						   { "topology.kubernetes.io/region", "r1" } };
	static const struct cap_label zone_b[] = { { "topology.kubernetes.io/zone", "b" },
						   { "topology.kubernetes.io/region", "r2" } };
	static const struct cap_label zone_c[] = { { "topology.kubernetes.io/zone", "c" },
						   { "topology.kubernetes.io/region", "r1" } };
	static const struct cap_label beta_d[] = {
		{ "failure-domain.beta.kubernetes.io/region", "r3" },
		{ "topology.kubernetes.io/zone", "a" } };
	static const struct cap_label bare[] = { { "kubernetes.io/hostname", "x" } };
	json_error_t jerr;
	json_t *pv = json_loads(
		"{\"metadata\":{\"name\":\"pv-1\",\"labels\":{"
		"\"failure-domain.beta.kubernetes.io/region\":\"r1__r2\"}},"
		"\"spec\":{\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
		"\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"operator\":\"In\","
		"\"values\":[\"a\",\"b\"]}]}]}}}}", 0, &jerr);
	struct affinity a;
	bool all;

	cr_assert_not_null(pv, "%s", jerr.text);
	affinity_init(&a);
	cr_assert_eq(affinity_add_pv(&a, pv, "ckpt"), 0);
	json_decref(pv);  /* a holds it */
	cr_assert_eq(a.n_selectors, 2);
#define ALL(labels, n)                                                                   \
	(all = true, all = all && matches(&a.selectors[0], "node", labels, n),          \
	 all = all && matches(&a.selectors[1], "node", labels, n), all)
	cr_assert(ALL(zone_a, 2));
	cr_assert(ALL(zone_b, 2));
	cr_assert_not(ALL(zone_c, 2), "zone c is outside the PV's node affinity");
	cr_assert_not(ALL(beta_d, 2), "the node's beta region r3 is not r1 or r2");
	cr_assert_not(ALL(bare, 1), "a node without a zone fails the node affinity");
	cr_assert(matches(&a.selectors[1], "node", bare, 1), "but passes VolumeZone");
#undef ALL
	cr_assert_str_eq(a.selectors[0].volume, "ckpt");
	affinity_release(&a);
}
