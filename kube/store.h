/*
 * store.h - the in-memory cache of one resource kind, fed by a reflector.
 *
 * Objects are kept by key, "namespace/name" ("name" when cluster-scoped),
 * after a per-kind trim callback has cut them down to what cadre reads:
 * the cache of every pod in a cluster must stay small (docs/design.md 8 allows
 * 128 MiB for 10k TrainingJobs and 80k pods). Secondary indexes map a value
 * (the node a pod runs on, the job it belongs to) to the objects that have
 * it; an index function says which values an object has, so a new index is
 * one function. Handlers are called for every add, update and delete, and
 * are how reconcilers learn which keys to queue.
 *
 * Representation: each object is kept packed, its trimmed form as compact
 * JSON in one allocation with its key, and decoded again by the readers
 * that return json (store_get, store_by_index, store_list, store_foreach);
 * a decode costs a few microseconds per KiB, so a walk over every object
 * that runs often (an admission decision) reads records instead: a small
 * fixed summary per object (a pod's node, phase and requests) that a
 * per-kind record callback computes once, when the object is stored, and
 * that store_foreach_record and store_index_foreach_record visit without
 * decoding anything.
 *
 * Threads: one writer (the reflector thread) and any number of readers. A
 * read-write lock guards the maps; handlers run on the writer's thread
 * after the lock is released, so a handler may read the store (and must
 * not write it).
 *
 * Ownership: readers get NEW objects of their own (decoded for them; they
 * may change them, nothing else sees it), valid after the lock is dropped
 * and after the object is replaced or deleted. Objects passed in by the
 * writer are borrowed and only read. Records are borrowed for the length
 * of one visit.
 */
#ifndef CADRE_KUBE_STORE_H
#define CADRE_KUBE_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct store;

/* The longest key: a 63-byte namespace, '/', a 253-byte name, NUL. */
#define STORE_KEY_MAX 320

/*
 * Return what the store should keep of obj (borrowed) as a NEW reference:
 * a trimmed copy, or obj itself with json_incref. NULL means out of memory.
 * Runs on the writer's thread without the lock held.
 */
typedef json_t *(*store_trim_fn)(const json_t *obj, void *arg);

/*
 * Append to values (a JSON array) the index values of obj (borrowed; the
 * trimmed object as stored) as JSON strings. Appending nothing leaves obj
 * out of the index. Returns 0 or a negative CADRE_E* code.
 */
typedef int (*store_index_fn)(const json_t *obj, json_t *values, void *arg);

/* The largest record (store_record_fn). */
#define STORE_RECORD_MAX 4096

/*
 * Write a fixed summary of obj (borrowed; the trimmed object as stored)
 * into rec, which has room for size (STORE_RECORD_MAX) bytes, and return
 * its length (0: no record), or a negative CADRE_E* code, which refuses
 * the object. The record is stored as bytes (no pointers into obj; at most
 * max_align_t aligned) and visited by store_foreach_record. Pure: the same
 * object gives the same record. Runs on the writer's thread.
 */
typedef int (*store_record_fn)(const json_t *obj, void *rec, size_t size, void *arg);

/*
 * Callbacks for changes, run on the writer's thread after the store has
 * changed and its lock is released; the objects are borrowed for the call
 * (json_incref to keep one). Any may be NULL. on_update is called only
 * when the stored object changed: its trimmed form differs (a new
 * resourceVersion, or for objects trimmed without one, different
 * content). new_obj of an upsert is the trimmed object itself; the states
 * that were stored (old_obj, on_delete's obj, the objects of a relist) are
 * decoded for the call, and only when some handler takes them. on_delete
 * receives the last stored state, also for objects that vanished while the
 * watch was down.
 */
struct store_handlers {
	void (*on_add)(void *ctx, const char *key, const json_t *obj);
	void (*on_update)(void *ctx, const char *key, const json_t *old_obj,
			  const json_t *new_obj);
	void (*on_delete)(void *ctx, const char *key, const json_t *obj);
	void *ctx;
};

/* At most this many handler sets per store. */
#define STORE_MAX_HANDLERS 8
/* At most this many indexes per store. */
#define STORE_MAX_INDEXES 8

struct store_options {
	const char *kind;       /* for logs ("pods"); copied */
	store_trim_fn trim;     /* NULL keeps objects whole */
	void *trim_arg;
	store_record_fn record; /* NULL: no records (every record is empty) */
	void *record_arg;
};

/* A new empty store; opts may be NULL. NULL when out of memory. */
struct store *store_new(const struct store_options *opts);

/* Free the store and its references. No call may be in progress. */
void store_free(struct store *s);

/*
 * Add a named index (name copied). Call before the store is shared with
 * other threads; objects already stored are indexed now. Returns 0,
 * CADRE_EINVAL (duplicate name, too many), CADRE_ENOMEM or fn's error.
 */
int store_add_index(struct store *s, const char *name, store_index_fn fn,
		    void *arg);

/*
 * Register handlers (copied). Call before the writer starts. Returns 0 or
 * CADRE_EINVAL when STORE_MAX_HANDLERS are already registered.
 */
int store_add_handlers(struct store *s, const struct store_handlers *h);

/*
 * Write the key of obj (metadata.namespace "/" metadata.name, or the name
 * alone without a namespace) into out. Returns 0, or CADRE_EINVAL when obj
 * has no name or the key does not fit.
 */
int store_key(const json_t *obj, char *out, size_t size);

/* --- the writer (the reflector) --- */

/* Store obj (borrowed), trimmed and packed; calls on_add or on_update. */
int store_upsert(struct store *s, const json_t *obj);

/*
 * Remove the object with obj's key (obj borrowed: the watch's last state of
 * it); calls on_delete with the stored state. Removing an absent key is 0.
 */
int store_remove(struct store *s, const json_t *obj);

/*
 * A relist: collect the full list item by item (so the untrimmed list is
 * never held whole), then commit it as the store's whole content in one
 * step under the write lock. The batch keeps only the objects that differ
 * from the stored ones (packed): a relist of an unchanged cluster needs no
 * second copy of it. Commit calls on_add / on_update for what is
 * new or changed and on_delete for every stored object the list lacks.
 * A batch is used by one thread; store_batch_free() (always call it)
 * discards an uncommitted batch.
 */
struct store_batch;
struct store_batch *store_batch_new(struct store *s);
int store_batch_add(struct store_batch *b, const json_t *obj);
int store_batch_commit(struct store_batch *b);
void store_batch_free(struct store_batch *b);

/* --- readers (any thread) --- */

/* *out = NEW reference to the object at key. 0, CADRE_ENOTFOUND, CADRE_ENOMEM. */
int store_get(struct store *s, const char *key, json_t **out);

/* Whether an object is stored at key (nothing is decoded). */
bool store_contains(struct store *s, const char *key);

/*
 * *out = NEW reference to an array of the objects whose index `index` has
 * value (empty when none), in no particular order. 0, CADRE_EINVAL for an
 * unknown index, CADRE_ENOMEM.
 */
int store_by_index(struct store *s, const char *index, const char *value,
		   json_t **out);

/* *out = NEW reference to an array of every stored object (a snapshot). */
int store_list(struct store *s, json_t **out);

/*
 * Call fn for each object under the read lock: a consistent view, each
 * object decoded for its call. fn must not call store writers nor take
 * this store's lock again (store_get on it: deadlock while a writer
 * waits), and should be quick; obj and key are borrowed for the call. A
 * non-zero return stops the walk and is returned (CADRE_ENOMEM when an
 * object cannot be decoded).
 */
typedef int (*store_visit_fn)(void *ctx, const char *key, const json_t *obj);
int store_foreach(struct store *s, store_visit_fn fn, void *ctx);

/*
 * The same over records (store_record_fn) without decoding: rec is len
 * bytes (0 when the record callback wrote none), borrowed for the call.
 * The rules of store_foreach apply.
 */
typedef int (*store_record_visit_fn)(void *ctx, const char *key, const void *rec,
				     size_t len);
int store_foreach_record(struct store *s, store_record_visit_fn fn, void *ctx);

/*
 * Visit the record of the one object at key, without decoding it: fn's
 * return, or CADRE_ENOTFOUND when no object is stored there (fn is not
 * called). The rules of store_foreach apply.
 */
int store_get_record(struct store *s, const char *key, store_record_visit_fn fn, void *ctx);

/*
 * Visit the records of the objects whose index `index` has value, in no
 * particular order. 0 (also when none has), CADRE_EINVAL for an unknown
 * index, or fn's non-zero return.
 */
int store_index_foreach_record(struct store *s, const char *index, const char *value,
			       store_record_visit_fn fn, void *ctx);

/* Objects stored. */
size_t store_len(struct store *s);

/* Bytes of packed JSON stored (for measurements). */
size_t store_packed_bytes(struct store *s);

/*
 * Generic trim: the object without what the API server and kubectl keep
 * about its writes, metadata.managedFields and the annotation
 * kubectl.kubernetes.io/last-applied-configuration (a second copy of the
 * applied object); it shares the rest. No controller reads either, and
 * writes from the cache go to /status, which takes nothing but the status.
 */
json_t *store_trim_bookkeeping(const json_t *obj, void *arg);

/*
 * Trim for a kind whose cache only says that an object exists and whose it
 * is: metadata {name, namespace, uid, resourceVersion, labels,
 * ownerReferences, deletionTimestamp}, nothing else.
 */
json_t *store_trim_metadata(const json_t *obj, void *arg);

#endif
