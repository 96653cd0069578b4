/* main.c - the `cadre` binary; everything is in cli_main (cli/cli.c). */
#include "cli/cli.h"

#include "base/log.h"

int main(int argc, char **argv)
{
	/*
	 * kube/'s log lines are a daemon's; a command says what went wrong in
	 * its own one line, and a warning (a proxy that stopped answering, an
	 * unverified server) is the most it adds.
	 */
	log_setup(LOG_WARN, LOG_TEXT);
	return cli_main(argc, argv, stdout, stderr);
}
