/*
 * bundle.h - internal to cli/: a directory (or one file) packed into a
 * content-addressed code bundle (docs/code.md, docs/design.md 2.5).
 *
 * A bundle is a gzip-compressed tar archive (pax restricted, libarchive)
 * whose sha256 is its digest. What goes in:
 *   - every regular file, directory and symbolic link under the source,
 *     named relative to it ("train.py", "conf/", "conf/a.yaml"), in byte
 *     order of their names, so that the same tree gives the same bytes;
 *   - each entry's permission bits (st_mode & 07777) and size, and nothing
 *     else of the machine: mtime 0, uid and gid 0, no user or group names,
 *     and a gzip header without a time or a file name;
 *   - a symbolic link as a link, its target as written; nothing it points
 *     at is read, inside the source or out;
 *   - never `.git` (at any level), sockets, FIFOs or device files.
 * What is left out: with a `.cadreignore` at the root, what it excludes
 * (else with a `.skyignore` at the root, what that excludes: SkyPilot's
 * rule, one root file that replaces .gitignore); else what git itself
 * ignores there: nested .gitignore files, .git/info/exclude and
 * core.excludesFile when the source lies in a git work tree, the
 * .gitignore files under the source otherwise; a file git tracks is never
 * left out. The rules are git's own (libgit2's ignore API). The ignore
 * file itself goes in.
 *
 * A source that is a regular file packs as an archive of that one file,
 * named by its base name.
 */
#ifndef CADRE_CLI_BUNDLE_H
#define CADRE_CLI_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The default cap on a bundle's compressed size (--max-upload). */
#define BUNDLE_DEFAULT_MAX_BYTES (32ull << 20)
/*
 * The hard ceiling --max-upload may raise it to: 128 ConfigMaps of 1 MiB,
 * a sixteenth of etcd's default 2 GiB quota for one job's code
 * (docs/code.md).
 */
#define BUNDLE_CEILING_BYTES (128ull << 20)
/* "sha256:" and 64 hex digits. */
#define BUNDLE_DIGEST_LEN 71
/* How many of the largest entries a refusal names. */
#define BUNDLE_LARGEST 3

struct bundle {
	unsigned char *data;      /* the .tar.gz, owned; NULL until packed */
	size_t len;
	char digest[BUNDLE_DIGEST_LEN + 1];  /* "sha256:<64 lowercase hex>" */
	bool file;                /* the source was one regular file */
	uint64_t n_entries;       /* files, directories and links packed */
	uint64_t raw_bytes;       /* their sizes before compression */
};

void bundle_init(struct bundle *b);
void bundle_release(struct bundle *b);

/*
 * Pack src (a directory or a regular file; a path the caller gave, kept as
 * given in messages) into b, refusing an archive whose compressed size
 * passes max_bytes. 0, or a negative CADRE_E* code with one line (no
 * trailing newline) in why[0..why_size), b left empty:
 *   CADRE_ETOOBIG  over max_bytes: "SRC packs to over N MiB compressed
 *                  (the cap is M MiB); largest: A (x MiB), B (...), C;
 *                  leave them out with .cadreignore, put them on a Volume,
 *                  or pass --no-upload" (sizes uncompressed)
 *   CADRE_EIO      a file or directory that cannot be read, named with the
 *                  reason ("cannot read SRC/data/x.bin: Permission denied")
 *   CADRE_EINVAL   src is neither a directory nor a regular file, or an
 *                  ignore file git cannot read
 *   CADRE_ENOMEM
 * Not thread-safe (libgit2 is initialised on first use).
 */
int bundle_pack(const char *src, uint64_t max_bytes, struct bundle *b, char *why,
		size_t why_size);

/* sha256 of data[0..len) as "sha256:<64 hex>" into out (BUNDLE_DIGEST_LEN + 1 bytes). */
void bundle_digest(const unsigned char *data, size_t len, char *out);

#endif
