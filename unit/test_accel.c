#include <criterion/criterion.h>

#include "api/accel.h"
#include "base/buf.h"
#include "base/err.h"

static void assert_accel(const char *text, const char *type, int count)
{
	struct accel a;
	int err = accel_parse(text, &a);

	cr_assert_eq(err, 0, "\"%s\": %d", text, err);
	cr_assert_str_eq(a.type, type, "\"%s\"", text);
	cr_assert_eq(a.count, count, "\"%s\"", text);
}

Test(accel, parses_type_and_count)
{
	assert_accel("H100:8", "H100", 8);
	assert_accel("A100-80GB:4", "A100-80GB", 4);
	assert_accel("tpu-v5e.lite_x:16", "tpu-v5e.lite_x", 16);
	assert_accel("L4:2147483647", "L4", 2147483647);
	assert_accel("H100:10", "H100", 10);
}

Test(accel, count_defaults_to_one_and_case_is_kept)
{
	assert_accel("h100", "h100", 1);
	assert_accel("H100", "H100", 1);
	assert_accel("7", "7", 1);
}

Test(accel, rejects_text_outside_the_crd_pattern)
{
	static const char *const bad[] = {
		"", "H100:0", ":8", "H100:x", "H100:", "H100:08", "H100:-1", "H100:+1",
		"-H100", ".H100", "_H100", " H100", "H100 ", "H100: 8", "H100:8 ",
		"H100:8:1", "H 100", "H100/8", "H100:8x", "Ünicode", "H100:1e3",
		"H100::8",
	};
	struct accel a = { "untouched", 99 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(accel_parse(bad[i], &a), CADRE_EPARSE, "\"%s\"", bad[i]);
	cr_assert_eq(accel_parse(NULL, &a), CADRE_EPARSE);
	cr_assert_str_eq(a.type, "untouched", "a failed parse must not write");
	cr_assert_eq(a.count, 99);
}

Test(accel, rejects_overlong_types_and_counts_past_int)
{
	char type[80];
	struct accel a;

	memset(type, 'A', 63);
	type[63] = '\0';
	cr_assert_eq(accel_parse(type, &a), 0, "63 bytes fit");
	cr_assert_eq(strlen(a.type), 63);
	memset(type, 'A', 64);
	type[64] = '\0';
	cr_assert_eq(accel_parse(type, &a), CADRE_ETOOBIG);
	cr_assert_eq(accel_parse("H100:2147483648", &a), CADRE_ETOOBIG);
	cr_assert_eq(accel_parse("H100:99999999999999999999999", &a), CADRE_ETOOBIG);
	cr_assert_eq(accel_parse("H100:99999999999999999999999x", &a), CADRE_EPARSE);
}

Test(accel, every_prefix_parses_or_fails_cleanly)
{
	const char *text = "A100-80GB:16";
	char prefix[32];

	for (size_t n = 0; n <= strlen(text); n++) {
		struct accel a;
		int err;

		memcpy(prefix, text, n);
		prefix[n] = '\0';
		err = accel_parse(prefix, &a);
		/* Only "" and "A100-80GB:" (a colon with no count) are not accelerators. */
		if (n == 0 || prefix[n - 1] == ':')
			cr_assert_eq(err, CADRE_EPARSE, "\"%s\"", prefix);
		else
			cr_assert_eq(err, 0, "\"%s\"", prefix);
	}
}

Test(accel, formats_back_to_its_text)
{
	struct accel a;
	struct buf out;

	buf_init(&out, 128);
	accel_parse("H100:8", &a);
	cr_assert_eq(accel_format(&a, &out), 0);
	cr_assert_str_eq(buf_str(&out), "H100:8");
	buf_reset(&out);
	accel_parse("L4", &a);
	cr_assert_eq(accel_format(&a, &out), 0);
	cr_assert_str_eq(buf_str(&out), "L4");
	buf_release(&out);
}

Test(accel, matches_node_labels_by_case_insensitive_substring)
{
	cr_assert(accel_matches_label("H100", "NVIDIA-H100-80GB-HBM3"));
	cr_assert(accel_matches_label("h100", "NVIDIA-H100-80GB-HBM3"));
	cr_assert(accel_matches_label("A100-80GB", "NVIDIA-A100-80GB-PCIe"));
	cr_assert(accel_matches_label("NVIDIA-H100-80GB-HBM3", "nvidia-h100-80gb-hbm3"));
	cr_assert_not(accel_matches_label("H100", "NVIDIA-A100-SXM4-40GB"));
	cr_assert_not(accel_matches_label("A100-80GB", "NVIDIA-A100-SXM4-40GB"));
	cr_assert_not(accel_matches_label("H100", "H10"));
	cr_assert_not(accel_matches_label("", "NVIDIA-H100"));
	cr_assert_not(accel_matches_label(NULL, "NVIDIA-H100"));
	cr_assert_not(accel_matches_label("H100", NULL));
	cr_assert_not(accel_matches_label("H100", ""));
}
