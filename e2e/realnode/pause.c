/*
 * pause: the process of a pod's sandbox container on the real node (e2e/realnode.bash).
 *
 * The container runtime starts one per pod to hold its namespaces; it must sleep until
 * told to stop, stop at once on SIGTERM or SIGINT (the kubelet stops sandboxes with
 * SIGTERM, and PID 1 has no default action for it), and reap the zombies a shared PID
 * namespace would hand it. Upstream's build/pause/linux/pause.c does the same; this one
 * is built here, statically, so the image needs nothing from a registry.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig)
{
	(void)sig;
	_exit(0);
}

static void reap(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	if (argc > 1 && !strcmp(argv[1], "-v")) {
		puts("pause (cadre e2e)");
		return 0;
	}
	if (getpid() != 1)
		fprintf(stderr, "pause: warning: not PID 1\n");

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = stop;
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return 1;
	sa.sa_handler = reap;
	sa.sa_flags = SA_NOCLDSTOP;
	if (sigaction(SIGCHLD, &sa, NULL))
		return 2;
	for (;;)
		pause();
	return 3;
}
