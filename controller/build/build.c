/*
 * build.c - the Service of a TrainingJob and the claim (and NFS volume) of a
 * Volume, plus what the builders share. The pod, the largest, is in
 * build_pod.c.
 */
#include "controller/build/build.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/hash.h"
#include "api/quantity.h"
#include "controller/build/entrypoint.h"

/* Object names of most kinds are DNS subdomains: at most 253 bytes. */
#define OBJECT_NAME_MAX 253
/* What a PV name keeps of "<namespace>.<name>": the rest is the prefix, '.' and 16 hex. */
#define BUILD_PV_READABLE_MAX (OBJECT_NAME_MAX - (int)sizeof(BUILD_PV_PREFIX) - 16)
/* Namespace (63), '/', name (253) and the terminator. */
#define STORE_KEY_SIZE 320

int build_fail(struct buf *err, int code, const char *path, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	/* A message a person reads: cut with "..." rather than lost (buf.h). */
	if (path && *path)
		buf_addf_cut(err, "%s: ", path);
	va_start(ap, fmt);
	buf_vaddf_cut(err, fmt, ap);
	va_end(ap);
	return code;
}

int build_owner_refs(const char *api_version, const char *kind, const char *name,
			  const char *uid, json_t **out)
{
	/* json_pack fails on a NULL string, which is what we want. */
	*out = json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]",
			 "apiVersion", api_version, "kind", kind, "name", name, "uid", uid,
			 "controller", 1, "blockOwnerDeletion", 1);
	return *out ? 0 : CADRE_ENOMEM;
}

/* The metadata every object made for a job or Volume needs; NULL fields are checked here. */
int build_check_meta(const struct object_meta *meta, bool need_uid, struct buf *err)
{
	if (!meta->name || !*meta->name)
		return build_fail(err, CADRE_EINVAL, "metadata.name", "required");
	if (!meta->namespace || !*meta->namespace)
		return build_fail(err, CADRE_EINVAL, "metadata.namespace", "required");
	if (need_uid && (!meta->uid || !*meta->uid))
		return build_fail(err, CADRE_EINVAL, "metadata.uid",
				  "required: owner references name the uid");
	return 0;
}

int build_service(const struct trainingjob *job, json_t **out, struct buf *err)
{
	const struct object_meta *meta = &job->meta;
	json_t *owners = NULL, *svc;
	int port = job->spec.has_master_port ? job->spec.master_port : TJ_DEFAULT_MASTER_PORT;
	int ret;

	*out = NULL;
	ret = build_check_meta(meta, true, err);
	if (ret)
		return ret;
	if (port < 1 || port > 65535)
		return build_fail(err, CADRE_EINVAL, "spec.masterPort", "must be 1 to 65535, not %d",
				  port);
	ret = build_owner_refs(TJ_API_VERSION, TJ_KIND, meta->name, meta->uid, &owners);
	if (ret)
		return ret;
	/*
	 * Headless and publishing not-ready addresses: a pod's DNS record must
	 * exist as soon as it has an IP, because the entrypoint of every rank
	 * waits for all of them before anything can become ready.
	 */
	svc = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:o}, s:{s:s, s:b, s:{s:s},"
			" s:[{s:s, s:i, s:i, s:s}]}}",
			"apiVersion", "v1", "kind", "Service",
			"metadata", "name", meta->name, "namespace", meta->namespace,
			"labels", LABEL_JOB_NAME, meta->name, "ownerReferences", owners,
			"spec", "clusterIP", "None", "publishNotReadyAddresses", 1,
			"selector", LABEL_JOB_NAME, meta->name,
			"ports", "name", "master", "port", port, "targetPort", port,
			"protocol", "TCP");
	if (!svc)
		return CADRE_ENOMEM;
	*out = svc;
	return 0;
}

int build_entrypoint_name(const char *job, char *out, size_t size)
{
	int n;

	if (!job || !*job)
		return CADRE_EINVAL;
	n = snprintf(out, size, "%s" BUILD_ENTRYPOINT_SUFFIX, job);
	return n < 0 || (size_t)n >= size || n > OBJECT_NAME_MAX ? CADRE_EINVAL : 0;
}

/* What build_entrypoint_configmap writes as data: the shared env, or {} for a job that cannot run. */
static int entrypoint_data(const struct trainingjob *job, const struct build_opts *opts,
			   json_t **out)
{
	int ret = build_shared_env(job, opts, out, NULL);

	if (ret == CADRE_ENOMEM)
		return ret;
	if (ret) {
		*out = json_object();
		return *out ? 0 : CADRE_ENOMEM;
	}
	return 0;
}

int build_entrypoint_configmap(const struct trainingjob *job, const struct build_opts *opts,
			       json_t **out, struct buf *err)
{
	const struct object_meta *meta = &job->meta;
	const char *script = entrypoint_script_base64();
	char name[OBJECT_NAME_MAX + 1];
	json_t *owners = NULL, *data = NULL, *cm;
	int ret;

	*out = NULL;
	ret = build_check_meta(meta, true, err);
	if (ret)
		return ret;
	if (build_entrypoint_name(meta->name, name, sizeof(name)))
		return build_fail(err, CADRE_EINVAL, "metadata.name",
				  "too long for the ConfigMap <name>%s", BUILD_ENTRYPOINT_SUFFIX);
	if (!script)
		return CADRE_ENOMEM;
	ret = entrypoint_data(job, opts, &data);
	if (ret)
		return ret;
	ret = build_owner_refs(TJ_API_VERSION, TJ_KIND, meta->name, meta->uid, &owners);
	if (ret) {
		json_decref(data);
		return ret;
	}
	/* Labelled like the Service: the controller's cache selects on the label. */
	cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:o}, s:o, s:{s:s}}",
		       "apiVersion", "v1", "kind", "ConfigMap",
		       "metadata", "name", name, "namespace", meta->namespace,
		       "labels", LABEL_JOB_NAME, meta->name, "ownerReferences", owners,
		       "data", data, "binaryData", ENTRYPOINT_KEY, script);
	if (!cm)
		return CADRE_ENOMEM;
	*out = cm;
	return 0;
}

int build_data_digest(const json_t *data, char out[BUILD_DIGEST_SIZE])
{
	json_t *empty = data ? NULL : json_object();
	char *text = json_dumps(data ? data : empty, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(empty);
	if (!text)
		return CADRE_ENOMEM;
	snprintf(out, BUILD_DIGEST_SIZE, "%016llx", (unsigned long long)hash_fnv1a(text));
	free(text);
	return 0;
}

int build_entrypoint_digest(const struct trainingjob *job, const struct build_opts *opts,
			    char out[BUILD_DIGEST_SIZE])
{
	json_t *data = NULL;
	int ret = entrypoint_data(job, opts, &data);

	if (!ret)
		ret = build_data_digest(data, out);
	json_decref(data);
	return ret;
}

/*
 * The readable part of a PV name, "<namespace>.<name>" cut so the whole
 * fits, then the hash that makes it unique: the cut can end in '.' or '-'
 * and a DNS subdomain's labels must end in a letter or digit, so those go.
 */
int build_pv_name_of(const char *ns, const char *name, char *out, size_t size)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	char key[STORE_KEY_SIZE], readable[BUILD_PV_READABLE_MAX + 1];
	int n;
	size_t len;

	if (!ns || !*ns || !name || !*name)
		return CADRE_EINVAL;
	/* '/' is in neither a namespace nor a name: "ns/name" is one pair's alone. */
	n = snprintf(key, sizeof(key), "%s/%s", ns, name);
	if (n < 0 || (size_t)n >= sizeof(key))
		return CADRE_EINVAL;
	if (!EVP_Digest(key, (size_t)n, md, &md_len, EVP_sha256(), NULL) || md_len < 8)
		return CADRE_ENOMEM;
	snprintf(readable, sizeof(readable), "%s.%s", ns, name);
	len = strlen(readable);
	while (len && (readable[len - 1] == '.' || readable[len - 1] == '-'))
		readable[--len] = '\0';
	n = snprintf(out, size, BUILD_PV_PREFIX "%s.%02x%02x%02x%02x%02x%02x%02x%02x", readable,
		     md[0], md[1], md[2], md[3], md[4], md[5], md[6], md[7]);
	if (n < 0 || (size_t)n >= size || n > OBJECT_NAME_MAX)
		return CADRE_EINVAL;
	return 0;
}

int build_pv_name(const struct volume *vol, char *out, size_t size)
{
	return build_pv_name_of(vol->meta.namespace, vol->meta.name, out, size);
}

int build_pv_legacy_name(const struct volume *vol, char *out, size_t size)
{
	int n;

	if (!vol->meta.name || !*vol->meta.name || !vol->meta.namespace || !*vol->meta.namespace)
		return CADRE_EINVAL;
	n = snprintf(out, size, "cadre-%s-%s", vol->meta.namespace, vol->meta.name);
	if (n < 0 || (size_t)n >= size || n > OBJECT_NAME_MAX)
		return CADRE_EINVAL;
	return 0;
}

bool build_pv_is_volumes(const json_t *pv, const struct volume *vol)
{
	const json_t *labels = json_object_get(json_object_get(pv, "metadata"), "labels");
	const char *name = json_string_value(json_object_get(labels, LABEL_VOLUME));
	const char *ns = json_string_value(json_object_get(labels, LABEL_VOLUME_NAMESPACE));

	return name && ns && vol->meta.name && vol->meta.namespace &&
	       !strcmp(name, vol->meta.name) && !strcmp(ns, vol->meta.namespace);
}

/*
 * The storage size written on the claim (and PV): the Volume's size in
 * canonical form, or, for NFS, a nominal size when none was given.
 */
static int storage_size(const struct volume *vol, struct buf *size, struct buf *err)
{
	if (vol->spec.has_size) {
		if (vol->spec.size_milli <= 0)
			return build_fail(err, CADRE_EINVAL, "spec.size", "must be positive");
		/* Bytes, not milli-bytes: a quantity of storage is whole bytes. */
		if (vol->spec.size_milli % 1000)
			return build_fail(err, CADRE_EINVAL, "spec.size",
					  "must be a whole number of bytes");
		return quantity_format(vol->spec.size_milli, size);
	}
	if (vol->spec.size)
		return build_fail(err, CADRE_EINVAL, "spec.size", "\"%s\" is not a quantity",
				  vol->spec.size);
	if (vol->spec.type == VOL_TYPE_NFS)
		return buf_adds(size, BUILD_NFS_NOMINAL_SIZE);
	return build_fail(err, CADRE_EINVAL, "spec.size", "required for type k8s-pvc");
}

static int check_nfs(const struct volume *vol, struct buf *err)
{
	if (vol->spec.type != VOL_TYPE_NFS)
		return build_fail(err, CADRE_EINVAL, "spec.type",
				  "only an nfs Volume has a PersistentVolume of cadre's");
	if (!vol->spec.has_nfs || !vol->spec.nfs.server || !*vol->spec.nfs.server)
		return build_fail(err, CADRE_EINVAL, "spec.nfs.server", "required for type nfs");
	if (!vol->spec.nfs.path || vol->spec.nfs.path[0] != '/')
		return build_fail(err, CADRE_EINVAL, "spec.nfs.path",
				  "required for type nfs, as an absolute path");
	return 0;
}

int build_pvc(const struct volume *vol, const char *pv_name, json_t **out, struct buf *err)
{
	const struct object_meta *meta = &vol->meta;
	bool owned = build_claim_owned(vol);
	char pv[OBJECT_NAME_MAX + 1];
	json_t *pvc = NULL, *owners = NULL, *spec;
	struct buf size;
	int ret;

	*out = NULL;
	buf_init(&size, 64);
	ret = build_check_meta(meta, owned, err);
	if (ret)
		goto out;
	if (vol->spec.claim_name && *vol->spec.claim_name) {
		ret = build_fail(err, CADRE_EINVAL, "spec.claimName",
				 "the Volume adopts claim %s; cadre makes none", vol->spec.claim_name);
		goto out;
	}
	if (vol->spec.type == VOL_TYPE_NFS) {
		ret = check_nfs(vol, err);
		if (ret)
			goto out;
		if (pv_name && *pv_name) {
			snprintf(pv, sizeof(pv), "%s", pv_name);
		} else if (build_pv_name(vol, pv, sizeof(pv))) {
			ret = build_fail(err, CADRE_EINVAL, "metadata.name",
					 "names no PersistentVolume");
			goto out;
		}
	}
	ret = storage_size(vol, &size, err);
	if (ret)
		goto out;
	ret = CADRE_ENOMEM;
	pvc = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:[s], s:{s:{s:s}}}}",
			"apiVersion", "v1", "kind", "PersistentVolumeClaim",
			"metadata", "name", meta->name, "namespace", meta->namespace,
			"labels", LABEL_VOLUME, meta->name,
			"spec", "accessModes", vol_access_mode_name(vol->spec.access_mode),
			"resources", "requests", "storage", buf_str(&size));
	if (!pvc)
		goto out;
	spec = json_object_get(pvc, "spec");
	/*
	 * Retain (the default) must survive the Volume's deletion, so only a
	 * Delete Volume owns its claim and takes it along.
	 */
	if (owned) {
		if (build_owner_refs(VOL_API_VERSION, VOL_KIND, meta->name, meta->uid, &owners) ||
		    json_object_set_new(json_object_get(pvc, "metadata"), "ownerReferences", owners))
			goto out;
	}
	if (vol->spec.type == VOL_TYPE_NFS) {
		/* "" and volumeName: no provisioner, bind to our PV and nothing else. */
		if (json_object_set_new(spec, "storageClassName", json_string("")) ||
		    json_object_set_new(spec, "volumeName", json_string(pv)))
			goto out;
	} else if (vol->spec.storage_class_name && *vol->spec.storage_class_name) {
		if (json_object_set_new(spec, "storageClassName",
					json_string(vol->spec.storage_class_name)))
			goto out;
	}
	*out = pvc;
	pvc = NULL;
	ret = 0;
out:
	json_decref(pvc);
	buf_release(&size);
	return ret;
}

bool build_claim_owned(const struct volume *vol)
{
	if (vol->spec.claim_name && *vol->spec.claim_name)
		return false;  /* the user's claim: cadre never makes it go */
	return vol->spec.reclaim_policy == VOL_RECLAIM_DELETE;
}

/* Whether refs (borrowed) name uid; *other_controller when another ref is the controller. */
static bool has_owner(const json_t *refs, const char *uid, bool *other_controller)
{
	bool found = false;
	size_t i;
	json_t *ref;

	*other_controller = false;
	json_array_foreach(refs, i, ref) {
		const char *ref_uid = json_string_value(json_object_get(ref, "uid"));

		if (ref_uid && !strcmp(ref_uid, uid))
			found = true;
		else if (json_is_true(json_object_get(ref, "controller")))
			*other_controller = true;
	}
	return found;
}

/* {"metadata": {"ownerReferences": refs}}, plus resourceVersion rv when not NULL; steals refs. */
static int owner_patch(json_t *refs, const json_t *rv, json_t **out)
{
	json_t *meta;

	*out = NULL;
	if (!refs)
		return CADRE_ENOMEM;
	meta = json_pack("{s:o}", "ownerReferences", refs);
	if (!meta || (rv && json_object_set(meta, "resourceVersion", (json_t *)rv))) {
		json_decref(meta);
		return CADRE_ENOMEM;
	}
	*out = json_pack("{s:o}", "metadata", meta);
	return *out ? 0 : CADRE_ENOMEM;
}

int build_claim_disown_patch(const struct volume *vol, json_t **out, struct buf *err)
{
	int ret;

	*out = NULL;
	ret = build_check_meta(&vol->meta, true, err);
	if (ret)
		return ret;
	/* Strategic merge: the entry whose merge key (uid) matches is deleted. */
	return owner_patch(json_pack("[{s:s, s:s}]", "$patch", "delete", "uid", vol->meta.uid),
			   NULL, out);
}

int build_claim_owner_patch(const struct volume *vol, const json_t *pvc, json_t **out,
			    struct buf *err)
{
	const json_t *meta = json_object_get(pvc, "metadata");
	const json_t *rv = json_object_get(meta, "resourceVersion");
	bool want = build_claim_owned(vol), other_controller;
	json_t *refs = NULL;
	int ret;

	*out = NULL;
	ret = build_check_meta(&vol->meta, true, err);
	if (ret)
		return ret;
	if (!json_string_value(rv) || !*json_string_value(rv))
		return build_fail(err, CADRE_EINVAL, "metadata.resourceVersion",
				  "the claim has none to guard the patch with");
	if (has_owner(json_object_get(meta, "ownerReferences"), vol->meta.uid,
		      &other_controller) == want)
		return 0;
	if (!want)
		return owner_patch(json_pack("[{s:s, s:s}]", "$patch", "delete", "uid",
					     vol->meta.uid), rv, out);
	ret = build_owner_refs(VOL_API_VERSION, VOL_KIND, vol->meta.name, vol->meta.uid, &refs);
	if (ret)
		return ret;
	if (other_controller &&
	    json_object_set_new(json_array_get(refs, 0), "controller", json_false())) {
		json_decref(refs);
		return CADRE_ENOMEM;
	}
	return owner_patch(refs, rv, out);
}

int build_pv(const struct volume *vol, json_t **out, struct buf *err)
{
	const struct object_meta *meta = &vol->meta;
	char name[OBJECT_NAME_MAX + 1];
	struct buf size;
	json_t *pv;
	int ret;

	*out = NULL;
	buf_init(&size, 64);
	ret = build_check_meta(meta, false, err);
	if (!ret)
		ret = check_nfs(vol, err);
	if (ret)
		goto out;
	if (build_pv_name(vol, name, sizeof(name))) {
		ret = build_fail(err, CADRE_EINVAL, "metadata.name", "names no PersistentVolume");
		goto out;
	}
	ret = storage_size(vol, &size, err);
	if (ret)
		goto out;
	/*
	 * The labels find the Volume again from the PV, which cannot carry an
	 * owner reference; claimRef reserves it for our claim alone.
	 */
	pv = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s}}, s:{s:{s:s}, s:[s], s:s, s:s,"
		       " s:{s:s, s:s, s:b}, s:{s:s, s:s, s:s, s:s}}}",
		       "apiVersion", "v1", "kind", "PersistentVolume",
		       "metadata", "name", name,
		       "labels", LABEL_VOLUME, meta->name,
		       LABEL_VOLUME_NAMESPACE, meta->namespace,
		       "spec", "capacity", "storage", buf_str(&size),
		       "accessModes", vol_access_mode_name(vol->spec.access_mode),
		       "persistentVolumeReclaimPolicy", "Retain",
		       "storageClassName", "",
		       "nfs", "server", vol->spec.nfs.server, "path", vol->spec.nfs.path,
		       "readOnly", vol->spec.nfs.read_only,
		       "claimRef", "apiVersion", "v1", "kind", "PersistentVolumeClaim",
		       "namespace", meta->namespace, "name", meta->name);
	if (!pv) {
		ret = CADRE_ENOMEM;
		goto out;
	}
	*out = pv;
out:
	buf_release(&size);
	return ret;
}

int build_podgroup_name(const char *job, int attempt, char *out, size_t size)
{
	int n;

	if (!job || !*job || attempt < 0)
		return CADRE_EINVAL;
	n = snprintf(out, size, "%s-attempt-%d", job, attempt);
	return n < 0 || (size_t)n >= size || n > OBJECT_NAME_MAX ? CADRE_EINVAL : 0;
}

int build_podgroup(const struct trainingjob *job, int attempt, const char *api_version,
		   json_t **out, struct buf *err)
{
	const struct object_meta *meta = &job->meta;
	const char *pcn = job->spec.priority_class_name;
	int num_nodes = job->spec.has_num_nodes ? job->spec.num_nodes : TJ_DEFAULT_NUM_NODES;
	char name[OBJECT_NAME_MAX + 1], text[16];
	json_t *owners = NULL, *pg;
	int ret;

	*out = NULL;
	ret = build_check_meta(meta, true, err);
	if (ret)
		return ret;
	if (num_nodes < 1)
		return build_fail(err, CADRE_EINVAL, "spec.numNodes", "must be >= 1");
	if (build_podgroup_name(meta->name, attempt, name, sizeof(name)))
		return build_fail(err, CADRE_EINVAL, "metadata.name",
				  "too long for a PodGroup name with attempt %d", attempt);
	ret = build_owner_refs(TJ_API_VERSION, TJ_KIND, meta->name, meta->uid, &owners);
	if (ret)
		return ret;
	snprintf(text, sizeof(text), "%d", attempt);
	pg = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}, s:o}, s:{s:{s:{s:i}}}}",
		       "apiVersion", api_version, "kind", "PodGroup",
		       "metadata", "name", name, "namespace", meta->namespace,
		       "labels", LABEL_JOB_NAME, meta->name, LABEL_RESTART_ATTEMPT, text,
		       "ownerReferences", owners,
		       "spec", "schedulingPolicy", "gang", "minCount", num_nodes);
	if (pg && pcn && *pcn &&
	    json_object_set_new(json_object_get(pg, "spec"), "priorityClassName",
				json_string(pcn))) {
		json_decref(pg);
		pg = NULL;
	}
	/*
	 * spec.topology.required as the one topology constraint a PodGroup
	 * takes (TopologyAwareWorkloadScheduling): every pod in one domain. The
	 * rest of spec.topology has no form here (docs/topology.md).
	 */
	if (pg && job->spec.topology.set && job->spec.topology.required &&
	    json_object_set_new(json_object_get(pg, "spec"), "schedulingConstraints",
				json_pack("{s:[{s:s}]}", "topology", "key",
					  job->spec.topology.required))) {
		json_decref(pg);
		pg = NULL;
	}
	if (!pg)
		return CADRE_ENOMEM;
	*out = pg;
	return 0;
}

bool build_pod_kept_scheduling_group(const json_t *pod, const char *podgroup)
{
	const char *got = json_string_value(json_object_get(json_object_get(
		json_object_get(pod, "spec"), "schedulingGroup"), "podGroupName"));

	return got && podgroup && !strcmp(got, podgroup);
}
