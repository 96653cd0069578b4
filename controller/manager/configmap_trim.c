#include "controller/manager/configmap_trim.h"

#include <stdbool.h>
#include <string.h>

#include "api/meta.h"
#include "controller/build/build.h"
#include "controller/build/entrypoint.h"
#include "kube/store.h"

json_t *configmap_trim(const json_t *cm, void *arg)
{
	const char *script = json_string_value(json_object_get(json_object_get(cm, "binaryData"),
								ENTRYPOINT_KEY));
	const char *want = entrypoint_script_base64();
	char digest[BUILD_DIGEST_SIZE];
	json_t *out;

	if (!want || build_data_digest(json_object_get(cm, "data"), digest))
		return NULL;
	out = store_trim_metadata(cm, arg);
	if (out && (json_object_set_new(out, CONFIGMAP_TRIM_CURRENT,
					json_boolean(script && !strcmp(script, want))) ||
		    json_object_set_new(out, CONFIGMAP_TRIM_DIGEST, json_string(digest)))) {
		json_decref(out);
		return NULL;
	}
	return out;
}

enum configmap_state configmap_state(const json_t *cm, const char *uid, const char *want)
{
	const char *digest;

	if (!cm)
		return CONFIGMAP_ABSENT;
	if (!meta_owned_by(cm, uid))
		return CONFIGMAP_FOREIGN;
	digest = json_string_value(json_object_get(cm, CONFIGMAP_TRIM_DIGEST));
	return json_is_true(json_object_get(cm, CONFIGMAP_TRIM_CURRENT)) && digest && want &&
	       !strcmp(digest, want) ? CONFIGMAP_CURRENT : CONFIGMAP_STALE;
}
