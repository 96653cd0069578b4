#include "kube/store.h"

#include "base/err.h"
#include "base/log.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct store_index {
	char *name;
	store_index_fn fn;
	void *arg;
	json_t *map;    /* value -> {key: true, ...}; a value with no keys is removed */
};

struct store {
	pthread_rwlock_t lock;
	char *kind;
	store_trim_fn trim;
	void *trim_arg;
	json_t *objects;        /* key -> stored (trimmed) object */
	struct store_index indexes[STORE_MAX_INDEXES];
	size_t nindexes;
	/* Fixed after the writer starts, so read without the lock. */
	struct store_handlers handlers[STORE_MAX_HANDLERS];
	size_t nhandlers;
};

/* One change to report once the lock is dropped. */
enum change_type { CHANGE_ADD, CHANGE_UPDATE, CHANGE_DELETE };

struct change {
	enum change_type type;
	char *key;
	json_t *old_obj;    /* held reference or NULL */
	json_t *new_obj;    /* held reference or NULL */
};

struct changes {
	struct change *v;
	size_t len, cap;
};

struct store_batch {
	struct store *store;
	json_t *objects;    /* key -> trimmed object, in list order */
};

struct store *store_new(const struct store_options *opts)
{
	struct store *s = calloc(1, sizeof(*s));
	pthread_rwlockattr_t attr;

	if (!s)
		return NULL;
	s->objects = json_object();
	s->kind = strdup(opts && opts->kind ? opts->kind : "objects");
	if (!s->objects || !s->kind) {
		json_decref(s->objects);
		free(s->kind);
		free(s);
		return NULL;
	}
	if (opts) {
		s->trim = opts->trim;
		s->trim_arg = opts->trim_arg;
	}
	/*
	 * Writer first: glibc's default lets a steady stream of readers (the
	 * workers, an admission pass over every pod) hold off the reflector's
	 * writes indefinitely, and a cache that cannot take events falls
	 * behind the cluster. No reader takes the same store's lock twice
	 * (which this kind would deadlock on while a writer waits): visitors
	 * of store_foreach read other stores only, and writers never hold one
	 * store's lock while taking another's.
	 */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&s->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	return s;
}

void store_free(struct store *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nindexes; i++) {
		free(s->indexes[i].name);
		json_decref(s->indexes[i].map);
	}
	json_decref(s->objects);
	free(s->kind);
	pthread_rwlock_destroy(&s->lock);
	free(s);
}

int store_key(const json_t *obj, char *out, size_t size)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	int n;

	if (!name || !*name)
		return CADRE_EINVAL;
	if (ns && *ns)
		n = snprintf(out, size, "%s/%s", ns, name);
	else
		n = snprintf(out, size, "%s", name);
	if (n < 0 || (size_t)n >= size)
		return CADRE_EINVAL;
	return 0;
}

/* Add (add=true) or remove key under each value obj has in one index. */
static int index_update_one(struct store_index *idx, const char *key,
			    const json_t *obj, bool add)
{
	json_t *values = json_array(), *v;
	size_t j;
	int err;

	if (!values)
		return CADRE_ENOMEM;
	err = idx->fn(obj, values, idx->arg);
	json_array_foreach(values, j, v) {
		const char *value = json_string_value(v);
		json_t *set;

		if (err || !value)
			break;
		set = json_object_get(idx->map, value);
		if (add) {
			if (!set) {
				set = json_object();
				if (json_object_set_new_nocheck(idx->map, value, set)) {
					err = CADRE_ENOMEM;
					break;
				}
			}
			if (json_object_set_new_nocheck(set, key, json_true()))
				err = CADRE_ENOMEM;
		} else if (set) {
			json_object_del(set, key);
			if (!json_object_size(set))
				json_object_del(idx->map, value);
		}
	}
	json_decref(values);
	return err;
}

/*
 * The same for every index. An index function is expected to be pure, so
 * removing with the stored object finds exactly the values it was added
 * under.
 */
static int index_update(struct store *s, const char *key, const json_t *obj, bool add)
{
	size_t i;
	int err;

	for (i = 0; i < s->nindexes; i++) {
		err = index_update_one(&s->indexes[i], key, obj, add);
		if (err) {
			log_error("store", "%s: index %s of %s: %s", s->kind,
				  s->indexes[i].name, key, cadre_strerror(err));
			return err;
		}
	}
	return 0;
}

int store_add_index(struct store *s, const char *name, store_index_fn fn, void *arg)
{
	struct store_index *idx;
	const char *key;
	json_t *obj;
	size_t i;
	int err = 0;

	if (s->nindexes == STORE_MAX_INDEXES || !fn)
		return CADRE_EINVAL;
	for (i = 0; i < s->nindexes; i++)
		if (!strcmp(s->indexes[i].name, name))
			return CADRE_EINVAL;
	pthread_rwlock_wrlock(&s->lock);
	idx = &s->indexes[s->nindexes];
	idx->name = strdup(name);
	idx->map = json_object();
	idx->fn = fn;
	idx->arg = arg;
	if (!idx->name || !idx->map) {
		err = CADRE_ENOMEM;
		goto out;
	}
	s->nindexes++;
	/* Index what is already stored, through this index alone. */
	json_object_foreach(s->objects, key, obj) {
		err = index_update_one(idx, key, obj, true);
		if (err)
			break;
	}
	if (err) {
		s->nindexes--;
		goto out;
	}
	idx = NULL;
out:
	if (idx) {
		free(idx->name);
		json_decref(idx->map);
		memset(idx, 0, sizeof(*idx));
	}
	pthread_rwlock_unlock(&s->lock);
	return err;
}

int store_add_handlers(struct store *s, const struct store_handlers *h)
{
	if (s->nhandlers == STORE_MAX_HANDLERS)
		return CADRE_EINVAL;
	s->handlers[s->nhandlers++] = *h;
	return 0;
}

static json_t *trim_object(struct store *s, const json_t *obj)
{
	if (s->trim)
		return s->trim(obj, s->trim_arg);
	return json_incref((json_t *)obj);
}

/*
 * Whether an update is worth telling handlers about. A resourceVersion
 * changes with every write, so equal versions mean the same object; an
 * object trimmed without one (a pod summary) is compared by content, so
 * that a status heartbeat on a foreign pod wakes nobody.
 */
static bool same_object(const json_t *a, const json_t *b)
{
	const char *rva = json_string_value(json_object_get(json_object_get(a, "metadata"),
							     "resourceVersion"));
	const char *rvb = json_string_value(json_object_get(json_object_get(b, "metadata"),
							     "resourceVersion"));

	if (rva && rvb)
		return !strcmp(rva, rvb);
	return json_equal((json_t *)a, (json_t *)b);
}

/* Takes ownership of old_obj and new_obj (references) whatever it returns. */
static int changes_push(struct changes *c, enum change_type type, const char *key,
			json_t *old_obj, json_t *new_obj)
{
	struct change *ch;

	if (c->len == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct change *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			goto fail;
		c->v = v;
		c->cap = cap;
	}
	ch = &c->v[c->len];
	ch->key = strdup(key);
	if (!ch->key)
		goto fail;
	ch->type = type;
	ch->old_obj = old_obj;
	ch->new_obj = new_obj;
	c->len++;
	return 0;
fail:
	json_decref(old_obj);
	json_decref(new_obj);
	return CADRE_ENOMEM;
}

/* Call the handlers for each change, then drop them; no lock held. */
static void changes_dispatch(struct store *s, struct changes *c)
{
	size_t i, h;

	for (i = 0; i < c->len; i++) {
		struct change *ch = &c->v[i];

		for (h = 0; h < s->nhandlers; h++) {
			const struct store_handlers *hs = &s->handlers[h];

			if (ch->type == CHANGE_ADD && hs->on_add)
				hs->on_add(hs->ctx, ch->key, ch->new_obj);
			else if (ch->type == CHANGE_UPDATE && hs->on_update)
				hs->on_update(hs->ctx, ch->key, ch->old_obj, ch->new_obj);
			else if (ch->type == CHANGE_DELETE && hs->on_delete)
				hs->on_delete(hs->ctx, ch->key, ch->old_obj);
		}
		json_decref(ch->old_obj);
		json_decref(ch->new_obj);
		free(ch->key);
	}
	free(c->v);
	c->v = NULL;
	c->len = c->cap = 0;
}

/*
 * Put trimmed (a reference the caller keeps) at key with the lock held,
 * recording the change. The old object leaves the indexes before the new
 * one enters, so a pod that moved node is found under its new node only.
 */
static int put_locked(struct store *s, const char *key, json_t *trimmed, struct changes *c)
{
	json_t *old_obj = json_object_get(s->objects, key);
	int err, push = 0;

	if (old_obj) {
		json_incref(old_obj);
		index_update(s, key, old_obj, false);
	}
	if (json_object_set_nocheck(s->objects, key, trimmed)) {
		err = CADRE_ENOMEM;
		if (old_obj) {
			/* The old object is still stored: index it again. */
			index_update(s, key, old_obj, true);
			json_decref(old_obj);
		}
		return err;
	}
	err = index_update(s, key, trimmed, true);
	if (!old_obj)
		push = changes_push(c, CHANGE_ADD, key, NULL, json_incref(trimmed));
	else if (same_object(old_obj, trimmed))
		json_decref(old_obj);
	else
		push = changes_push(c, CHANGE_UPDATE, key, old_obj, json_incref(trimmed));
	return push ? push : err;
}

/* Remove key with the lock held, recording the delete. */
static int remove_locked(struct store *s, const char *key, struct changes *c)
{
	json_t *old_obj = json_object_get(s->objects, key);
	int err;

	if (!old_obj)
		return 0;
	json_incref(old_obj);
	index_update(s, key, old_obj, false);
	/* Record first: key may be the map's own copy, freed by the delete. */
	err = changes_push(c, CHANGE_DELETE, key, old_obj, NULL);
	json_object_del(s->objects, key);
	return err;
}

int store_upsert(struct store *s, const json_t *obj)
{
	char key[STORE_KEY_MAX];
	struct changes c = { 0 };
	json_t *trimmed = NULL;
	int err;

	err = store_key(obj, key, sizeof(key));
	if (err)
		goto out;
	trimmed = trim_object(s, obj);
	if (!trimmed) {
		err = CADRE_ENOMEM;
		goto out;
	}
	pthread_rwlock_wrlock(&s->lock);
	err = put_locked(s, key, trimmed, &c);
	pthread_rwlock_unlock(&s->lock);
	changes_dispatch(s, &c);
out:
	json_decref(trimmed);
	return err;
}

int store_remove(struct store *s, const json_t *obj)
{
	char key[STORE_KEY_MAX];
	struct changes c = { 0 };
	int err;

	err = store_key(obj, key, sizeof(key));
	if (err)
		return err;
	pthread_rwlock_wrlock(&s->lock);
	err = remove_locked(s, key, &c);
	pthread_rwlock_unlock(&s->lock);
	changes_dispatch(s, &c);
	return err;
}

struct store_batch *store_batch_new(struct store *s)
{
	struct store_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->store = s;
	b->objects = json_object();
	if (!b->objects) {
		free(b);
		return NULL;
	}
	return b;
}

int store_batch_add(struct store_batch *b, const json_t *obj)
{
	char key[STORE_KEY_MAX];
	json_t *trimmed;
	int err;

	err = store_key(obj, key, sizeof(key));
	if (err)
		return err;
	trimmed = trim_object(b->store, obj);
	if (!trimmed)
		return CADRE_ENOMEM;
	if (json_object_set_new_nocheck(b->objects, key, trimmed))
		return CADRE_ENOMEM;
	return 0;
}

int store_batch_commit(struct store_batch *b)
{
	struct store *s = b->store;
	struct changes c = { 0 };
	const char *key;
	json_t *obj;
	void *tmp;
	int err = 0, e;

	pthread_rwlock_wrlock(&s->lock);
	json_object_foreach(b->objects, key, obj) {
		e = put_locked(s, key, obj, &c);
		if (e && !err)
			err = e;
	}
	/* What the list lacks was deleted while we were not watching. */
	json_object_foreach_safe(s->objects, tmp, key, obj) {
		if (json_object_get(b->objects, key))
			continue;
		e = remove_locked(s, key, &c);
		if (e && !err)
			err = e;
	}
	pthread_rwlock_unlock(&s->lock);
	changes_dispatch(s, &c);
	json_object_clear(b->objects);
	return err;
}

void store_batch_free(struct store_batch *b)
{
	if (!b)
		return;
	json_decref(b->objects);
	free(b);
}

int store_get(struct store *s, const char *key, json_t **out)
{
	json_t *obj;

	pthread_rwlock_rdlock(&s->lock);
	obj = json_incref(json_object_get(s->objects, key));
	pthread_rwlock_unlock(&s->lock);
	*out = obj;
	return obj ? 0 : CADRE_ENOTFOUND;
}

int store_by_index(struct store *s, const char *index, const char *value, json_t **out)
{
	struct store_index *idx = NULL;
	json_t *list = NULL, *set;
	const char *key;
	json_t *unused;
	size_t i;
	int err = 0;

	*out = NULL;
	pthread_rwlock_rdlock(&s->lock);
	for (i = 0; i < s->nindexes; i++)
		if (!strcmp(s->indexes[i].name, index))
			idx = &s->indexes[i];
	if (!idx) {
		err = CADRE_EINVAL;
		goto out;
	}
	list = json_array();
	if (!list) {
		err = CADRE_ENOMEM;
		goto out;
	}
	set = json_object_get(idx->map, value);
	json_object_foreach(set, key, unused) {
		if (json_array_append(list, json_object_get(s->objects, key))) {
			err = CADRE_ENOMEM;
			goto out;
		}
	}
	*out = list;
	list = NULL;
out:
	pthread_rwlock_unlock(&s->lock);
	json_decref(list);
	return err;
}

int store_list(struct store *s, json_t **out)
{
	json_t *list = json_array(), *obj;
	const char *key;
	int err = 0;

	*out = NULL;
	if (!list)
		return CADRE_ENOMEM;
	pthread_rwlock_rdlock(&s->lock);
	json_object_foreach(s->objects, key, obj) {
		if (json_array_append(list, obj)) {
			err = CADRE_ENOMEM;
			break;
		}
	}
	pthread_rwlock_unlock(&s->lock);
	if (err) {
		json_decref(list);
		return err;
	}
	*out = list;
	return 0;
}

int store_foreach(struct store *s, store_visit_fn fn, void *ctx)
{
	const char *key;
	json_t *obj;
	int ret = 0;

	pthread_rwlock_rdlock(&s->lock);
	json_object_foreach(s->objects, key, obj) {
		ret = fn(ctx, key, obj);
		if (ret)
			break;
	}
	pthread_rwlock_unlock(&s->lock);
	return ret;
}

size_t store_len(struct store *s)
{
	size_t n;

	pthread_rwlock_rdlock(&s->lock);
	n = json_object_size(s->objects);
	pthread_rwlock_unlock(&s->lock);
	return n;
}

/* --- trimming --- */

json_t *store_trim_managed_fields(const json_t *obj, void *arg)
{
	json_t *meta = json_object_get(obj, "metadata"), *out, *new_meta;

	(void)arg;
	if (!json_object_get(meta, "managedFields"))
		return json_incref((json_t *)obj);
	/* Shallow copies: everything but the two changed objects is shared. */
	out = json_copy((json_t *)obj);
	new_meta = json_copy(meta);
	if (!out || !new_meta || json_object_del(new_meta, "managedFields") ||
	    json_object_set_new_nocheck(out, "metadata", new_meta)) {
		json_decref(out);
		json_decref(new_meta);
		return NULL;
	}
	return out;
}
