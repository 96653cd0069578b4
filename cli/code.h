/*
 * code.h - internal to cli/: the user's code sent with a job (docs/code.md):
 * a directory or file packed into a bundle (cli/bundle.h), stored in the
 * job's namespace as the ConfigMaps api/code.h names, with the user's own
 * credentials, and named in spec.code.
 */
#ifndef CADRE_CLI_CODE_H
#define CADRE_CLI_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/kube.h"

struct tj_spec;
struct bundle;

/*
 * --max-upload's text into *out: a whole number of bytes, or with a K, M or
 * G suffix (powers of 1024; "KiB", "MiB", "GiB" and "B" are taken too), at
 * least 1 and at most BUNDLE_CEILING_BYTES. 0, or -1 after one line on err
 * naming cmd and what is wrong.
 */
int cli_code_max(const char *cmd, const char *text, uint64_t *out, FILE *err);

/*
 * Store b in k's namespace unless it is there already: the parts' metadata
 * is listed (one request, no data), and only parts missing are created (a
 * part made meanwhile by another upload counts as made). 0, or the exit
 * code after one line on err.
 */
int cli_code_store(struct cli_kube *k, const struct bundle *b, FILE *err);

/* What to send: a local file or directory and where it goes in the pods. */
struct cli_code_src {
	const char *source;  /* as given; relative to the working directory */
	const char *target;  /* absolute path in the pod */
};

/*
 * Pack each of srcs[0..n) with cap max_bytes, store them (cli_code_store)
 * and append {digest, target} to spec->code, in order. Everything is packed
 * before anything is stored: a refusal (over the cap, an unreadable file)
 * is one line on err naming the source and what to do, and nothing is
 * created. 0 or the exit code.
 */
int cli_code_attach(struct cli_kube *k, const struct cli_code_src *srcs, size_t n,
		    uint64_t max_bytes, struct tj_spec *spec, FILE *err);

/*
 * cadre launch (and launch -c): the task's workdir and the local sources
 * of its file_mounts (r->uploads) attached to the job as cli_code_attach
 * does, unless o->no_upload. max: the cap. 0 or the exit code.
 */
struct convert_result;
struct cli_launch_opts;
int cli_launch_uploads(struct cli_kube *k, const struct cli_launch_opts *o, uint64_t max,
		       struct convert_result *r, FILE *err);

/*
 * What the code bundles of k's namespace hold: the bytes of their data and
 * how many ConfigMaps, from one metadata-only list (cadre sinfo -l's
 * footer). 0, or the list's error with *bytes and *parts 0.
 */
int cli_code_usage(struct cli_kube *k, uint64_t *bytes, size_t *parts);

#endif
