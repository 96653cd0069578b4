/*
 * dashboard.h - `cadre dashboard` (docs/design.md 10): its entry in the command
 * table of cli/cli.c and its --help.
 */
#ifndef CADRE_CLI_DASHBOARD_H
#define CADRE_CLI_DASHBOARD_H

#include "cli/cli.h"

/* `cadre dashboard`: args[0..n) are every word after the command. Runs until Ctrl-C. */
int cli_dashboard(const struct cli_globals *g, char **args, int n, FILE *out, FILE *err);

#define CLI_DASHBOARD_SUMMARY "a live page of the jobs, their ranks and logs, and the GPUs"

#define CLI_DASHBOARD_HELP \
	"Usage: cadre dashboard [--port N] [--address 127.0.0.1] [--open] [-A]\n" \
	"\n" \
	"Serves a live page of the TrainingJobs of the namespace (-A: every namespace),\n" \
	"read with your kubeconfig through watches: the job list with phase, nodes\n" \
	"ready/total, accelerators, queue position and why a job waits; a job's ranks,\n" \
	"conditions, events and live logs; the GPU nodes and the admission queue. Cancel,\n" \
	"suspend and resume act with your credentials. Prints a URL with a one-time\n" \
	"code: the browser that opens it gets a session of its own, and another URL is\n" \
	"printed for the next browser. Ctrl-C stops it.\n" \
	"\n" \
	"Flags:\n" \
	"      --port N            the port (default 0: a free one)\n" \
	"      --address ADDR      the address to listen on (default 127.0.0.1; 0.0.0.0 or ::\n" \
	"                          for every one: the page answers to this machine's\n" \
	"                          names and addresses, said at start)\n" \
	"      --allow-remote      allow an --address other than loopback (the page acts\n" \
	"                          as you for whoever opens the URL)\n" \
	"      --open              open the page with xdg-open (given a file that leads\n" \
	"                          there, never the URL: other users see its arguments)\n" \
	"  -A, --all-namespaces    every namespace\n" \
	"      --help              this help\n" \
	"\n" \
	"Examples:\n" \
	"  cadre dashboard --open\n" \
	"  cadre -n ml dashboard --port 8765\n" \
	"  cadre dashboard --allow-remote --address 0.0.0.0 --port 8765\n"

#endif
