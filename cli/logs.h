/*
 * logs.h - internal to cli/: the pure parts of `cadre logs` (cli/logs.c):
 * reading the time pods/log?timestamps=true puts before each line, and
 * merging the ranks' logs in time order.
 */
#ifndef CADRE_CLI_LOGS_H
#define CADRE_CLI_LOGS_H

#include <stdint.h>
#include <stdio.h>

#include "cli/ranks.h"

/* One rank's log text (owned by whoever filled it) and how far it is printed. */
struct cli_log_source {
	int rank;
	const char *text;
	size_t len;
	size_t at;        /* bytes printed */
	int64_t last_ns;  /* the time of its last line printed */
};

/*
 * The time "2026-12-01T13:11:33.123456789Z " leading line[0..len) (RFC
 * 3339 in UTC, 0 to 9 fraction digits, as the kubelet writes it) as
 * nanoseconds since the epoch, and where the text after it starts. 0 or
 * CADRE_EPARSE.
 */
int cli_log_time(const char *line, size_t len, int64_t *ns, size_t *text_at);

/*
 * Print every line of srcs[0..n) to out as "RANK: text", earliest first;
 * lines of equal time in rank order (the order of srcs), a rank's own lines
 * always in their order (a line without a time takes its predecessor's).
 * 0 or CADRE_EIO.
 */
int cli_logs_merge(struct cli_log_source *srcs, size_t n, FILE *out);

#endif
