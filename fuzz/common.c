/*
 * common.c - what the targets share: failing a property, and the
 * properties of a successful conversion.
 */
#include "fuzz/fuzz.h"

#include "api/fielderr.h"
#include "api/trainingjob.h"
#include "api/volume.h"
#include "base/buf.h"
#include "base/utf8.h"
#include "convert/convert.h"
#include "unit/support/oapi.h"
#include "unit/support/ytree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: property broken: %s: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* The YAML of cadre convert read back as kubectl would send it. */
static json_t *yaml_as_json(const struct buf *yaml)
{
	struct ytree *tree = NULL;
	json_t *out;
	int err = ytree_parse(yaml->data, yaml->len, &tree);

	FUZZ_CHECK(!err, "the YAML written does not read back (%d):\n%s", err, buf_str(yaml));
	out = oapi_json_from_yaml(tree);
	ytree_free(tree);
	return out;
}

/* cadre's own decoder and validation accept obj (text, the JSON, is printed if not). */
static void check_decodes(const struct convert_result *r, const json_t *obj, const char *text)
{
	struct field_errors errs;
	struct buf msg;

	field_errors_init(&errs);
	buf_init(&msg, 1 << 16);
	if (r->kind == CONVERT_SKY_VOLUME) {
		struct volume v;

		vol_parse(obj, &v, &errs);
		vol_validate(&v, &errs);
		vol_release(&v);
	} else {
		struct trainingjob tj;

		tj_parse(obj, &tj, &errs);
		tj_validate(&tj, &errs);
		tj_release(&tj);
	}
	field_errors_join(&errs, &msg);
	FUZZ_CHECK(field_errors_count(&errs) == 0, "cadre refuses what it converted: %s\n%s",
		   buf_str(&msg), text);
	buf_release(&msg);
	field_errors_release(&errs);
}

static void check_schema(const struct convert_result *r, const json_t *obj, const char *text)
{
	const struct ytree *schema = oapi_crd_schema(r->kind == CONVERT_SKY_VOLUME ?
		CADRE_SOURCE_DIR "/crd/volumes.cadre.dev.yaml" :
		CADRE_SOURCE_DIR "/crd/trainingjobs.cadre.dev.yaml");
	struct buf errors;

	FUZZ_CHECK(schema, "cannot load the CRDs from %s", CADRE_SOURCE_DIR "/crd");
	buf_init(&errors, 1 << 20);
	FUZZ_CHECK(oapi_validate(schema, obj, &errors) == 0,
		   "the CRD's schema refuses what cadre converted:\n%s%s", buf_str(&errors), text);
	buf_release(&errors);
}

void fuzz_check_converted(const struct convert_result *r)
{
	struct buf yaml;
	json_t *obj = NULL, *read_back;
	char *text;
	int err;

	buf_init(&yaml, (size_t)64 << 20);
	err = convert_to_json(r, &obj);
	FUZZ_CHECK(!err, "a conversion that succeeded has no JSON (%d)", err);
	FUZZ_CHECK((text = json_dumps(obj, JSON_INDENT(2))), "the JSON cannot be written");
	FUZZ_CHECK(utf8_valid(text, strlen(text)), "the JSON is not UTF-8");
	err = convert_emit_yaml(r, &yaml);
	FUZZ_CHECK(!err, "a conversion that succeeded has no YAML (%d):\n%s", err, text);
	FUZZ_CHECK(utf8_valid(yaml.data, yaml.len), "the YAML is not UTF-8");
	read_back = yaml_as_json(&yaml);
	FUZZ_CHECK(json_equal(read_back, obj), "the YAML reads back as other values:\n%s\nvs\n%s",
		   buf_str(&yaml), text);
	check_decodes(r, obj, text);
	check_schema(r, obj, text);
	json_decref(read_back);
	json_decref(obj);
	free(text);
	buf_release(&yaml);
}
