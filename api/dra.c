#include "api/dra.h"

#include "api/name.h"
#include "base/buf.h"
#include "base/err.h"

#include <stdio.h>
#include <string.h>

/* Kubernetes' limits on a device attribute's name and its domain (resource/v1 types.go). */
#define ATTRIBUTE_NAME_MAX 32
#define ATTRIBUTE_DOMAIN_MAX 63

static bool name_valid(const char *name)
{
	return strlen(name) <= ATTRIBUTE_NAME_MAX && name_is_c_identifier(name);
}

bool dra_attribute_valid(const char *attr)
{
	const char *slash;
	char domain[ATTRIBUTE_DOMAIN_MAX + 1];

	if (!attr || !*attr)
		return false;
	slash = strchr(attr, '/');
	if (!slash)
		return name_valid(attr);
	if ((size_t)(slash - attr) > ATTRIBUTE_DOMAIN_MAX)
		return false;
	memcpy(domain, attr, (size_t)(slash - attr));
	domain[slash - attr] = '\0';
	return name_is_dns1123_subdomain(domain) && name_valid(slash + 1);
}

static bool type_valid(const char *type)
{
	if (!type || !*type)
		return false;
	for (const char *p = type; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= 'a' && *p <= 'z') || *p == '.' || *p == '_' || *p == '-'))
			return false;
	return true;
}

int dra_type_selector(const char *attribute, const char *type, struct buf *out)
{
	const char *slash = attribute ? strchr(attribute, '/') : NULL;
	char domain[ATTRIBUTE_DOMAIN_MAX + 16], lower[64];
	const char *name = slash ? slash + 1 : attribute;
	size_t i;

	if (!dra_attribute_valid(attribute) || !type_valid(type) || strlen(type) >= sizeof(lower))
		return CADRE_EINVAL;
	for (i = 0; type[i]; i++)
		lower[i] = type[i] >= 'A' && type[i] <= 'Z' ? (char)(type[i] - 'A' + 'a') : type[i];
	lower[i] = '\0';
	/* Both checked above: a domain and a name need no escaping inside '...'. */
	if (slash)
		snprintf(domain, sizeof(domain), "'%.*s'", (int)(slash - attribute), attribute);
	else
		snprintf(domain, sizeof(domain), "device.driver");
	return buf_addf(out, "'%s' in device.attributes[%s] && "
			"device.attributes[%s]['%s'].lowerAscii().contains('%s')",
			name, domain, domain, name, lower);
}

const char *dra_device_attribute(const json_t *attributes, const char *driver,
				 const char *attribute)
{
	const char *slash = attribute ? strchr(attribute, '/') : NULL;
	const json_t *value = NULL;
	size_t dlen = driver ? strlen(driver) : 0;

	if (!json_is_object(attributes) || !attribute)
		return NULL;
	/* An unqualified key is in the driver's domain, so "NAME" and "<driver>/NAME" are one. */
	if (!slash) {
		value = json_object_get(attributes, attribute);
		if (!value && driver) {
			const char *key;
			json_t *v;

			json_object_foreach((json_t *)attributes, key, v)
				if (!strncmp(key, driver, dlen) && key[dlen] == '/' &&
				    !strcmp(key + dlen + 1, attribute)) {
					value = v;
					break;
				}
		}
	} else {
		value = json_object_get(attributes, attribute);
		if (!value && driver && (size_t)(slash - attribute) == dlen &&
		    !strncmp(attribute, driver, dlen))
			value = json_object_get(attributes, slash + 1);
	}
	return json_string_value(json_object_get(value, "string"));
}
