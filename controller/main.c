/*
 * cadre-controller: the operator process. Reads its flags, connects to the
 * API server, serves /metrics, /healthz and /readyz, and runs the
 * TrainingJob and Volume reconcilers until SIGTERM or SIGINT, on which it
 * stops writing, hands the leader Lease back and exits 0.
 */
#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "controller/manager/manager.h"
#include "controller/options.h"
#include "controller/serve/serve.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static struct manager manager;

/* Signals are blocked in every thread and taken here, so no handler runs
 * in the middle of a lock: stopping is an ordinary call. */
static void *signal_thread(void *arg)
{
	sigset_t *set = arg;
	int sig = 0;

	if (sigwait(set, &sig) == 0) {
		log_info("main", "received %s; shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		manager_stop(&manager);
	}
	return NULL;
}

static const char *env_lookup(const char *name)
{
	return getenv(name);
}

/*
 * glibc's malloc gives every thread that allocates an arena of its own (up
 * to 8 per core), and each keeps the memory it once held: the reflector
 * threads that decode lists, the workers, the HTTP threads. Two arenas
 * serve this process's few allocating threads, free memory above 1 MiB at
 * the top of the heap goes back to the system, and blocks of 256 KiB and
 * more (a list's body) are mapped apart and returned when freed: the
 * resident set stays what the caches hold (docs/design.md 8).
 */
static void memory_setup(void)
{
	mallopt(M_ARENA_MAX, 2);
	mallopt(M_TRIM_THRESHOLD, 1 << 20);
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
}

int main(int argc, char **argv)
{
	struct options opts;
	struct buf err_msg;
	struct server *srv = NULL;
	struct serve_opts sopts;
	pthread_t sig_tid;
	sigset_t set;
	int err, status = 1;

	memory_setup();
	buf_init(&err_msg, 4096);
	err = options_parse(&opts, argc, argv, env_lookup, &err_msg);
	if (err) {
		fprintf(stderr, "cadre-controller: %s\n", buf_str(&err_msg));
		goto out_opts;
	}
	if (opts.show_help) {
		fputs(options_usage(), stdout);
		status = 0;
		goto out_opts;
	}
	if (opts.show_version) {
		printf("cadre-controller %s\n", CADRE_VERSION);
		status = 0;
		goto out_opts;
	}
	log_setup(opts.log_level, opts.log_format);

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	log_info("main", "cadre-controller %s starting (gang scheduler %s, %d workers)",
		 CADRE_VERSION, gang_mode_name(opts.gang_scheduler), opts.workers);
	err = manager_init(&manager, &opts);
	if (err) {
		log_error("main", "start-up failed: %s", cadre_strerror(err));
		goto out_manager;
	}
	sopts = (struct serve_opts){ .metrics_addr = opts.metrics_addr,
				     .health_addr = opts.health_addr,
				     .registry = manager.registry,
				     .ready = manager_synced, .ctx = &manager };
	err = serve_start(&sopts, &srv);
	if (err) {
		log_error("main", "cannot serve metrics/health on %s / %s: %s", opts.metrics_addr,
			  opts.health_addr, cadre_strerror(err));
		goto out_manager;
	}
	if (pthread_create(&sig_tid, NULL, signal_thread, &set)) {
		log_error("main", "cannot start the signal thread");
		goto out_server;
	}
	pthread_detach(sig_tid);

	err = manager_run(&manager);
	if (err)
		log_error("main", "stopped: %s", cadre_strerror(err));
	else
		status = 0;
out_server:
	serve_stop(srv);
out_manager:
	manager_release(&manager);
	log_info("main", "stopped");
out_opts:
	options_release(&opts);
	buf_release(&err_msg);
	return status;
}
