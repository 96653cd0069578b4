#include <criterion/criterion.h>

#include "base/err.h"
#include "base/slab.h"
#include "kube/store.h"
#include "api/labels.h"
#include "api/pod_trim.h"

#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static json_t *obj_rv(const char *ns, const char *name, const char *rv)
{
	return json_pack("{s:{s:s,s:s,s:s}}", "metadata", "namespace", ns, "name", name,
			 "resourceVersion", rv);
}

/* Handlers that write down what they saw, one line per call. */
struct seen {
	char log[4096];
};

static void on_add(void *ctx, const char *key, const json_t *obj)
{
	struct seen *s = ctx;
	size_t n = strlen(s->log);

	(void)obj;
	snprintf(s->log + n, sizeof(s->log) - n, "add %s;", key);
}

static void on_update(void *ctx, const char *key, const json_t *old_obj,
		      const json_t *new_obj)
{
	struct seen *s = ctx;
	size_t n = strlen(s->log);
	const char *o = json_string_value(json_object_get(json_object_get(old_obj, "metadata"),
							   "resourceVersion"));
	const char *w = json_string_value(json_object_get(json_object_get(new_obj, "metadata"),
							   "resourceVersion"));

	snprintf(s->log + n, sizeof(s->log) - n, "update %s %s->%s;", key,
		 o ? o : "-", w ? w : "-");
}

static void on_delete(void *ctx, const char *key, const json_t *obj)
{
	struct seen *s = ctx;
	size_t n = strlen(s->log);
	const char *rv = json_string_value(json_object_get(json_object_get(obj, "metadata"),
							    "resourceVersion"));

	snprintf(s->log + n, sizeof(s->log) - n, "delete %s@%s;", key, rv ? rv : "-");
}

static struct store *watched_store(struct seen *seen, store_trim_fn trim)
{
	struct store_options opts = { .kind = "things", .trim = trim };
	struct store_handlers h = { on_add, on_update, on_delete, seen };
	struct store *s = store_new(&opts);

	cr_assert_not_null(s);
	cr_assert_eq(store_add_handlers(s, &h), 0);
	return s;
}

static void upsert(struct store *s, json_t *obj)
{
	cr_assert_eq(store_upsert(s, obj), 0);
	json_decref(obj);
}

Test(store, keys_are_namespace_slash_name_or_the_name_alone)
{
	json_t *pod = obj_rv("ml", "llama-0", "1");
	json_t *node = json_pack("{s:{s:s}}", "metadata", "name", "gpu-7");
	json_t *nameless = json_pack("{s:{}}", "metadata");
	char key[STORE_KEY_MAX];

	cr_assert_eq(store_key(pod, key, sizeof(key)), 0);
	cr_assert_str_eq(key, "ml/llama-0");
	cr_assert_eq(store_key(node, key, sizeof(key)), 0);
	cr_assert_str_eq(key, "gpu-7");
	cr_assert_eq(store_key(nameless, key, sizeof(key)), CADRE_EINVAL);
	cr_assert_eq(store_key(pod, key, 5), CADRE_EINVAL);
	json_decref(pod);
	json_decref(node);
	json_decref(nameless);
}

Test(store, handlers_see_adds_real_updates_and_deletes)
{
	struct seen seen = { "" };
	struct store *s = watched_store(&seen, NULL);
	json_t *gone = obj_rv("ml", "a", "4");
	json_t *got;

	upsert(s, obj_rv("ml", "a", "1"));
	upsert(s, obj_rv("ml", "a", "2"));
	upsert(s, obj_rv("ml", "a", "2"));      /* same version: nothing to say */
	upsert(s, obj_rv("ml", "b", "3"));
	cr_assert_eq(store_len(s), 2);
	cr_assert_eq(store_get(s, "ml/a", &got), 0);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(got, "metadata"),
							   "resourceVersion")), "2");
	cr_assert_eq(store_remove(s, gone), 0);
	/* The reference from get outlives the delete. */
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(got, "metadata"),
							   "name")), "a");
	json_decref(got);
	cr_assert_eq(store_remove(s, gone), 0);  /* already gone: no second delete */
	cr_assert_eq(store_get(s, "ml/a", &got), CADRE_ENOTFOUND);
	cr_assert_null(got);
	cr_assert_str_eq(seen.log,
			 "add ml/a;update ml/a 1->2;add ml/b;delete ml/a@2;");
	json_decref(gone);
	store_free(s);
}

static json_t *pod(const char *ns, const char *name, const char *rv, const char *job,
		   const char *node)
{
	json_t *p = json_pack("{s:{s:s,s:s,s:s,s:{}},s:{s:[]},s:{s:s}}",
			      "metadata", "namespace", ns, "name", name,
			      "resourceVersion", rv, "labels",
			      "spec", "containers", "status", "phase", "Running");

	if (job)
		json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"),
				    LABEL_JOB_NAME, json_string(job));
	if (node)
		json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(node));
	return p;
}

/* The names of the objects in an index bucket, sorted, comma-separated. */
static void names_in(struct store *s, const char *index, const char *value, char *out,
		     size_t size)
{
	json_t *list, *o;
	const char *names[16];
	size_t i, j, n = 0;

	cr_assert_eq(store_by_index(s, index, value, &list), 0);
	json_array_foreach(list, i, o) {
		const json_t *meta = json_object_get(o, "metadata");

		names[n++] = json_string_value(json_object_get(meta ? meta : o, "name"));
	}
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		size_t len = strlen(out);

		snprintf(out + len, size - len, "%s%s", i ? "," : "", names[i]);
	}
	json_decref(list);
}

Test(store, indexes_find_pods_by_job_and_by_node_and_follow_moves)
{
	struct store_options opts = { .kind = "pods", .trim = pod_trim };
	struct store *s = store_new(&opts);
	char names[256];
	json_t *list;

	cr_assert_eq(store_add_index(s, "job", pod_index_job, NULL), 0);
	cr_assert_eq(store_add_index(s, "job", pod_index_job, NULL), CADRE_EINVAL);
	upsert(s, pod("ml", "llama-0", "1", "llama", "gpu-1"));
	upsert(s, pod("ml", "llama-1", "2", "llama", "gpu-2"));
	upsert(s, pod("ml", "other", "3", NULL, "gpu-1"));
	upsert(s, pod("dev", "llama-0", "4", "llama", NULL));
	/* An index added later covers what is already stored. */
	cr_assert_eq(store_add_index(s, "node", pod_index_node, NULL), 0);

	names_in(s, "job", "ml/llama", names, sizeof(names));
	cr_assert_str_eq(names, "llama-0,llama-1");
	names_in(s, "job", "dev/llama", names, sizeof(names));
	cr_assert_str_eq(names, "llama-0");
	names_in(s, "node", "gpu-1", names, sizeof(names));
	cr_assert_str_eq(names, "llama-0,other");

	upsert(s, pod("ml", "llama-0", "5", "llama", "gpu-2"));
	names_in(s, "node", "gpu-1", names, sizeof(names));
	cr_assert_str_eq(names, "other");
	names_in(s, "node", "gpu-2", names, sizeof(names));
	cr_assert_str_eq(names, "llama-0,llama-1");

	list = pod("ml", "llama-1", "6", "llama", "gpu-2");
	cr_assert_eq(store_remove(s, list), 0);
	json_decref(list);
	names_in(s, "node", "gpu-2", names, sizeof(names));
	cr_assert_str_eq(names, "llama-0");
	names_in(s, "job", "ml/llama", names, sizeof(names));
	cr_assert_str_eq(names, "llama-0");
	names_in(s, "node", "gpu-9", names, sizeof(names));
	cr_assert_str_eq(names, "");
	cr_assert_eq(store_by_index(s, "nope", "x", &list), CADRE_EINVAL);
	cr_assert_null(list);
	store_free(s);
}

Test(store, a_relist_replaces_everything_and_deletes_what_vanished)
{
	struct seen seen = { "" };
	struct store *s = watched_store(&seen, NULL);
	struct store_batch *b;
	json_t *o, *all;

	upsert(s, obj_rv("ml", "kept", "1"));
	upsert(s, obj_rv("ml", "changed", "2"));
	upsert(s, obj_rv("ml", "vanished", "3"));
	seen.log[0] = '\0';

	b = store_batch_new(s);
	cr_assert_not_null(b);
	o = obj_rv("ml", "kept", "1");
	cr_assert_eq(store_batch_add(b, o), 0);
	json_decref(o);
	o = obj_rv("ml", "changed", "7");
	cr_assert_eq(store_batch_add(b, o), 0);
	json_decref(o);
	o = obj_rv("ml", "new", "8");
	cr_assert_eq(store_batch_add(b, o), 0);
	json_decref(o);
	/* Nothing is visible before the commit. */
	cr_assert_eq(store_len(s), 3);
	cr_assert_eq(store_batch_commit(b), 0);
	store_batch_free(b);

	cr_assert_str_eq(seen.log, "update ml/changed 2->7;add ml/new;delete ml/vanished@3;");
	cr_assert_eq(store_list(s, &all), 0);
	cr_assert_eq(json_array_size(all), 3);
	json_decref(all);
	cr_assert_eq(store_get(s, "ml/vanished", &o), CADRE_ENOTFOUND);
	store_free(s);
}

Test(store, an_abandoned_batch_changes_nothing)
{
	struct seen seen = { "" };
	struct store *s = watched_store(&seen, NULL);
	struct store_batch *b;
	json_t *o;

	upsert(s, obj_rv("ml", "a", "1"));
	b = store_batch_new(s);
	o = obj_rv("ml", "b", "2");
	store_batch_add(b, o);
	json_decref(o);
	store_batch_free(b);
	cr_assert_eq(store_len(s), 1);
	cr_assert_str_eq(seen.log, "add ml/a;");
	store_free(s);
}

static int count_visit(void *ctx, const char *key, const json_t *obj)
{
	(void)key;
	(void)obj;
	return ++*(int *)ctx == 2 ? 42 : 0;
}

Test(store, foreach_walks_under_the_lock_and_stops_on_request)
{
	struct store *s = store_new(NULL);
	int n = 0;

	upsert(s, obj_rv("a", "1", "1"));
	upsert(s, obj_rv("a", "2", "2"));
	upsert(s, obj_rv("a", "3", "3"));
	cr_assert_eq(store_foreach(s, count_visit, &n), 42);
	cr_assert_eq(n, 2);
	store_free(s);
}

/* Readers run while the writer replaces objects: each get sees a whole object. */
struct reader {
	struct store *s;
	atomic_bool stop;
	atomic_int bad;
};

static void *read_loop(void *arg)
{
	struct reader *r = arg;
	json_t *o;

	while (!atomic_load(&r->stop)) {
		if (store_get(r->s, "ml/hot", &o) == 0) {
			const char *rv = json_string_value(json_object_get(
				json_object_get(o, "metadata"), "resourceVersion"));

			if (!rv)
				atomic_fetch_add(&r->bad, 1);
			json_decref(o);
		}
	}
	return NULL;
}

Test(store, readers_on_other_threads_keep_valid_references)
{
	struct reader r = { .s = store_new(NULL) };
	pthread_t t[3];
	char rv[16];
	int i;

	for (i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, read_loop, &r);
	for (i = 0; i < 2000; i++) {
		snprintf(rv, sizeof(rv), "%d", i);
		upsert(r.s, obj_rv("ml", "hot", rv));
	}
	atomic_store(&r.stop, true);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(atomic_load(&r.bad), 0);
	store_free(r.s);
}

/* --- packed objects and records --- */

Test(store, objects_come_back_as_stored_and_each_reader_gets_its_own_copy)
{
	struct store *s = store_new(NULL);
	json_t *obj = json_pack("{s:{s:s, s:s}, s:{s:i, s:f, s:b, s:n, s:[s, {s:s}], s:s}}",
				"metadata", "name", "a", "namespace", "ml", "spec",
				"big", (json_int_t)9007199254740993LL, "ratio", 0.1, "on", 1,
				"none", "list", "x", "deep", "é\"\\/\n", "empty", "");
	json_t *got, *again;

	cr_assert_not_null(obj);
	cr_assert_eq(store_upsert(s, obj), 0);
	cr_assert_eq(store_get(s, "ml/a", &got), 0);
	cr_assert(json_equal(got, obj));
	/* A reader may change its copy: the store and other readers do not see it. */
	json_object_set_new(json_object_get(got, "spec"), "big", json_integer(1));
	cr_assert_eq(store_get(s, "ml/a", &again), 0);
	cr_assert(json_equal(again, obj));
	cr_assert(got != again);
	json_decref(got);
	json_decref(again);
	json_decref(obj);
	store_free(s);
}

/* The record of a test object: its resourceVersion and name, "rv:name". */
static int rv_record(const json_t *obj, void *rec, size_t size, void *arg)
{
	const json_t *meta = json_object_get(obj, "metadata");
	int n = snprintf(rec, size, "%s:%s",
			 json_string_value(json_object_get(meta, "resourceVersion")),
			 json_string_value(json_object_get(meta, "name")));

	(void)arg;
	return n < 0 || (size_t)n >= size ? CADRE_EINVAL : n + 1;
}

/* Every record of s, sorted, ';'-separated. */
struct records {
	char v[64][64];
	size_t n;
};

static int collect_record(void *ctx, const char *key, const void *rec, size_t len)
{
	struct records *r = ctx;

	(void)key;
	cr_assert_lt(r->n, 64);
	cr_assert_eq(strlen(rec) + 1, len);
	snprintf(r->v[r->n++], sizeof(r->v[0]), "%s", (const char *)rec);
	return 0;
}

static void records_of(struct store *s, const char *index, const char *value, char *out,
		       size_t size)
{
	struct records r = { .n = 0 };

	if (index)
		cr_assert_eq(store_index_foreach_record(s, index, value, collect_record, &r), 0);
	else
		cr_assert_eq(store_foreach_record(s, collect_record, &r), 0);
	qsort(r.v, r.n, sizeof(r.v[0]), (int (*)(const void *, const void *))strcmp);
	out[0] = '\0';
	for (size_t i = 0; i < r.n; i++) {
		size_t len = strlen(out);

		snprintf(out + len, size - len, "%s%s", i ? ";" : "", r.v[i]);
	}
}

/* Index test objects by their namespace. */
static int index_ns(const json_t *obj, json_t *values, void *arg)
{
	(void)arg;
	return json_array_append(values, json_object_get(json_object_get(obj, "metadata"),
							 "namespace")) ? CADRE_ENOMEM : 0;
}

Test(store, records_follow_upserts_removes_and_relists)
{
	struct store_options opts = { .kind = "things", .record = rv_record };
	struct store *s = store_new(&opts);
	struct store_batch *b;
	char out[512];
	json_t *o;

	cr_assert_eq(store_add_index(s, "ns", index_ns, NULL), 0);
	upsert(s, obj_rv("ml", "a", "1"));
	upsert(s, obj_rv("ml", "b", "2"));
	upsert(s, obj_rv("dev", "c", "3"));
	records_of(s, NULL, NULL, out, sizeof(out));
	cr_assert_str_eq(out, "1:a;2:b;3:c");
	upsert(s, obj_rv("ml", "a", "4"));
	records_of(s, "ns", "ml", out, sizeof(out));
	cr_assert_str_eq(out, "2:b;4:a");
	o = obj_rv("ml", "b", "5");
	cr_assert_eq(store_remove(s, o), 0);
	json_decref(o);
	records_of(s, "ns", "ml", out, sizeof(out));
	cr_assert_str_eq(out, "4:a");
	cr_assert(!store_contains(s, "ml/b"));
	cr_assert(store_contains(s, "dev/c"));
	/* One record by its key. */
	{
		struct records one = { .n = 0 };

		cr_assert_eq(store_get_record(s, "ml/a", collect_record, &one), 0);
		cr_assert_eq(one.n, 1);
		cr_assert_str_eq(one.v[0], "4:a");
		cr_assert_eq(store_get_record(s, "ml/b", collect_record, &one), CADRE_ENOTFOUND);
		cr_assert_eq(one.n, 1, "a missing key visited something");
	}

	/* A relist: a kept, c moved to ml and changed, d new; nothing else survives. */
	b = store_batch_new(s);
	o = obj_rv("ml", "a", "4");
	cr_assert_eq(store_batch_add(b, o), 0);
	json_decref(o);
	o = obj_rv("ml", "d", "6");
	cr_assert_eq(store_batch_add(b, o), 0);
	json_decref(o);
	/* Until the commit the records are the old ones. */
	records_of(s, NULL, NULL, out, sizeof(out));
	cr_assert_str_eq(out, "3:c;4:a");
	cr_assert_eq(store_batch_commit(b), 0);
	store_batch_free(b);
	records_of(s, NULL, NULL, out, sizeof(out));
	cr_assert_str_eq(out, "4:a;6:d");
	records_of(s, "ns", "dev", out, sizeof(out));
	cr_assert_str_eq(out, "");
	records_of(s, "ns", "ml", out, sizeof(out));
	cr_assert_str_eq(out, "4:a;6:d");
	cr_assert_eq(store_index_foreach_record(s, "nope", "ml", collect_record, NULL),
		     CADRE_EINVAL);
	store_free(s);
}

static int refuse_record(const json_t *obj, void *rec, size_t size, void *arg)
{
	(void)obj;
	(void)rec;
	(void)size;
	(void)arg;
	return CADRE_EINVAL;
}

Test(store, an_object_whose_record_fails_is_not_stored)
{
	struct store_options opts = { .kind = "things", .record = refuse_record };
	struct store *s = store_new(&opts);
	json_t *o = obj_rv("ml", "a", "1");

	cr_assert_eq(store_upsert(s, o), CADRE_EINVAL);
	cr_assert_eq(store_len(s), 0);
	json_decref(o);
	store_free(s);
}

/* Handlers that keep the states they are given, as compact JSON. */
struct states {
	char old_obj[512], new_obj[512];
};

static void dump_into(char *out, size_t size, const json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);

	snprintf(out, size, "%s", text ? text : "?");
	free(text);
}

static void keep_update(void *ctx, const char *key, const json_t *old_obj,
			const json_t *new_obj)
{
	struct states *st = ctx;

	(void)key;
	dump_into(st->old_obj, sizeof(st->old_obj), old_obj);
	dump_into(st->new_obj, sizeof(st->new_obj), new_obj);
}

static void keep_delete(void *ctx, const char *key, const json_t *obj)
{
	struct states *st = ctx;

	(void)key;
	dump_into(st->old_obj, sizeof(st->old_obj), obj);
	st->new_obj[0] = '\0';
}

Test(store, handlers_see_the_whole_old_and_new_trimmed_states)
{
	struct store_options opts = { .kind = "pods", .trim = pod_trim_summary };
	struct states st = { "", "" };
	struct store_handlers h = { NULL, keep_update, keep_delete, &st };
	struct store *s = store_new(&opts);
	struct store_batch *b;
	json_t *p;

	cr_assert_eq(store_add_handlers(s, &h), 0);
	upsert(s, pod("ml", "web", "1", NULL, "cpu-1"));
	/* A new version with the same summary wakes nobody. */
	upsert(s, pod("ml", "web", "2", NULL, "cpu-1"));
	cr_assert_str_eq(st.old_obj, "");
	upsert(s, pod("ml", "web", "3", NULL, "cpu-2"));
	cr_assert_str_eq(st.old_obj,
			 "{\"name\":\"web\",\"namespace\":\"ml\",\"nodeName\":\"cpu-1\","
			 "\"phase\":\"Running\"}");
	cr_assert_str_eq(st.new_obj,
			 "{\"name\":\"web\",\"namespace\":\"ml\",\"nodeName\":\"cpu-2\","
			 "\"phase\":\"Running\"}");
	/* A relist that lacks it: the delete carries the last stored state. */
	b = store_batch_new(s);
	p = pod("ml", "other", "4", NULL, NULL);
	cr_assert_eq(store_batch_add(b, p), 0);
	json_decref(p);
	cr_assert_eq(store_batch_commit(b), 0);
	store_batch_free(b);
	cr_assert_str_eq(st.old_obj,
			 "{\"name\":\"web\",\"namespace\":\"ml\",\"nodeName\":\"cpu-2\","
			 "\"phase\":\"Running\"}");
	cr_assert_str_eq(st.new_obj, "");
	store_free(s);
}

Test(store, many_objects_survive_growth_removals_and_a_relist)
{
	struct store *s = store_new(NULL);
	struct store_batch *b;
	char name[32], key[40];
	json_t *o;
	int i;

	cr_assert_eq(store_add_index(s, "ns", index_ns, NULL), 0);
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "o-%d", i);
		upsert(s, obj_rv(i % 2 ? "odd" : "even", name, "1"));
	}
	for (i = 0; i < 5000; i += 3) {
		snprintf(name, sizeof(name), "o-%d", i);
		o = obj_rv(i % 2 ? "odd" : "even", name, "1");
		cr_assert_eq(store_remove(s, o), 0);
		json_decref(o);
	}
	cr_assert_eq(store_len(s), 5000 - 1667);
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "%s/o-%d", i % 2 ? "odd" : "even", i);
		cr_assert_eq(store_contains(s, key), i % 3 != 0, "%s", key);
	}
	/* Keep only the odd ones below 1000. */
	b = store_batch_new(s);
	for (i = 1; i < 1000; i += 2) {
		snprintf(name, sizeof(name), "o-%d", i);
		o = obj_rv("odd", name, "1");
		cr_assert_eq(store_batch_add(b, o), 0);
		json_decref(o);
	}
	cr_assert_eq(store_batch_commit(b), 0);
	store_batch_free(b);
	cr_assert_eq(store_len(s), 500);
	cr_assert_eq(store_by_index(s, "ns", "odd", &o), 0);
	cr_assert_eq(json_array_size(o), 500);
	json_decref(o);
	cr_assert_eq(store_by_index(s, "ns", "even", &o), 0);
	cr_assert_eq(json_array_size(o), 0);
	json_decref(o);
	cr_assert(store_contains(s, "odd/o-999"));
	cr_assert(!store_contains(s, "odd/o-1001"));
	store_free(s);
}

/*
 * docs/design.md 8: 10k TrainingJobs and 80k pods in 128 MiB resident, about
 * 1.4 KiB an object. One of cadre's Running pods, trimmed, packed, indexed
 * by job and node and with no record, keeps well under that (a jansson tree
 * of the same trimmed pod kept ~7 KiB). Heap measured with mallinfo2; under
 * sanitizers and valgrind, whose allocators it does not see, it reads 0.
 */

static size_t heap_now(void)
{
	struct mallinfo2 mi = mallinfo2();

	/* The caches' objects are in slabs, apart from malloc (base/slab.h). */
	return mi.uordblks + mi.hblkhd + slab_resident_bytes();
}

Test(store, a_cached_own_pod_costs_under_1_KiB_of_heap)
{
	struct store_options opts = { .kind = "pods", .trim = pod_trim };
	struct store *s = store_new(&opts);
	size_t before, after;
	char name[64], job[32], node[32], ip[32];
	const int n = 2000;

	cr_assert_eq(store_add_index(s, "job", pod_index_job, NULL), 0);
	cr_assert_eq(store_add_index(s, "node", pod_index_node, NULL), 0);
	malloc_trim(0);
	before = heap_now();
	for (int i = 0; i < n; i++) {
		json_t *p;

		snprintf(name, sizeof(name), "llama-pretrain-%d-%d", i / 8, i % 8);
		snprintf(job, sizeof(job), "llama-pretrain-%d", i / 8);
		snprintf(node, sizeof(node), "gpu-node-%d", i % 500);
		snprintf(ip, sizeof(ip), "10.0.%d.%d", i / 250, i % 250);
		p = json_pack(
			"{s:{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:[{s:s}]},"
			" s:{s:s, s:[{s:s, s:s, s:{s:{s:s, s:s, s:s}, s:{s:s}}}]},"
			" s:{s:s, s:s, s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}],"
			" s:[{s:s, s:{s:{s:s}}}]}}",
			"metadata", "name", name, "namespace", "research", "uid",
			"3f2c6a0e-8d1b-4c57-9a4e-1b2d3c4e5f60", "resourceVersion", "123456",
			"creationTimestamp", "2026-11-30T04:00:00Z", "labels", LABEL_JOB_NAME, job,
			"cadre.dev/node-rank", "3", "cadre.dev/restart-attempt", "0",
			"managedFields", "manager", "cadre-controller",
			"spec", "nodeName", node, "containers", "name", "main", "image",
			"nvcr.io/nvidia/pytorch:24.05-py3", "resources", "requests", "cpu", "32",
			"memory", "256Gi", "nvidia.com/gpu", "8", "limits", "nvidia.com/gpu", "8",
			"status", "phase", "Running", "podIP", ip, "conditions", "type",
			"PodScheduled", "status", "True", "lastTransitionTime", "2026-11-30T04:00:01Z",
			"type", "Ready", "status", "True", "lastTransitionTime", "2026-11-30T04:00:05Z",
			"containerStatuses", "name", "main", "state", "running", "startedAt",
			"2026-11-30T04:00:04Z");
		cr_assert_eq(store_upsert(s, p), 0);
		json_decref(p);
	}
	after = heap_now();
	cr_log_info("own pod: %zu bytes cached", (after - before) / (size_t)n);
	cr_assert_lt((after - before) / (size_t)n, 1024, "%zu bytes per pod",
		     (after - before) / (size_t)n);
	store_free(s);
}

/* What kubectl and the API server keep about writes is not cached; the rest is, whole. */
Test(store, the_bookkeeping_trim_drops_managed_fields_and_kubectl_s_last_applied_copy)
{
	json_t *obj = json_pack(
		"{s:{s:s, s:s, s:[{s:s}], s:{s:s, s:s}}, s:{s:i}}", "metadata", "name", "a",
		"namespace", "ns", "managedFields", "manager", "kubectl",
		"annotations", "kubectl.kubernetes.io/last-applied-configuration",
		"{\"spec\":{\"numNodes\":2}}", "team.example/owner", "ml-infra",
		"spec", "numNodes", 2);
	json_t *only = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", "b", "annotations",
				 "kubectl.kubernetes.io/last-applied-configuration", "{}");
	json_t *plain = json_pack("{s:{s:s}}", "metadata", "name", "c");
	json_t *t = store_trim_bookkeeping(obj, NULL), *meta = json_object_get(t, "metadata");

	cr_assert_null(json_object_get(meta, "managedFields"));
	cr_assert_null(json_object_get(json_object_get(meta, "annotations"),
				       "kubectl.kubernetes.io/last-applied-configuration"));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(meta, "annotations"),
							   "team.example/owner")), "ml-infra");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(t, "spec"), "numNodes")),
		     2);
	/* The object trimmed is left as it was. */
	cr_assert_not_null(json_object_get(json_object_get(json_object_get(obj, "metadata"),
							   "annotations"),
					   "kubectl.kubernetes.io/last-applied-configuration"));
	cr_assert_not_null(json_object_get(json_object_get(obj, "metadata"), "managedFields"));
	json_decref(t);
	/* Annotations left empty go. */
	t = store_trim_bookkeeping(only, NULL);
	cr_assert_null(json_object_get(json_object_get(t, "metadata"), "annotations"));
	json_decref(t);
	/* Nothing to drop: the object itself. */
	t = store_trim_bookkeeping(plain, NULL);
	cr_assert_eq(t, plain);
	json_decref(t);
	json_decref(obj);
	json_decref(only);
	json_decref(plain);
}

/* A Service cached for its existence keeps who it is and whose, not its spec or status. */
Test(store, the_metadata_trim_keeps_identity_labels_and_owners_only)
{
	json_t *svc = json_pack(
		"{s:s, s:{s:s, s:s, s:s, s:s, s:{s:s}, s:{s:s}, s:[{s:s, s:s}], s:[{s:s}]},"
		" s:{s:s, s:[{s:i}]}, s:{}}",
		"kind", "Service", "metadata", "name", "llama", "namespace", "research", "uid",
		"u-1", "resourceVersion", "42", "labels", LABEL_JOB_NAME, "llama", "annotations",
		"a", "b", "ownerReferences", "kind", "TrainingJob", "uid", "tj-1", "managedFields",
		"manager", "cadre", "spec", "clusterIP", "None", "ports", "port", 29500, "status");
	json_t *t = store_trim_metadata(svc, NULL), *meta = json_object_get(t, "metadata");
	const char *key;
	json_t *v;

	cr_assert_eq(json_object_size(t), 1, "%zu top-level fields", json_object_size(t));
	json_object_foreach(meta, key, v)
		cr_assert(!strcmp(key, "name") || !strcmp(key, "namespace") || !strcmp(key, "uid") ||
			  !strcmp(key, "resourceVersion") || !strcmp(key, "labels") ||
			  !strcmp(key, "ownerReferences"), "metadata.%s kept", key);
	cr_assert_eq(json_object_size(meta), 6);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(meta, "labels"),
							   LABEL_JOB_NAME)), "llama");
	cr_assert_str_eq(json_string_value(json_object_get(
				 json_array_get(json_object_get(meta, "ownerReferences"), 0), "uid")),
			 "tj-1");
	json_decref(t);
	json_decref(svc);
}
