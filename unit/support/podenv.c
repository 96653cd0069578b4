#include "unit/support/podenv.h"

#include <criterion/criterion.h>
#include <string.h>

#include "controller/build/build.h"

json_t *pod_environment(const struct trainingjob *tj, const struct build_opts *opts,
			const json_t *pod)
{
	const json_t *c = json_array_get(json_object_get(json_object_get(pod, "spec"),
							 "containers"), 0);
	const json_t *from = json_array_get(json_object_get(c, "envFrom"), 0), *e, *v;
	char want[256];
	json_t *shared = NULL, *out = json_array();
	const char *key;
	size_t i;

	cr_assert_eq(build_entrypoint_name(tj->meta.name, want, sizeof(want)), 0);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(from, "configMapRef"),
							   "name")), want,
			 "the pod takes its shared variables from the job's ConfigMap");
	cr_assert_eq(build_shared_env(tj, opts, &shared, NULL), 0);
	json_object_foreach((json_t *)shared, key, v)
		json_array_append_new(out, json_pack("{s:s, s:O}", "name", key, "value", v));
	json_array_foreach(json_object_get(c, "env"), i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		bool replaced = false;
		size_t j;
		json_t *have;

		json_array_foreach(out, j, have)
			if (!strcmp(json_string_value(json_object_get(have, "name")), name)) {
				json_array_set(out, j, (json_t *)e);
				replaced = true;
				break;
			}
		if (!replaced)
			json_array_append(out, (json_t *)e);
	}
	json_decref(shared);
	return out;
}
