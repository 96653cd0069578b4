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

__extension__ typedef unsigned __int128 u128;

/* 10^n as u128 for n <= 38. */
static u128 pow10_u128(int n)
{
	u128 v = 1;

	while (n-- > 0)
		v *= 10;
	return v;
}

/* The suffix's power of ten and power of two; false when unknown. */
static bool quantity_suffix(const char *s, int *exp10, int *exp2)
{
	static const struct { const char *suffix; int exp10, exp2; } table[] = {
		{ "", 0, 0 }, { "n", -9, 0 }, { "u", -6, 0 }, { "m", -3, 0 },
		{ "k", 3, 0 }, { "M", 6, 0 }, { "G", 9, 0 }, { "T", 12, 0 },
		{ "P", 15, 0 }, { "E", 18, 0 }, { "Ki", 0, 10 }, { "Mi", 0, 20 },
		{ "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 }, { "Ei", 0, 60 },
	};
	size_t i;
	char *end;
	long e;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (!strcmp(s, table[i].suffix)) {
			*exp10 = table[i].exp10;
			*exp2 = table[i].exp2;
			return true;
		}
	}
	/* Decimal exponent: "e3", "E-2" ("E" alone is exa, matched above). */
	if ((s[0] == 'e' || s[0] == 'E') && s[1]) {
		e = strtol(s + 1, &end, 10);
		if (*end || end == s + 1 || e < -100 || e > 100)
			return false;
		*exp10 = (int)e;
		*exp2 = 0;
		return true;
	}
	return false;
}

int store_quantity_milli(const char *s, long long *milli)
{
	const u128 limit = (u128)LLONG_MAX;
	u128 mant = 0, v;
	bool neg = false, digits = false, saturated = false;
	int frac = 0, exp10, exp2, e;
	const char *p = s;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	for (; (*p >= '0' && *p <= '9') || (*p == '.' && !frac); p++) {
		if (*p == '.') {
			frac = -1;    /* seen the point; counts from the next digit */
			continue;
		}
		digits = true;
		if (mant > limit)
			saturated = true;
		else
			mant = mant * 10 + (u128)(*p - '0');
		if (frac < 0)
			frac = 1;
		else if (frac > 0)
			frac++;
	}
	if (!digits || !quantity_suffix(p, &exp10, &exp2))
		return CADRE_EPARSE;
	if (frac < 0)
		frac = 0;
	if (saturated) {
		v = limit;
		goto done;
	}
	v = mant;
	if (exp2) {
		if (v > (limit >> exp2)) {
			v = limit;
			goto done;
		}
		v <<= exp2;
	}
	e = exp10 + 3 - frac;    /* milli-units */
	if (!v) {
		/* zero in any unit */
	} else if (e >= 0) {
		if (e > 30 || v > limit / pow10_u128(e))
			v = limit;
		else
			v *= pow10_u128(e);
	} else if (-e > 38) {
		v = 1;
	} else {
		u128 d = pow10_u128(-e);

		v = v / d + (v % d != 0);   /* round up, as MilliValue does */
	}
done:
	if (v > limit)
		v = limit;
	*milli = neg ? -(long long)v : (long long)v;
	return 0;
}

/* A list of resource amounts; names are borrowed from the pod being trimmed. */
#define RES_MAX 32

struct reslist {
	size_t n;
	const char *name[RES_MAX];
	long long milli[RES_MAX];
};

static long long sat_add(long long a, long long b)
{
	if (b > 0 && a > LLONG_MAX - b)
		return LLONG_MAX;
	return a + b;
}

static long long *res_slot(struct reslist *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->name[i], name))
			return &r->milli[i];
	if (r->n == RES_MAX)
		return NULL;
	r->name[r->n] = name;
	r->milli[r->n] = 0;
	return &r->milli[r->n++];
}

/* r += list (a ResourceList object). Unparseable amounts count as 0. */
static void res_add(struct reslist *r, const json_t *list)
{
	const char *name;
	json_t *q;

	json_object_foreach((json_t *)list, name, q) {
		long long m, *slot;

		if (!json_is_string(q) || store_quantity_milli(json_string_value(q), &m))
			continue;
		slot = res_slot(r, name);
		if (slot)
			*slot = sat_add(*slot, m);
	}
}

static void res_add_list(struct reslist *r, const struct reslist *other)
{
	size_t i;

	for (i = 0; i < other->n; i++) {
		long long *slot = res_slot(r, other->name[i]);

		if (slot)
			*slot = sat_add(*slot, other->milli[i]);
	}
}

static void res_max(struct reslist *r, const struct reslist *other)
{
	size_t i;

	for (i = 0; i < other->n; i++) {
		long long *slot = res_slot(r, other->name[i]);

		if (slot && other->milli[i] > *slot)
			*slot = other->milli[i];
	}
}

static const json_t *container_requests(const json_t *c)
{
	return json_object_get(json_object_get(c, "resources"), "requests");
}

/*
 * A pod's effective requests, as the scheduler computes them
 * (k8s.io/component-helpers resource.PodRequests): regular containers
 * summed; restartable init containers (sidecars) added to that sum and to
 * every later init container's need; the result is the larger of the sum
 * and the largest init need; then the pod overhead.
 */
static void pod_requests(const json_t *spec, struct reslist *out)
{
	struct reslist sidecars = { 0 }, init_max = { 0 };
	const json_t *c;
	size_t i;

	out->n = 0;
	json_array_foreach(json_object_get(spec, "containers"), i, c)
		res_add(out, container_requests(c));
	json_array_foreach(json_object_get(spec, "initContainers"), i, c) {
		const char *policy = json_string_value(json_object_get(c, "restartPolicy"));
		struct reslist need = { 0 };

		if (policy && !strcmp(policy, "Always")) {
			res_add(out, container_requests(c));
			res_add(&sidecars, container_requests(c));
			need = sidecars;
		} else {
			res_add(&need, container_requests(c));
			res_add_list(&need, &sidecars);
		}
		res_max(&init_max, &need);
	}
	res_max(out, &init_max);
	res_add(out, json_object_get(spec, "overhead"));
}

/* Share the string node of src[key] with dst; absent or empty is skipped. */
static int share_string(json_t *dst, const char *key, const json_t *src, const char *src_key)
{
	json_t *v = json_object_get(src, src_key);

	if (!json_is_string(v) || !json_string_length(v))
		return 0;
	return json_object_set_nocheck(dst, key, v) ? CADRE_ENOMEM : 0;
}

/* Canonical quantity text for milli-units: "<n>" when whole, else "<n>m". */
static json_t *quantity_json(long long milli)
{
	char text[32];

	if (milli % 1000 == 0)
		snprintf(text, sizeof(text), "%lld", milli / 1000);
	else
		snprintf(text, sizeof(text), "%lldm", milli);
	return json_string_nocheck(text);
}

/* dst[key] = src[key], the same node (shared, not copied); absent or null is skipped. */
static bool share(json_t *dst, const json_t *src, const char *key)
{
	json_t *v = json_object_get(src, key);

	if (!v || json_is_null(v))
		return true;
	return json_object_set_nocheck(dst, key, v) == 0;
}

/* Share the listed keys of src into dst. */
static bool share_keys(json_t *dst, const json_t *src, const char *const *keys)
{
	for (; *keys; keys++)
		if (!share(dst, src, *keys))
			return false;
	return true;
}

/* A new empty object or array (array true) as dst[key], owned by dst; NULL on no memory. */
static json_t *child(json_t *dst, const char *key, bool array)
{
	json_t *v = array ? json_array() : json_object();

	if (!v || json_object_set_new_nocheck(dst, key, v))
		return NULL;
	return v;
}

/* A new empty object appended to array, owned by it; NULL on no memory. */
static json_t *append_object(json_t *array)
{
	json_t *v = json_object();

	if (!v || json_array_append_new(array, v))
		return NULL;
	return v;
}

/* Remove dst[key] when it is an empty object or array. */
static void drop_empty(json_t *dst, const char *key)
{
	json_t *v = json_object_get(dst, key);

	if ((json_is_object(v) && !json_object_size(v)) || (json_is_array(v) && !json_array_size(v)))
		json_object_del(dst, key);
}

static bool listed(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

static const char *const own_meta_keys[] = {
	"name", "namespace", "uid", "resourceVersion", "labels", "deletionTimestamp", NULL,
};
static const char *const own_spec_keys[] = { "nodeName", "schedulingGates", NULL };
static const char *const own_status_keys[] = { "phase", "podIP", "reason", "message", NULL };
static const char *const own_condition_types[] = {
	"PodScheduled", "Ready", "DisruptionTarget", NULL,
};
static const char *const own_condition_keys[] = { "type", "status", "reason", "message", NULL };
static const char *const own_state_keys[] = { "waiting", "terminated", NULL };

/*
 * cadre's own pod, cut to what its reconcilers read (see store.h). Every
 * new node is attached to its parent as soon as it is made, so one decref
 * of out frees all on failure.
 */
static json_t *trim_own_pod(const json_t *pod)
{
	const json_t *spec = json_object_get(pod, "spec");
	const json_t *status = json_object_get(pod, "status");
	json_t *out = json_object(), *meta, *sp, *st, *list, *item, *sub;
	const json_t *c;
	size_t i;

	if (!out || !(meta = child(out, "metadata", false)) ||
	    !share_keys(meta, json_object_get(pod, "metadata"), own_meta_keys))
		goto fail;

	if (!(sp = child(out, "spec", false)) || !share_keys(sp, spec, own_spec_keys) ||
	    !(list = child(sp, "containers", true)))
		goto fail;
	json_array_foreach(json_object_get(spec, "containers"), i, c) {
		if (!(item = append_object(list)) || !share(item, c, "name") ||
		    !(sub = child(item, "resources", false)) ||
		    !share(sub, json_object_get(c, "resources"), "requests"))
			goto fail;
		drop_empty(item, "resources");
	}

	if (!(st = child(out, "status", false)) || !share_keys(st, status, own_status_keys) ||
	    !(list = child(st, "conditions", true)))
		goto fail;
	json_array_foreach(json_object_get(status, "conditions"), i, c) {
		if (!listed(json_string_value(json_object_get(c, "type")), own_condition_types))
			continue;
		if (!(item = append_object(list)) || !share_keys(item, c, own_condition_keys))
			goto fail;
	}
	if (!(list = child(st, "containerStatuses", true)))
		goto fail;
	json_array_foreach(json_object_get(status, "containerStatuses"), i, c) {
		if (!(item = append_object(list)) || !share(item, c, "name") ||
		    !(sub = child(item, "state", false)) ||
		    !share_keys(sub, json_object_get(c, "state"), own_state_keys))
			goto fail;
		drop_empty(item, "state");
	}
	drop_empty(st, "conditions");
	drop_empty(st, "containerStatuses");
	drop_empty(sp, "containers");
	drop_empty(out, "spec");
	drop_empty(out, "status");
	return out;
fail:
	json_decref(out);
	return NULL;
}

json_t *store_trim_pod(const json_t *pod, void *arg)
{
	const json_t *meta = json_object_get(pod, "metadata");

	if (json_object_get(json_object_get(meta, "labels"), STORE_JOB_LABEL))
		return trim_own_pod(pod);
	return store_trim_pod_summary(pod, arg);
}

json_t *store_trim_pod_summary(const json_t *pod, void *arg)
{
	const json_t *meta = json_object_get(pod, "metadata");
	const json_t *spec = json_object_get(pod, "spec");
	const json_t *gates = json_object_get(spec, "schedulingGates");
	json_t *out = NULL, *requests = NULL;
	struct reslist sum;
	size_t i;

	(void)arg;
	out = json_object();
	requests = json_object();
	if (!out || !requests)
		goto fail;
	if (share_string(out, "namespace", meta, "namespace") ||
	    share_string(out, "name", meta, "name") ||
	    share_string(out, "nodeName", spec, "nodeName") ||
	    share_string(out, "phase", json_object_get(pod, "status"), "phase"))
		goto fail;
	pod_requests(spec, &sum);
	for (i = 0; i < sum.n; i++) {
		if (!sum.milli[i])
			continue;
		if (json_object_set_new_nocheck(requests, sum.name[i],
						quantity_json(sum.milli[i])))
			goto fail;
	}
	if (json_object_size(requests) &&
	    json_object_set_nocheck(out, "requests", requests))
		goto fail;
	if (json_array_size(gates) &&
	    json_object_set_new_nocheck(out, "schedulingGates", json_true()))
		goto fail;
	json_decref(requests);
	return out;
fail:
	json_decref(requests);
	json_decref(out);
	return NULL;
}

int store_index_pod_job(const json_t *pod, json_t *values, void *arg)
{
	const json_t *meta = json_object_get(pod, "metadata");
	const char *job = json_string_value(json_object_get(json_object_get(meta, "labels"),
							     STORE_JOB_LABEL));
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	char value[STORE_KEY_MAX];
	int n;

	(void)arg;
	if (!job || !*job)
		return 0;
	n = snprintf(value, sizeof(value), "%s/%s", ns ? ns : "", job);
	if (n < 0 || (size_t)n >= sizeof(value))
		return 0;
	return json_array_append_new(values, json_string_nocheck(value)) ? CADRE_ENOMEM : 0;
}

int store_index_pod_node(const json_t *pod, json_t *values, void *arg)
{
	json_t *node = json_object_get(json_object_get(pod, "spec"), "nodeName");

	(void)arg;
	if (!node)
		node = json_object_get(pod, "nodeName");
	if (!json_is_string(node) || !json_string_length(node))
		return 0;
	return json_array_append(values, node) ? CADRE_ENOMEM : 0;
}
