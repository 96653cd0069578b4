/*
 * bundle.c - a directory (or one file) packed into a content-addressed
 * .tar.gz (bundle.h has the contract).
 *
 * Design note. Packing is two passes over the source:
 *   1. a walk that decides what goes in: every name is lstat'ed (fstatat
 *      with AT_SYMLINK_NOFOLLOW, directories opened with O_NOFOLLOW), so no
 *      link is ever followed below the source, and libgit2 is asked whether
 *      git would leave the path out;
 *   2. a sort of the whole list by name and a write with libarchive into a
 *      memory buffer that refuses to grow past the cap, so an oversized
 *      bundle stops packing as soon as it is known to be too big.
 * Sorting the whole list rather than each directory is what makes the order
 * the byte order of the names: "a-b" sorts before "a/" ('-' is below '/').
 * Directories are named with a trailing "/" ("conf/"), which is how the pax
 * writer stores them anyway, so the sort sees the names the archive holds.
 *
 * What makes the bytes a function of the tree alone: mtime 0, uid and gid
 * 0, no user or group names, names stored as raw bytes (hdrcharset=BINARY,
 * else libarchive converts them through the current locale and a C locale
 * writes a different header than a UTF-8 one), and a gzip header without a
 * time (libarchive 3.6 writes no file name when writing to callbacks).
 *
 * Ignore rules, three ways, all git's own matcher (libgit2), never ours:
 *   IGNORE_FILE      a .cadreignore (else .skyignore) at the root: its rules
 *                    alone, added to an in-memory repository whose work tree
 *                    is an empty scratch directory, so no .gitignore is read;
 *   IGNORE_WORKTREE  the source lies in a git work tree: that repository,
 *                    so nested .gitignore files, .git/info/exclude and
 *                    core.excludesFile count, and its index says what is
 *                    tracked (tracked files are never left out);
 *   IGNORE_GITIGNORE otherwise: an in-memory repository whose work tree is
 *                    the source, so the .gitignore files under it count.
 * The in-memory repositories get an empty configuration with core.excludesFile
 * set to "": without one libgit2 reads the user's ~/.config/git/ignore, and
 * the same tree would pack differently on two machines.
 *
 * Paths handed to git_ignore_path_is_ignored name a directory with a
 * trailing "/": without it libgit2 stats the path under its work tree to
 * learn whether it is a directory, which in IGNORE_FILE's empty work tree
 * says "no", and a rule like "build/" would not match the directory build.
 */
#include "cli/bundle.h"

#include "base/buf.h"
#include "base/err.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <git2.h>
#include <git2/sys/repository.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIB (1024.0 * 1024.0)
/* Read size for file contents: large enough that syscalls do not dominate. */
#define CHUNK_BYTES (64 * 1024)
/* An ignore file is a list of patterns; one past this is not one. */
#define IGNORE_FILE_MAX_BYTES (1 << 20)

struct entry {
	char *name;      /* relative to the source; a directory's ends in "/" */
	mode_t mode;     /* st_mode from the walk's lstat */
	uint64_t size;   /* a regular file's size at the walk, else 0 */
	dev_t dev;       /* what the walk saw, to notice a file swapped before it is read */
	ino_t ino;
};

enum ignore_mode { IGNORE_NONE, IGNORE_FILE, IGNORE_WORKTREE, IGNORE_GITIGNORE };

struct ignores {
	enum ignore_mode mode;
	git_repository *repo;
	git_index *index;       /* IGNORE_WORKTREE: what git tracks */
	char *prefix;           /* IGNORE_WORKTREE: the source under the work tree, "" or "a/b/" */
	const char *root_file;  /* IGNORE_FILE: ".cadreignore" or ".skyignore" */
	char *scratch;          /* a temporary directory to remove, or NULL */
};

struct pack {
	const char *src;        /* as the caller gave it, for messages */
	size_t src_len;         /* src without trailing slashes, to join names to */
	bool file;              /* src is one regular file */
	int srcfd;              /* the source directory, or -1 */
	char *why;
	size_t why_size;
	struct entry *entries;
	size_t n, cap;
	struct ignores ign;
};

/* The archive's bytes: a buffer that refuses to grow past max. */
struct sink {
	unsigned char *data;
	size_t len, cap;
	uint64_t max;
	uint64_t reached;       /* the size a refused write would have made */
	bool over, nomem;
};

void bundle_init(struct bundle *b)
{
	memset(b, 0, sizeof(*b));
}

void bundle_release(struct bundle *b)
{
	free(b->data);
	bundle_init(b);
}

void bundle_digest(const unsigned char *data, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	char *p = out;

	/* EVP_Digest fails only without memory; an all-zero digest then matches nothing. */
	if (!EVP_Digest(data ? (const void *)data : "", len, md, &md_len, EVP_sha256(), NULL))
		memset(md, 0, md_len = 32);
	memcpy(p, "sha256:", 7);
	p += 7;
	for (unsigned int i = 0; i < md_len; i++) {
		*p++ = hex[md[i] >> 4];
		*p++ = hex[md[i] & 15];
	}
	*p = '\0';
}

__attribute__((format(printf, 3, 4)))
static int fail(struct pack *p, int err, const char *fmt, ...)
{
	va_list ap;

	if (!p->why || !p->why_size)
		return err;
	va_start(ap, fmt);
	vsnprintf(p->why, p->why_size, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * "cannot read SRC/rel: reason" (CADRE_EIO), rel "" for the source itself
 * (and for a source that is one file), a directory's trailing "/" left off.
 */
static int fail_path(struct pack *p, const char *rel, const char *reason)
{
	size_t n = strlen(rel);

	if (!n || p->file)
		return fail(p, CADRE_EIO, "cannot read %s: %s", p->src, reason);
	if (rel[n - 1] == '/')
		n--;
	return fail(p, CADRE_EIO, "cannot read %.*s/%.*s: %s", (int)p->src_len, p->src, (int)n,
		    rel, reason);
}

static int fail_read(struct pack *p, const char *rel, int errnum)
{
	if (errnum == ENOMEM)
		return fail(p, CADRE_ENOMEM, "out of memory");
	return fail_path(p, rel, strerror(errnum));
}

/* libgit2's last error as CADRE_EINVAL ("SRC: what: git's message"), or CADRE_ENOMEM. */
static int fail_git(struct pack *p, const char *what)
{
	const git_error *ge = git_error_last();

	if (ge && ge->klass == GIT_ERROR_NOMEMORY)
		return fail(p, CADRE_ENOMEM, "out of memory");
	return fail(p, CADRE_EINVAL, "%s: %s: %s", p->src, what,
		    ge && ge->message ? ge->message : "libgit2 failed");
}

/* a + b, and a "/" after them when slash; NULL without memory. */
static char *join(const char *a, const char *b, bool slash)
{
	size_t na = strlen(a), nb = strlen(b);
	char *s = malloc(na + nb + 2);

	if (!s)
		return NULL;
	memcpy(s, a, na);
	memcpy(s + na, b, nb);
	if (slash)
		s[na + nb++] = '/';
	s[na + nb] = '\0';
	return s;
}

static int add_entry(struct pack *p, const char *name, const struct stat *st)
{
	struct entry *e;

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct entry *grown = realloc(p->entries, cap * sizeof(*grown));

		if (!grown)
			return fail(p, CADRE_ENOMEM, "out of memory");
		p->entries = grown;
		p->cap = cap;
	}
	e = &p->entries[p->n];
	if (!(e->name = strdup(name)))
		return fail(p, CADRE_ENOMEM, "out of memory");
	e->mode = st->st_mode;
	e->size = S_ISREG(st->st_mode) ? (uint64_t)st->st_size : 0;
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	p->n++;
	return 0;
}

/* libgit2 stays initialised for the process: bundle.h says so (not thread-safe). */
static int git_ready(struct pack *p)
{
	static bool ready;

	if (!ready && git_libgit2_init() < 0)
		return fail_git(p, "cannot start libgit2");
	ready = true;
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void ignores_release(struct ignores *ign)
{
	git_index_free(ign->index);
	git_repository_free(ign->repo);
	free(ign->prefix);
	if (ign->scratch)
		nftw(ign->scratch, remove_one, 8, FTW_DEPTH | FTW_PHYS);
	free(ign->scratch);
	memset(ign, 0, sizeof(*ign));
}

/*
 * An in-memory repository for IGNORE_FILE and IGNORE_GITIGNORE: work tree
 * workdir, or an empty scratch directory when NULL, and a configuration of
 * its own (the design note says why).
 */
static int scratch_repo(struct pack *p, const char *workdir)
{
	struct ignores *ign = &p->ign;
	const char *tmp = getenv("TMPDIR");
	git_config *cfg = NULL;
	char *cfg_path = NULL, *empty = NULL;
	FILE *f = NULL;
	int err = 0;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (!(ign->scratch = join(tmp, "/cadre-bundle-XXXXXX", false))) {
		err = fail(p, CADRE_ENOMEM, "out of memory");
		goto out;
	}
	if (!mkdtemp(ign->scratch)) {
		err = fail(p, CADRE_EIO, "cannot make a temporary directory in %s: %s", tmp,
			   strerror(errno));
		free(ign->scratch);
		ign->scratch = NULL;
		goto out;
	}
	if (!(cfg_path = join(ign->scratch, "/config", false)) ||
	    !(empty = join(ign->scratch, "/work", false))) {
		err = fail(p, CADRE_ENOMEM, "out of memory");
		goto out;
	}
	/*
	 * core.excludesFile set, to nothing: libgit2 falls back to the user's
	 * ~/.config/git/ignore only when the key is absent.
	 */
	if (!(f = fopen(cfg_path, "we")) || fputs("[core]\n\texcludesFile =\n", f) < 0 ||
	    fclose(f)) {
		err = fail(p, CADRE_EIO, "cannot write %s: %s", cfg_path, strerror(errno));
		f = NULL;
		goto out;
	}
	f = NULL;
	if (!workdir && mkdir(empty, 0700)) {
		err = fail(p, CADRE_EIO, "cannot make %s: %s", empty, strerror(errno));
		goto out;
	}
	if (git_repository_new(&ign->repo) < 0 || git_config_open_ondisk(&cfg, cfg_path) < 0 ||
	    git_repository_set_config(ign->repo, cfg) < 0 ||
	    git_repository_set_workdir(ign->repo, workdir ? workdir : empty, 0) < 0)
		err = fail_git(p, "cannot set up git's ignore rules");
out:
	if (f)
		fclose(f);
	git_config_free(cfg);
	free(cfg_path);
	free(empty);
	return err;
}

/* The root ignore file name's text into text (NUL-terminated, owned), or CADRE_EINVAL. */
static int read_ignore_file(struct pack *p, const char *name, char **text)
{
	struct buf b;
	char chunk[4096];
	ssize_t n;
	int fd, err = 0;

	buf_init(&b, IGNORE_FILE_MAX_BYTES);
	fd = openat(p->srcfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		err = fail(p, CADRE_EINVAL, "cannot read %.*s/%s: %s", (int)p->src_len, p->src,
			   name, strerror(errno));
		goto out;
	}
	while (!err && (n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = fail(p, CADRE_EINVAL, "cannot read %.*s/%s: %s", (int)p->src_len,
				   p->src, name, strerror(errno));
		else if ((err = buf_add(&b, chunk, (size_t)n)) == CADRE_ETOOBIG)
			err = fail(p, CADRE_EINVAL, "%.*s/%s: over 1 MiB, not an ignore file",
				   (int)p->src_len, p->src, name);
		else if (err)
			err = fail(p, err, "out of memory");
	}
	if (!err && !(*text = buf_detach(&b, NULL)))
		err = fail(p, CADRE_ENOMEM, "out of memory");
out:
	if (fd >= 0)
		close(fd);
	buf_release(&b);
	return err;
}

/*
 * The source (resolved: real) relative to the work tree workdir (which ends
 * in "/"), as "" or "a/b/", into ign->prefix: 1, or 0 when the source is not
 * under it, or CADRE_ENOMEM.
 */
static int worktree_prefix(struct pack *p, const char *real, const char *workdir)
{
	size_t nw = strlen(workdir), nr = strlen(real);

	/* real "/r" against workdir "/r/": the source is the work tree. */
	if (nr + 1 == nw && !strncmp(real, workdir, nr) && workdir[nr] == '/')
		p->ign.prefix = strdup("");
	else if (nr > nw && !strncmp(real, workdir, nw))
		p->ign.prefix = join(real + nw, "", true);
	else
		return 0;
	return p->ign.prefix ? 1 : fail(p, CADRE_ENOMEM, "out of memory");
}

/* Choose the ignore rules for the source directory (the design note's three ways). */
static int ignores_open(struct pack *p)
{
	static const char *const root_files[] = { ".cadreignore", ".skyignore" };
	struct ignores *ign = &p->ign;
	struct stat st;
	char *text = NULL, *real = NULL;
	int err, r, under = 0;

	if ((err = git_ready(p)))
		return err;
	for (size_t i = 0; i < sizeof(root_files) / sizeof(*root_files); i++) {
		if (fstatat(p->srcfd, root_files[i], &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno == ENOENT)
				continue;
			err = fail(p, CADRE_EINVAL, "cannot read %.*s/%s: %s", (int)p->src_len,
				   p->src, root_files[i], strerror(errno));
			goto out;
		}
		/* A link would be followed by reading it: bundle.h promises it is not. */
		if (!S_ISREG(st.st_mode)) {
			err = fail(p, CADRE_EINVAL, "%.*s/%s is not a regular file",
				   (int)p->src_len, p->src, root_files[i]);
			goto out;
		}
		if ((err = read_ignore_file(p, root_files[i], &text)) ||
		    (err = scratch_repo(p, NULL)))
			goto out;
		if (git_ignore_add_rule(ign->repo, text) < 0) {
			err = fail_git(p, root_files[i]);
			goto out;
		}
		ign->mode = IGNORE_FILE;
		ign->root_file = root_files[i];
		goto out;
	}

	if (!(real = realpath(p->src, NULL))) {
		err = fail_read(p, "", errno);
		goto out;
	}
	r = git_repository_open_ext(&ign->repo, real, 0, NULL);
	if (r < 0 && r != GIT_ENOTFOUND) {
		/* git refuses it too (a repository owned by another user, say): so do we. */
		err = fail_git(p, "git cannot open the repository it lies in");
		goto out;
	}
	if (!r && !git_repository_is_bare(ign->repo) && git_repository_workdir(ign->repo) &&
	    (under = worktree_prefix(p, real, git_repository_workdir(ign->repo))) < 0) {
		err = under;
		goto out;
	}
	if (under) {
		if (git_repository_index(&ign->index, ign->repo) < 0) {
			err = fail_git(p, "cannot read git's index");
			goto out;
		}
		ign->mode = IGNORE_WORKTREE;
		goto out;
	}
	/* Not in a work tree (or in a bare repository's directory): the .gitignore files under src. */
	git_repository_free(ign->repo);
	ign->repo = NULL;
	if ((err = scratch_repo(p, real)))
		goto out;
	ign->mode = IGNORE_GITIGNORE;
out:
	free(text);
	free(real);
	return err;
}

/*
 * Whether rel (a directory's ends in "/") goes in (*keep) and, for a
 * directory that git ignores but holds tracked files, that only what git
 * tracks goes in below it (*only_tracked). under_ignored: rel lies in such
 * a directory, where git's answer is "ignored" whatever a "!" rule says.
 */
static int judge(struct pack *p, const char *rel, bool under_ignored, bool *keep,
		 bool *only_tracked)
{
	struct ignores *ign = &p->ign;
	bool dir = rel[strlen(rel) - 1] == '/';
	char *path = NULL;
	size_t pos;
	int ignored = 1, err = 0;

	*keep = true;
	*only_tracked = false;
	/* bundle.h: the ignore file itself goes in, even when it names itself. */
	if (ign->mode == IGNORE_FILE && !strcmp(rel, ign->root_file))
		goto out;
	if (!(path = join(ign->prefix ? ign->prefix : "", rel, false))) {
		err = fail(p, CADRE_ENOMEM, "out of memory");
		goto out;
	}
	if (!under_ignored && git_ignore_path_is_ignored(&ignored, ign->repo, path) < 0) {
		err = fail_git(p, "cannot apply git's ignore rules");
		goto out;
	}
	if (!ignored)
		goto out;
	*keep = false;
	if (!ign->index)
		goto out;
	/* A file git tracks is never left out, nor a directory that holds one. */
	if (dir)
		*keep = *only_tracked = !git_index_find_prefix(&pos, ign->index, path);
	else
		*keep = git_index_get_bypath(ign->index, path, 0) != NULL;
out:
	free(path);
	return err;
}

/*
 * Add what goes in from the directory open at fd (taken over: closed here),
 * named rel ("" for the source, else "a/b/").
 */
static int walk_dir(struct pack *p, int fd, const char *rel, bool under_ignored)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	struct stat st;
	char *path = NULL;
	int err = 0;

	if (!d) {
		err = fail_read(p, rel, errno);
		close(fd);
		goto out;
	}
	for (;;) {
		bool dir, keep, only_tracked;
		int child;

		errno = 0;
		if (!(de = readdir(d))) {
			if (errno)
				err = fail_read(p, rel, errno);
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, ".git"))
			continue;
		free(path);
		if (!(path = join(rel, de->d_name, false))) {
			err = fail(p, CADRE_ENOMEM, "out of memory");
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			/* Gone since readdir: it is not part of the tree any more. */
			if (errno == ENOENT)
				continue;
			err = fail_read(p, path, errno);
			break;
		}
		/* Sockets, FIFOs and devices are not code, and reading a FIFO would block. */
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode))
			continue;
		dir = S_ISDIR(st.st_mode);
		if (dir) {
			free(path);
			if (!(path = join(rel, de->d_name, true))) {
				err = fail(p, CADRE_ENOMEM, "out of memory");
				break;
			}
		}
		if ((err = judge(p, path, under_ignored, &keep, &only_tracked)))
			break;
		if (!keep)
			continue;
		if ((err = add_entry(p, path, &st)))
			break;
		if (!dir)
			continue;
		child = openat(dirfd(d), de->d_name,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (child < 0) {
			err = fail_read(p, path, errno);
			break;
		}
		if ((err = walk_dir(p, child, path, under_ignored || only_tracked)))
			break;
	}
out:
	if (d)
		closedir(d);
	free(path);
	return err;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static la_ssize_t sink_write(struct archive *a, void *ctx, const void *data, size_t len)
{
	struct sink *s = ctx;

	if (s->len + len > s->max) {
		s->over = true;
		s->reached = s->len + len;
		archive_set_error(a, EFBIG, "over the cap");
		return -1;
	}
	if (s->len + len > s->cap) {
		size_t cap = s->cap ? s->cap : 64 * 1024;
		unsigned char *grown;

		while (cap < s->len + len)
			cap *= 2;
		if (!(grown = realloc(s->data, cap))) {
			s->nomem = true;
			archive_set_error(a, ENOMEM, "out of memory");
			return -1;
		}
		s->data = grown;
		s->cap = cap;
	}
	memcpy(s->data + s->len, data, len);
	s->len += len;
	return (la_ssize_t)len;
}

/* "12.3 MiB", rounded down so that "over" stays true. */
static void mib_floor(char *out, size_t size, uint64_t bytes)
{
	uint64_t tenths = bytes * 10 / (1024 * 1024);

	snprintf(out, size, "%llu.%llu MiB", (unsigned long long)(tenths / 10),
		 (unsigned long long)(tenths % 10));
}

/* The refusal bundle.h spells out, naming the BUNDLE_LARGEST largest files. */
static int fail_too_big(struct pack *p, const struct sink *s)
{
	size_t largest[BUNDLE_LARGEST], n_largest = 0;
	char packed[32], cap[32];
	struct buf m;
	int err;

	for (size_t i = 0; i < p->n; i++) {
		size_t at;

		if (!S_ISREG(p->entries[i].mode))
			continue;
		/* Insertion into a short list, largest first; ties keep name order. */
		for (at = n_largest; at > 0 && p->entries[largest[at - 1]].size <
						   p->entries[i].size; at--)
			;
		if (at == BUNDLE_LARGEST)
			continue;
		if (n_largest < BUNDLE_LARGEST)
			n_largest++;
		memmove(&largest[at + 1], &largest[at], (n_largest - 1 - at) * sizeof(*largest));
		largest[at] = i;
	}
	mib_floor(packed, sizeof(packed), s->reached);
	if (s->max % (1024 * 1024))
		snprintf(cap, sizeof(cap), "%.1f MiB", (double)s->max / MIB);
	else
		snprintf(cap, sizeof(cap), "%llu MiB", (unsigned long long)(s->max >> 20));
	/* Roomy, so that only memory can fail it; why_size is the real limit. */
	buf_init(&m, 64 * 1024);
	buf_addf(&m, "%s packs to over %s compressed (the cap is %s)", p->src, packed, cap);
	for (size_t i = 0; i < n_largest; i++)
		buf_addf(&m, "%s%s (%.1f MiB)", i ? ", " : "; largest: ",
			 p->entries[largest[i]].name, (double)p->entries[largest[i]].size / MIB);
	buf_adds(&m, "; leave them out with .cadreignore, put them on a Volume, or pass "
		 "--no-upload");
	err = buf_error(&m) ? fail(p, CADRE_ENOMEM, "out of memory") :
		fail(p, CADRE_ETOOBIG, "%s", buf_str(&m));
	buf_release(&m);
	return err;
}

/* Why libarchive stopped: the cap, memory, or what it says. */
static int fail_archive(struct pack *p, struct archive *a, const struct sink *s)
{
	if (s->over)
		return fail_too_big(p, s);
	if (s->nomem || archive_errno(a) == ENOMEM)
		return fail(p, CADRE_ENOMEM, "out of memory");
	return fail(p, CADRE_EIO, "cannot pack %s: %s", p->src,
		    archive_error_string(a) ? archive_error_string(a) : "libarchive failed");
}

/* Write all of data[0..len) of the current entry. */
static int write_data(struct pack *p, struct archive *a, const struct sink *s,
		      const unsigned char *data, size_t len)
{
	while (len) {
		la_ssize_t n = archive_write_data(a, data, len);

		if (n <= 0)
			return fail_archive(p, a, s);
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A regular file's header and contents: the very file the walk saw, size from then on. */
static int write_file(struct pack *p, struct archive *a, struct archive_entry *ae,
		      const struct sink *s, const struct entry *e, unsigned char *chunk,
		      uint64_t *raw_bytes)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	struct stat st;
	uint64_t left;
	int fd, err = 0;

	/* The source file itself was named by the caller: a link to it is followed. */
	fd = p->file ? open(p->src, flags) : openat(p->srcfd, e->name, flags | O_NOFOLLOW);
	if (fd < 0) {
		err = fail_read(p, e->name, errno);
		goto out;
	}
	if (fstat(fd, &st)) {
		err = fail_read(p, e->name, errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_dev != e->dev || st.st_ino != e->ino) {
		err = fail_path(p, e->name, "it changed while being packed");
		goto out;
	}
	archive_entry_set_size(ae, st.st_size);
	if (archive_write_header(a, ae) < ARCHIVE_WARN) {
		err = fail_archive(p, a, s);
		goto out;
	}
	for (left = (uint64_t)st.st_size; left;) {
		ssize_t n = read(fd, chunk, left < CHUNK_BYTES ? (size_t)left : CHUNK_BYTES);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = fail_read(p, e->name, errno);
			goto out;
		}
		/* Shrunk while being read: the header already promised more. */
		if (n == 0) {
			err = fail_path(p, e->name, "it shrank while being packed");
			goto out;
		}
		if ((err = write_data(p, a, s, chunk, (size_t)n)))
			goto out;
		left -= (uint64_t)n;
	}
	*raw_bytes += (uint64_t)st.st_size;
out:
	if (fd >= 0)
		close(fd);
	return err;
}

/* A link's target as written (*target owned), never what it points at. */
static int read_link(struct pack *p, const struct entry *e, char **target)
{
	size_t size = e->size > 0 ? (size_t)e->size + 1 : 256;
	char *t = NULL;
	int err = 0;

	for (;;) {
		char *grown = realloc(t, size);
		ssize_t n;

		if (!grown) {
			err = fail(p, CADRE_ENOMEM, "out of memory");
			goto out;
		}
		t = grown;
		if ((n = readlinkat(p->srcfd, e->name, t, size)) < 0) {
			err = fail_read(p, e->name, errno);
			goto out;
		}
		/* Filling the buffer may mean a longer target was cut: ask again, larger. */
		if ((size_t)n < size) {
			t[n] = '\0';
			break;
		}
		size *= 2;
	}
	*target = t;
	t = NULL;
out:
	free(t);
	return err;
}

static int write_archive(struct pack *p, struct sink *s, uint64_t *raw_bytes)
{
	struct archive *a = archive_write_new();
	struct archive_entry *ae = archive_entry_new();
	unsigned char *chunk = malloc(CHUNK_BYTES);
	char *target = NULL;
	int err = 0;

	if (!a || !ae || !chunk) {
		err = fail(p, CADRE_ENOMEM, "out of memory");
		goto out;
	}
	/*
	 * Timestamp off and names as bytes (the design note); no padding of the
	 * last block, which would only add zeros after the gzip stream.
	 */
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_set_format_option(a, "pax", "hdrcharset", "BINARY") != ARCHIVE_OK ||
	    archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
	    archive_write_set_filter_option(a, "gzip", "timestamp", NULL) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    archive_write_open(a, s, NULL, sink_write, NULL) != ARCHIVE_OK) {
		err = fail_archive(p, a, s);
		goto out;
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct entry *e = &p->entries[i];

		archive_entry_clear(ae);
		archive_entry_copy_pathname(ae, e->name);
		archive_entry_set_perm(ae, e->mode & 07777);
		archive_entry_set_mtime(ae, 0, 0);
		archive_entry_set_uid(ae, 0);
		archive_entry_set_gid(ae, 0);
		if (S_ISREG(e->mode)) {
			archive_entry_set_filetype(ae, AE_IFREG);
			if ((err = write_file(p, a, ae, s, e, chunk, raw_bytes)))
				goto out;
			continue;
		}
		archive_entry_set_size(ae, 0);
		if (S_ISLNK(e->mode)) {
			archive_entry_set_filetype(ae, AE_IFLNK);
			free(target);
			target = NULL;
			if ((err = read_link(p, e, &target)))
				goto out;
			archive_entry_copy_symlink(ae, target);
		} else {
			archive_entry_set_filetype(ae, AE_IFDIR);
		}
		if (archive_write_header(a, ae) < ARCHIVE_WARN) {
			err = fail_archive(p, a, s);
			goto out;
		}
	}
	/* Closing flushes the compressor: the cap can be passed here too. */
	if (archive_write_close(a) != ARCHIVE_OK)
		err = fail_archive(p, a, s);
out:
	archive_write_free(a);
	archive_entry_free(ae);
	free(chunk);
	free(target);
	return err;
}

int bundle_pack(const char *src, uint64_t max_bytes, struct bundle *b, char *why,
		size_t why_size)
{
	struct pack p = { .src = src, .srcfd = -1, .why = why, .why_size = why_size };
	struct sink s = { .max = max_bytes };
	uint64_t raw_bytes = 0;
	struct stat st;
	int err = 0, fd;

	bundle_release(b);
	if (why && why_size)
		why[0] = '\0';
	p.src_len = strlen(src);
	while (p.src_len > 1 && src[p.src_len - 1] == '/')
		p.src_len--;
	/* The source was named by the caller: a link to it is followed, none below it. */
	if (stat(src, &st)) {
		err = errno == ENOENT || errno == ENOTDIR ?
			fail(&p, CADRE_EINVAL, "cannot read %s: %s", src, strerror(errno)) :
			fail_read(&p, "", errno);
		goto out;
	}
	if (S_ISREG(st.st_mode)) {
		const char *base = strrchr(src, '/');

		p.file = true;
		if ((err = add_entry(&p, base ? base + 1 : src, &st)))
			goto out;
	} else if (S_ISDIR(st.st_mode)) {
		if ((p.srcfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
			err = fail_read(&p, "", errno);
			goto out;
		}
		/* "/" joined with "a" is "/a", not "//a". */
		if (p.src_len == 1 && src[0] == '/')
			p.src_len = 0;
		if ((err = ignores_open(&p)))
			goto out;
		if ((fd = fcntl(p.srcfd, F_DUPFD_CLOEXEC, 0)) < 0) {
			err = fail_read(&p, "", errno);
			goto out;
		}
		if ((err = walk_dir(&p, fd, "", false)))
			goto out;
		/* Everything may be left out: qsort takes no NULL, even for nothing. */
		if (p.n)
			qsort(p.entries, p.n, sizeof(*p.entries), by_name);
	} else {
		err = fail(&p, CADRE_EINVAL, "%s is neither a directory nor a regular file", src);
		goto out;
	}
	if ((err = write_archive(&p, &s, &raw_bytes)))
		goto out;
	b->data = s.data;
	b->len = s.len;
	s.data = NULL;
	bundle_digest(b->data, b->len, b->digest);
	b->file = p.file;
	b->n_entries = p.n;
	b->raw_bytes = raw_bytes;
out:
	free(s.data);
	for (size_t i = 0; i < p.n; i++)
		free(p.entries[i].name);
	free(p.entries);
	ignores_release(&p.ign);
	if (p.srcfd >= 0)
		close(p.srcfd);
	return err;
}
