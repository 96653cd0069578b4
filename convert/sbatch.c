/*
 * sbatch.c - reading a batch script the way sbatch does (src/sbatch/opt.c,
 * _get_argument and _opt_batch_script): the first line must be "#!";
 * "#SBATCH" lines are read until the first line that is neither blank nor a
 * comment; their words split at blanks, with double quotes and backslashes,
 * and an unquoted '#' that starts a word starts a comment (one inside a
 * word is kept, so pyxis's "nvcr.io#nvidia/pytorch" reads as written). What follows the #SBATCH block
 * becomes spec.run, and its commands outside srun that do more than set up
 * the environment are reported: they now run on every node (docs/design.md 2.4).
 *
 * Bytes that are not UTF-8 (docs/migrating.md): a comment line is read as
 * Latin-1, which old scripts' comments are often written in; any other line
 * is refused at its first such byte, since its bytes reach the pods as they
 * are and a TrainingJob holds only UTF-8.
 */
#include "convert/sbatch.h"

#include "base/buf.h"
#include "base/err.h"
#include "base/utf8.h"

#include <stdlib.h>
#include <string.h>

/* Longest #SBATCH word kept; sbatch's own buffer is smaller. */
#define ARG_MAX_LEN 4096

struct line {
	const char *p, *end;  /* without the '\n' */
	int number;
};

/* The line that starts at *at, or false at the end of the text. */
static bool next_line(const char *text, size_t len, size_t *at, struct line *l)
{
	const char *nl;

	if (*at >= len)
		return false;
	l->p = text + *at;
	nl = memchr(l->p, '\n', len - *at);
	l->end = nl ? nl : text + len;
	*at = (size_t)(l->end - text) + (nl ? 1 : 0);
	l->number++;
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

static int push_arg(struct sbatch *s, const char *word, size_t len, int line)
{
	char *copy;

	if (s->n_args == s->cap_args) {
		size_t cap = s->cap_args ? s->cap_args * 2 : 16;
		struct sbatch_arg *args = realloc(s->args, cap * sizeof(*args));

		if (!args)
			return CADRE_ENOMEM;
		s->args = args;
		s->cap_args = cap;
	}
	if (!(copy = strndup(word, len)))
		return CADRE_ENOMEM;
	s->args[s->n_args].text = copy;
	s->args[s->n_args++].line = line;
	return 0;
}

/* The words of one #SBATCH line (p..end, after "#SBATCH"). */
static int split_words(struct sbatch *s, const char *p, const char *end, int line)
{
	char word[ARG_MAX_LEN];

	for (;;) {
		size_t len = 0;
		bool quoted = false;
		int err;

		p = skip_blanks(p, end);
		if (p == end || *p == '#')
			return 0;
		while (p < end && (quoted || !is_blank(*p))) {
			if (*p == '\\' && p + 1 < end) {
				p++;
			} else if (*p == '"') {
				quoted = !quoted;
				p++;
				continue;
			} else if (*p == '#' && !quoted && len == 0) {
				break;
			}
			if (len == sizeof(word) - 1)
				return convert_fail(s->r, line, 0, NULL, "#SBATCH word longer than %d bytes",
						    ARG_MAX_LEN - 1);
			word[len++] = *p++;
		}
		if (quoted)
			return convert_fail(s->r, line, 0, NULL, "#SBATCH line has an unmatched \"");
		if (len == 0 && p < end && *p == '#')
			return 0;
		if ((err = push_arg(s, word, len, line)))
			return err;
	}
}

static bool is_sbatch(const struct line *l)
{
	size_t n = sizeof("#SBATCH") - 1;

	return (size_t)(l->end - l->p) >= n && !memcmp(l->p, "#SBATCH", n) &&
	       (l->p + n == l->end || is_blank(l->p[n]));
}

/* What sbatch itself refuses before it reads an option. */
static int check_script(const struct convert_input *in, struct convert_result *r)
{
	if (in->len > CONVERT_MAX_INPUT)
		return CADRE_ETOOBIG;
	if (memchr(in->text, '\0', in->len))
		return convert_fail(r, 0, 0, NULL, "the script holds a NUL byte (sbatch refuses it too)");
	if (in->len < 2 || in->text[0] != '#' || in->text[1] != '!')
		return convert_fail(r, 1, 1, NULL,
				    "not a batch script: the first line must start with #! and "
				    "the interpreter, as sbatch requires");
	for (size_t i = 0; i + 1 < in->len; i++)
		if (in->text[i] == '\r' && in->text[i + 1] == '\n')
			return convert_fail(r, 0, 0, NULL,
					    "DOS line breaks (\\r\\n): sbatch refuses them; convert "
					    "with dos2unix");
	return 0;
}

/* A line bash reads as a comment: '#' first after blanks, not "#!" or "#SBATCH". */
static bool is_comment(const struct line *l)
{
	const char *p = skip_blanks(l->p, l->end);

	return l->number > 1 && p < l->end && *p == '#' && !is_sbatch(l);
}

/* The 1-based column, in characters, of the byte at offset in a line whose bytes before it are UTF-8. */
static int column_of(const char *p, size_t offset)
{
	int column = 1;

	for (size_t i = 0; i < offset && column < INT32_MAX; i++)
		column += ((unsigned char)p[i] & 0xc0) != 0x80;
	return column;
}

/* Refuse the first line that is not UTF-8 and not a comment (see the top of the file). */
static int check_encoding(const struct convert_input *in, struct convert_result *r)
{
	struct line l = { 0 };
	size_t at = 0;

	if (utf8_valid(in->text, in->len))
		return 0;
	while (next_line(in->text, in->len, &at, &l)) {
		size_t n = (size_t)(l.end - l.p), ok = utf8_valid_len(l.p, n);

		if (ok < n && !is_comment(&l))
			return convert_fail(r, l.number, column_of(l.p, ok), NULL,
					    "byte 0x%02X is not UTF-8: a TrainingJob holds UTF-8 "
					    "text, and only comment lines are read as Latin-1 "
					    "(iconv -f latin1 -t utf-8 converts the script)",
					    (unsigned char)l.p[ok]);
	}
	return 0;
}

/*
 * The #SBATCH block: words into s->args; *body and *body_line where the
 * lines after the last #SBATCH line of the block start.
 */
static int read_header(struct sbatch *s, size_t *body, int *body_line)
{
	const struct convert_input *in = s->in;
	struct line l = { 0 };
	size_t at = 0;
	int err;

	next_line(in->text, in->len, &at, &l);  /* the "#!" line */
	*body = at;
	*body_line = 2;
	while (next_line(in->text, in->len, &at, &l)) {
		const char *p = skip_blanks(l.p, l.end);

		if (is_sbatch(&l)) {
			if ((err = split_words(s, l.p + 7, l.end, l.number)))
				return err;
			*body = at;
			*body_line = l.number + 1;
		} else if (p != l.end && *p != '#') {
			break;
		}
	}
	return 0;
}

/* The word of p..end that starts at p, and where it ends. */
static const char *word_end(const char *p, const char *end)
{
	while (p < end && !is_blank(*p))
		p++;
	return p;
}

/* The base name of the "#!" interpreter ("env bash" counts as bash). */
static int check_interpreter(struct sbatch *s)
{
	const char *end = memchr(s->in->text, '\n', s->in->len);
	const char *p, *w, *base;

	if (!end)
		end = s->in->text + s->in->len;
	p = skip_blanks(s->in->text + 2, end);
	w = word_end(p, end);
	base = p;
	for (const char *q = p; q < w; q++)
		if (*q == '/')
			base = q + 1;
	if (w - base == 3 && !memcmp(base, "env", 3)) {
		base = skip_blanks(w, end);
		w = word_end(base, end);
	}
	if ((w - base == 4 && !memcmp(base, "bash", 4)) || (w - base == 2 && !memcmp(base, "sh", 2)))
		return 0;
	return convert_note(&s->r->notes, 1, NULL,
			    "the script's interpreter is \"%.*s\"; cadre runs spec.run with bash",
			    (int)(end - p > 80 ? 80 : end - p), p);
}

/*
 * spec.run from byte start (line number) on, where check_encoding has let
 * through comment lines that are not UTF-8: those read as Latin-1, with a
 * note on the first.
 */
static int set_run_latin1(struct sbatch *s, size_t start, int number)
{
	const char *text = s->in->text;
	size_t len = s->in->len, at = start;
	struct line l = { .number = number - 1 };
	struct buf run;
	char wide[2 * 256];
	int first = 0, more = 0, err;

	buf_init(&run, 2 * CONVERT_MAX_INPUT);
	while (next_line(text, len, &at, &l)) {
		size_t n = (size_t)(l.end - l.p);

		if (utf8_valid(l.p, n)) {
			buf_add(&run, l.p, n);
		} else {
			for (size_t i = 0; i < n; i += sizeof(wide) / 2) {
				size_t chunk = n - i < sizeof(wide) / 2 ? n - i : sizeof(wide) / 2;

				buf_add(&run, wide, utf8_from_latin1(l.p + i, chunk, wide));
			}
			more += first != 0;
			if (!first)
				first = l.number;
		}
		if (l.end < text + len)
			buf_add(&run, "\n", 1);
	}
	if ((err = buf_error(&run)))
		goto out;
	err = CADRE_ENOMEM;
	if (!(s->r->tj.spec.run = strndup(run.data ? run.data : "", run.len)))
		goto out;
	if (more)
		err = convert_note(&s->r->notes, first, NULL, "comment not in UTF-8, read as "
				   "Latin-1 (ISO 8859-1), and so %s %d more after it",
				   more == 1 ? "is" : "are", more);
	else
		err = convert_note(&s->r->notes, first, NULL,
				   "comment not in UTF-8, read as Latin-1 (ISO 8859-1)");
out:
	buf_release(&run);
	return err;
}

/* spec.run: the lines after the #SBATCH block, leading blank lines dropped. */
static int set_run(struct sbatch *s, size_t body, int body_line)
{
	const char *text = s->in->text;
	size_t len = s->in->len, at = body;
	struct line l = { .number = body_line - 1 };
	size_t start = body;

	while (next_line(text, len, &at, &l)) {
		if (skip_blanks(l.p, l.end) != l.end)
			break;
		start = at;
	}
	at = start;
	/* Blank as tj_validate reads spec.run: carriage returns count too. */
	while (at < len && (text[at] == '\r' || text[at] == '\n' || is_blank(text[at])))
		at++;
	if (start >= len || at >= len)
		return convert_fail(s->r, body_line - 1, 0, NULL,
				    "no commands after the #SBATCH lines: spec.run would be empty");
	if (utf8_valid(text + start, len - start))
		return (s->r->tj.spec.run = strndup(text + start, len - start)) ? 0 : CADRE_ENOMEM;
	return set_run_latin1(s, start, l.number);
}

/* The command line's options after the script's: applied later, they win. */
static int add_command_line(struct sbatch *s)
{
	for (size_t i = 0; i < s->in->n_args; i++) {
		const char *a = s->in->args[i];
		int err;

		size_t n = strlen(a), ok = utf8_valid_len(a, n);

		if (ok < n)
			return convert_fail(s->r, CONVERT_LINE_ARGS, 0, NULL,
					    "option %zu, column %d: byte 0x%02X is not UTF-8, and a "
					    "TrainingJob holds UTF-8 text", i + 1, column_of(a, ok),
					    (unsigned char)a[ok]);
		if ((err = push_arg(s, a, n, CONVERT_LINE_ARGS)))
			return err;
	}
	return 0;
}

int convert_slurm(const struct convert_input *in, struct convert_result *r)
{
	struct sbatch s = { .in = in, .r = r };
	size_t body = 0;
	int body_line = 0, err;

	r->kind = CONVERT_SLURM;
	if ((err = check_script(in, r)) || (err = check_encoding(in, r)) ||
	    (err = read_header(&s, &body, &body_line)) ||
	    (err = add_command_line(&s)) ||
	    (err = check_interpreter(&s)) || (err = sbatch_apply(&s)) ||
	    (err = set_run(&s, body, body_line)))
		goto out;
	err = sbatch_body_warn(&s, body, body_line);
out:
	for (size_t i = 0; i < s.n_args; i++)
		free(s.args[i].text);
	free(s.args);
	free(s.job_name);
	free(s.output);
	free(s.error);
	return err;
}
