/*
 * logs.h - internal to cli/: the pure parts of `cadre logs` (cli/logs.c):
 * reading the time pods/log?timestamps=true puts before each line, and
 * merging the ranks' logs in time order.
 */
#ifndef CADRE_CLI_LOGS_H
#define CADRE_CLI_LOGS_H

#include <stdbool.h>
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

/*
 * A followed rank's log, line by line, so that a stream that ends while its
 * container still runs can be opened again where it stopped: the stream is
 * read with timestamps=true, each line goes to the prefixer (which holds it
 * until its newline) without its time, and the time of the last line ended
 * is kept. The next stream asks for sinceTime, that time's second (all the
 * API takes), and the lines it sends again are dropped: those before the
 * time, and as many of the lines of exactly that time as were printed.
 */
#define CLI_LOG_HEAD_MAX 40  /* "2026-12-01T13:11:33.123456789Z " and room */
struct cli_log_resume {
	enum { LOG_AT_HEAD, LOG_PASSING, LOG_DROPPING } state;
	char head[CLI_LOG_HEAD_MAX];  /* a line's start, until its time is read */
	size_t head_len;
	bool timed;        /* the passing line has a time: line_ns */
	int64_t line_ns;
	int64_t last_ns;   /* the time of the last line printed */
	size_t at_last;    /* how many printed lines had exactly that time; 0: none yet */
	bool resuming;     /* a new stream has not yet passed the last line printed */
	size_t again;      /* lines of that time it has sent again */
};

void cli_log_resume_init(struct cli_log_resume *r);

/*
 * Stream bytes in, at any boundaries; each line not printed before goes to
 * pre without its time. 0, CADRE_ENOMEM or CADRE_EIO.
 */
int cli_log_resume_feed(struct cli_log_resume *r, struct cli_prefixer *pre,
			const char *data, size_t len);

/*
 * The stream ended and another is opened: a line it left unfinished is
 * dropped, from pre too (the next stream sends it again, whole). Writes the
 * sinceTime to ask for into since ("2026-12-01T13:11:33Z") and returns true,
 * or false when no line with a time was printed yet (read from the start).
 */
bool cli_log_resume_reopen(struct cli_log_resume *r, struct cli_prefixer *pre, char *since,
			   size_t size);

/* The last stream is done: a line it left unfinished is printed as it is. */
int cli_log_resume_finish(struct cli_log_resume *r, struct cli_prefixer *pre);

#endif
