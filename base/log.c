#include "base/log.h"
#include "base/buf.h"
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static enum log_level log_threshold = LOG_INFO;
static enum log_format log_fmt = LOG_TEXT;

static const char *const level_names[] = { "debug", "info", "warn", "error" };

void log_setup(enum log_level level, enum log_format format)
{
	log_threshold = level;
	log_fmt = format;
}

int log_parse_level(const char *s, enum log_level *out)
{
	if (!strcmp(s, "debug"))
		*out = LOG_DEBUG;
	else if (!strcmp(s, "info"))
		*out = LOG_INFO;
	else if (!strcmp(s, "warn") || !strcmp(s, "warning"))
		*out = LOG_WARN;
	else if (!strcmp(s, "error"))
		*out = LOG_ERROR;
	else
		return CADRE_EINVAL;
	return 0;
}

int log_parse_format(const char *s, enum log_format *out)
{
	if (!strcmp(s, "text"))
		*out = LOG_TEXT;
	else if (!strcmp(s, "json"))
		*out = LOG_JSON;
	else
		return CADRE_EINVAL;
	return 0;
}

bool log_enabled(enum log_level level)
{
	return level >= log_threshold;
}

/* Append s as the inside of a JSON string. */
static void add_json_escaped(struct buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			buf_addc(b, '\\');
			buf_addc(b, (char)c);
		} else if (c == '\n') {
			buf_adds(b, "\\n");
		} else if (c < 0x20) {
			buf_addf(b, "\\u%04x", c);
		} else {
			buf_addc(b, (char)c);
		}
	}
}

void log_at(enum log_level level, const char *component, const char *fmt, ...)
{
	char stamp[64], msg[4096];
	struct timespec ts;
	struct tm tm;
	struct buf line;
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (long)(ts.tv_nsec / 1000000) % 1000);

	/* Room for the worst escaping (6 bytes a byte), so the line is never cut. */
	buf_init(&line, (sizeof(msg) + strlen(component)) * 6 + 256);
	if (log_fmt == LOG_JSON) {
		buf_addf(&line, "{\"time\":\"%s\",\"level\":\"%s\",\"component\":\"",
			 stamp, level_names[level]);
		add_json_escaped(&line, component);
		buf_adds(&line, "\",\"msg\":\"");
		add_json_escaped(&line, msg);
		buf_adds(&line, "\"}\n");
	} else {
		buf_addf(&line, "%s %-5s %s: %s\n", stamp, level_names[level],
			 component, msg);
	}
	if (buf_error(&line))   /* out of memory: the plain line, unescaped */
		fprintf(stderr, "%s %-5s %s: %s\n", stamp, level_names[level], component, msg);
	else
		fwrite(buf_str(&line), 1, line.len, stderr);
	buf_release(&line);
}
