/*
 * name.h - the name and path rules of Kubernetes and POSIX shells that
 * validation applies (k8s.io/apimachinery/pkg/util/validation).
 *
 * Pure functions; thread-safe. NULL is never valid.
 */
#ifndef CADRE_API_NAME_H
#define CADRE_API_NAME_H

#include <stdbool.h>

/* RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 bytes (namespaces). */
bool name_is_dns1123_label(const char *s);

/*
 * RFC 1035 label: [a-z]([-a-z0-9]*[a-z0-9])?, at most 63 bytes. Service
 * names must be one, and a TrainingJob's name is its Service's name.
 */
bool name_is_dns1035_label(const char *s);

/* RFC 1123 subdomain: dot-separated 1123 labels, at most 253 bytes (most object names). */
bool name_is_dns1123_subdomain(const char *s);

/* A C identifier, [A-Za-z_][A-Za-z0-9_]*: what a shell can expand as $NAME. */
bool name_is_c_identifier(const char *s);

/*
 * A qualified name as label keys and extended resource names use:
 * [prefix/]name, prefix a DNS subdomain, name at most 63 bytes of
 * [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?.
 */
bool name_is_qualified(const char *s);

/* A label value: empty, or at most 63 bytes of the qualified-name charset. */
bool name_is_label_value(const char *s);

/* A Secret data key: [-._a-zA-Z0-9]+, at most 253 bytes, not "." or "..". */
bool name_is_config_key(const char *s);

/*
 * An absolute path that names a directory plainly: starts with '/', has no
 * "." or ".." component, no empty component (except a trailing '/'), and
 * no NUL or control character. "/" itself is not a mount point.
 */
bool name_is_mount_path(const char *s);

#endif
