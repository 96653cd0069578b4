/*
 * hostlist.h - Slurm's hostlist expressions: "node[01-02,05]" and back.
 *
 * Scripts read $SLURM_JOB_NODELIST and hand it to `scontrol show hostnames`,
 * Lightning, JAX and submitit parse it themselves, so cadre writes it the way
 * Slurm does (src/common/hostlist.c, hostlist_ranged_string) and reads every
 * form Slurm reads:
 *
 *  - a host's number is its trailing digits only ("gpu-a7" is "gpu-a" 7);
 *    a name that ends in a non-digit is written as it is;
 *  - hosts are kept in the order given: no sorting, no removal of duplicates
 *    ("tux2,tux1,tux2" is "tux[2,1-2]");
 *  - a host joins the range before it only when it has the same prefix, is
 *    the next number, and its zero padding agrees (Slurm's _width_equiv):
 *    "node01,node02,node05" is "node[01-02,05]", "n9,n10" is "n[9-10]",
 *    but "n1,n01" stay two ranges ("n[1,01]");
 *  - ranges of one prefix that follow each other share one bracket; a single
 *    host needs none ("node5").
 *
 * Pure functions; thread-safe.
 */
#ifndef CADRE_API_HOSTLIST_H
#define CADRE_API_HOSTLIST_H

#include <stddef.h>

struct buf;

/* Longest host name accepted or produced (a Kubernetes host name is 63). */
#define HOSTLIST_NAME_MAX 255

/*
 * Numbers of more digits than this are not compressed: the whole name is
 * kept as one host, as Slurm does past MAX_HOST_SUFFIX.
 */
#define HOSTLIST_DIGITS_MAX 9

/* The expanded names, in order. */
struct hostlist {
	char **names;  /* owned array of owned strings */
	size_t len;
	size_t cap;
};

void hostlist_init(struct hostlist *hl);

/* Free every name; the list is empty and may be used again. */
void hostlist_release(struct hostlist *hl);

/*
 * Append the compressed form of names[0..n) to out, in the order given.
 * n == 0 appends nothing. Returns 0; CADRE_EINVAL for a NULL or empty name,
 * a name longer than HOSTLIST_NAME_MAX, or one holding a separator or a
 * bracket (",", " ", tab, newline, "[", "]"), which could not be read back;
 * an error of buf_add (CADRE_ETOOBIG, CADRE_ENOMEM). On error out may hold
 * part of the text.
 */
int hostlist_compress(const char *const *names, size_t n, struct buf *out);

/*
 * Expand expr into out, which this initializes first: hosts separated by
 * ',', space, tab or newline (empty items skipped); each host a literal
 * with any number of bracket groups "[a,b-c,...]", expanded as a cartesian
 * product with the leftmost group varying slowest ("a[1-2]b[3-4]" is
 * a1b3,a1b4,a2b3,a2b4); text after a group is a suffix ("n[1-2].ib").
 * Inside a group, items are "n" or "lo-hi" (lo <= hi, decimal digits); the
 * width of lo fixes the zero padding ("[08-10]" is 08,09,10).
 *
 * Returns 0; CADRE_EPARSE for malformed input (an unmatched or nested
 * bracket, an empty group or item, a non-digit in a range, lo > hi, a
 * number of more than HOSTLIST_DIGITS_MAX digits); CADRE_ETOOBIG when the
 * expression would give more than max_hosts names or a name longer than
 * HOSTLIST_NAME_MAX (checked before anything is allocated for it, so
 * "n[0-999999999]" costs nothing); CADRE_ENOMEM. Release out whatever it
 * returns.
 */
int hostlist_expand(const char *expr, size_t max_hosts, struct hostlist *out);

#endif
