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

/*
 * The time "2026-12-01T13:11:33.123456789Z " leading line[0..len) (RFC
 * 3339 in UTC, 0 to 9 fraction digits, as the kubelet writes it) as
 * nanoseconds since the epoch, and where the text after it starts. 0 or
 * CADRE_EPARSE.
 */
int cli_log_time(const char *line, size_t len, int64_t *ns, size_t *text_at);

/*
 * The ranks' logs merged in time order with bounded memory: each rank's
 * bytes arrive (from its own stream thread) into a queue of its own of
 * queue_cap bytes, and the merge prints, while they come, the earliest of
 * the lines at the queues' heads as "RANK: text" (with --timestamps
 * "RANK: TIME text"): lines of equal time in rank order, a rank's own lines
 * always in their order, a line without a time taking its predecessor's. A
 * line longer than a queue is printed as it arrives. A producer waits while
 * its queue is full, so memory is n * queue_cap whatever the logs' size.
 */
struct cli_log_merge;

/*
 * A merge of n ranks (ranks[i] labels queue i), printing to out. NULL when
 * out of memory.
 */
struct cli_log_merge *cli_log_merge_new(size_t n, const int *ranks, size_t queue_cap,
					bool timestamps, FILE *out);

/*
 * Queue i's next bytes; waits while the queue is full. Thread-safe (one
 * producer per queue). 0, or CADRE_ECANCELED when the merge was stopped.
 */
int cli_log_merge_push(struct cli_log_merge *m, size_t i, const char *data, size_t len);

/* Queue i has all its bytes (a line left without its newline gets one). Thread-safe. */
void cli_log_merge_end(struct cli_log_merge *m, size_t i);

/* Print until every queue has ended and been printed. 0 or CADRE_EIO (out failed). */
int cli_log_merge_run(struct cli_log_merge *m);

/* Make every push return CADRE_ECANCELED (the printing failed, or Ctrl-C). Thread-safe. */
void cli_log_merge_stop(struct cli_log_merge *m);

/* Free; no producer may be pushing. NULL is a no-op. */
void cli_log_merge_free(struct cli_log_merge *m);

/*
 * A followed rank's log, line by line, so that a stream that ends while its
 * container still runs can be opened again where it stopped: the stream is
 * read with timestamps=true, each line goes to the prefixer (which holds it
 * until its newline) without its time, and the greatest time of the lines
 * ended is kept (a log's times need not rise: a line written later may carry
 * an earlier time). The next stream asks for sinceTime, that time's second
 * (all the API takes), and the lines it sends again are dropped: those
 * before the time, and as many of the lines of exactly that time as were
 * printed.
 */
#define CLI_LOG_HEAD_MAX 40  /* "2026-12-01T13:11:33.123456789Z " and room */
struct cli_log_resume {
	enum { LOG_AT_HEAD, LOG_PASSING, LOG_DROPPING } state;
	bool keep_time;    /* --timestamps: the time goes to the prefixer with the text */
	char head[CLI_LOG_HEAD_MAX];  /* a line's start, until its time is read */
	size_t head_len;
	bool timed;        /* the passing line has a time: line_ns */
	int64_t line_ns;
	int64_t last_ns;   /* the greatest time of the lines printed */
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
