#include <criterion/criterion.h>
#include <string.h>

#include "base/err.h"
#include "kube/status.h"

Test(status, maps_every_http_status_the_api_server_uses)
{
	static const struct { long http; const char *reason; bool retry_after; int code; } cases[] = {
		{ 200, NULL, false, 0 },
		{ 201, NULL, false, 0 },
		{ 204, NULL, false, 0 },
		{ 400, "BadRequest", false, CADRE_EINVAL },
		{ 401, "Unauthorized", false, CADRE_EUNAUTHORIZED },
		{ 403, "Forbidden", false, CADRE_EFORBIDDEN },
		{ 404, "NotFound", false, CADRE_ENOTFOUND },
		{ 405, "MethodNotAllowed", false, CADRE_EHTTP },
		{ 408, "Timeout", false, CADRE_ETIMEDOUT },
		{ 409, "AlreadyExists", false, CADRE_EEXIST },
		{ 409, "Conflict", false, CADRE_ECONFLICT },
		{ 409, NULL, false, CADRE_ECONFLICT },
		{ 410, "Expired", false, CADRE_EGONE },
		{ 413, "RequestEntityTooLarge", false, CADRE_ETOOBIG },
		{ 422, "Invalid", false, CADRE_EREJECTED },
		{ 429, "TooManyRequests", true, CADRE_ETOOMANY },
		{ 429, "TooManyRequests", false, CADRE_ETOOMANY },
		{ 500, "InternalError", false, CADRE_ESERVER },
		{ 502, NULL, false, CADRE_ESERVER },
		{ 503, "ServiceUnavailable", false, CADRE_ESERVER },
		{ 503, "ServiceUnavailable", true, CADRE_EAGAIN },
		{ 504, "Timeout", false, CADRE_ESERVER },
		{ 302, NULL, false, CADRE_EHTTP },
		{ 418, NULL, false, CADRE_EHTTP },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(kube_status_code(cases[i].http, cases[i].reason,
					      cases[i].retry_after),
			     cases[i].code, "HTTP %ld %s: got %d, want %d",
			     cases[i].http, cases[i].reason ? cases[i].reason : "",
			     kube_status_code(cases[i].http, cases[i].reason,
					      cases[i].retry_after),
			     cases[i].code);
}

Test(status, a_namespace_being_deleted_is_told_apart_from_a_refusal_by_its_cause)
{
	/* As the API server's NamespaceLifecycle admission answers a create. */
	static const char terminating[] =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
		"\"message\":\"pods \\\"llama-0\\\" is forbidden: unable to create new content in "
		"namespace ml because it is being terminated\",\"reason\":\"Forbidden\","
		"\"details\":{\"name\":\"llama-0\",\"kind\":\"pods\",\"causes\":[{\"reason\":"
		"\"NamespaceTerminating\",\"message\":\"namespace ml is being terminated\","
		"\"field\":\"metadata.namespace\"}]},\"code\":403}";
	static const char rbac[] =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
		"\"message\":\"pods is forbidden: User \\\"x\\\" cannot create resource\","
		"\"reason\":\"Forbidden\",\"details\":{\"kind\":\"pods\",\"causes\":[{\"reason\":"
		"\"FieldValueForbidden\"}]},\"code\":403}";
	struct kube_status st;

	cr_assert_eq(kube_status_from_http(&st, 403, terminating, strlen(terminating), false),
		     CADRE_ETERMINATING);
	cr_assert_eq(st.http_status, 403);
	cr_assert(strstr(st.message, "being terminated"), "%s", st.message);
	cr_assert_eq(kube_status_from_http(&st, 403, rbac, strlen(rbac), false), CADRE_EFORBIDDEN);
	/* The cause counts only in a 403. */
	cr_assert_eq(kube_status_from_http(&st, 422, terminating, strlen(terminating), false),
		     CADRE_EREJECTED);
}

Test(status, already_exists_and_conflict_are_told_apart_by_the_status_body)
{
	static const char exists[] =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
		"\"message\":\"pods \\\"llama-0\\\" already exists\","
		"\"reason\":\"AlreadyExists\",\"details\":{\"name\":\"llama-0\",\"kind\":\"pods\"},"
		"\"code\":409}";
	static const char conflict[] =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
		"\"message\":\"Operation cannot be fulfilled on trainingjobs.cadre.dev \\\"llama\\\": "
		"the object has been modified; please apply your changes to the latest version and try again\","
		"\"reason\":\"Conflict\",\"code\":409}";
	struct kube_status st;

	cr_assert_eq(kube_status_from_http(&st, 409, exists, strlen(exists), false),
		     CADRE_EEXIST);
	cr_assert_eq(st.code, CADRE_EEXIST);
	cr_assert_eq(st.http_status, 409);
	cr_assert_str_eq(st.reason, "AlreadyExists");
	cr_assert_str_eq(st.message, "pods \"llama-0\" already exists");

	cr_assert_eq(kube_status_from_http(&st, 409, conflict, strlen(conflict), false),
		     CADRE_ECONFLICT);
	cr_assert_str_eq(st.reason, "Conflict");
	cr_assert(strstr(st.message, "the object has been modified"));
}

Test(status, success_clears_previous_error)
{
	struct kube_status st;

	kube_status_from_http(&st, 404, NULL, 0, false);
	cr_assert_eq(kube_status_from_http(&st, 200, "{\"kind\":\"Pod\"}", 14, false), 0);
	cr_assert_eq(st.code, 0);
	cr_assert_str_eq(st.reason, "");
	cr_assert_str_eq(st.message, "");
}

Test(status, a_body_that_is_not_a_status_becomes_the_message)
{
	static const char body[] = "upstream connect error\nor disconnect";
	struct kube_status st;

	cr_assert_eq(kube_status_from_http(&st, 502, body, strlen(body), false),
		     CADRE_ESERVER);
	cr_assert_str_eq(st.reason, "");
	cr_assert_str_eq(st.message, "upstream connect error or disconnect");
}

Test(status, no_body_still_gives_a_message)
{
	struct kube_status st;

	cr_assert_eq(kube_status_from_http(&st, 404, NULL, 0, false), CADRE_ENOTFOUND);
	cr_assert(strstr(st.message, "404"), "message: %s", st.message);
}

Test(status, a_long_message_is_cut_not_overflowed)
{
	char body[2048];
	struct kube_status st;
	int n;

	n = snprintf(body, sizeof(body), "{\"kind\":\"Status\",\"reason\":\"%0100d\",\"message\":\"%01500d\"}", 7, 9);
	cr_assert_eq(kube_status_from_http(&st, 422, body, (size_t)n, false), CADRE_EREJECTED);
	cr_assert_eq(strlen(st.reason), sizeof(st.reason) - 1);
	cr_assert_eq(strlen(st.message), sizeof(st.message) - 1);
}

Test(status, a_watch_error_event_maps_by_its_code)
{
	json_t *gone = json_pack("{s:s, s:s, s:s, s:s, s:i}", "kind", "Status",
				 "status", "Failure", "reason", "Expired",
				 "message", "too old resource version: 1 (482)", "code", 410);
	json_t *odd = json_pack("{s:s, s:s}", "kind", "Status", "message", "no code");
	struct kube_status st;

	cr_assert_eq(kube_status_from_object(&st, gone), CADRE_EGONE);
	cr_assert_eq(st.http_status, 410);
	cr_assert_str_eq(st.reason, "Expired");
	cr_assert_str_eq(st.message, "too old resource version: 1 (482)");
	cr_assert_eq(kube_status_from_object(&st, odd), CADRE_ESERVER);
	cr_assert_str_eq(st.message, "no code");
	json_decref(gone);
	json_decref(odd);
}

Test(status, set_records_local_errors_and_tolerates_null)
{
	struct kube_status st;

	kube_status_from_http(&st, 409, "{\"kind\":\"Status\",\"reason\":\"Conflict\"}", 37, false);
	cr_assert_eq(kube_status_set(&st, CADRE_EIO, "connect to %s: refused", "10.0.0.1"),
		     CADRE_EIO);
	cr_assert_eq(st.code, CADRE_EIO);
	cr_assert_eq(st.http_status, 0);
	cr_assert_str_eq(st.reason, "");
	cr_assert_str_eq(st.message, "connect to 10.0.0.1: refused");
	cr_assert_eq(kube_status_set(NULL, CADRE_ENOMEM, "x"), CADRE_ENOMEM);
}
