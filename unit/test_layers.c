/*
 * test_layers.c - the source tree's floors (STYLE.md, docs/source-map.md):
 * which folder's files may include which. base/ is below everything; api/
 * and kube/ never include each other (the types are tested without a
 * network, the client serves any resource); convert/ stands on api/; the
 * command line (cli/) on api/, kube/ and convert/, never on the
 * controller's rooms.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* The "#include \"X/...\"" lines of dir's .c and .h files whose X is not in allowed. */
static void check(const char *dir, const char *allowed)
{
	char path[512], line[1024], found[4096] = "";
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/%s", CADRE_SOURCE_DIR, dir);
	d = opendir(path);
	cr_assert(d, "no directory %s", path);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		FILE *f;
		int lineno = 0;

		if (n < 3 || (strcmp(e->d_name + n - 2, ".c") && strcmp(e->d_name + n - 2, ".h")))
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", CADRE_SOURCE_DIR, dir, e->d_name);
		f = fopen(path, "r");
		cr_assert(f, "cannot read %s", path);
		while (fgets(line, sizeof(line), f)) {
			char folder[64], want[80];
			const char *p = line;

			lineno++;
			p += strspn(p, " \t");
			if (strncmp(p, "#include \"", 10))
				continue;
			p += 10;
			if (!strchr(p, '/') || (size_t)(strchr(p, '/') - p) >= sizeof(folder))
				continue;
			snprintf(folder, sizeof(folder), "%.*s", (int)(strchr(p, '/') - p), p);
			snprintf(want, sizeof(want), " %s ", folder);
			snprintf(path, sizeof(path), " %s ", allowed);
			if (!strstr(path, want)) {
				size_t used = strlen(found);

				snprintf(found + used, sizeof(found) - used, "\n  %s/%s:%d: %.*s", dir,
					 e->d_name, lineno, (int)strcspn(line, "\n"), line);
			}
		}
		fclose(f);
	}
	closedir(d);
	cr_expect_str_empty(found, "%s/ may include only %s:%s", dir, allowed, found);
}

Test(layers, base_includes_only_base)
{
	check("base", "base");
}

Test(layers, api_and_kube_never_include_each_other)
{
	check("api", "base api");
	check("kube", "base kube");
}

Test(layers, convert_stands_on_api)
{
	check("convert", "base api convert");
}

Test(layers, the_command_line_stands_on_api_kube_and_convert_not_on_the_controller)
{
	check("cli", "base api kube convert cli");
	check("cli/dashboard", "base api kube convert cli");
}
