/*
 * log.h - one line per event on stderr, as text or JSON.
 *
 * Thread-safe: each line is written with a single locked write, so lines
 * from different threads never interleave. Callers must never pass a token,
 * key or Secret value; the logger does not know what is secret.
 */
#ifndef CADRE_LOG_H
#define CADRE_LOG_H

#include <stdbool.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };
enum log_format { LOG_TEXT, LOG_JSON };

/* Set the threshold and format; the defaults are LOG_INFO and LOG_TEXT. */
void log_setup(enum log_level level, enum log_format format);

/* Parse "debug", "info", "warn"/"warning", "error" / "text", "json". 0 or CADRE_EINVAL. */
int log_parse_level(const char *s, enum log_level *out);
int log_parse_format(const char *s, enum log_format *out);

bool log_enabled(enum log_level level);

/* Write one line; component names the subsystem ("reflector", "tj"). */
void log_at(enum log_level level, const char *component, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_debug(comp, ...) \
	do { if (log_enabled(LOG_DEBUG)) log_at(LOG_DEBUG, comp, __VA_ARGS__); } while (0)
#define log_info(comp, ...) log_at(LOG_INFO, comp, __VA_ARGS__)
#define log_warn(comp, ...) log_at(LOG_WARN, comp, __VA_ARGS__)
#define log_error(comp, ...) log_at(LOG_ERROR, comp, __VA_ARGS__)

#endif
