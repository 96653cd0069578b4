/*
 * jobids.c - unique Slurm job ids (jobids.h).
 */
#include "controller/manager/jobids.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/trainingjob.h"
#include "base/err.h"

/* How many probes a claim tries before it gives up. */
#define JOBIDS_PROBES 256
/* Claims remembered until the cache shows them; the oldest go past this many. */
#define JOBIDS_CLAIMS_MAX 4096

struct claim {
	char id[16];
	char *uid;
};

struct jobids {
	pthread_mutex_t lock;
	struct claim *claims;  /* oldest first */
	size_t n;
};

struct jobids *jobids_new(void)
{
	struct jobids *ids = calloc(1, sizeof(*ids));

	if (ids && pthread_mutex_init(&ids->lock, NULL)) {
		free(ids);
		return NULL;
	}
	return ids;
}

void jobids_free(struct jobids *ids)
{
	if (!ids)
		return;
	for (size_t i = 0; i < ids->n; i++)
		free(ids->claims[i].uid);
	free(ids->claims);
	pthread_mutex_destroy(&ids->lock);
	free(ids);
}

int jobids_index(const json_t *job, json_t *values, void *arg)
{
	const char *id = json_string_value(json_object_get(json_object_get(job, "status"), "jobId"));

	(void)arg;
	if (!id || !*id)
		return 0;
	return json_array_append_new(values, json_string(id)) ? CADRE_ENOMEM : 0;
}

static const char *uid_of(const json_t *job)
{
	return json_string_value(json_object_get(json_object_get(job, "metadata"), "uid"));
}

/* Who the cache shows holding id: 0 none, 1 uid alone, 2 another job; CADRE_ENOMEM. */
static int stored_holder(struct store *jobs, const char *id, const char *uid)
{
	json_t *held = NULL, *job;
	int who = 0;
	size_t i;

	if (store_by_index(jobs, JOBIDS_INDEX, id, &held))
		return CADRE_ENOMEM;
	json_array_foreach(held, i, job) {
		const char *u = uid_of(job);

		if (u && !strcmp(u, uid)) {
			if (!who)
				who = 1;
		} else {
			who = 2;
		}
	}
	json_decref(held);
	return who;
}

/* The claim of id, or NULL. */
static struct claim *claim_of(struct jobids *ids, const char *id)
{
	for (size_t i = 0; i < ids->n; i++)
		if (!strcmp(ids->claims[i].id, id))
			return &ids->claims[i];
	return NULL;
}

/* Forget claims the cache now shows (the status is stored), and the oldest past the cap. */
static void prune(struct jobids *ids, struct store *jobs)
{
	size_t kept = 0;

	for (size_t i = 0; i < ids->n; i++) {
		struct claim *c = &ids->claims[i];

		if (stored_holder(jobs, c->id, c->uid) == 1 || ids->n - i > JOBIDS_CLAIMS_MAX) {
			free(c->uid);
			continue;
		}
		ids->claims[kept++] = *c;
	}
	ids->n = kept;
}

static int remember(struct jobids *ids, const char *id, const char *uid)
{
	struct claim *grown = realloc(ids->claims, (ids->n + 1) * sizeof(*grown));

	if (!grown)
		return CADRE_ENOMEM;
	ids->claims = grown;
	snprintf(grown[ids->n].id, sizeof(grown[ids->n].id), "%s", id);
	if (!(grown[ids->n].uid = strdup(uid)))
		return CADRE_ENOMEM;
	ids->n++;
	return 0;
}

/* 1 when uid may have id, 0 when another job holds or claimed it; CADRE_ENOMEM. */
static int free_for(struct jobids *ids, struct store *jobs, const char *id, const char *uid)
{
	const struct claim *c = claim_of(ids, id);
	int who = stored_holder(jobs, id, uid);

	if (who < 0)
		return who;
	if (who == 2 || (c && strcmp(c->uid, uid)))
		return 0;
	return 1;
}

int jobids_claim(struct jobids *ids, struct store *jobs, const char *uid, char out[16])
{
	int err = CADRE_EEXIST;

	if (!uid || !*uid)
		return CADRE_EINVAL;
	pthread_mutex_lock(&ids->lock);
	prune(ids, jobs);
	for (unsigned k = 0; k < JOBIDS_PROBES; k++) {
		int ok;

		tj_job_id_probe(uid, k, out);
		if ((ok = free_for(ids, jobs, out, uid)) < 0) {
			err = ok;
			break;
		}
		if (!ok)
			continue;
		err = claim_of(ids, out) ? 0 : remember(ids, out, uid);
		break;
	}
	pthread_mutex_unlock(&ids->lock);
	if (err)
		out[0] = '\0';
	return err;
}
