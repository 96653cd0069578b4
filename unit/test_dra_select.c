/*
 * The equalities of a DeviceClass's CEL selector that admission reads
 * (api/dra_select.h), and the ones it leaves to
 * kube-scheduler.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "api/dra_select.h"

static int collect(void *ctx, const char *attribute, const char *value, enum dra_literal kind)
{
	char *out = ctx;
	size_t used = strlen(out);

	snprintf(out + used, 512 - used, "%s%s=%s%s", used ? ";" : "",
		 attribute ? attribute : "driver",
		 kind == DRA_LITERAL_INT ? "int:" : kind == DRA_LITERAL_BOOL ? "bool:" : "", value);
	return 0;
}

/* The terms of expr as "driver=X;D/N=V", or "" for none. */
static const char *terms(const char *expr)
{
	static char out[512];

	out[0] = '\0';
	cr_assert_eq(dra_select_terms(expr, collect, out), 0, "%s", expr);
	return out;
}

Test(dra_select, nvidias_classes_are_read_whole)
{
	cr_assert_str_eq(terms("device.driver == 'gpu.nvidia.com' && "
			       "device.attributes['gpu.nvidia.com'].type == 'gpu'"),
			 "driver=gpu.nvidia.com;gpu.nvidia.com/type=gpu");
	cr_assert_str_eq(terms("device.driver=='gpu.nvidia.com'&&"
			       "device.attributes['gpu.nvidia.com'].type=='mig'"),
			 "driver=gpu.nvidia.com;gpu.nvidia.com/type=mig");
	cr_assert_str_eq(terms("device.driver == \"gpu.example.com\""), "driver=gpu.example.com");
}

Test(dra_select, the_spellings_of_an_attribute_and_of_an_equality_are_one)
{
	const char *want = "example.com/model=a100";

	cr_assert_str_eq(terms("device.attributes[\"example.com\"].model == \"a100\""), want);
	cr_assert_str_eq(terms("device.attributes['example.com']['model'] == 'a100'"), want);
	cr_assert_str_eq(terms("'a100' == device.attributes['example.com'].model"), want);
	cr_assert_str_eq(terms("  device . attributes [ 'example.com' ] . model  ==  'a100' "),
			 want);
	cr_assert_str_eq(terms("(device.attributes['example.com'].model == 'a100')"), want);
	cr_assert_str_eq(terms("device.attributes['example.com'].model == 'it\\'s'"),
			 "example.com/model=it's");
}

Test(dra_select, parenthesised_conjunctions_are_looked_into)
{
	cr_assert_str_eq(terms("(device.driver == 'd' && (device.attributes['d'].a == 'x')) && "
			       "device.attributes['d'].b == 'y'"),
			 "driver=d;d/a=x;d/b=y");
}

Test(dra_select, integers_and_booleans_are_read_as_such)
{
	cr_assert_str_eq(terms("device.attributes['d'].count == 2"), "d/count=int:2");
	cr_assert_str_eq(terms("-4 == device.attributes['d'].offset"), "d/offset=int:-4");
	cr_assert_str_eq(terms("device.attributes['d'].on == true && device.driver == 'd'"),
			 "d/on=bool:true;driver=d");
	cr_assert_str_eq(terms("device.attributes['d'].on == 'true'"), "d/on=true",
			 "quoted, it is a string");
}

Test(dra_select, conjuncts_it_cannot_read_are_left_out)
{
	cr_assert_str_eq(terms("device.driver == 'd' && "
			       "device.capacity['d'].memory.compareTo(quantity('40Gi')) >= 0"),
			 "driver=d");
	cr_assert_str_eq(terms("device.driver != 'd'"), "");
	cr_assert_str_eq(terms("device.driver == 3"), "", "a driver's name is a string");
	cr_assert_str_eq(terms("device.attributes['d'].count == 2.5"), "");
	cr_assert_str_eq(terms("device.attributes['d'].count == 1234567890123456789"), "",
			 "past what every reader holds exactly");
	cr_assert_str_eq(terms("!(device.driver == 'd')"), "");
	cr_assert_str_eq(terms("device.attributes['d'].model.startsWith('a1') && "
			       "device.driver == 'd'"),
			 "driver=d");
	cr_assert_str_eq(terms("device.drivers == 'd'"), "");
	cr_assert_str_eq(terms("device.driver == 'a' == 'b'"), "");
	cr_assert_str_eq(terms("device.driver == 'a\\n'"), "");
	cr_assert_str_eq(terms("device.driver == '''a'''"), "");
}

Test(dra_select, an_expression_that_is_no_conjunction_gives_nothing)
{
	cr_assert_str_eq(terms("device.driver == 'a' || device.driver == 'b'"), "");
	cr_assert_str_eq(terms("device.driver == 'a' && device.attributes['a'].t == 'x' || true"),
			 "");
	cr_assert_str_eq(terms("device.driver == 'a' ? true : false"), "");
	/* Inside parentheses, an alternative is one conjunct left out. */
	cr_assert_str_eq(terms("device.driver == 'a' && (device.attributes['a'].t == 'x' || "
			       "device.attributes['a'].t == 'y')"),
			 "driver=a");
	/* A "||" in a literal is no alternative. */
	cr_assert_str_eq(terms("device.driver == 'a||b'"), "driver=a||b");
}

Test(dra_select, a_broken_expression_gives_nothing_and_does_not_read_past_it)
{
	cr_assert_str_eq(terms(""), "");
	cr_assert_str_eq(terms("device.driver == 'a"), "");
	cr_assert_str_eq(terms("(device.driver == 'a'"), "");
	cr_assert_str_eq(terms("device.driver == 'a')"), "");
	cr_assert_str_eq(terms("device.attributes['']. == 'a'"), "");
	cr_assert_str_eq(terms("&&&&"), "");
}

/* Every prefix of a real selector: read or left out, never a crash or a read past its end. */
Test(dra_select, every_prefix_of_a_selector_is_read_safely)
{
	const char *expr = "device.driver == \"gpu.nvidia.com\" && "
			   "device.attributes['gpu.nvidia.com']['type'] == 'gpu'";
	char prefix[256];

	for (size_t n = 0; n <= strlen(expr); n++) {
		snprintf(prefix, sizeof(prefix), "%.*s", (int)n, expr);
		terms(prefix);
	}
	cr_assert_str_eq(terms(expr), "driver=gpu.nvidia.com;gpu.nvidia.com/type=gpu");
}

static int stop(void *ctx, const char *attribute, const char *value, enum dra_literal kind)
{
	(void)kind;
	(void)attribute;
	(void)value;
	++*(int *)ctx;
	return 7;
}

Test(dra_select, a_callback_stops_the_walk)
{
	int calls = 0;

	cr_assert_eq(dra_select_terms("device.driver == 'a' && device.driver == 'b'", stop, &calls),
		     7);
	cr_assert_eq(calls, 1);
}
