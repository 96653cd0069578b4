/*
 * test_bundle.c - cli/bundle.c: what a code bundle holds, what it leaves
 * out, and that the same tree always packs to the same bytes. Each test
 * builds its tree in a fresh temporary directory and reads the archive back
 * with libarchive.
 */
#include <criterion/criterion.h>

#include "base/err.h"
#include "cli/bundle.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <git2.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_ITEMS 64

struct item {
	char *name;
	mode_t type;         /* AE_IFREG, AE_IFDIR, AE_IFLNK */
	mode_t perm;
	char *link;          /* a link's target, else NULL */
	int64_t size;
	time_t mtime;
	int64_t uid, gid;
	bool owner_named;    /* a user or group name was stored */
	char content[256];   /* the start of a file's contents */
};

struct listing {
	struct item items[MAX_ITEMS];
	size_t n;
};

/* The trees a test made, removed after it whether it passed or not. */
static char trees[4][64];
static size_t n_trees;

static int open_up(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag == FTW_D || flag == FTW_DNR)
		chmod(path, 0700);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void remove_trees(void)
{
	for (size_t i = 0; i < n_trees; i++) {
		/* A test may leave a directory unreadable; not being root, we could not empty it. */
		nftw(trees[i], open_up, 16, FTW_PHYS);
		nftw(trees[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	n_trees = 0;
}

TestSuite(bundle, .fini = remove_trees);

static void tree_make(char *root, size_t size)
{
	cr_assert_lt(n_trees, sizeof(trees) / sizeof(*trees));
	snprintf(root, size, "/tmp/cadre-bundle-test-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	snprintf(trees[n_trees++], sizeof(*trees), "%s", root);
}

/* root/rel, with the directories above it made as needed. */
static void make_dirs(const char *root, const char *rel)
{
	char path[4096];
	size_t n = (size_t)snprintf(path, sizeof(path), "%s/%s", root, rel);

	for (size_t i = strlen(root) + 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		cr_assert(!mkdir(path, 0755) || errno == EEXIST, "mkdir %s: %s", path,
			  strerror(errno));
		if (i < n)
			path[i] = '/';
	}
}

static void put_bytes(const char *root, const char *rel, const void *data, size_t len,
		      mode_t mode)
{
	char path[4096], dir[4096];
	const char *slash = strrchr(rel, '/');
	int fd;

	if (slash) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
		make_dirs(root, dir);
	}
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert(fd >= 0, "open %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	cr_assert_eq(fchmod(fd, mode), 0);
	close(fd);
}

static void put(const char *root, const char *rel, const char *text)
{
	put_bytes(root, rel, text, strlen(text), 0644);
}

static void put_link(const char *root, const char *rel, const char *target)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	cr_assert_eq(symlink(target, path), 0, "symlink %s: %s", path, strerror(errno));
}

/* Bytes that do not compress: xorshift64 from a fixed seed. */
static void put_random(const char *root, const char *rel, size_t len, uint64_t seed)
{
	unsigned char *data = malloc(len);

	cr_assert_not_null(data);
	for (size_t i = 0; i < len; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		data[i] = (unsigned char)(seed >> 24);
	}
	put_bytes(root, rel, data, len, 0644);
	free(data);
}

static void list_bundle(const struct bundle *b, struct listing *l)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int r;

	memset(l, 0, sizeof(*l));
	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	cr_assert_eq(archive_read_open_memory(a, b->data, b->len), ARCHIVE_OK);
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		struct item *it = &l->items[l->n++];

		cr_assert(l->n <= MAX_ITEMS);
		it->name = strdup(archive_entry_pathname(e));
		it->type = archive_entry_filetype(e);
		it->perm = archive_entry_perm(e);
		it->link = archive_entry_symlink(e) ? strdup(archive_entry_symlink(e)) : NULL;
		it->size = archive_entry_size(e);
		it->mtime = archive_entry_mtime(e);
		it->uid = archive_entry_uid(e);
		it->gid = archive_entry_gid(e);
		it->owner_named = (archive_entry_uname(e) && *archive_entry_uname(e)) ||
				  (archive_entry_gname(e) && *archive_entry_gname(e));
		if (it->type == AE_IFREG)
			cr_assert(archive_read_data(a, it->content, sizeof(it->content) - 1) >= 0);
	}
	cr_assert_eq(r, ARCHIVE_EOF, "%s", archive_error_string(a));
	archive_read_free(a);
}

static void listing_release(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].name);
		free(l->items[i].link);
	}
}

static const struct item *find(const struct listing *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].name, name))
			return &l->items[i];
	return NULL;
}

/* Pack root, which must succeed, and list what went in. */
static void pack_and_list(const char *root, struct bundle *b, struct listing *l)
{
	char why[1024];
	int err;

	bundle_init(b);
	err = bundle_pack(root, BUNDLE_DEFAULT_MAX_BYTES, b, why, sizeof(why));
	cr_assert_eq(err, 0, "bundle_pack: %d %s", err, why);
	list_bundle(b, l);
}

/* The names in the listing, after a space each, for a readable failure. */
static const char *names(const struct listing *l)
{
	static char all[4096];
	size_t used = 0;

	all[0] = '\0';
	for (size_t i = 0; i < l->n && used < sizeof(all); i++)
		used += (size_t)snprintf(all + used, sizeof(all) - used, " %s", l->items[i].name);
	return all;
}

static void expect_in(const struct listing *l, const char *const *want)
{
	for (; *want; want++)
		cr_expect_not_null(find(l, *want), "%s should be packed; packed:%s", *want,
				   names(l));
}

static void expect_out(const struct listing *l, const char *const *unwanted)
{
	for (; *unwanted; unwanted++)
		cr_expect_null(find(l, *unwanted), "%s should be left out; packed:%s", *unwanted,
			       names(l));
}

static int touch_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	const struct timespec ts[2] = { { 1000000000, 123 }, { 1500000000, 456 } };

	utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
	return 0;
}

Test(bundle, a_digest_is_sha256_in_lowercase_hex)
{
	char d[BUNDLE_DIGEST_LEN + 1];

	bundle_digest((const unsigned char *)"", 0, d);
	cr_assert_str_eq(d, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	bundle_digest((const unsigned char *)"abc", 3, d);
	cr_assert_str_eq(d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	cr_assert_eq(strlen(d), BUNDLE_DIGEST_LEN);
}

Test(bundle, entries_go_in_byte_order_of_their_names_with_nothing_of_the_machine)
{
	static const char *const order[] = {
		"a-b.txt", "a/", "a/x.txt", "conf/", "conf/a.yaml", "empty/", "train.py",
	};
	char root[64];
	struct bundle b;
	struct listing l;

	tree_make(root, sizeof(root));
	put(root, "train.py", "print('hi')\n");
	put(root, "conf/a.yaml", "lr: 0.1\n");
	put(root, "a-b.txt", "ab\n");
	put(root, "a/x.txt", "x\n");
	make_dirs(root, "empty");
	pack_and_list(root, &b, &l);

	cr_assert_eq(l.n, sizeof(order) / sizeof(*order), "packed:%s", names(&l));
	for (size_t i = 0; i < l.n; i++) {
		const struct item *it = &l.items[i];

		cr_expect_str_eq(it->name, order[i]);
		cr_expect_eq(it->mtime, 0, "%s", it->name);
		cr_expect_eq(it->uid, 0, "%s", it->name);
		cr_expect_eq(it->gid, 0, "%s", it->name);
		cr_expect_not(it->owner_named, "%s", it->name);
		cr_expect_eq(it->type, it->name[strlen(it->name) - 1] == '/' ? AE_IFDIR : AE_IFREG,
			     "%s", it->name);
	}
	cr_expect_str_eq(find(&l, "train.py")->content, "print('hi')\n");
	cr_expect_eq(find(&l, "train.py")->size, 12);
	cr_expect_eq(b.n_entries, 7);
	cr_expect_eq(b.raw_bytes, 12 + 8 + 3 + 2);
	cr_expect_not(b.file);
	/* The gzip header: no file name (FLG 0) and no time (MTIME 0). */
	cr_assert_gt(b.len, 10);
	cr_expect_eq(b.data[0], 0x1f);
	cr_expect_eq(b.data[1], 0x8b);
	cr_expect_eq(b.data[3], 0);
	cr_expect(!b.data[4] && !b.data[5] && !b.data[6] && !b.data[7]);
	{
		char d[BUNDLE_DIGEST_LEN + 1];

		bundle_digest(b.data, b.len, d);
		cr_expect_str_eq(b.digest, d);
	}
	listing_release(&l);
	bundle_release(&b);
	cr_expect_null(b.data);
}

Test(bundle, the_same_tree_packs_to_the_same_digest_whatever_its_times_and_locale)
{
	char root[64], first[BUNDLE_DIGEST_LEN + 1], path[256], why[512];
	char long_name[200];
	struct bundle b;

	tree_make(root, sizeof(root));
	put(root, "train.py", "print('hi')\n");
	put(root, "conf/a.yaml", "lr: 0.1\n");
	/* A name over tar's 100 bytes and a non-ASCII one take pax extended headers. */
	memset(long_name, 'n', 150);
	snprintf(long_name + 150, sizeof(long_name) - 150, ".txt");
	put(root, long_name, "long\n");
	put(root, "caf\xc3\xa9.txt", "accent\n");
	put_link(root, "link", "train.py");

	bundle_init(&b);
	cr_assert_eq(bundle_pack(root, BUNDLE_DEFAULT_MAX_BYTES, &b, why, sizeof(why)), 0, "%s",
		     why);
	memcpy(first, b.digest, sizeof(first));

	/* Every mtime and atime changed, a second later, in another locale. */
	nftw(root, touch_entry, 16, FTW_PHYS);
	sleep(1);
	if (setlocale(LC_ALL, "C.UTF-8"))
		cr_log_info("packing again in C.UTF-8");
	cr_assert_eq(bundle_pack(root, BUNDLE_DEFAULT_MAX_BYTES, &b, why, sizeof(why)), 0, "%s",
		     why);
	cr_expect_str_eq(b.digest, first);
	setlocale(LC_ALL, "C");

	/* One byte of one file changed: another digest. */
	put(root, "conf/a.yaml", "lr: 0.2\n");
	cr_assert_eq(bundle_pack(root, BUNDLE_DEFAULT_MAX_BYTES, &b, why, sizeof(why)), 0, "%s",
		     why);
	cr_expect_str_neq(b.digest, first);

	/* And the mode bits count: they are part of what is unpacked. */
	put(root, "conf/a.yaml", "lr: 0.1\n");
	cr_assert_eq(bundle_pack(root, BUNDLE_DEFAULT_MAX_BYTES, &b, why, sizeof(why)), 0, "%s",
		     why);
	cr_expect_str_eq(b.digest, first);
	snprintf(path, sizeof(path), "%s/train.py", root);
	cr_assert_eq(chmod(path, 0755), 0);
	cr_assert_eq(bundle_pack(root, BUNDLE_DEFAULT_MAX_BYTES, &b, why, sizeof(why)), 0, "%s",
		     why);
	cr_expect_str_neq(b.digest, first);
	bundle_release(&b);
}

Test(bundle, never_packs_git_at_any_level)
{
	static const char *const in[] = { "code.py", "sub/", "sub/lib.py", ".gitx", "x.git", NULL };
	static const char *const out[] = { ".git/", ".git/junk", "sub/.git", NULL };
	char root[64];
	struct bundle b;
	struct listing l;

	tree_make(root, sizeof(root));
	put(root, "code.py", "1\n");
	put(root, ".git/junk", "not a repository\n");
	put(root, "sub/.git", "gitdir: /nowhere\n");
	put(root, "sub/lib.py", "2\n");
	put(root, ".gitx", "3\n");
	put(root, "x.git", "4\n");
	pack_and_list(root, &b, &l);
	expect_in(&l, in);
	expect_out(&l, out);
	cr_expect_eq(l.n, 5, "packed:%s", names(&l));
	listing_release(&l);
	bundle_release(&b);
}

Test(bundle, gitignore_files_at_the_root_and_below_follow_gits_rules)
{
	static const char *const in[] = {
		".gitignore", "keep.log", "sub/", "sub/.gitignore", "sub/keep.log", "sub/build/",
		"sub/build/x.o", "data/", "data/f", "build.txt", NULL,
	};
	static const char *const out[] = {
		"a.log", "sub/x.log", "build/", "build/out.o", "build/keep.log", "sub/data/",
		"sub/data/f", NULL,
	};
	char root[64];
	struct bundle b;
	struct listing l;

	tree_make(root, sizeof(root));
	put(root, ".gitignore", "*.log\n/build/\n!keep.log\n");
	put(root, "sub/.gitignore", "data/\n");
	put(root, "a.log", "");
	put(root, "keep.log", "");
	put(root, "sub/keep.log", "");
	put(root, "sub/x.log", "");
	put(root, "build/out.o", "");
	/* git cannot re-include a file whose directory is excluded. */
	put(root, "build/keep.log", "");
	put(root, "build.txt", "");
	/* "/build/" is anchored to the root .gitignore's directory. */
	put(root, "sub/build/x.o", "");
	/* sub/.gitignore's "data/" holds under sub only. */
	put(root, "sub/data/f", "");
	put(root, "data/f", "");
	pack_and_list(root, &b, &l);
	expect_in(&l, in);
	expect_out(&l, out);
	listing_release(&l);
	bundle_release(&b);
}

Test(bundle, a_cadreignore_replaces_gitignore_and_skyignore)
{
	static const char *const in[] = {
		".cadreignore", ".gitignore", ".skyignore", "a.txt", "sub/", "sub/m.py", "logs.txt",
		NULL,
	};
	static const char *const out[] = { "b.bin", "logs/", "logs/x", "sub/logs/", NULL };
	char root[64];
	struct bundle b;
	struct listing l;

	tree_make(root, sizeof(root));
	/* It names itself too: bundle.h still packs it. */
	put(root, ".cadreignore", "# what the cluster does not need\n*.bin\nlogs/\n.cadreignore\n");
	put(root, ".gitignore", "*.txt\n");
	put(root, ".skyignore", "*.txt\n");
	put(root, "sub/.gitignore", "*.py\n");
	put(root, "a.txt", "");
	put(root, "b.bin", "");
	put(root, "logs/x", "");
	put(root, "logs.txt", "");
	put(root, "sub/m.py", "");
	put(root, "sub/logs/y", "");
	pack_and_list(root, &b, &l);
	expect_in(&l, in);
	expect_out(&l, out);
	listing_release(&l);
	bundle_release(&b);
}

Test(bundle, a_skyignore_replaces_gitignore_when_there_is_no_cadreignore)
{
	static const char *const in[] = { ".skyignore", ".gitignore", "a.txt", "run.sh", NULL };
	static const char *const out[] = { "ckpt/", "ckpt/model.pt", NULL };
	char root[64];
	struct bundle b;
	struct listing l;

	tree_make(root, sizeof(root));
	put(root, ".skyignore", "/ckpt\n");
	put(root, ".gitignore", "*.txt\n");
	put(root, "a.txt", "");
	put(root, "run.sh", "");
	put(root, "ckpt/model.pt", "");
	pack_and_list(root, &b, &l);
	expect_in(&l, in);
	expect_out(&l, out);
	listing_release(&l);
	bundle_release(&b);
}

/* A git work tree at root whose index tracks the given files. */
static void git_work_tree(const char *root, const char *const *tracked)
{
	git_repository *repo = NULL;
	git_index *index = NULL;

	cr_assert_geq(git_libgit2_init(), 1);
	cr_assert_eq(git_repository_init(&repo, root, 0), 0, "%s", git_error_last()->message);
	cr_assert_eq(git_repository_index(&index, repo), 0);
	for (; *tracked; tracked++)
		cr_assert_eq(git_index_add_bypath(index, *tracked), 0, "%s: %s", *tracked,
			     git_error_last()->message);
	cr_assert_eq(git_index_write(index), 0);
	git_index_free(index);
	git_repository_free(repo);
	git_libgit2_shutdown();
}

Test(bundle, in_a_git_work_tree_git_decides_and_a_tracked_file_is_never_left_out)
{
	static const char *const tracked[] = { "pinned.log", "build/keep.txt", NULL };
	static const char *const in[] = {
		".gitignore", "app.py", "pinned.log", "keep.log", "build/", "build/keep.txt",
		"sub/", "sub/x.py", NULL,
	};
	static const char *const out[] = {
		"debug.log", "build/junk.o", "build/keep.log", "secret.txt", "sub/secret.txt",
		"sub/only-here.txt", ".git/", ".git/HEAD", NULL,
	};
	static const char *const sub_in[] = { "x.py", NULL };
	static const char *const sub_out[] = { "secret.txt", "only-here.txt", NULL };
	char root[64], sub[96], exclude[128];
	struct bundle b;
	struct listing l;
	FILE *f;

	tree_make(root, sizeof(root));
	put(root, ".gitignore", "*.log\n/build/\n/sub/only-here.txt\n!keep.log\n");
	put(root, "app.py", "");
	put(root, "keep.log", "");
	/*
	 * In a directory git ignores, only what it tracks goes in: no "!" rule
	 * re-includes a file there (libgit2 alone would say keep.log is not ignored).
	 */
	put(root, "build/keep.log", "");
	put(root, "debug.log", "");
	put(root, "pinned.log", "");
	put(root, "build/keep.txt", "");
	put(root, "build/junk.o", "");
	put(root, "secret.txt", "");
	put(root, "sub/secret.txt", "");
	put(root, "sub/only-here.txt", "");
	put(root, "sub/x.py", "");
	git_work_tree(root, tracked);
	snprintf(exclude, sizeof(exclude), "%s/.git/info/exclude", root);
	cr_assert_not_null(f = fopen(exclude, "a"));
	fputs("secret.txt\n", f);
	fclose(f);

	pack_and_list(root, &b, &l);
	expect_in(&l, in);
	expect_out(&l, out);
	listing_release(&l);
	bundle_release(&b);

	/* A directory inside the work tree: the rules still apply from the repository's root. */
	snprintf(sub, sizeof(sub), "%s/sub/", root);
	pack_and_list(sub, &b, &l);
	expect_in(&l, sub_in);
	expect_out(&l, sub_out);
	cr_expect_eq(l.n, 1, "packed:%s", names(&l));
	listing_release(&l);
	bundle_release(&b);
}

Test(bundle, the_users_global_git_ignore_does_not_change_a_bundle_outside_a_work_tree)
{
	static const char *const tracked[] = { NULL };
	char root[64], home[64], xdg[96];
	struct bundle b;
	struct listing l;

	/*
	 * ~/.config/git/ignore, moved: libgit2 reads $XDG_CONFIG_HOME when it
	 * starts, and Criterion (which links libgit2) starts it before any test.
	 */
	tree_make(home, sizeof(home));
	put(home, "git/ignore", "*.txt\n");
	snprintf(xdg, sizeof(xdg), "%s/git", home);
	cr_assert_geq(git_libgit2_init(), 1);
	cr_assert_eq(git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, xdg), 0);

	tree_make(root, sizeof(root));
	put(root, "notes.txt", "");
	pack_and_list(root, &b, &l);
	cr_expect_not_null(find(&l, "notes.txt"), "packed:%s", names(&l));
	listing_release(&l);
	bundle_release(&b);

	/* In a work tree git itself reads it, and so does the bundle. */
	git_work_tree(root, tracked);
	pack_and_list(root, &b, &l);
	cr_expect_null(find(&l, "notes.txt"), "packed:%s", names(&l));
	listing_release(&l);
	bundle_release(&b);
	git_libgit2_shutdown();
}

Test(bundle, links_stay_links_and_what_they_point_at_is_never_read, .timeout = 30)
{
	char root[64], outside[64], fifo[128];
	struct bundle b;
	struct listing l;
	const struct item *it;

	tree_make(root, sizeof(root));
	tree_make(outside, sizeof(outside));
	/* Reading through a link to a FIFO would block forever: the timeout would say so. */
	snprintf(fifo, sizeof(fifo), "%s/fifo", outside);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	put(root, "real.txt", "real\n");
	put(root, "sub/f.txt", "f\n");
	put_link(root, "inside", "real.txt");
	put_link(root, "escape", "../../etc/passwd");
	put_link(root, "to-fifo", fifo);
	put_link(root, "dirlink", "sub");
	put_link(root, "dangling", "nowhere");
	pack_and_list(root, &b, &l);

	cr_assert_not_null(it = find(&l, "escape"), "packed:%s", names(&l));
	cr_expect_eq(it->type, AE_IFLNK);
	cr_expect_str_eq(it->link, "../../etc/passwd");
	cr_expect_eq(it->size, 0);
	cr_assert_not_null(it = find(&l, "inside"));
	cr_expect_eq(it->type, AE_IFLNK);
	cr_expect_str_eq(it->link, "real.txt");
	cr_assert_not_null(it = find(&l, "to-fifo"));
	cr_expect_eq(it->type, AE_IFLNK);
	cr_expect_str_eq(it->link, fifo);
	cr_assert_not_null(it = find(&l, "dirlink"));
	cr_expect_eq(it->type, AE_IFLNK);
	cr_expect_null(find(&l, "dirlink/f.txt"));
	cr_expect_null(find(&l, "dirlink/"));
	cr_assert_not_null(it = find(&l, "dangling"));
	cr_expect_eq(it->type, AE_IFLNK);
	cr_expect_eq(l.n, 8, "packed:%s", names(&l));
	cr_expect_eq(b.raw_bytes, 5 + 2);
	listing_release(&l);
	bundle_release(&b);
}

Test(bundle, permission_bits_are_kept)
{
	char root[64], path[128];
	struct bundle b;
	struct listing l;

	tree_make(root, sizeof(root));
	put_bytes(root, "run.sh", "#!/bin/sh\n", 10, 0755);
	put_bytes(root, "key", "k", 1, 0600);
	put_bytes(root, "ro.txt", "r", 1, 0444);
	put_bytes(root, "private/x", "x", 1, 0640);
	snprintf(path, sizeof(path), "%s/private", root);
	cr_assert_eq(chmod(path, 0700), 0);
	pack_and_list(root, &b, &l);
	cr_expect_eq(find(&l, "run.sh")->perm, 0755);
	cr_expect_eq(find(&l, "key")->perm, 0600);
	cr_expect_eq(find(&l, "ro.txt")->perm, 0444);
	cr_expect_eq(find(&l, "private/")->perm, 0700);
	cr_expect_eq(find(&l, "private/x")->perm, 0640);
	listing_release(&l);
	bundle_release(&b);
}

Test(bundle, a_bundle_over_the_cap_is_refused_naming_its_largest_files)
{
	char root[64], why[1024], want[1024];
	struct bundle b;

	tree_make(root, sizeof(root));
	put_random(root, "data/big.bin", 2 << 20, 1);
	put_random(root, "data/mid.bin", 1 << 20, 2);
	put(root, "small.txt", "tiny\n");
	put(root, "a.txt", "a\n");

	bundle_init(&b);
	cr_assert_eq(bundle_pack(root, 512 << 10, &b, why, sizeof(why)), CADRE_ETOOBIG);
	snprintf(want, sizeof(want), "%s packs to over 0.5 MiB compressed (the cap is 0.5 MiB); "
		 "largest: data/big.bin (2.0 MiB), data/mid.bin (1.0 MiB), small.txt (0.0 MiB); "
		 "leave them out with .cadreignore, put them on a Volume, or pass --no-upload",
		 root);
	cr_expect_str_eq(why, want);
	cr_expect_null(b.data);
	cr_expect_eq(b.len, 0);
	cr_expect_eq(b.digest[0], '\0');

	/* A cap in whole MiB reads as one. */
	cr_assert_eq(bundle_pack(root, 1 << 20, &b, why, sizeof(why)), CADRE_ETOOBIG);
	cr_expect(strstr(why, "(the cap is 1 MiB)"), "%s", why);
	/* A short why is cut, not overrun. */
	cr_assert_eq(bundle_pack(root, 1 << 20, &b, why, 16), CADRE_ETOOBIG);
	cr_expect_eq(strlen(why), 15);

	/* Under a cap it fits, the same tree packs. */
	cr_assert_eq(bundle_pack(root, 8 << 20, &b, why, sizeof(why)), 0, "%s", why);
	cr_expect_gt(b.len, 3 << 20);
	cr_expect_eq(b.raw_bytes, (3 << 20) + 5 + 2);
	bundle_release(&b);
}

/* As root chmod 000 stops nothing: read as nobody for the pack's call. */
static int pack_as_nobody(const char *src, struct bundle *b, char *why, size_t why_size)
{
	int err;

	if (geteuid() == 0) {
		setfsuid(65534);
		cr_assert_eq(setfsuid(65534), 65534, "setfsuid did not take");
	}
	err = bundle_pack(src, BUNDLE_DEFAULT_MAX_BYTES, b, why, why_size);
	if (geteuid() == 0)
		setfsuid(0);
	return err;
}

Test(bundle, a_file_that_cannot_be_read_is_named_with_the_reason)
{
	char root[64], path[128], why[512], want[512];
	struct bundle b;

	tree_make(root, sizeof(root));
	cr_assert_eq(chmod(root, 0755), 0);
	put(root, "ok.txt", "ok\n");
	put_bytes(root, "data/secret.bin", "s", 1, 0);
	bundle_init(&b);
	cr_assert_eq(pack_as_nobody(root, &b, why, sizeof(why)), CADRE_EIO);
	snprintf(want, sizeof(want), "cannot read %s/data/secret.bin: %s", root, strerror(EACCES));
	cr_expect_str_eq(why, want);
	cr_expect_null(b.data);

	/* An unreadable directory too, the source named as given but for its trailing "/". */
	snprintf(path, sizeof(path), "%s/data/secret.bin", root);
	cr_assert_eq(unlink(path), 0);
	make_dirs(root, "locked/in");
	snprintf(path, sizeof(path), "%s/locked", root);
	cr_assert_eq(chmod(path, 0), 0);
	snprintf(path, sizeof(path), "%s/", root);
	cr_assert_eq(pack_as_nobody(path, &b, why, sizeof(why)), CADRE_EIO);
	snprintf(want, sizeof(want), "cannot read %s/locked: %s", root, strerror(EACCES));
	cr_expect_str_eq(why, want);

	/* An ignored directory is not even opened. */
	put(root, ".gitignore", "/locked/\n");
	cr_assert_eq(pack_as_nobody(root, &b, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(b.n_entries, 3); /* .gitignore, data/, ok.txt */
	bundle_release(&b);
}

Test(bundle, a_regular_file_packs_alone_named_by_its_base_name)
{
	char root[64], path[128];
	struct bundle b;
	struct listing l;

	tree_make(root, sizeof(root));
	put_bytes(root, "conf/train.yaml", "epochs: 3\n", 10, 0640);
	put(root, "conf/.cadreignore", "*.yaml\n");
	snprintf(path, sizeof(path), "%s/conf/train.yaml", root);
	pack_and_list(path, &b, &l);
	cr_assert_eq(l.n, 1, "packed:%s", names(&l));
	cr_expect_str_eq(l.items[0].name, "train.yaml");
	cr_expect_eq(l.items[0].type, AE_IFREG);
	cr_expect_eq(l.items[0].perm, 0640);
	cr_expect_str_eq(l.items[0].content, "epochs: 3\n");
	cr_expect(b.file);
	cr_expect_eq(b.n_entries, 1);
	cr_expect_eq(b.raw_bytes, 10);
	listing_release(&l);
	bundle_release(&b);
}

Test(bundle, sockets_and_fifos_are_left_out)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char root[64], path[128];
	struct bundle b;
	struct listing l;
	int fd;

	tree_make(root, sizeof(root));
	put(root, "code.py", "");
	snprintf(path, sizeof(path), "%s/pipe", root);
	cr_assert_eq(mkfifo(path, 0644), 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/sock", root);
	cr_assert((fd = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	pack_and_list(root, &b, &l);
	cr_expect_eq(l.n, 1, "packed:%s", names(&l));
	cr_expect_not_null(find(&l, "code.py"));
	close(fd);
	listing_release(&l);
	bundle_release(&b);
}

Test(bundle, a_source_that_is_neither_a_directory_nor_a_file_is_refused)
{
	char root[64], path[128], why[512], want[512];
	struct bundle b;

	tree_make(root, sizeof(root));
	bundle_init(&b);
	snprintf(path, sizeof(path), "%s/missing", root);
	cr_expect_eq(bundle_pack(path, BUNDLE_DEFAULT_MAX_BYTES, &b, why, sizeof(why)),
		     CADRE_EINVAL);
	snprintf(want, sizeof(want), "cannot read %s: %s", path, strerror(ENOENT));
	cr_expect_str_eq(why, want);
	snprintf(path, sizeof(path), "%s/pipe", root);
	cr_assert_eq(mkfifo(path, 0644), 0);
	cr_expect_eq(bundle_pack(path, BUNDLE_DEFAULT_MAX_BYTES, &b, why, sizeof(why)),
		     CADRE_EINVAL);
	snprintf(want, sizeof(want), "%s is neither a directory nor a regular file", path);
	cr_expect_str_eq(why, want);
	cr_expect_null(b.data);
	/* No room for a reason is no harm. */
	cr_expect_eq(bundle_pack(path, BUNDLE_DEFAULT_MAX_BYTES, &b, NULL, 0), CADRE_EINVAL);
}
