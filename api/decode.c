#include "api/decode.h"

#include "api/meta.h"
#include "api/quantity.h"
#include "base/err.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void decode_init(struct decoder *d, struct field_errors *errs)
{
	d->errs = errs;
	d->failed = false;
	d->err = 0;
}

int decode_finish(const struct decoder *d)
{
	if (d->err)
		return d->err;
	return d->failed ? CADRE_EINVAL : 0;
}

void decode_merge(struct decoder *d, int err)
{
	if (err == CADRE_EINVAL)
		d->failed = true;
	else if (err && !d->err)
		d->err = err;
}

void decode_nomem(struct decoder *d)
{
	if (!d->err)
		d->err = CADRE_ENOMEM;
}

void decode_fail(struct decoder *d, const char *path, const char *fmt, ...)
{
	char message[FIELD_ERROR_MESSAGE_MAX + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	d->failed = true;
	if (field_errors_add(d->errs, path, "%s", message))
		decode_nomem(d);
}

static bool is_plain_key(const char *key)
{
	if (!(*key == '_' || (*key >= 'A' && *key <= 'Z') || (*key >= 'a' && *key <= 'z')))
		return false;
	for (const char *p = key + 1; *p; p++)
		if (!(*p == '_' || *p == '-' || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

void decode_path(char *out, size_t size, const char *base, const char *key)
{
	if (size && is_plain_key(key))
		snprintf(out, size, "%s%s%s", base, *base ? "." : "", key);
	else
		decode_path_quoted(out, size, base, key);
}

void decode_path_quoted(char *out, size_t size, const char *base, const char *key)
{
	const char *p;
	size_t n;

	if (size < 16) {
		if (size)
			out[0] = '\0';
		return;
	}
	n = (size_t)snprintf(out, size, "%s[\"", base);
	if (n > size - 12)
		n = size - 12;
	p = key;
	for (; *p && n + 12 < size; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"' || c == '\\')
			n += (size_t)snprintf(out + n, size - n, "\\%c", c);
		else if (c < 0x20)
			n += (size_t)snprintf(out + n, size - n, "\\u%04x", c);
		else
			out[n++] = (char)c;
	}
	/*
	 * Cut short: step back to the start of a UTF-8 sequence, so the path
	 * stays valid UTF-8 (jansson refuses anything else in a status
	 * message). Bytes >= 0x80 were copied one for one, so p and n move
	 * together.
	 */
	while (*p && ((unsigned char)*p & 0xC0) == 0x80) {
		p--;
		n--;
	}
	memcpy(out + n, "\"]", 3);
}

void decode_path_index(char *out, size_t size, const char *base, size_t i)
{
	snprintf(out, size, "%s[%zu]", base, i);
}

static bool is_set(const json_t *v)
{
	return v && !json_is_null(v);
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "a value";
}

int api_strset(char **slot, const char *value)
{
	char *copy = NULL;

	if (value) {
		copy = strdup(value);
		if (!copy)
			return CADRE_ENOMEM;
	}
	free(*slot);
	*slot = copy;
	return 0;
}

bool decode_as_string(struct decoder *d, const json_t *v, const char *path, char **out)
{
	const char *s;

	if (!is_set(v))
		return false;
	if (!json_is_string(v)) {
		decode_fail(d, path, "must be a string, not %s", type_name(v));
		return false;
	}
	s = json_string_value(v);
	/* A NUL inside would silently cut the value everywhere it is used. */
	if (strlen(s) != json_string_length(v)) {
		decode_fail(d, path, "must not contain a NUL character");
		return false;
	}
	if (api_strset(out, s)) {
		decode_nomem(d);
		return false;
	}
	return true;
}

bool decode_as_int64(struct decoder *d, const json_t *v, const char *path,
		     int64_t min, int64_t max, int64_t *out)
{
	int64_t n;

	if (!is_set(v))
		return false;
	if (json_is_integer(v)) {
		n = (int64_t)json_integer_value(v);
	} else if (json_is_real(v)) {
		/*
		 * YAML front ends and JSON_DECODE_INT_AS_REAL give 2.0 for 2;
		 * accept a real that is exactly an integer in range. The bounds
		 * are 2^63 written as doubles, since INT64_MAX is not one.
		 */
		double x = json_real_value(v);

		if (!isfinite(x) || x != floor(x) || x < -9223372036854775808.0 ||
		    x >= 9223372036854775808.0) {
			decode_fail(d, path, "must be an integer");
			return false;
		}
		n = (int64_t)x;
	} else {
		decode_fail(d, path, "must be an integer, not %s", type_name(v));
		return false;
	}
	if (n < min || n > max) {
		decode_fail(d, path, "must be between %lld and %lld",
			    (long long)min, (long long)max);
		return false;
	}
	*out = n;
	return true;
}

bool decode_as_bool(struct decoder *d, const json_t *v, const char *path, bool *out)
{
	if (!is_set(v))
		return false;
	if (!json_is_boolean(v)) {
		decode_fail(d, path, "must be a boolean, not %s", type_name(v));
		return false;
	}
	*out = json_is_true(v);
	return true;
}

bool decode_as_time(struct decoder *d, const json_t *v, const char *path, int64_t *out)
{
	int64_t t;

	if (!is_set(v))
		return false;
	if (!json_is_string(v)) {
		decode_fail(d, path, "must be an RFC 3339 time string, not %s", type_name(v));
		return false;
	}
	if (strlen(json_string_value(v)) != json_string_length(v) ||
	    api_time_parse(json_string_value(v), &t)) {
		decode_fail(d, path, "must be an RFC 3339 time like 2026-11-30T01:02:03Z");
		return false;
	}
	*out = t;
	return true;
}

bool decode_as_object(struct decoder *d, const json_t *v, const char *path)
{
	if (!is_set(v))
		return false;
	if (!json_is_object(v)) {
		decode_fail(d, path, "must be an object, not %s", type_name(v));
		return false;
	}
	return true;
}

bool decode_as_array(struct decoder *d, const json_t *v, const char *path)
{
	if (!is_set(v))
		return false;
	if (!json_is_array(v)) {
		decode_fail(d, path, "must be an array, not %s", type_name(v));
		return false;
	}
	return true;
}

static const json_t *member(const json_t *obj, const char *key)
{
	return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

bool decode_string(struct decoder *d, const json_t *obj, const char *base,
		   const char *key, char **out)
{
	char path[DECODE_PATH_MAX];

	decode_path(path, sizeof(path), base, key);
	return decode_as_string(d, member(obj, key), path, out);
}

bool decode_int32(struct decoder *d, const json_t *obj, const char *base,
		  const char *key, int32_t *out, bool *set)
{
	char path[DECODE_PATH_MAX];
	int64_t n;

	decode_path(path, sizeof(path), base, key);
	if (!decode_as_int64(d, member(obj, key), path, INT32_MIN, INT32_MAX, &n))
		return false;
	*out = (int32_t)n;
	if (set)
		*set = true;
	return true;
}

bool decode_int64(struct decoder *d, const json_t *obj, const char *base,
		  const char *key, int64_t *out, bool *set)
{
	char path[DECODE_PATH_MAX];

	decode_path(path, sizeof(path), base, key);
	if (!decode_as_int64(d, member(obj, key), path, INT64_MIN, INT64_MAX, out))
		return false;
	if (set)
		*set = true;
	return true;
}

bool decode_bool(struct decoder *d, const json_t *obj, const char *base,
		 const char *key, bool *out)
{
	char path[DECODE_PATH_MAX];

	decode_path(path, sizeof(path), base, key);
	return decode_as_bool(d, member(obj, key), path, out);
}

bool decode_time(struct decoder *d, const json_t *obj, const char *base,
		 const char *key, int64_t *out)
{
	char path[DECODE_PATH_MAX];

	decode_path(path, sizeof(path), base, key);
	return decode_as_time(d, member(obj, key), path, out);
}

const json_t *decode_object(struct decoder *d, const json_t *obj, const char *base,
			    const char *key)
{
	char path[DECODE_PATH_MAX];
	const json_t *v = member(obj, key);

	decode_path(path, sizeof(path), base, key);
	return decode_as_object(d, v, path) ? v : NULL;
}

const json_t *decode_array(struct decoder *d, const json_t *obj, const char *base,
			   const char *key)
{
	char path[DECODE_PATH_MAX];
	const json_t *v = member(obj, key);

	decode_path(path, sizeof(path), base, key);
	return decode_as_array(d, v, path) ? v : NULL;
}

static bool store_copy(struct decoder *d, const json_t *v, json_t **out)
{
	json_t *copy = json_deep_copy(v);

	if (!copy) {
		decode_nomem(d);
		return false;
	}
	json_decref(*out);
	*out = copy;
	return true;
}

bool decode_object_copy(struct decoder *d, const json_t *obj, const char *base,
			const char *key, json_t **out)
{
	const json_t *v = decode_object(d, obj, base, key);

	return v ? store_copy(d, v, out) : false;
}

bool decode_array_copy(struct decoder *d, const json_t *obj, const char *base,
		       const char *key, json_t **out)
{
	const json_t *v = decode_array(d, obj, base, key);

	return v ? store_copy(d, v, out) : false;
}

bool decode_string_map_copy(struct decoder *d, const json_t *obj, const char *base,
			    const char *key, json_t **out)
{
	char path[DECODE_PATH_MAX], item[DECODE_PATH_MAX];
	const json_t *map = decode_object(d, obj, base, key);
	const char *name;
	json_t *value;
	bool ok = true;

	if (!map)
		return false;
	decode_path(path, sizeof(path), base, key);
	json_object_foreach((json_t *)map, name, value) {
		if (json_is_string(value) &&
		    strlen(json_string_value(value)) == json_string_length(value))
			continue;
		decode_path(item, sizeof(item), path, name);
		decode_fail(d, item, json_is_string(value) ?
			    "must not contain a NUL character" : "must be a string");
		ok = false;
	}
	return ok ? store_copy(d, map, out) : false;
}

void decode_only_keys(struct decoder *d, const json_t *obj, const char *base,
		      const char *const allowed[], const char *why)
{
	char path[DECODE_PATH_MAX];
	const char *name;
	json_t *value;

	if (!json_is_object(obj))
		return;
	json_object_foreach((json_t *)obj, name, value) {
		size_t i;

		for (i = 0; allowed[i]; i++)
			if (!strcmp(allowed[i], name))
				break;
		if (allowed[i])
			continue;
		decode_path(path, sizeof(path), base, name);
		decode_fail(d, path, "unknown field%s%s", why ? "; " : "", why ? why : "");
	}
}

void decode_quantity(struct decoder *d, const json_t *obj, const char *base,
		     const char *key, char **raw, bool *has, int64_t *milli)
{
	char path[DECODE_PATH_MAX], text[64];
	const json_t *v = member(obj, key);

	decode_path(path, sizeof(path), base, key);
	if (json_is_integer(v)) {
		snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
		if (api_strset(raw, text))
			decode_nomem(d);
	} else if (json_is_real(v)) {
		/* 15 significant digits: 0.1 prints as 0.1, not 0.10000000000000001. */
		snprintf(text, sizeof(text), "%.15g", json_real_value(v));
		if (api_strset(raw, text))
			decode_nomem(d);
	} else if (v && !json_is_null(v) && !json_is_string(v)) {
		decode_fail(d, path, "must be a quantity like \"32\" or \"256Gi\", not %s",
			    type_name(v));
		return;
	} else {
		decode_as_string(d, v, path, raw);
	}
	if (*raw)
		*has = quantity_parse(*raw, milli) == 0;
}
