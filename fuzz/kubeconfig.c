/*
 * kubeconfig.c - a kubeconfig file, as the CLI and the controller load it
 * (kube_config_from_kubeconfig): the YAML, the merge of contexts, clusters
 * and users, base64 data, file references.
 *
 * The loader reads the files a kubeconfig names, so an input that could
 * name a device or a kernel file (which may block on read, or never end)
 * is skipped: anything holding "/dev", "/proc", "/sys" or a backslash
 * (YAML's escapes could spell those). Relative names resolve in a private
 * directory that holds only the kubeconfig. Exec plugins are loaded but
 * never run: running them is kube_config_credentials', not the loader's.
 *
 * Properties: a config loads with a server URL and a namespace, or the
 * failure is one line that says what.
 */
#include "fuzz/fuzz.h"

#include "base/err.h"
#include "kube/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/cadre-fuzz-kubeconfig-XXXXXX", path[64];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static void setup(void)
{
	FUZZ_CHECK(mkdtemp(dir), "cannot make a directory for the kubeconfig");
	atexit(cleanup);
	snprintf(path, sizeof(path), "%s/config", dir);
	/* A reference to /dev/stdin must not wait for a terminal. */
	FUZZ_CHECK(freopen("/dev/null", "r", stdin), "cannot reopen stdin");
}

static bool may_name_a_device(const uint8_t *data, size_t size)
{
	static const char *const words[] = { "/dev", "/proc", "/sys", "\\" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (memmem(data, size, words[i], strlen(words[i])))
			return true;
	return false;
}

int fuzz_kubeconfig(const uint8_t *data, size_t size)
{
	struct kube_config *cfg = NULL;
	struct kube_status st;
	FILE *f;
	int err;

	if (may_name_a_device(data, size))
		return 0;
	if (!*path)
		setup();
	FUZZ_CHECK((f = fopen(path, "wb")), "cannot write %s", path);
	FUZZ_CHECK(fwrite(data, 1, size, f) == size && !fclose(f), "cannot write %s", path);
	kube_status_clear(&st);
	err = kube_config_from_kubeconfig(path, NULL, &cfg, &st);
	if (!err) {
		FUZZ_CHECK(cfg && cfg->server && *cfg->server, "a config without a server");
		FUZZ_CHECK(!strncmp(cfg->server, "https://", 8) || !strncmp(cfg->server, "http://", 7),
			   "server \"%s\" is no http(s) URL", cfg->server);
		FUZZ_CHECK(cfg->namespace && *cfg->namespace, "a config without a namespace");
	} else {
		FUZZ_CHECK(!cfg, "a failed load left a config");
		FUZZ_CHECK(st.message[0] && !strchr(st.message, '\n'),
			   "failure %d is not one line: \"%s\"", err, st.message);
	}
	kube_config_free(cfg);
	return 0;
}
