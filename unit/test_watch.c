#include <criterion/criterion.h>

#include "base/buf.h"
#include "base/err.h"
#include "kube/status.h"
#include "kube/watch.h"

#include <string.h>

/* Every event seen, as "TYPE {sorted compact object}\n". */
struct recorder {
	struct buf log;
	int events;
	json_t *last_error;   /* the last ERROR event's Status */
};

static int record(void *ctx, enum watch_type type, json_t *object)
{
	struct recorder *r = ctx;
	char *dump = json_dumps(object, JSON_SORT_KEYS | JSON_COMPACT);

	buf_addf(&r->log, "%s %s\n", watch_type_name(type), dump);
	free(dump);
	r->events++;
	if (type == WATCH_ERROR) {
		json_decref(r->last_error);
		r->last_error = json_incref(object);
	}
	json_decref(object);
	return 0;
}

static void recorder_init(struct recorder *r)
{
	buf_init(&r->log, 1 << 20);
	r->events = 0;
	r->last_error = NULL;
}

static void recorder_release(struct recorder *r)
{
	buf_release(&r->log);
	json_decref(r->last_error);
}

/*
 * Feed stream cut at the given offsets (ascending, count of them), and
 * return in *errors how many feeds failed and with which first code.
 */
static void feed_split(const char *stream, size_t len, const size_t *cuts, size_t ncuts,
		       size_t max_line, struct recorder *r, int *first_err)
{
	struct watch w;
	size_t start = 0, i;

	watch_init(&w, max_line);
	*first_err = 0;
	for (i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : len;
		int err = watch_feed(&w, stream + start, end - start, record, r);

		if (err && !*first_err)
			*first_err = err;
		start = end;
	}
	watch_release(&w);
}

static const char stream[] =
	"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\","
	"\"resourceVersion\":\"10\"}}}\n"
	"\n"
	"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":"
	"\"11\"},\"note\":\"multi-byte \xc3\xbc\xe2\x82\xac\"}}\r\n"
	"   \n"
	"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}\n"
	"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"13\"}}}\n"
	"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\","
	"\"message\":\"too old resource version: 1 (5)\"}}\n"
	"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"partial\"";

static const char want_log[] =
	"ADDED {\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"10\"}}\n"
	"MODIFIED {\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"11\"},"
	"\"note\":\"multi-byte \xc3\xbc\xe2\x82\xac\"}\n"
	"BOOKMARK {\"metadata\":{\"resourceVersion\":\"12\"}}\n"
	"DELETED {\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"13\"}}\n"
	"ERROR {\"code\":410,\"kind\":\"Status\",\"message\":\"too old resource version: 1 (5)\","
	"\"reason\":\"Expired\"}\n";

Test(watch, frames_events_and_keeps_a_cut_last_line_pending)
{
	struct recorder r;
	struct watch w;
	struct kube_status st;

	recorder_init(&r);
	watch_init(&w, 0);
	cr_assert_eq(watch_feed(&w, stream, strlen(stream), record, &r), 0);
	cr_assert_str_eq(buf_str(&r.log), want_log);
	cr_assert_gt(watch_pending(&w), 0);
	/* The ERROR event carries a Status whose 410 means "relist". */
	cr_assert_eq(kube_status_from_object(&st, r.last_error), CADRE_EGONE);
	watch_release(&w);
	recorder_release(&r);
}

Test(watch, the_same_events_whatever_the_single_split)
{
	size_t len = strlen(stream), cut;

	for (cut = 0; cut <= len; cut++) {
		struct recorder r;
		int err;

		recorder_init(&r);
		feed_split(stream, len, &cut, 1, 0, &r, &err);
		cr_assert_eq(err, 0, "cut at %zu", cut);
		cr_assert_str_eq(buf_str(&r.log), want_log, "cut at %zu", cut);
		recorder_release(&r);
	}
}

/* Small enough to try every pair of cut points. */
static const char small[] =
	"{\"type\":\"ADDED\",\"object\":{\"n\":1}}\r\n"
	"\n"
	"{\"type\":\"BOOKMARK\",\"object\":{\"rv\":\"2\"}}\n"
	"{\"type\":\"DELETED\",\"object\":{}}\n";

Test(watch, the_same_events_whatever_the_pair_of_splits)
{
	static const char want[] = "ADDED {\"n\":1}\nBOOKMARK {\"rv\":\"2\"}\nDELETED {}\n";
	size_t len = strlen(small), cuts[2];

	for (cuts[0] = 0; cuts[0] <= len; cuts[0]++) {
		for (cuts[1] = cuts[0]; cuts[1] <= len; cuts[1]++) {
			struct recorder r;
			int err;

			recorder_init(&r);
			feed_split(small, len, cuts, 2, 0, &r, &err);
			cr_assert_eq(err, 0);
			cr_assert_str_eq(buf_str(&r.log), want, "cuts at %zu, %zu", cuts[0],
					 cuts[1]);
			recorder_release(&r);
		}
	}
}

Test(watch, byte_at_a_time_is_the_same_as_all_at_once)
{
	struct recorder r;
	struct watch w;
	size_t i, len = strlen(stream);

	recorder_init(&r);
	watch_init(&w, 0);
	for (i = 0; i < len; i++)
		cr_assert_eq(watch_feed(&w, stream + i, 1, record, &r), 0);
	cr_assert_str_eq(buf_str(&r.log), want_log);
	watch_release(&w);
	recorder_release(&r);
}

/* A line of 100 bytes against a 64-byte cap, between two good lines. */
static const char over_cap[] =
	"{\"type\":\"ADDED\",\"object\":{\"n\":1}}\n"
	"{\"type\":\"ADDED\",\"object\":{\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}\n"
	"{\"type\":\"ADDED\",\"object\":{\"n\":3}}\n";

Test(watch, a_line_over_the_cap_is_skipped_and_framing_recovers)
{
	size_t len = strlen(over_cap), cut;

	for (cut = 0; cut <= len; cut++) {
		struct recorder r;
		int err;

		recorder_init(&r);
		feed_split(over_cap, len, &cut, 1, 64, &r, &err);
		cr_assert_eq(err, CADRE_ETOOBIG, "cut at %zu", cut);
		cr_assert_str_eq(buf_str(&r.log), "ADDED {\"n\":1}\nADDED {\"n\":3}\n",
				 "cut at %zu", cut);
		recorder_release(&r);
	}
}

Test(watch, the_cap_bounds_what_is_buffered)
{
	struct recorder r;
	struct watch w;
	char chunk[1024];
	int i, err = 0;

	memset(chunk, 'x', sizeof(chunk));
	recorder_init(&r);
	watch_init(&w, 4096);
	/* 1 MiB without a newline: reported once, never held. */
	for (i = 0; i < 1024; i++) {
		int e = watch_feed(&w, chunk, sizeof(chunk), record, &r);

		if (e)
			err = e;
		cr_assert_leq(w.line.cap, 4097);
	}
	cr_assert_eq(err, CADRE_ETOOBIG);
	cr_assert_eq(watch_pending(&w), 0);
	cr_assert_eq(watch_feed(&w, "\n{\"type\":\"DELETED\",\"object\":{}}\n", 33, record, &r), 0);
	cr_assert_str_eq(buf_str(&r.log), "DELETED {}\n");
	watch_release(&w);
	recorder_release(&r);
}

Test(watch, malformed_lines_are_errors_and_the_next_line_still_counts)
{
	static const char *const bad[] = {
		"not json\n",
		"[1,2]\n",
		"{\"type\":\"ADDED\"}\n",
		"{\"type\":\"RENAMED\",\"object\":{}}\n",
		"{\"type\":7,\"object\":{}}\n",
		"{\"type\":\"ADDED\",\"object\":\"str\"}\n",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct recorder r;
		struct watch w;

		recorder_init(&r);
		watch_init(&w, 0);
		cr_assert_eq(watch_feed(&w, bad[i], strlen(bad[i]), record, &r), CADRE_EPARSE,
			     "%s", bad[i]);
		cr_assert_eq(watch_feed(&w, "{\"type\":\"ADDED\",\"object\":{}}\n", 30, record, &r),
			     0);
		cr_assert_eq(r.events, 1);
		watch_release(&w);
		recorder_release(&r);
	}
}

static int stop_after_first(void *ctx, enum watch_type type, json_t *object)
{
	(void)type;
	json_decref(object);
	++*(int *)ctx;
	return CADRE_ECANCELED;
}

Test(watch, a_callback_error_stops_the_feed)
{
	struct watch w;
	int calls = 0;

	watch_init(&w, 0);
	cr_assert_eq(watch_feed(&w, small, strlen(small), stop_after_first, &calls),
		     CADRE_ECANCELED);
	cr_assert_eq(calls, 1);
	watch_release(&w);
}

/* ---- managedFields left out (watch_prune) ---- */

/* text pruned must decode as want does; want NULL: nothing pruned (0). */
static void pruned_as(const char *text, const char *want)
{
	struct buf out;
	json_t *got, *expected;
	int ret;

	buf_init(&out, 1 << 20);
	ret = watch_prune(text, strlen(text), &out);
	if (!want) {
		cr_assert_eq(ret, 0, "%s was pruned to %s", text, buf_str(&out));
		buf_release(&out);
		return;
	}
	cr_assert_eq(ret, 1, "%s was not pruned", text);
	got = json_loadb(out.data, out.len, 0, NULL);
	expected = json_loads(want, 0, NULL);
	cr_assert_not_null(got, "%s pruned to JSON that does not decode: %s", text, buf_str(&out));
	cr_assert_not_null(expected);
	cr_assert(json_equal(got, expected), "%s pruned to %s", text, buf_str(&out));
	json_decref(got);
	json_decref(expected);
	buf_release(&out);
}

Test(watch, managed_fields_leave_an_objects_metadata_wherever_the_member_stands)
{
	/* First, middle, last and only member; spaces and newlines around. */
	pruned_as("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"managedFields\":[{\"a\":1}],"
		  "\"name\":\"p\"}}}",
		  "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\"}}}");
	pruned_as("{\"object\":{\"metadata\":{\"name\":\"p\" , \"managedFields\" : [\"x]}\"] ,"
		  " \"uid\":\"u\"}}}",
		  "{\"object\":{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"}}}");
	pruned_as("{\"object\":{\"metadata\":{\"name\":\"p\",\"managedFields\":null}}}",
		  "{\"object\":{\"metadata\":{\"name\":\"p\"}}}");
	pruned_as("{\"object\":{\"metadata\":{ \"managedFields\" : {\"k\":[1,{\"m\":\"}\"}]} }}}",
		  "{\"object\":{\"metadata\":{}}}");
	/* Every metadata object: a template's, an item's of a list. */
	pruned_as("{\"a\":[{\"metadata\":{\"managedFields\":1}},{\"metadata\":"
		  "{\"managedFields\":\"\\\"\",\"n\":2}}]}",
		  "{\"a\":[{\"metadata\":{}},{\"metadata\":{\"n\":2}}]}");
}

Test(watch, a_managed_fields_member_elsewhere_or_a_string_that_names_one_stays)
{
	/* Not in a metadata object, or only a string's text. */
	pruned_as("{\"spec\":{\"managedFields\":[1]}}", NULL);
	pruned_as("{\"metadata\":{\"note\":\"\\\"managedFields\\\": 1\"}}", NULL);
	pruned_as("{\"metadata\":[{\"managedFields\":1}]}", NULL);
	pruned_as("{\"metadata\":\"x\",\"o\":{\"managedFields\":1}}", NULL);
	/* A key with escapes could be either name: left to the decoder, whole. */
	pruned_as("{\"metadata\":{\"managedFields\":1,\"na\\u006de\":2}}", NULL);
	/* Text it cannot follow is left whole, for the decoder to refuse. */
	pruned_as("{\"metadata\":{\"managedFields\":[1,2}", NULL);
	pruned_as("{\"metadata\":{\"managedFields\" 1}}", NULL);
	pruned_as("{\"metadata\":{\"managedFields\":}}", NULL);
}

/* A watch's events come without managedFields, and the rest of them as sent. */
Test(watch, events_arrive_without_managed_fields)
{
	static const char pod_event[] =
		"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
		"\"managedFields\":[{\"manager\":\"kubelet\",\"fieldsV1\":{\"f:status\":{}}}]},"
		"\"status\":{\"phase\":\"Running\"}}}\n";
	struct recorder r;
	int err;

	recorder_init(&r);
	feed_split(pod_event, strlen(pod_event), NULL, 0, 0, &r, &err);
	cr_assert_eq(err, 0);
	cr_assert_str_eq(buf_str(&r.log), "MODIFIED {\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
			 "\"status\":{\"phase\":\"Running\"}}\n");
	recorder_release(&r);
}
