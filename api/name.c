#include "api/name.h"

#include <stddef.h>
#include <string.h>

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* A 1123 label in s[0..len). */
static bool label_span(const char *s, size_t len)
{
	if (len == 0 || len > 63 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[len - 1]))
		return false;
	for (size_t i = 1; i + 1 < len; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

bool name_is_dns1123_label(const char *s)
{
	return s && label_span(s, strlen(s));
}

bool name_is_dns1035_label(const char *s)
{
	return s && s[0] >= 'a' && s[0] <= 'z' && label_span(s, strlen(s));
}

bool name_is_dns1123_subdomain(const char *s)
{
	size_t len, start = 0;

	if (!s)
		return false;
	len = strlen(s);
	if (len == 0 || len > 253)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (!label_span(s + start, i - start))
			return false;
		start = i + 1;
	}
	return true;
}

bool name_is_c_identifier(const char *s)
{
	if (!s || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (const char *p = s + 1; *p; p++)
		if (!is_alnum(*p) && *p != '_')
			return false;
	return true;
}

/* The name part of a qualified name, in s[0..len). */
static bool qualified_name_span(const char *s, size_t len)
{
	if (len == 0 || len > 63 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
		return false;
	for (size_t i = 1; i + 1 < len; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

bool name_is_qualified(const char *s)
{
	const char *slash;
	char prefix[254];
	size_t prefix_len;

	if (!s)
		return false;
	slash = strchr(s, '/');
	if (!slash)
		return qualified_name_span(s, strlen(s));
	prefix_len = (size_t)(slash - s);
	if (prefix_len == 0 || prefix_len >= sizeof(prefix))
		return false;
	memcpy(prefix, s, prefix_len);
	prefix[prefix_len] = '\0';
	return name_is_dns1123_subdomain(prefix) &&
	       qualified_name_span(slash + 1, strlen(slash + 1));
}

bool name_is_label_value(const char *s)
{
	return s && (!*s || qualified_name_span(s, strlen(s)));
}

bool name_is_config_key(const char *s)
{
	size_t len;

	if (!s)
		return false;
	len = strlen(s);
	if (len == 0 || len > 253 || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '.' && s[i] != '_')
			return false;
	return true;
}

bool name_is_mount_path(const char *s)
{
	const char *component;

	if (!s || s[0] != '/' || !s[1])
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	component = s + 1;
	for (;;) {
		const char *end = strchr(component, '/');
		size_t len = end ? (size_t)(end - component) : strlen(component);

		if (len == 0 && end)
			return false;
		if ((len == 1 && component[0] == '.') ||
		    (len == 2 && component[0] == '.' && component[1] == '.'))
			return false;
		if (!end || !end[1])
			return true;
		component = end + 1;
	}
}
