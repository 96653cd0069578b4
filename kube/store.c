#include "kube/store.h"

#include "base/err.h"
#include "base/log.h"
#include "base/slab.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Layout (docs/design.md, "Caches and memory"): each object is one
 * allocation, a struct entry followed by
 *   [posting pointers, one per index value][record][key NUL][compact JSON NUL]
 * in a hash table of entry pointers. Nothing else is kept per object: an
 * index holds, per value, an array of entry pointers (a posting), and an
 * entry points back at the postings it is in, so it leaves its indexes
 * without its object being decoded.
 */
struct posting;

struct entry {
	uint32_t hash;
	uint32_t packed_len;    /* bytes of compact JSON, without the NUL */
	uint32_t gen;           /* the relist that last saw it; writer only */
	uint16_t key_len;
	uint16_t rec_len;
	uint8_t n_post;
	alignas(max_align_t) unsigned char data[];
};

struct posting {
	uint32_t hash;
	uint32_t n, cap;
	uint8_t n_index;        /* which index of the store */
	struct entry **v;
	char value[];
};

/* Open addressing, linear probing; slots hold entries or postings. */
struct table {
	void **slots;
	size_t cap, len;    /* cap: 0 or a power of two */
};

struct store_index {
	char *name;
	store_index_fn fn;
	void *arg;
	struct table postings;
};

struct store {
	pthread_rwlock_t lock;
	char *kind;
	store_trim_fn trim;
	void *trim_arg;
	store_record_fn record;
	void *record_arg;
	struct table objects;
	uint32_t gen;
	struct store_index indexes[STORE_MAX_INDEXES];
	size_t nindexes;
	/* Fixed after the writer starts, so read without the lock. */
	struct store_handlers handlers[STORE_MAX_HANDLERS];
	size_t nhandlers;
};

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static struct posting **entry_posts(const struct entry *e)
{
	return (struct posting **)(void *)e->data;
}

static const void *entry_record(const struct entry *e)
{
	return e->data + (size_t)e->n_post * sizeof(struct posting *);
}

static const char *entry_key(const struct entry *e)
{
	return (const char *)entry_record(e) + round8(e->rec_len);
}

static const char *entry_packed(const struct entry *e)
{
	return entry_key(e) + e->key_len + 1;
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* --- the hash table, for entries (by key) and postings (by value) --- */

static uint32_t item_hash(const void *item)
{
	return *(const uint32_t *)item;   /* both structs start with their hash */
}

typedef const char *(*item_name_fn)(const void *item);

static const char *entry_name(const void *item)
{
	return entry_key(item);
}

static const char *posting_name(const void *item)
{
	return ((const struct posting *)item)->value;
}

/* The slot of name, or of the empty slot where it would go. cap > 0. */
static size_t table_slot(const struct table *t, const char *name, uint32_t hash,
			 item_name_fn name_of)
{
	size_t mask = t->cap - 1, i = hash & mask;

	while (t->slots[i] && (item_hash(t->slots[i]) != hash ||
			       strcmp(name_of(t->slots[i]), name)))
		i = (i + 1) & mask;
	return i;
}

static void *table_get(const struct table *t, const char *name, uint32_t hash,
		       item_name_fn name_of)
{
	return t->cap ? t->slots[table_slot(t, name, hash, name_of)] : NULL;
}

/* Room for one more at a load of at most 3/4. */
static int table_reserve(struct table *t, item_name_fn name_of)
{
	size_t cap = t->cap ? t->cap * 2 : 16, i;
	void **slots;

	if ((t->len + 1) * 4 <= t->cap * 3)
		return 0;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return CADRE_ENOMEM;
	for (i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i])
			continue;
		for (j = item_hash(t->slots[i]) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->slots[i];
	}
	(void)name_of;
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* Put item in slot (from table_slot, after table_reserve); returns what was there. */
static void *table_put_at(struct table *t, size_t slot, void *item)
{
	void *old = t->slots[slot];

	t->slots[slot] = item;
	if (!old)
		t->len++;
	return old;
}

/* Empty slot i, moving later items of the probe run back (no tombstones). */
static void table_delete_at(struct table *t, size_t i)
{
	size_t mask = t->cap - 1, j = i;

	t->slots[i] = NULL;
	t->len--;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!t->slots[j])
			return;
		home = item_hash(t->slots[j]) & mask;
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			t->slots[i] = t->slots[j];
			t->slots[j] = NULL;
			i = j;
		}
	}
}

static void table_release(struct table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->len = 0;
}

/* --- the store --- */

struct store *store_new(const struct store_options *opts)
{
	struct store *s = calloc(1, sizeof(*s));
	pthread_rwlockattr_t attr;

	if (!s)
		return NULL;
	s->kind = strdup(opts && opts->kind ? opts->kind : "objects");
	if (!s->kind) {
		free(s);
		return NULL;
	}
	if (opts) {
		s->trim = opts->trim;
		s->trim_arg = opts->trim_arg;
		s->record = opts->record;
		s->record_arg = opts->record_arg;
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

static void index_release(struct store_index *idx)
{
	for (size_t i = 0; i < idx->postings.cap; i++) {
		struct posting *p = idx->postings.slots[i];

		if (p) {
			slab_free(p->v);
			slab_free(p);
		}
	}
	table_release(&idx->postings);
	free(idx->name);
}

void store_free(struct store *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nindexes; i++)
		index_release(&s->indexes[i]);
	for (i = 0; i < s->objects.cap; i++)
		slab_free(s->objects.slots[i]);
	table_release(&s->objects);
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

static json_t *entry_decode(const struct entry *e)
{
	json_error_t error;

	return json_loadb(entry_packed(e), e->packed_len, JSON_ALLOW_NUL, &error);
}

/* --- indexes --- */

/* values = [[values of index 0], [values of index 1], ...]; *n = their count. */
static int index_values(struct store *s, const json_t *obj, json_t **values, size_t *n)
{
	json_t *all = json_array();
	int err = 0;

	*n = 0;
	if (!all)
		return CADRE_ENOMEM;
	for (size_t i = 0; i < s->nindexes && !err; i++) {
		json_t *one = json_array();

		if (!one || json_array_append_new(all, one)) {
			err = CADRE_ENOMEM;
			break;
		}
		err = s->indexes[i].fn(obj, one, s->indexes[i].arg);
		*n += json_array_size(one);
	}
	if (!err && *n > UINT8_MAX)
		err = CADRE_EINVAL;
	if (err) {
		log_error("store", "%s: index values: %s", s->kind, cadre_strerror(err));
		json_decref(all);
		return err;
	}
	*values = all;
	return 0;
}

static void posting_drop(struct store_index *idx, struct posting *p, const struct entry *e);

static int posting_add(struct store_index *idx, const char *value, struct entry *e,
		       struct posting **out)
{
	uint32_t hash = hash_str(value);
	struct posting *p = table_get(&idx->postings, value, hash, posting_name);

	if (!p) {
		size_t len = strlen(value);

		if (table_reserve(&idx->postings, posting_name) ||
		    !(p = slab_calloc(sizeof(*p) + len + 1)))
			return CADRE_ENOMEM;
		p->hash = hash;
		memcpy(p->value, value, len + 1);
		table_put_at(&idx->postings, table_slot(&idx->postings, value, hash, posting_name),
			     p);
	}
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 2;
		struct entry **v = slab_realloc(p->v, p->cap * sizeof(*v), cap * sizeof(*v));

		if (!v) {
			if (!p->n)
				posting_drop(idx, p, e);
			return CADRE_ENOMEM;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = e;
	*out = p;
	return 0;
}

/* Take e out of the posting p of idx; an emptied posting goes. */
static void posting_drop(struct store_index *idx, struct posting *p, const struct entry *e)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (p->v[i] == e) {
			p->v[i] = p->v[--p->n];
			break;
		}
	if (p->n)
		return;
	table_delete_at(&idx->postings, table_slot(&idx->postings, p->value, p->hash,
						   posting_name));
	slab_free(p->v);
	slab_free(p);
}

/*
 * Enter e in the postings of values (index_values); its posting pointers
 * are filled in order. A failure (no memory) leaves the rest NULL: that
 * object is missing from an index, which is logged.
 */
static void entry_link(struct store *s, struct entry *e, const json_t *values)
{
	struct posting **posts = entry_posts(e);
	size_t k = 0;

	memset(posts, 0, e->n_post * sizeof(*posts));
	for (size_t i = 0; i < s->nindexes; i++) {
		const json_t *v;
		size_t j;

		json_array_foreach(json_array_get(values, i), j, v) {
			const char *value = json_string_value(v);
			int err;

			if (!value || k == e->n_post)
				continue;
			err = posting_add(&s->indexes[i], value, e, &posts[k]);
			if (err)
				log_error("store", "%s: index %s of %s: %s", s->kind,
					  s->indexes[i].name, entry_key(e), cadre_strerror(err));
			else
				posts[k]->n_index = (uint8_t)i;
			k++;
		}
	}
}

static void entry_unlink(struct store *s, struct entry *e)
{
	struct posting **posts = entry_posts(e);

	for (size_t k = 0; k < e->n_post; k++)
		if (posts[k])
			posting_drop(&s->indexes[posts[k]->n_index], posts[k], e);
}

int store_add_handlers(struct store *s, const struct store_handlers *h)
{
	if (s->nhandlers == STORE_MAX_HANDLERS)
		return CADRE_EINVAL;
	s->handlers[s->nhandlers++] = *h;
	return 0;
}

/* --- packing --- */

/*
 * A new entry for obj (the trimmed tree) at key, not linked anywhere, and
 * the index values it will be linked under (a NEW reference).
 */
static int entry_build(struct store *s, const char *key, const json_t *obj,
		       struct entry **out, json_t **values)
{
	unsigned char rec[STORE_RECORD_MAX];
	size_t key_len = strlen(key), packed_len, n_post, size;
	char *packed = NULL;
	struct entry *e;
	int rec_len = 0, err;

	*out = NULL;
	*values = NULL;
	if (s->record) {
		rec_len = s->record(obj, rec, sizeof(rec), s->record_arg);
		if (rec_len < 0)
			return rec_len;
		if ((size_t)rec_len > sizeof(rec))
			return CADRE_EINVAL;
	}
	err = index_values(s, obj, values, &n_post);
	if (err)
		return err;
	packed = json_dumps(obj, JSON_COMPACT);
	if (!packed) {
		err = CADRE_ENOMEM;
		goto out;
	}
	packed_len = strlen(packed);
	size = sizeof(*e) + n_post * sizeof(struct posting *) + round8((size_t)rec_len) +
	       key_len + 1 + packed_len + 1;
	e = slab_alloc(size);
	if (!e) {
		err = CADRE_ENOMEM;
		goto out;
	}
	e->hash = hash_str(key);
	e->packed_len = (uint32_t)packed_len;
	e->gen = s->gen;
	e->key_len = (uint16_t)key_len;
	e->rec_len = (uint16_t)rec_len;
	e->n_post = (uint8_t)n_post;
	memset(entry_posts(e), 0, n_post * sizeof(struct posting *));
	memcpy((void *)entry_record(e), rec, (size_t)rec_len);
	memcpy((char *)entry_key(e), key, key_len + 1);
	memcpy((char *)entry_packed(e), packed, packed_len + 1);
	*out = e;
out:
	free(packed);
	if (err) {
		json_decref(*values);
		*values = NULL;
	}
	return err;
}

static bool same_entry(const struct entry *a, const struct entry *b)
{
	return a->packed_len == b->packed_len &&
	       !memcmp(entry_packed(a), entry_packed(b), a->packed_len);
}

/* --- changes, reported once the lock is dropped --- */

enum change_type { CHANGE_ADD, CHANGE_UPDATE, CHANGE_DELETE };

struct change {
	enum change_type type;
	struct entry *old_e;    /* owned: out of the store, freed after dispatch */
	struct entry *new_e;    /* in the store (only its writer frees it) */
	json_t *new_obj;        /* held reference, or NULL to decode new_e */
};

struct changes {
	struct change *v;
	size_t len, cap;
};

/* Takes ownership of old_e and new_obj whatever it returns. */
static int changes_push(struct changes *c, enum change_type type, struct entry *old_e,
			struct entry *new_e, json_t *new_obj)
{
	if (c->len == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct change *v = realloc(c->v, cap * sizeof(*v));

		if (!v) {
			slab_free(old_e);
			json_decref(new_obj);
			return CADRE_ENOMEM;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->len++] = (struct change){ type, old_e, new_e, new_obj };
	return 0;
}

/* Whether any handler wants the old state (want_old) or the new one. */
static bool handlers_want(const struct store *s, enum change_type type, bool want_old)
{
	for (size_t h = 0; h < s->nhandlers; h++) {
		const struct store_handlers *hs = &s->handlers[h];

		if (type == CHANGE_ADD && !want_old && hs->on_add)
			return true;
		if (type == CHANGE_UPDATE && hs->on_update)
			return true;
		if (type == CHANGE_DELETE && want_old && hs->on_delete)
			return true;
	}
	return false;
}

static void dispatch_one(struct store *s, struct change *ch)
{
	json_t *old_obj = NULL, *new_obj = ch->new_obj;
	const char *key = entry_key(ch->new_e ? ch->new_e : ch->old_e);

	if (ch->old_e && handlers_want(s, ch->type, true))
		old_obj = entry_decode(ch->old_e);
	if (!new_obj && ch->new_e && handlers_want(s, ch->type, false))
		new_obj = entry_decode(ch->new_e);
	for (size_t h = 0; h < s->nhandlers; h++) {
		const struct store_handlers *hs = &s->handlers[h];

		if (ch->type == CHANGE_ADD && hs->on_add && new_obj)
			hs->on_add(hs->ctx, key, new_obj);
		else if (ch->type == CHANGE_UPDATE && hs->on_update && old_obj && new_obj)
			hs->on_update(hs->ctx, key, old_obj, new_obj);
		else if (ch->type == CHANGE_DELETE && hs->on_delete && old_obj)
			hs->on_delete(hs->ctx, key, old_obj);
	}
	json_decref(old_obj);
	json_decref(new_obj);
}

/* Call the handlers for each change, then drop them; no lock held. */
static void changes_dispatch(struct store *s, struct changes *c)
{
	for (size_t i = 0; i < c->len; i++) {
		dispatch_one(s, &c->v[i]);
		slab_free(c->v[i].old_e);
	}
	free(c->v);
	c->v = NULL;
	c->len = c->cap = 0;
}

/*
 * Put e (linked under values) in place of what key holds, with the lock
 * held, recording the change; an object byte-for-byte the same as the
 * stored one is no change, and e is freed. Takes e and new_obj. The old
 * object leaves the indexes before the new one enters, so a pod that moved
 * node is found under its new node only.
 */
static int put_locked(struct store *s, struct entry *e, const json_t *values, json_t *new_obj,
		      struct changes *c)
{
	const char *key = entry_key(e);
	size_t slot = s->objects.cap ? table_slot(&s->objects, key, e->hash, entry_name) : 0;
	struct entry *old_e = s->objects.cap ? s->objects.slots[slot] : NULL;

	if (old_e && same_entry(old_e, e)) {
		old_e->gen = s->gen;
		slab_free(e);
		json_decref(new_obj);
		return 0;
	}
	if (!old_e) {
		if (table_reserve(&s->objects, entry_name)) {
			slab_free(e);
			json_decref(new_obj);
			return CADRE_ENOMEM;
		}
		slot = table_slot(&s->objects, key, e->hash, entry_name);
	} else {
		entry_unlink(s, old_e);
	}
	e->gen = s->gen;
	entry_link(s, e, values);
	table_put_at(&s->objects, slot, e);
	return changes_push(c, old_e ? CHANGE_UPDATE : CHANGE_ADD, old_e, e, new_obj);
}

/* Remove the entry in slot with the lock held, recording the delete. */
static int remove_locked(struct store *s, size_t slot, struct changes *c)
{
	struct entry *e = s->objects.slots[slot];

	table_delete_at(&s->objects, slot);
	entry_unlink(s, e);
	return changes_push(c, CHANGE_DELETE, e, NULL, NULL);
}

static json_t *trim_object(struct store *s, const json_t *obj)
{
	if (s->trim)
		return s->trim(obj, s->trim_arg);
	return json_incref((json_t *)obj);
}

int store_upsert(struct store *s, const json_t *obj)
{
	char key[STORE_KEY_MAX];
	struct changes c = { 0 };
	struct entry *e = NULL;
	json_t *trimmed = NULL, *values = NULL;
	int err;

	err = store_key(obj, key, sizeof(key));
	if (err)
		return err;
	trimmed = trim_object(s, obj);
	if (!trimmed)
		return CADRE_ENOMEM;
	err = entry_build(s, key, trimmed, &e, &values);
	if (err) {
		json_decref(trimmed);
		return err;
	}
	pthread_rwlock_wrlock(&s->lock);
	err = put_locked(s, e, values, trimmed, &c);
	pthread_rwlock_unlock(&s->lock);
	changes_dispatch(s, &c);
	json_decref(values);
	return err;
}

int store_remove(struct store *s, const json_t *obj)
{
	char key[STORE_KEY_MAX];
	struct changes c = { 0 };
	size_t slot;
	int err;

	err = store_key(obj, key, sizeof(key));
	if (err)
		return err;
	pthread_rwlock_wrlock(&s->lock);
	if (s->objects.cap) {
		slot = table_slot(&s->objects, key, hash_str(key), entry_name);
		if (s->objects.slots[slot])
			err = remove_locked(s, slot, &c);
	}
	pthread_rwlock_unlock(&s->lock);
	changes_dispatch(s, &c);
	return err;
}

/*
 * Rebuild every entry (decoded, then built again) so that it has the
 * posting pointers of the indexes now defined. Lock held.
 */
static int reindex_locked(struct store *s)
{
	for (size_t i = 0; i < s->objects.cap; i++) {
		struct entry *old_e = s->objects.slots[i], *e;
		json_t *obj, *values;
		int err;

		if (!old_e)
			continue;
		obj = entry_decode(old_e);
		if (!obj)
			return CADRE_ENOMEM;
		err = entry_build(s, entry_key(old_e), obj, &e, &values);
		json_decref(obj);
		if (err)
			return err;
		entry_unlink(s, old_e);
		entry_link(s, e, values);
		json_decref(values);
		s->objects.slots[i] = e;
		slab_free(old_e);
	}
	return 0;
}

int store_add_index(struct store *s, const char *name, store_index_fn fn, void *arg)
{
	struct store_index *idx;
	int err;

	if (s->nindexes == STORE_MAX_INDEXES || !fn)
		return CADRE_EINVAL;
	for (size_t i = 0; i < s->nindexes; i++)
		if (!strcmp(s->indexes[i].name, name))
			return CADRE_EINVAL;
	idx = &s->indexes[s->nindexes];
	memset(idx, 0, sizeof(*idx));
	idx->name = strdup(name);
	if (!idx->name)
		return CADRE_ENOMEM;
	idx->fn = fn;
	idx->arg = arg;
	pthread_rwlock_wrlock(&s->lock);
	s->nindexes++;
	/* Index what is already stored. */
	err = reindex_locked(s);
	pthread_rwlock_unlock(&s->lock);
	return err;
}

/* --- relists --- */

struct pending {
	struct entry *e;
	json_t *values;
};

/*
 * A batch holds only what changed: an object the store has byte for byte
 * is marked seen (entry.gen) and dropped at once, so a relist of an
 * unchanged cluster costs no second copy of it.
 */
struct store_batch {
	struct store *store;
	struct pending *v;
	size_t n, cap;
};

struct store_batch *store_batch_new(struct store *s)
{
	struct store_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->store = s;
	s->gen++;       /* writer only, like the batch */
	return b;
}

int store_batch_add(struct store_batch *b, const json_t *obj)
{
	struct store *s = b->store;
	char key[STORE_KEY_MAX];
	struct entry *e, *old_e;
	json_t *trimmed, *values;
	int err;

	err = store_key(obj, key, sizeof(key));
	if (err)
		return err;
	trimmed = trim_object(s, obj);
	if (!trimmed)
		return CADRE_ENOMEM;
	err = entry_build(s, key, trimmed, &e, &values);
	json_decref(trimmed);
	if (err)
		return err;
	/* The writer reads its own table without the lock: nobody else changes it. */
	old_e = table_get(&s->objects, key, e->hash, entry_name);
	if (old_e && same_entry(old_e, e)) {
		old_e->gen = s->gen;
		slab_free(e);
		json_decref(values);
		return 0;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct pending *v = realloc(b->v, cap * sizeof(*v));

		if (!v) {
			slab_free(e);
			json_decref(values);
			return CADRE_ENOMEM;
		}
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = (struct pending){ e, values };
	return 0;
}

int store_batch_commit(struct store_batch *b)
{
	struct store *s = b->store;
	struct changes c = { 0 };
	int err = 0, e;

	pthread_rwlock_wrlock(&s->lock);
	for (size_t i = 0; i < b->n; i++) {
		e = put_locked(s, b->v[i].e, b->v[i].values, NULL, &c);
		json_decref(b->v[i].values);
		if (e && !err)
			err = e;
	}
	b->n = 0;
	/*
	 * What the list lacks was deleted while we were not watching. A
	 * removal moves a later entry into slot i, so i is looked at again.
	 */
	for (size_t i = 0; i < s->objects.cap; i++) {
		struct entry *old_e;

		while ((old_e = s->objects.slots[i]) && old_e->gen != s->gen) {
			e = remove_locked(s, i, &c);
			if (e && !err)
				err = e;
		}
	}
	pthread_rwlock_unlock(&s->lock);
	changes_dispatch(s, &c);
	return err;
}

void store_batch_free(struct store_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		slab_free(b->v[i].e);
		json_decref(b->v[i].values);
	}
	free(b->v);
	free(b);
}

/* --- readers --- */

static struct entry *lookup_locked(struct store *s, const char *key)
{
	return table_get(&s->objects, key, hash_str(key), entry_name);
}

int store_get(struct store *s, const char *key, json_t **out)
{
	struct entry *e;
	int err = 0;

	*out = NULL;
	pthread_rwlock_rdlock(&s->lock);
	e = lookup_locked(s, key);
	if (!e)
		err = CADRE_ENOTFOUND;
	else if (!(*out = entry_decode(e)))
		err = CADRE_ENOMEM;
	pthread_rwlock_unlock(&s->lock);
	return err;
}

bool store_contains(struct store *s, const char *key)
{
	bool found;

	pthread_rwlock_rdlock(&s->lock);
	found = lookup_locked(s, key) != NULL;
	pthread_rwlock_unlock(&s->lock);
	return found;
}

static struct store_index *index_named(struct store *s, const char *name)
{
	for (size_t i = 0; i < s->nindexes; i++)
		if (!strcmp(s->indexes[i].name, name))
			return &s->indexes[i];
	return NULL;
}

/* Append the decoded e to list. */
static int append_decoded(json_t *list, const struct entry *e)
{
	json_t *obj = entry_decode(e);

	return !obj || json_array_append_new(list, obj) ? CADRE_ENOMEM : 0;
}

int store_by_index(struct store *s, const char *index, const char *value, json_t **out)
{
	struct store_index *idx;
	struct posting *p;
	json_t *list = NULL;
	int err = 0;

	*out = NULL;
	pthread_rwlock_rdlock(&s->lock);
	idx = index_named(s, index);
	if (!idx) {
		err = CADRE_EINVAL;
		goto out;
	}
	list = json_array();
	if (!list) {
		err = CADRE_ENOMEM;
		goto out;
	}
	p = table_get(&idx->postings, value, hash_str(value), posting_name);
	for (uint32_t i = 0; p && i < p->n && !err; i++)
		err = append_decoded(list, p->v[i]);
	if (!err) {
		*out = list;
		list = NULL;
	}
out:
	pthread_rwlock_unlock(&s->lock);
	json_decref(list);
	return err;
}

int store_list(struct store *s, json_t **out)
{
	json_t *list = json_array();
	int err = 0;

	*out = NULL;
	if (!list)
		return CADRE_ENOMEM;
	pthread_rwlock_rdlock(&s->lock);
	for (size_t i = 0; i < s->objects.cap && !err; i++)
		if (s->objects.slots[i])
			err = append_decoded(list, s->objects.slots[i]);
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
	int ret = 0;

	pthread_rwlock_rdlock(&s->lock);
	for (size_t i = 0; i < s->objects.cap && !ret; i++) {
		struct entry *e = s->objects.slots[i];
		json_t *obj;

		if (!e)
			continue;
		obj = entry_decode(e);
		ret = obj ? fn(ctx, entry_key(e), obj) : CADRE_ENOMEM;
		json_decref(obj);
	}
	pthread_rwlock_unlock(&s->lock);
	return ret;
}

int store_foreach_record(struct store *s, store_record_visit_fn fn, void *ctx)
{
	int ret = 0;

	pthread_rwlock_rdlock(&s->lock);
	for (size_t i = 0; i < s->objects.cap && !ret; i++) {
		const struct entry *e = s->objects.slots[i];

		if (e)
			ret = fn(ctx, entry_key(e), entry_record(e), e->rec_len);
	}
	pthread_rwlock_unlock(&s->lock);
	return ret;
}

int store_get_record(struct store *s, const char *key, store_record_visit_fn fn, void *ctx)
{
	const struct entry *e;
	int ret;

	pthread_rwlock_rdlock(&s->lock);
	e = lookup_locked(s, key);
	ret = e ? fn(ctx, entry_key(e), entry_record(e), e->rec_len) : CADRE_ENOTFOUND;
	pthread_rwlock_unlock(&s->lock);
	return ret;
}

int store_index_foreach_record(struct store *s, const char *index, const char *value,
			       store_record_visit_fn fn, void *ctx)
{
	struct store_index *idx;
	struct posting *p;
	int ret = 0;

	pthread_rwlock_rdlock(&s->lock);
	idx = index_named(s, index);
	p = idx ? table_get(&idx->postings, value, hash_str(value), posting_name) : NULL;
	if (!idx)
		ret = CADRE_EINVAL;
	for (uint32_t i = 0; p && i < p->n && !ret; i++)
		ret = fn(ctx, entry_key(p->v[i]), entry_record(p->v[i]), p->v[i]->rec_len);
	pthread_rwlock_unlock(&s->lock);
	return ret;
}

size_t store_len(struct store *s)
{
	size_t n;

	pthread_rwlock_rdlock(&s->lock);
	n = s->objects.len;
	pthread_rwlock_unlock(&s->lock);
	return n;
}

size_t store_packed_bytes(struct store *s)
{
	size_t n = 0;

	pthread_rwlock_rdlock(&s->lock);
	for (size_t i = 0; i < s->objects.cap; i++)
		if (s->objects.slots[i])
			n += ((struct entry *)s->objects.slots[i])->packed_len;
	pthread_rwlock_unlock(&s->lock);
	return n;
}

/* --- trimming --- */

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

/* out with new_meta as its metadata, or NULL; takes both either way. */
static json_t *with_metadata(json_t *out, json_t *new_meta)
{
	if (!out || !new_meta || json_object_set_new_nocheck(out, "metadata", new_meta)) {
		/* json_object_set_new_nocheck() took new_meta if out and new_meta were there. */
		if (!out)
			json_decref(new_meta);
		json_decref(out);
		return NULL;
	}
	return out;
}

json_t *store_trim_bookkeeping(const json_t *obj, void *arg)
{
	json_t *meta = json_object_get(obj, "metadata"), *out, *new_meta;
	json_t *annotations = json_object_get(meta, "annotations"), *new_annotations = NULL;
	bool applied = json_object_get(annotations, LAST_APPLIED) != NULL;

	(void)arg;
	if (!json_object_get(meta, "managedFields") && !applied)
		return json_incref((json_t *)obj);
	/* Shallow copies: everything but the changed objects is shared. */
	out = json_copy((json_t *)obj);
	new_meta = json_copy(meta);
	if (!out || !new_meta)
		goto fail;
	json_object_del(new_meta, "managedFields");
	if (applied) {
		new_annotations = json_copy(annotations);
		if (!new_annotations || json_object_del(new_annotations, LAST_APPLIED))
			goto fail;
		if (!json_object_size(new_annotations)) {
			json_decref(new_annotations);
			new_annotations = NULL;
			json_object_del(new_meta, "annotations");
		} else {
			/* Handed on, or freed, either way. */
			int err = json_object_set_new_nocheck(new_meta, "annotations",
							      new_annotations);

			new_annotations = NULL;
			if (err)
				goto fail;
		}
	}
	return with_metadata(out, new_meta);
fail:
	json_decref(new_annotations);
	json_decref(new_meta);
	json_decref(out);
	return NULL;
}

json_t *store_trim_metadata(const json_t *obj, void *arg)
{
	static const char *const keep[] = { "name", "namespace", "uid", "resourceVersion",
					    "labels", "ownerReferences", "deletionTimestamp",
					    NULL };
	const json_t *meta = json_object_get(obj, "metadata");
	json_t *out = json_object(), *new_meta = json_object();

	(void)arg;
	if (!out || !new_meta)
		goto fail;
	for (size_t i = 0; keep[i]; i++) {
		json_t *v = json_object_get(meta, keep[i]);

		/* Shared with obj, not copied: the store packs it at once. */
		if (v && json_object_set_nocheck(new_meta, keep[i], v))
			goto fail;
	}
	return with_metadata(out, new_meta);
fail:
	json_decref(new_meta);
	json_decref(out);
	return NULL;
}
