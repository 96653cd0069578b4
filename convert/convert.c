/*
 * convert.c - the result of a conversion, its notes, and telling the three
 * inputs apart.
 */
#include "convert/convert.h"

#include "base/err.h"
#include "base/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOTE_MESSAGE_MAX 1024

void convert_result_init(struct convert_result *r)
{
	memset(r, 0, sizeof(*r));
	tj_init(&r->tj);
	vol_init(&r->vol);
}

static void note_release(struct convert_note *n)
{
	free(n->option);
	free(n->message);
	memset(n, 0, sizeof(*n));
}

void convert_result_release(struct convert_result *r)
{
	tj_release(&r->tj);
	vol_release(&r->vol);
	for (size_t i = 0; i < r->notes.len; i++)
		note_release(&r->notes.items[i]);
	free(r->notes.items);
	note_release(&r->error);
	for (size_t i = 0; i < r->n_uploads; i++) {
		free(r->uploads[i].source);
		free(r->uploads[i].target);
	}
	free(r->uploads);
	convert_result_init(r);
}

static int note_fill(struct convert_note *n, int line, int column, const char *option,
		     const char *fmt, va_list ap)
{
	char message[NOTE_MESSAGE_MAX];

	vsnprintf(message, sizeof(message), fmt, ap);
	/* One line, whatever the text it quotes holds: control characters become spaces. */
	for (char *c = message; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	n->line = line;
	n->column = column;
	n->option = option ? strdup(option) : NULL;
	n->message = strdup(message);
	if (!n->message || (option && !n->option)) {
		note_release(n);
		return CADRE_ENOMEM;
	}
	return 0;
}

int convert_note(struct convert_notes *notes, int line, const char *option,
		 const char *fmt, ...)
{
	va_list ap;
	int err;

	if (notes->len == notes->cap) {
		size_t cap = notes->cap ? notes->cap * 2 : 8;
		struct convert_note *items = realloc(notes->items, cap * sizeof(*items));

		if (!items)
			return CADRE_ENOMEM;
		notes->items = items;
		notes->cap = cap;
	}
	va_start(ap, fmt);
	err = note_fill(&notes->items[notes->len], line, 0, option, fmt, ap);
	va_end(ap);
	if (!err)
		notes->len++;
	return err;
}

int convert_fail(struct convert_result *r, int line, int column, const char *option,
		 const char *fmt, ...)
{
	va_list ap;
	int err;

	if (r->error.message)
		return CADRE_EPARSE;
	va_start(ap, fmt);
	err = note_fill(&r->error, line, column, option, fmt, ap);
	va_end(ap);
	return err ? err : CADRE_EPARSE;
}

int convert_default_image(const struct convert_input *in, struct convert_result *r,
			  const char *from_file)
{
	if (in->image && *in->image) {
		if (!utf8_valid(in->image, strlen(in->image)))
			return convert_fail(r, CONVERT_LINE_ARGS, 0, "--image",
					    "not UTF-8, and a TrainingJob holds UTF-8 text");
		free(r->tj.spec.image);
		if (!(r->tj.spec.image = strdup(in->image)))
			return CADRE_ENOMEM;
		r->image_from_flag = true;
		return 0;
	}
	return convert_note(&r->notes, 0, NULL, "no image: neither %s nor --image names one, so "
			    "the job takes its Partition's defaultImage, else the controller's "
			    "--default-image", from_file);
}

/* Whether a line starts with "#SBATCH" followed by a blank or its end. */
static bool is_sbatch_line(const char *p, const char *end)
{
	size_t n = sizeof("#SBATCH") - 1;

	return (size_t)(end - p) >= n && !memcmp(p, "#SBATCH", n) &&
	       (p + n == end || p[n] == ' ' || p[n] == '\t' || p[n] == '\n' || p[n] == '\r');
}

/* Whether a line "key:" at column 0 (p..end is one line) is one of keys. */
static bool top_level_key(const char *p, const char *end, const char *const *keys)
{
	for (size_t i = 0; keys[i]; i++) {
		size_t n = strlen(keys[i]);

		if ((size_t)(end - p) > n && !memcmp(p, keys[i], n) && p[n] == ':')
			return true;
	}
	return false;
}

enum convert_kind convert_detect(const char *text, size_t len)
{
	static const char *const task_keys[] = { "run", "setup", "num_nodes", "resources", NULL };
	static const char *const type_key[] = { "type", NULL };
	static const char *const size_key[] = { "size", NULL };
	const char *p = text, *end = text + len;
	bool has_type = false, has_size = false, task = false;

	if (len >= 2 && text[0] == '#' && text[1] == '!')
		return CONVERT_SLURM;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		if (is_sbatch_line(p, eol))
			return CONVERT_SLURM;
		task |= top_level_key(p, eol, task_keys);
		has_type |= top_level_key(p, eol, type_key);
		has_size |= top_level_key(p, eol, size_key);
		p = nl ? nl + 1 : end;
	}
	if (task)
		return CONVERT_SKY_TASK;
	if (has_type && has_size)
		return CONVERT_SKY_VOLUME;
	return CONVERT_UNKNOWN;
}

/* A note's place when sorted: by line, the command line's, the file-wide ones last. */
static long note_rank(const struct convert_note *n)
{
	if (n->line == CONVERT_LINE_ARGS)
		return (long)1 << 39;
	return n->line ? n->line : (long)1 << 40;
}

void convert_notes_sort(struct convert_notes *notes)
{
	/* Insertion sort: stable, and a file has a handful of notes. */
	for (size_t i = 1; i < notes->len; i++) {
		struct convert_note n = notes->items[i];
		size_t k = i;

		for (; k > 0 && note_rank(&notes->items[k - 1]) > note_rank(&n); k--)
			notes->items[k] = notes->items[k - 1];
		notes->items[k] = n;
	}
}

int convert_any(const struct convert_input *in, struct convert_result *r)
{
	int err = 0;

	if (in->len > CONVERT_MAX_INPUT)
		return CADRE_ETOOBIG;
	switch (convert_detect(in->text, in->len)) {
	case CONVERT_SLURM:
		err = convert_slurm(in, r);
		break;
	case CONVERT_SKY_TASK:
		err = convert_sky_task(in, r);
		break;
	case CONVERT_SKY_VOLUME:
		err = convert_sky_volume(in, r);
		break;
	case CONVERT_UNKNOWN:
		goto unknown;
	}
	convert_notes_sort(&r->notes);
	return err;
unknown:
	return convert_fail(r, 1, 0, NULL,
			    "not a Slurm batch script (#! and #SBATCH lines), a SkyPilot task "
			    "(run, setup, num_nodes, resources) or a SkyPilot volume (type, size)");
}

char *convert_job_name(const char *name)
{
	size_t len = 0;
	char out[CONVERT_NAME_MAX + 1];
	bool dash = false;

	for (const char *p = name ? name : ""; *p && len < sizeof(out) - 1; p++) {
		char c = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!alnum) {
			dash = len > 0;
			continue;
		}
		if (len == 0 && c >= '0' && c <= '9')
			continue;
		/* No room for the '-' and a character after it: stop, or two words would run together. */
		if (dash && len + 2 > sizeof(out) - 1)
			break;
		if (dash)
			out[len++] = '-';
		dash = false;
		out[len++] = c;
	}
	while (len && out[len - 1] == '-')
		len--;
	out[len] = '\0';
	return strdup(len ? out : "job");
}
