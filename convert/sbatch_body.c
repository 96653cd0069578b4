/*
 * sbatch_body.c - the commands of a batch script that now run on every
 * node. Slurm runs the script once, on the first node, and srun fans out;
 * cadre runs it on every node and srun runs locally (docs/design.md 2.4). A
 * command that only sets up the environment is the same either way; any
 * other command outside srun is reported with its line, unless it sits in
 * an `if` that tests the node's rank.
 *
 * This is a reader for warnings, not a shell parser: it looks at the first
 * word of each command line (after variable assignments and continuation
 * lines are joined), skips here-documents, and follows if/fi nesting.
 */
#include "convert/sbatch.h"

#include "base/err.h"

#include <stdio.h>
#include <string.h>

#define MAX_IF_DEPTH 64

/* Commands that set up the environment, the same on one node or on all. */
static const char *const setup_words[] = {
	"module", "ml", "source", ".", "export", "unset", "set", "shopt", "cd", "pushd", "popd",
	"echo", "printf", "nvidia-smi", "hostname", "date", "env", "printenv", "ulimit",
	"umask", "true", "false", ":", "sleep", "trap", "wait", "exit", "return", "shift",
	"local", "declare", "typeset", "readonly", "alias", "which", "type", "command", "pwd",
	"whoami", "id", "uname", "nproc", "lscpu", "free", "df", "ls", "cat", "scontrol", "srun",
	"eval", "sbcast", NULL,
};

/* Shell syntax whose own line runs nothing. */
static const char *const syntax_words[] = {
	"then", "else", "elif", "do", "{", "}", "function", "[[", "[",
	"test", "select", "!", "((", "in", NULL,
};

/* Variables whose test in an `if` keeps a command to one node. */
static const char *const rank_vars[] = {
	"SLURM_NODEID", "SLURM_PROCID", "NODE_RANK", "SKYPILOT_NODE_RANK", "SLURM_LOCALID",
	"RANK", NULL,
};

static bool in_list(const char *word, size_t len, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strlen(list[i]) == len && !memcmp(list[i], word, len))
			return true;
	return false;
}

static bool is_word_end(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == ';' || c == '|' || c == '&' ||
	       c == '(' || c == ')' || c == '<' || c == '>';
}

/* Past the ')' that closes the '(' at p, or at the end of the text. */
static const char *skip_parens(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
		if (depth == 0)
			return p + 1;
	}
	return p;
}

/* The first word of cmd after "NAME=value" assignments; *len 0 when none. */
static const char *first_word(const char *cmd, size_t *len)
{
	const char *p = cmd;

	for (;;) {
		const char *w, *eq = NULL;

		while (*p == ' ' || *p == '\t')
			p++;
		w = p;
		if (*p == '(' && p[1] == '(')
			p += 2;
		else
			while (!is_word_end(*p)) {
				if (*p == '=' && !eq)
					eq = p;
				if (*p == '"' || *p == '\'' || *p == '`') {
					const char *close = strchr(p + 1, *p);
					p = close ? close : p + strlen(p) - 1;
				} else if (*p == '$' && p[1] == '(') {
					p = skip_parens(p + 1);
					continue;
				}
				p++;
			}
		if (p == w && *p) {
			p++;
			*len = 1;
			return w;
		}
		if (!eq || eq == w) {
			*len = (size_t)(p - w);
			return w;
		}
	}
}

/* Whether the command is `mkdir` with -p (harmless when the directory exists). */
static bool has_word(const char *cmd, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(cmd, word); p; p = strstr(p + 1, word))
		if ((p == cmd || p[-1] == ' ' || p[-1] == '\t') && is_word_end(p[n]))
			return true;
	return false;
}

static bool mentions_rank(const char *cmd)
{
	for (size_t i = 0; rank_vars[i]; i++) {
		size_t n = strlen(rank_vars[i]);

		for (const char *p = strstr(cmd, rank_vars[i]); p; p = strstr(p + 1, rank_vars[i]))
			if (p > cmd && (p[-1] == '$' || p[-1] == '{') &&
			    !((p[n] >= 'A' && p[n] <= 'Z') || p[n] == '_'))
				return true;
	}
	return false;
}

struct body_state {
	bool guarded[MAX_IF_DEPTH];  /* per open `if`: it tests the rank */
	int depth;
	char heredoc[64];            /* the delimiter while inside a here-document */
	bool heredoc_tabs;
	bool tmpdir_noted;           /* $TMPDIR was said once: scratch */
	bool local_noted;            /* a /local/... path was said once: scratch */
};

/* After "<<" or "<<-": the delimiter, quotes removed. */
static void start_heredoc(struct body_state *st, const char *cmd)
{
	const char *p = strstr(cmd, "<<");
	size_t n = 0;

	if (!p || p[2] == '<')
		return;
	p += 2;
	st->heredoc_tabs = *p == '-';
	p += st->heredoc_tabs;
	while (*p == ' ')
		p++;
	while (*p && !is_word_end(*p) && n < sizeof(st->heredoc) - 1) {
		if (*p != '\'' && *p != '"' && *p != '\\')
			st->heredoc[n++] = *p;
		p++;
	}
	st->heredoc[n] = '\0';
}

static bool guarded(const struct body_state *st)
{
	for (int i = 0; i < st->depth && i < MAX_IF_DEPTH; i++)
		if (st->guarded[i])
			return true;
	return false;
}

/* if, while, until, for and case open a block that fi, done or esac closes. */
static bool opens_block(const char *w, size_t len)
{
	static const char *const openers[] = { "if", "while", "until", "for", "case", NULL };

	return in_list(w, len, openers);
}

static const char *closer_of(const char *w, size_t len)
{
	if (len == 2 && !memcmp(w, "if", 2))
		return "fi";
	return len == 4 && !memcmp(w, "case", 4) ? "esac" : "done";
}

/* The first /local/NAME path in cmd (not /usr/local/...) into out; false when none. */
static bool local_path(const char *cmd, char *out, size_t size)
{
	for (const char *p = strstr(cmd, "/local/"); p; p = strstr(p + 1, "/local/")) {
		const char *name = p + 7;
		size_t n = strcspn(name, "/ \t\"';:$`)}");

		if (p > cmd && !strchr(" \t\"'=:(", p[-1]))
			continue;
		if (!n)
			continue;
		snprintf(out, size, "/local/%.*s", (int)(n > 60 ? 60 : n), name);
		return true;
	}
	return false;
}

/*
 * $TMPDIR and /local/... are the node's own disk on a Slurm cluster: on
 * cadre they are spec.scratch. Said once each, at the first line.
 */
static int note_scratch(struct sbatch *s, struct body_state *st, const char *cmd, int line)
{
	char path[80];
	int err;

	if (!st->tmpdir_noted && (strstr(cmd, "$TMPDIR") || strstr(cmd, "${TMPDIR"))) {
		st->tmpdir_noted = true;
		err = convert_note(&s->r->notes, line, NULL, "$TMPDIR is the node's own disk on "
				   "Slurm: give the job spec.scratch, e.g. scratch: {/scratch: {size: "
				   "100Gi}}, and TMPDIR points at it on every node");
		if (err)
			return err;
	}
	if (!st->local_noted && local_path(cmd, path, sizeof(path))) {
		st->local_noted = true;
		return convert_note(&s->r->notes, line, NULL, "%s is the node's own disk on "
				    "Slurm: make it scratch, e.g. scratch: {%s: {size: 100Gi}} (with "
				    "storageClassName for a local-NVMe class), and copy datasets in "
				    "with sbcast or spec.stageIn; keep checkpoints on a Volume", path,
				    path);
	}
	return 0;
}

/* One command (continuation lines joined) starting on line. */
static int check_command(struct sbatch *s, struct body_state *st, const char *cmd, int line)
{
	size_t len;
	const char *w = first_word(cmd, &len);
	int err;

	start_heredoc(st, cmd);
	if (len == 0 || *w == '#')
		return 0;
	if ((err = note_scratch(s, st, cmd, line)))
		return err;
	if (opens_block(w, len)) {
		/* A one-line `if ...; then ...; fi` opens nothing. */
		if (has_word(cmd, closer_of(w, len)))
			return 0;
		if (st->depth < MAX_IF_DEPTH)
			st->guarded[st->depth] = len == 2 && !memcmp(w, "if", 2) && mentions_rank(cmd);
		st->depth++;
		return 0;
	}
	if ((len == 2 && !memcmp(w, "fi", 2)) || (len == 4 && !memcmp(w, "done", 4)) ||
	    (len == 4 && !memcmp(w, "esac", 4))) {
		st->depth -= st->depth > 0;
		return 0;
	}
	/* Syntax, a case pattern "x)", ";;", a function "name() {", or a rank's own block. */
	if (in_list(w, len, syntax_words) || w[len] == ')' || strchr(";&|", *w) ||
	    (w[len] == '(' && w[len + 1] == ')') || guarded(st))
		return 0;
	if (len == 5 && !memcmp(w, "mkdir", 5) && has_word(cmd, "-p"))
		return 0;
	if (len == 5 && !memcmp(w, "mkdir", 5))
		return convert_note(&s->r->notes, line, NULL, "`mkdir` without -p runs on every node: "
				    "on a shared volume it fails on all but the first; use mkdir -p");
	if (in_list(w, len, setup_words))
		return 0;
	if (((len == 5 && !memcmp(w, "conda", 5)) || (len == 5 && !memcmp(w, "mamba", 5))) &&
	    (has_word(cmd, "activate") || has_word(cmd, "deactivate")))
		return 0;
	return convert_note(&s->r->notes, line, NULL, "`%.60s%s` runs on every node: Slurm ran the "
			    "batch script once, cadre runs it on each node; put it under srun, or "
			    "keep it to one node with if [ \"$SLURM_NODEID\" = 0 ]; then ...; fi",
			    cmd + strspn(cmd, " \t"), strlen(cmd) > 60 ? "..." : "");
}

/* Whether line p..end is the end of the current here-document. */
static bool ends_heredoc(const struct body_state *st, const char *p, const char *end)
{
	size_t n = strlen(st->heredoc);

	if (st->heredoc_tabs)
		while (p < end && *p == '\t')
			p++;
	return (size_t)(end - p) == n && !memcmp(p, st->heredoc, n);
}

int sbatch_body_warn(struct sbatch *s, size_t body, int body_line)
{
	const char *text = s->in->text, *end = text + s->in->len, *p = text + body;
	struct body_state st = { .depth = 0 };
	char cmd[4096];
	int line = body_line, err;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;
		int start = line;
		size_t len = 0;

		if (*st.heredoc) {
			if (ends_heredoc(&st, p, eol))
				st.heredoc[0] = '\0';
			p = nl ? nl + 1 : end;
			line++;
			continue;
		}
		if ((size_t)(eol - p) >= 8 && !memcmp(p, "#SBATCH", 7) && (p[7] == ' ' || p[7] == '\t') &&
		    (err = convert_note(&s->r->notes, line, NULL, "#SBATCH after the first command: "
					"sbatch ignores it, and so does cadre")))
			return err;
		/* Join "\"-continued lines into one command. */
		for (;;) {
			size_t n = (size_t)(eol - p);
			bool more = n && p[n - 1] == '\\' && nl;

			n -= more;
			if (len + n >= sizeof(cmd))
				n = sizeof(cmd) - 1 - len;
			memcpy(cmd + len, p, n);
			len += n;
			p = nl ? nl + 1 : end;
			line++;
			if (!more || p >= end)
				break;
			nl = memchr(p, '\n', (size_t)(end - p));
			eol = nl ? nl : end;
		}
		cmd[len] = '\0';
		if ((err = check_command(s, &st, cmd, start)))
			return err;
	}
	return 0;
}
