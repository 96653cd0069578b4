/*
 * entrypoint.h - the script every cadre pod runs first (docs/design.md 2.2).
 *
 * The script reaches a pod as the key ENTRYPOINT_KEY of the job's ConfigMap
 * (build_entrypoint_configmap; in binaryData, so that the pod's envFrom of
 * the same ConfigMap takes only the variables), mounted at ENTRYPOINT_DIR, and the pod's
 * command sources it: ["/bin/sh", "-c", ". " ENTRYPOINT_PATH]. Sourced by
 * `sh -c`, it runs in the shell of that command (PID 1, $0 /bin/sh, its
 * traps and exit that shell's) exactly as it did when it was the -c text
 * itself, and the pod carries one short line instead of the whole script
 * (docs/pods.md). The script is POSIX sh (bash and dash both run it) and
 * takes every input from the
 * container's environment, under the names below, so the user's setup and
 * run texts never pass through a quoting step. It
 *   1. cds to CADRE_WORKDIR, if set (exit ENTRYPOINT_EXIT_WORKDIR if absent);
 *      then, when CADRE_BIN_DIR is set, writes srun, scontrol and module
 *      there (POSIX sh scripts: Slurm's commands as a batch script on one
 *      node of the gang sees them, docs/pods.md) and cadre-signal (which
 *      `cadre scancel --signal` execs: it signals the program, whose pid the
 *      entrypoint keeps in program.pid there) and puts it first on PATH
 *      (exit ENTRYPOINT_EXIT_CONFIG if it cannot be written);
 *   2. names the peers (see ENTRYPOINT_ENV_PEER_DOMAIN) and exports them
 *      as ENTRYPOINT_ENV_PEERS, waits until every one resolves (getent), at
 *      most CADRE_GANG_TIMEOUT_SECONDS (exit ENTRYPOINT_EXIT_PEERS_TIMEOUT,
 *      naming the peers that never resolved), and exports SKYPILOT_NODE_IPS
 *      as their addresses, newline-separated, in rank order;
 *   3. runs CADRE_SETUP, then CADRE_RUN, under bash if the image has it and
 *      sh otherwise. A setup that fails ends the pod with setup's exit code
 *      and run never starts; run's exit code is the pod's. SIGTERM and SIGINT
 *      are passed on to the whole process group as SIGTERM.
 * Its own failures are also written to /dev/termination-log when the kubelet
 * provides that file, so the reconciler can quote them. docs/pods.md has the
 * reasons for each choice. controller/build/entrypoint.sh is the same text in a
 * readable file; a unit test keeps the two identical.
 */
#ifndef CADRE_ENTRYPOINT_H
#define CADRE_ENTRYPOINT_H

#include <jansson.h>

/*
 * Where the pod finds the script: the ConfigMap's key ENTRYPOINT_KEY,
 * mounted read-only at ENTRYPOINT_DIR (beside the /cadre/bin emptyDir,
 * not inside it: the script writes there).
 */
#define ENTRYPOINT_DIR "/cadre/entrypoint"
#define ENTRYPOINT_KEY "entrypoint.sh"
#define ENTRYPOINT_PATH ENTRYPOINT_DIR "/" ENTRYPOINT_KEY

/*
 * Environment variables the script reads. The peers are not listed: with
 * CADRE_PEER_DOMAIN set (<job>.<namespace>.svc) they are
 * CADRE_JOB_NAME-0 ... CADRE_JOB_NAME-(NNODES-1) in that domain, so a pod's
 * size does not grow with its gang (docs/pods.md). Unset, nothing is awaited.
 */
#define ENTRYPOINT_ENV_PEER_DOMAIN "CADRE_PEER_DOMAIN"
#define ENTRYPOINT_ENV_JOB_NAME "CADRE_JOB_NAME"
#define ENTRYPOINT_ENV_NNODES "NNODES"
#define ENTRYPOINT_ENV_TIMEOUT "CADRE_GANG_TIMEOUT_SECONDS"  /* decimal, default 600 */
#define ENTRYPOINT_ENV_WORKDIR "CADRE_WORKDIR"  /* optional */
#define ENTRYPOINT_ENV_SETUP "CADRE_SETUP"      /* optional shell text */
#define ENTRYPOINT_ENV_RUN "CADRE_RUN"          /* required shell text */
/*
 * A writable directory (an emptyDir) the script writes srun, scontrol and
 * module into and puts first on PATH; unset, the commands are not written.
 */
#define ENTRYPOINT_ENV_BIN_DIR "CADRE_BIN_DIR"
/* What the script exports: the peers' DNS names, space-separated, rank order. */
#define ENTRYPOINT_ENV_PEERS "CADRE_PEERS"
/* Where its own failures are recorded; tests point it at a file of theirs. */
#define ENTRYPOINT_ENV_TERMINATION_LOG "CADRE_TERMINATION_LOG"
/*
 * spec.hang (docs/pods.md, "Hangs"): with CADRE_HANG_PROGRESS_SECONDS set the
 * script watches setup and run for progress: the file CADRE_HEARTBEAT_FILE
 * touched, or output on stdout or stderr (copied through, with the bytes
 * counted). No progress within CADRE_HANG_STARTUP_SECONDS of the start, or
 * within CADRE_HANG_PROGRESS_SECONDS of the last, ends the program and the
 * pod with ENTRYPOINT_EXIT_HUNG and a termination message that starts
 * ENTRYPOINT_HUNG_MESSAGE. CADRE_NCCL_DUMP_DIR is made, for PyTorch's NCCL
 * flight recorder dumps. Unset, nothing is watched and nothing is copied.
 */
#define ENTRYPOINT_ENV_HEARTBEAT_FILE "CADRE_HEARTBEAT_FILE"
#define ENTRYPOINT_ENV_HANG_STARTUP "CADRE_HANG_STARTUP_SECONDS"
#define ENTRYPOINT_ENV_HANG_PROGRESS "CADRE_HANG_PROGRESS_SECONDS"
#define ENTRYPOINT_ENV_NCCL_DUMP_DIR "CADRE_NCCL_DUMP_DIR"
#define ENTRYPOINT_HUNG_MESSAGE "cadre: hung: "
/*
 * spec.signal (docs/pods.md, "Signals"): CADRE_SIGNAL (a name, USR1) reaches
 * the program CADRE_SIGNAL_SECONDS_BEFORE seconds before CADRE_DEADLINE (Unix
 * seconds, when activeDeadlineSeconds runs out), and at once on SIGTERM,
 * which then follows CADRE_SIGNAL_SECONDS_BEFORE later.
 */
#define ENTRYPOINT_ENV_SIGNAL "CADRE_SIGNAL"
#define ENTRYPOINT_ENV_SIGNAL_BEFORE "CADRE_SIGNAL_SECONDS_BEFORE"
#define ENTRYPOINT_ENV_DEADLINE "CADRE_DEADLINE"
/* sbatch --output/--error patterns (spec.output, spec.error): the program's output also goes there. */
#define ENTRYPOINT_ENV_OUTPUT "CADRE_OUTPUT"
#define ENTRYPOINT_ENV_ERROR "CADRE_ERROR"
/*
 * spec.stageIn (docs/volumes.md, "Scratch"): FROM and TO on lines of their
 * own, pair after pair. Before setup the script copies each FROM to TO
 * through the pod's sbcast (once per node: a second rank on the node waits
 * for the first's copy), logs how long each took, and ends the pod with
 * ENTRYPOINT_EXIT_STAGE_IN when one cannot be copied.
 */
#define ENTRYPOINT_ENV_STAGE_IN "CADRE_STAGE_IN"
/*
 * spec.code (docs/code.md): a line per bundle, "<digest> <dir|file> <parts
 * directory> <path>". Before anything else the script joins the parts (the
 * files 0, 1, ... of the directory), checks their sha256 against the
 * digest, lists the archive and refuses any entry that would land outside
 * path (an absolute name, a ".." component, a device, FIFO or hard link),
 * then unpacks it with the image's tar into path (a directory: the
 * emptyDir mounted there) or writes its one file at path. Any failure ends
 * the pod with ENTRYPOINT_EXIT_CODE and a message naming the digest.
 */
#define ENTRYPOINT_ENV_CODE "CADRE_CODE"
/*
 * spec.restartStrategy InPlace (docs/failures.md, "In-place restart"): a file
 * the kubelet keeps holding the pod's cadre.dev/restart-attempt label, which
 * the controller raises to tell the rank that a new attempt began. The
 * script exports that attempt as CADRE_RESTART_ATTEMPT and
 * SLURM_RESTART_COUNT; when it rises under a running program, the program
 * is stopped and the container ends with ENTRYPOINT_EXIT_RESTART and a
 * termination message starting ENTRYPOINT_RESTART_MESSAGE, which the
 * kubelet's restart rule turns into a restart in the same pod. A restarted
 * container whose run of the current attempt ended waits for the next one.
 * Every termination message in this mode ends with a line
 * ENTRYPOINT_ATTEMPT_TAG followed by the attempt the run belonged to, so the
 * controller tells a failure of this attempt from one already counted.
 */
#define ENTRYPOINT_ENV_ATTEMPT_FILE "CADRE_ATTEMPT_FILE"
#define ENTRYPOINT_ATTEMPT_TAG "cadre-attempt: "
#define ENTRYPOINT_RESTART_MESSAGE "cadre: stopped for attempt "

/*
 * Exit codes of the script's own failures. They sit just below the shell's
 * 126/127 and match timeout(1)'s 124 for the timeout, where user code rarely
 * lands; the termination message tells them apart for certain.
 */
enum entrypoint_exit {
	/* CADRE_RUN empty, bad timeout, no getent, CADRE_BIN_DIR not writable */
	ENTRYPOINT_EXIT_CONFIG = 121,
	ENTRYPOINT_EXIT_WORKDIR = 122,        /* CADRE_WORKDIR is not a directory */
	ENTRYPOINT_EXIT_PEERS_TIMEOUT = 124,  /* some peer never resolved */
	ENTRYPOINT_EXIT_HUNG = 125,           /* spec.hang: no progress in time */
	ENTRYPOINT_EXIT_STAGE_IN = 120,       /* spec.stageIn: a copy failed */
	ENTRYPOINT_EXIT_CODE = 119,           /* spec.code: a bundle is not sound or not unpacked */
	ENTRYPOINT_EXIT_RESTART = 117,        /* InPlace: stopped for the next attempt, no failure */
};

/* The script text; static, never NULL. */
const char *entrypoint_script(void);

/*
 * The script in base64, as the ConfigMap's binaryData holds it: encoded
 * once, on the first call (thread-safe); NULL only when that ran out of
 * memory.
 */
const char *entrypoint_script_base64(void);

/*
 * The container command ["/bin/sh", "-c", ". " ENTRYPOINT_PATH] as a new
 * reference, or NULL when out of memory.
 */
json_t *entrypoint_command(void);

#endif
