#include "unit/support/clirun.h"
#include "cli/cli.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int clirun(const char *dir, const char *line, const char *kubeconfig, char **out, char **err)
{
	char copy[2048], *argv[64];
	size_t out_len, err_len;
	int argc = 0, code;
	FILE *o, *e;

	free(*out);
	free(*err);
	*out = *err = NULL;
	snprintf(copy, sizeof(copy), "%s", line);
	argv[argc++] = "cadre";
	for (char *p = copy, *sp; p && *p && argc < 63; p = sp ? sp + 1 : NULL) {
		sp = strchr(p, ' ');
		if (sp)
			*sp = '\0';
		argv[argc++] = kubeconfig && !strcmp(p, "KC") ? (char *)kubeconfig : p;
	}
	argv[argc] = NULL;
	o = open_memstream(out, &out_len);
	e = open_memstream(err, &err_len);
	cr_assert(o && e);
	cr_assert_eq(chdir(dir), 0);
	code = cli_main(argc, argv, o, e);
	fclose(o);
	fclose(e);
	return code;
}

void clirun_kubeconfig(const char *path, const char *server_url)
{
	FILE *f = fopen(path, "w");

	cr_assert(f);
	fprintf(f, "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
		"clusters:\n- name: fake\n  cluster:\n    server: %s\n"
		"users:\n- name: alice\n  user:\n    token: secret-token\n"
		"contexts:\n- name: fake\n  context: {cluster: fake, user: alice, namespace: ml}\n"
		"- name: plain\n  context: {cluster: fake, user: alice}\n", server_url);
	fclose(f);
}
