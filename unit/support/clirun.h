/*
 * clirun.h - the cadre command line run in-process, as a person types it,
 * for the tests of its commands.
 */
#ifndef CADRE_UNIT_CLIRUN_H
#define CADRE_UNIT_CLIRUN_H

/*
 * Run cadre with the words of line (split at single spaces) in directory
 * dir, the word KC replaced by kubeconfig when that is not NULL. *out and
 * *err are freed, then receive what it printed (the caller frees them).
 * Returns its exit code. At most 63 words.
 */
int clirun(const char *dir, const char *line, const char *kubeconfig, char **out, char **err);

/*
 * Write a kubeconfig to path for a fake API server at server_url: user
 * alice with token "secret-token"; context "fake" (current, namespace ml)
 * and "plain" (no namespace). Fails the test when it cannot.
 */
void clirun_kubeconfig(const char *path, const char *server_url);

#endif
