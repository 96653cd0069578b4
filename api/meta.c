#include "api/meta.h"

#include "api/decode.h"
#include "api/fielderr.h"
#include "base/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void meta_init(struct object_meta *meta)
{
	memset(meta, 0, sizeof(*meta));
}

void meta_release(struct object_meta *meta)
{
	free(meta->name);
	free(meta->namespace);
	free(meta->uid);
	free(meta->resource_version);
	json_decref(meta->labels);
	json_decref(meta->annotations);
	for (size_t i = 0; i < meta->n_finalizers; i++)
		free(meta->finalizers[i]);
	free(meta->finalizers);
	meta_init(meta);
}

static void parse_finalizers(struct decoder *d, const json_t *metadata,
			     struct object_meta *meta)
{
	char path[DECODE_PATH_MAX];
	const json_t *list = decode_array(d, metadata, "metadata", "finalizers");
	size_t i;
	json_t *item;

	if (!list || !json_array_size(list))
		return;
	meta->finalizers = calloc(json_array_size(list), sizeof(*meta->finalizers));
	if (!meta->finalizers) {
		decode_nomem(d);
		return;
	}
	json_array_foreach(list, i, item) {
		char *value = NULL;

		decode_path_index(path, sizeof(path), "metadata.finalizers", i);
		if (!json_is_string(item)) {
			decode_fail(d, path, "must be a string");
			continue;
		}
		if (decode_as_string(d, item, path, &value))
			meta->finalizers[meta->n_finalizers++] = value;
	}
}

/* A fresh empty object in *slot when parsing left it NULL. */
static void ensure_object(struct decoder *d, json_t **slot)
{
	if (*slot)
		return;
	*slot = json_object();
	if (!*slot)
		decode_nomem(d);
}

int meta_parse(const json_t *metadata, struct object_meta *meta, struct field_errors *errs)
{
	struct decoder d;

	meta_init(meta);
	decode_init(&d, errs);
	if (!metadata || json_is_null(metadata))
		decode_fail(&d, "metadata", "required");
	else if (decode_as_object(&d, metadata, "metadata")) {
		decode_string(&d, metadata, "metadata", "name", &meta->name);
		decode_string(&d, metadata, "metadata", "namespace", &meta->namespace);
		decode_string(&d, metadata, "metadata", "uid", &meta->uid);
		decode_string(&d, metadata, "metadata", "resourceVersion",
			      &meta->resource_version);
		decode_int64(&d, metadata, "metadata", "generation", &meta->generation, NULL);
		decode_time(&d, metadata, "metadata", "creationTimestamp",
			    &meta->creation_timestamp);
		meta->deleting = decode_time(&d, metadata, "metadata", "deletionTimestamp",
					     &meta->deletion_timestamp);
		decode_string_map_copy(&d, metadata, "metadata", "labels", &meta->labels);
		decode_string_map_copy(&d, metadata, "metadata", "annotations",
				       &meta->annotations);
		parse_finalizers(&d, metadata, meta);
		if (json_is_null(json_object_get(metadata, "name")) ||
		    !json_object_get(metadata, "name"))
			decode_fail(&d, "metadata.name", "required");
	}
	ensure_object(&d, &meta->labels);
	ensure_object(&d, &meta->annotations);
	return decode_finish(&d);
}

const char *meta_label(const struct object_meta *meta, const char *key)
{
	return json_string_value(json_object_get(meta->labels, key));
}

const char *meta_annotation(const struct object_meta *meta, const char *key)
{
	return json_string_value(json_object_get(meta->annotations, key));
}

bool meta_has_finalizer(const struct object_meta *meta, const char *finalizer)
{
	for (size_t i = 0; i < meta->n_finalizers; i++)
		if (!strcmp(meta->finalizers[i], finalizer))
			return true;
	return false;
}

bool meta_owned_by(const json_t *obj, const char *uid)
{
	const json_t *ref;
	size_t i;

	if (!uid || !*uid)
		return false;
	json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"),
			   i, ref) {
		const char *ref_uid = json_string_value(json_object_get(ref, "uid"));

		if (ref_uid && !strcmp(ref_uid, uid))
			return true;
	}
	return false;
}

/*
 * Days since 1970-01-01 of a proleptic Gregorian date, and back: Howard
 * Hinnant's civil calendar algorithms, exact over any int64 range we use
 * and free of the TZ and locale state that timegm() and gmtime() read.
 */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static bool leap_year(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Read exactly n digits at *p into *out and advance; false if they are not digits. */
static bool read_digits(const char **p, int n, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < n; i++) {
		char c = (*p)[i];

		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (unsigned)(c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

int api_time_parse(const char *rfc3339, int64_t *unix_seconds)
{
	static const unsigned month_days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	const char *p = rfc3339;
	unsigned year, month, day, hour, minute, second, off_h = 0, off_m = 0;
	int64_t offset = 0, days;

	if (!p || !read_digits(&p, 4, &year) || *p++ != '-' ||
	    !read_digits(&p, 2, &month) || *p++ != '-' ||
	    !read_digits(&p, 2, &day) || (*p != 'T' && *p != 't'))
		return CADRE_EPARSE;
	p++;
	if (!read_digits(&p, 2, &hour) || *p++ != ':' ||
	    !read_digits(&p, 2, &minute) || *p++ != ':' ||
	    !read_digits(&p, 2, &second))
		return CADRE_EPARSE;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return CADRE_EPARSE;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1;

		if (!read_digits(&p, 2, &off_h) || *p++ != ':' ||
		    !read_digits(&p, 2, &off_m) || off_h > 23 || off_m > 59)
			return CADRE_EPARSE;
		offset = sign * (int64_t)(off_h * 3600 + off_m * 60);
	} else {
		return CADRE_EPARSE;
	}
	if (*p || year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 ||
	    minute > 59 || second > 60)
		return CADRE_EPARSE;
	if (day > month_days[month - 1] + (month == 2 && leap_year(year)))
		return CADRE_EPARSE;
	/* A leap second is read as the last second of its minute. */
	if (second == 60)
		second = 59;
	days = days_from_civil(year, month, day);
	*unix_seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset;
	return 0;
}

/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z. */
#define API_TIME_MIN (-62135596800LL)
#define API_TIME_MAX 253402300799LL

int api_time_format(int64_t unix_seconds, char out[32])
{
	int64_t days, secs, year;
	unsigned month, day;

	out[0] = '\0';
	if (unix_seconds < API_TIME_MIN || unix_seconds > API_TIME_MAX)
		return CADRE_EINVAL;
	days = unix_seconds / 86400;
	secs = unix_seconds % 86400;
	if (secs < 0) {
		secs += 86400;
		days--;
	}
	civil_from_days(days, &year, &month, &day);
	snprintf(out, 32, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ", (long long)year, month,
		 day, (long long)(secs / 3600), (long long)(secs / 60 % 60),
		 (long long)(secs % 60));
	return 0;
}
