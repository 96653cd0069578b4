# cadre entrypoint (controller/build/entrypoint.sh; docs/pods.md says why it is so).
# Sourced as `/bin/sh -c '. /cadre/entrypoint/entrypoint.sh'` from the job's
# ConfigMap, so it runs in that shell as a -c text would: POSIX sh, so bash and
# dash both run it.
# Every input comes from the environment the controller set on the container,
# never from this text, so the user's setup and run need no quoting here.
IFS=' 	
'
unset CDPATH
cadre_nl='
'
cadre_termlog=${CADRE_TERMINATION_LOG:-/dev/termination-log}

cadre_say() {
	printf 'cadre: %s\n' "$*" >&2
}

# The in-place mode (spec.restartStrategy InPlace, CADRE_ATTEMPT_FILE set;
# see "In-place restart" below): the attempt this container runs, once known,
# and the files that outlive a restart of the container.
cadre_attempt=
cadre_restart=
cadre_state=

# End the container with status $1 and termination message $2 ("" for none;
# the kubelet mounts the file, elsewhere it is absent and skipped). In the
# in-place mode a container outlives its attempt, so the end says which
# attempt it belongs to: the state file records that this rank's run of it
# ended, and the message gets a last line "cadre-attempt: A", which is how the
# controller tells an old attempt's end from the new one's. A run stopped
# because a newer attempt began exits 117, the code reserved for "stopped for
# a newer attempt" (below the script's own failures, 119 to 125 in
# entrypoint.h): with its message the controller counts it as no failure.
# Any other failure keeps its status; the program's own failure gets the tag
# alone (its output is in the container's log).
cadre_exit() {
	cadre_tag=
	if [ -n "$cadre_attempt" ]; then
		cadre_next=
		read -r cadre_next 2>/dev/null <"$cadre_restart"
		if [ -n "$cadre_next" ]; then
			set -- 117 "cadre: stopped for attempt $cadre_next (in-place restart)"
		fi
		printf 'ended %s\n' "$cadre_attempt" >"$cadre_state"
		[ "$1" = 0 ] || cadre_tag="cadre-attempt: $cadre_attempt"
	fi
	if [ -w "$cadre_termlog" ]; then
		if [ -n "$2" ]; then
			printf '%s\n' "$2" >"$cadre_termlog"
			[ -z "$cadre_tag" ] || printf '%s\n' "$cadre_tag" >>"$cadre_termlog"
		elif [ -n "$cadre_tag" ]; then
			printf '%s\n' "$cadre_tag" >"$cadre_termlog"
		fi
	fi
	exit "$1"
}

# Print the reason, keep it as the container's termination message, exit.
cadre_fail() {
	cadre_code=$1
	shift
	cadre_say "$*"
	cadre_exit "$cadre_code" "cadre: $*"
}

trap 'exit 143' TERM
trap 'exit 130' INT

[ -n "${CADRE_RUN:-}" ] || cadre_fail 121 "CADRE_RUN is empty: nothing to run"
cadre_timeout=${CADRE_GANG_TIMEOUT_SECONDS:-600}
case $cadre_timeout in
'' | *[!0-9]*)
	cadre_fail 121 "CADRE_GANG_TIMEOUT_SECONDS must be a whole number of seconds, not '$cadre_timeout'"
	;;
esac

# The peers are <job>-0 ... <job>-(NNODES-1) under the job's headless Service,
# CADRE_PEER_DOMAIN (<job>.<namespace>.svc). They are named here, not listed by
# the controller, so that a pod stays the same size however large its gang.
# CADRE_PEERS keeps them for user code, space-separated in rank order.
CADRE_PEERS=
if [ -n "${CADRE_PEER_DOMAIN:-}" ]; then
	case ${NNODES:-} in
	'' | *[!0-9]*)
		cadre_fail 121 "NNODES must be the number of nodes, not '${NNODES:-}'"
		;;
	esac
	[ -n "${CADRE_JOB_NAME:-}" ] ||
		cadre_fail 121 "CADRE_JOB_NAME is empty; cadre needs it to name the peers"
	cadre_r=0
	while [ "$cadre_r" -lt "$NNODES" ]; do
		CADRE_PEERS="$CADRE_PEERS${CADRE_PEERS:+ }$CADRE_JOB_NAME-$cadre_r.$CADRE_PEER_DOMAIN"
		cadre_r=$((cadre_r + 1))
	done
fi
export CADRE_PEERS

# User code runs under bash when the image has it, as Slurm and SkyPilot
# scripts assume; under sh otherwise.
if command -v bash >/dev/null 2>&1; then
	cadre_shell=bash
else
	cadre_shell=sh
fi

# spec.code (entrypoint.h): each bundle the job names is checked and unpacked
# before anything runs, so setup, run and the workdir see the user's files.
# The parts are joined in order, the sha256 must be the digest, and no entry
# may land outside the bundle's path, whoever made the archive.
cadre_code_cat() {
	cadre_k=0
	while [ -e "$1/$cadre_k" ]; do
		cat "$1/$cadre_k" || return 1
		cadre_k=$((cadre_k + 1))
	done
	[ "$cadre_k" -gt 0 ]
}

cadre_code_one() {
	cadre_d=$1 cadre_kind=$2 cadre_parts=$3 cadre_path=$4
	cadre_say_d="code $cadre_d"
	[ -d "$cadre_parts" ] ||
		cadre_fail 119 "$cadre_say_d: its ConfigMaps are not mounted at $cadre_parts"
	command -v sha256sum >/dev/null 2>&1 ||
		cadre_fail 119 "$cadre_say_d: the image has no sha256sum to check it (docs/code.md)"
	# The parts are joined once, into a file of this pod's own: what is checked is what is
	# listed and unpacked, whatever happens to the mounted ConfigMaps meanwhile.
	cadre_tgz=${CADRE_BIN_DIR:-${TMPDIR:-/tmp}}/.cadre-code.$$.tgz
	cadre_tmp=${CADRE_BIN_DIR:-${TMPDIR:-/tmp}}/.cadre-code.$$
	rm -rf "$cadre_tgz" "$cadre_tmp"
	if ! cadre_code_cat "$cadre_parts" >"$cadre_tgz"; then
		rm -f "$cadre_tgz"
		cadre_fail 119 "$cadre_say_d: its parts at $cadre_parts are missing or cannot be read"
	fi
	cadre_sum=$(sha256sum <"$cadre_tgz") || cadre_sum=
	if [ "sha256:${cadre_sum%% *}" != "$cadre_d" ]; then
		rm -f "$cadre_tgz"
		cadre_fail 119 "$cadre_say_d: the bundle's sha256 is sha256:${cadre_sum%% *}, not $cadre_d: its ConfigMaps were changed or mixed"
	fi
	if ! cadre_list=$(tar -tvzf "$cadre_tgz" 2>/dev/null) ||
		! cadre_names=$(tar -tzf "$cadre_tgz" 2>/dev/null); then
		rm -f "$cadre_tgz"
		cadre_fail 119 "$cadre_say_d: not a gzip-compressed tar archive the image's tar reads"
	fi
	# GNU tar: files owned by whoever unpacks, and the pax keyword that says names are raw
	# bytes (hdrcharset) taken without a warning per entry.
	cadre_gnu=0 cadre_xopts=
	if tar --version 2>/dev/null | grep -q 'GNU tar'; then
		cadre_gnu=1 cadre_xopts='--no-same-owner --warning=no-unknown-keyword'
	fi
	cadre_bad= cadre_regular=0
	while IFS= read -r cadre_e; do
		case $cadre_e in
		-*) cadre_regular=$((cadre_regular + 1)) ;;
		d*) ;;
		l*)
			# GNU tar makes a link that points out (absolute, or with ..) only
			# once every file is written, so nothing is written through it;
			# another tar may not.
			[ "$cadre_gnu" = 1 ] ||
				cadre_bad="it holds a symbolic link and the image's tar is not GNU tar, which unpacks links safely"
			;;
		'') ;;
		*) cadre_bad="it holds an entry that is not a file, directory or symbolic link: $cadre_e" ;;
		esac
	done <<CADRE_LIST
$cadre_list
CADRE_LIST
	cadre_n=0
	while IFS= read -r cadre_e; do
		[ -n "$cadre_e" ] || continue
		cadre_n=$((cadre_n + 1))
		case /$cadre_e/ in
		//* | */../*) cadre_bad="the entry $cadre_e would land outside $cadre_path" ;;
		esac
	done <<CADRE_NAMES
$cadre_names
CADRE_NAMES
	if [ "$cadre_kind" = file ] && [ -z "$cadre_bad" ] &&
		{ [ "$cadre_n" != 1 ] || [ "$cadre_regular" != 1 ]; }; then
		cadre_bad="a bundle of one file holds $cadre_n entries"
	fi
	if [ -n "$cadre_bad" ]; then
		rm -f "$cadre_tgz"
		cadre_fail 119 "$cadre_say_d: $cadre_bad"
	fi
	if [ "$cadre_kind" = file ]; then
		# Unpacked aside, then the one regular file found there (not by its listed name,
		# which tar may print escaped) is copied to the path.
		mkdir -p "$cadre_tmp" "${cadre_path%/*}/" 2>/dev/null ||
			cadre_bad="cannot make the directory of $cadre_path"
		# shellcheck disable=SC2086 # cadre_xopts is words
		[ -n "$cadre_bad" ] || tar -xzf "$cadre_tgz" -C "$cadre_tmp" $cadre_xopts ||
			cadre_bad="cannot unpack it"
		cadre_file=
		for cadre_f in "$cadre_tmp"/* "$cadre_tmp"/.[!.]* "$cadre_tmp"/..?*; do
			[ -f "$cadre_f" ] && [ ! -L "$cadre_f" ] && cadre_file=$cadre_f
		done
		if [ -z "$cadre_bad" ]; then
			[ -n "$cadre_file" ] && cp -p "$cadre_file" "$cadre_path" ||
				cadre_bad="cannot write $cadre_path"
		fi
		rm -rf "$cadre_tmp"
	else
		mkdir -p "$cadre_path" 2>/dev/null || cadre_bad="cannot make $cadre_path"
		# shellcheck disable=SC2086 # cadre_xopts is words
		[ -n "$cadre_bad" ] || tar -xzf "$cadre_tgz" -C "$cadre_path" $cadre_xopts ||
			cadre_bad="cannot unpack it into $cadre_path"
	fi
	rm -f "$cadre_tgz"
	[ -z "$cadre_bad" ] || cadre_fail 119 "$cadre_say_d: $cadre_bad"
}

if [ -n "${CADRE_CODE:-}" ]; then
	while IFS= read -r cadre_line; do
		[ -n "$cadre_line" ] || continue
		cadre_c1=${cadre_line%% *}
		cadre_rest=${cadre_line#* }
		cadre_c2=${cadre_rest%% *}
		cadre_rest=${cadre_rest#* }
		cadre_c3=${cadre_rest%% *}
		cadre_code_one "$cadre_c1" "$cadre_c2" "$cadre_c3" "${cadre_rest#* }"
	done <<CADRE_CODE_LINES
$CADRE_CODE
CADRE_CODE_LINES
fi

# A missing workdir is the same on every node and known at once: fail before
# holding the gang for up to the whole timeout.
if [ -n "${CADRE_WORKDIR:-}" ]; then
	cd "$CADRE_WORKDIR" 2>/dev/null ||
		cadre_fail 122 "workdir $CADRE_WORKDIR does not exist in the image or its volumes"
fi

# srun, scontrol, sbcast and module for Slurm batch scripts (docs/design.md 2.4), written
# into CADRE_BIN_DIR (an emptyDir of the pod) and put first on PATH, so the
# image needs none of them. Each is a POSIX sh script of its own.
cadre_install() {
	cat >"$CADRE_BIN_DIR/srun" <<'CADRE_SRUN' &&
#!/bin/sh
# srun in a cadre pod. The batch script already runs on every node, so a
# step runs here only: once, or once per task when the step has several
# tasks per node, each with the SLURM_PROCID, SLURM_LOCALID and SLURM_STEP_*
# Slurm would give it. Signals go on to the tasks; the exit code is the
# worst of theirs. Written by the cadre entrypoint (docs/pods.md).
srun_dir=${0%/*}
srun_nl='
'
srun_note() {
	printf 'srun: cadre: %s\n' "$*" >&2
}
srun_die() {
	printf 'srun: error: %s\n' "$*" >&2
	exit 1
}
srun_count() {
	case $2 in '' | *[!0-9]*) srun_die "$1 needs a whole number, not '$2'" ;; esac
	[ "$2" -ge 1 ] || srun_die "$1 must be at least 1"
}

srun_nodes= srun_ntasks= srun_tpn= srun_label=0 srun_kill=0 srun_chdir= srun_cpt=
srun_exports=
while [ $# -gt 0 ]; do
	srun_opt=$1
	srun_val=
	srun_has=0
	case $srun_opt in
	--) shift; break ;;
	--*=*) srun_val=${srun_opt#*=} srun_opt=${srun_opt%%=*} srun_has=1 ;;
	-[nNcDJoeiptwxmGA]?*) srun_val=${srun_opt#-?} srun_opt=${srun_opt%"$srun_val"} srun_has=1 ;;
	-K?*) srun_val=${srun_opt#-K} srun_opt=-K srun_has=1 ;;
	-*) ;;
	*) break ;;
	esac
	shift
	# Options that take a value take the next word when not given with it.
	case $srun_opt in
	-n | --ntasks | -N | --nodes | --ntasks-per-node | -c | --cpus-per-task | -D | --chdir | \
	-J | --job-name | --export | --mpi | --cpu-bind | --cpu_bind | --gpus | -G | \
	--gpus-per-node | --gpus-per-task | --gres | --gpu-bind | --mem | --mem-per-cpu | \
	--mem-per-gpu | -o | --output | -e | --error | -i | --input | -p | --partition | -t | \
	--time | -w | --nodelist | -x | --exclude | -m | --distribution | --hint | -A | \
	--account | --qos | --container-image | --container-mounts | --container-workdir | \
	--container-name | --ntasks-per-gpu | --cpus-per-gpu | --nodefile | -B | \
	--extra-node-info | --constraint | -C | --reservation | --network | --comment)
		if [ "$srun_has" = 0 ]; then
			[ $# -gt 0 ] || srun_die "$srun_opt needs a value"
			srun_val=$1 srun_has=1
			shift
		fi
		;;
	esac
	case $srun_opt in
	-N | --nodes) srun_count "$srun_opt" "${srun_val%%-*}"; srun_nodes=${srun_val%%-*} ;;
	-n | --ntasks) srun_count "$srun_opt" "$srun_val"; srun_ntasks=$srun_val ;;
	--ntasks-per-node) srun_count "$srun_opt" "$srun_val"; srun_tpn=$srun_val ;;
	-c | --cpus-per-task) srun_count "$srun_opt" "$srun_val"; srun_cpt=$srun_val ;;
	-l | --label) srun_label=1 ;;
	-K | --kill-on-bad-exit) [ "${srun_val:-1}" = 0 ] && srun_kill=0 || srun_kill=1 ;;
	-D | --chdir) srun_chdir=$srun_val ;;
	--export)
		# The tasks keep the whole environment (a pod has no other to give);
		# VAR=value entries are set on top of it.
		srun_rest=$srun_val,
		while [ -n "$srun_rest" ]; do
			srun_item=${srun_rest%%,*}
			srun_rest=${srun_rest#*,}
			case $srun_item in
			ALL | '') ;;
			NONE | NIL) srun_note "--export=$srun_item: the tasks keep the pod's environment" ;;
			[A-Za-z_]*=*) srun_exports="$srun_exports$srun_item$srun_nl" ;;
			*) ;;
			esac
		done
		;;
	-J | --job-name | -u | --unbuffered | -v | --verbose | -Q | --quiet | --overlap | \
	--exact | --exclusive | -k | --no-kill | -W | --wait) ;;
	--mpi | --cpu-bind | --cpu_bind | --gpus | -G | --gpus-per-node | --gpus-per-task | \
	--gres | --gpu-bind | --mem | --mem-per-cpu | --mem-per-gpu | -p | --partition | -t | \
	--time | -w | --nodelist | -x | --exclude | -m | --distribution | --hint | -A | \
	--account | --qos | --ntasks-per-gpu | --cpus-per-gpu | -B | --extra-node-info | \
	--constraint | -C | --reservation | --network | --comment)
		srun_note "ignoring $srun_opt${srun_val:+=$srun_val}: the pod's resources and placement are the TrainingJob's"
		;;
	-o | --output | -e | --error | -i | --input | --container-image | --container-mounts | \
	--container-workdir | --container-name | --nodefile)
		srun_note "ignoring $srun_opt=$srun_val: the tasks run in this container, with its output"
		;;
	*) srun_note "ignoring the option $srun_opt${srun_val:+=$srun_val}, which cadre does not know" ;;
	esac
done
[ $# -gt 0 ] || srun_die "no command given to execute"

# The step's layout: its nodes are the job's first N (all by default); each
# has --ntasks-per-node tasks, or -n tasks are spread over them as evenly as
# Slurm's block distribution does, the first nodes taking one more.
srun_job_nodes=${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-1}}
srun_node=${SLURM_NODEID:-0}
if [ -z "$srun_nodes" ]; then
	srun_nodes=$srun_job_nodes
	if [ -n "$srun_ntasks" ]; then
		srun_need=$srun_ntasks
		[ -n "$srun_tpn" ] && srun_need=$(((srun_ntasks + srun_tpn - 1) / srun_tpn))
		[ "$srun_need" -lt "$srun_nodes" ] && srun_nodes=$srun_need
	fi
fi
[ "$srun_nodes" -le "$srun_job_nodes" ] ||
	srun_die "the job has $srun_job_nodes nodes, the step asks for $srun_nodes"
if [ -z "$srun_ntasks" ]; then
	[ -n "$srun_tpn" ] || srun_tpn=${SLURM_NTASKS_PER_NODE:-1}
	srun_ntasks=$((srun_nodes * srun_tpn))
fi
[ "$srun_ntasks" -ge "$srun_nodes" ] ||
	srun_die "$srun_ntasks tasks cannot fill $srun_nodes nodes"
srun_layout_add() {
	[ -n "$srun_prev" ] || return 0
	srun_layout=${srun_layout:+$srun_layout,}$srun_prev
	[ "$srun_run" -gt 1 ] && srun_layout="$srun_layout(x$srun_run)"
	return 0
}
# srun_here and srun_first: this node's tasks and the first one's PROCID.
# srun_layout: SLURM_STEP_TASKS_PER_NODE, as in "2(x3),1".
srun_layout=
srun_prev= srun_run=0 srun_i=0 srun_first=0 srun_here=0 srun_sum=0
while [ "$srun_i" -lt "$srun_nodes" ]; do
	if [ -n "$srun_tpn" ]; then
		srun_c=$((srun_ntasks - srun_sum))
		[ "$srun_c" -gt "$srun_tpn" ] && srun_c=$srun_tpn
		[ "$srun_c" -gt 0 ] || srun_c=0
	else
		srun_c=$((srun_ntasks / srun_nodes + (srun_i < srun_ntasks % srun_nodes)))
	fi
	[ "$srun_i" = "$srun_node" ] && srun_first=$srun_sum srun_here=$srun_c
	srun_sum=$((srun_sum + srun_c))
	if [ "$srun_c" = "$srun_prev" ]; then
		srun_run=$((srun_run + 1))
	else
		srun_layout_add
		srun_prev=$srun_c srun_run=1
	fi
	srun_i=$((srun_i + 1))
done
srun_layout_add
# Step ids count the job's steps from 0; every node runs the same script, so
# they agree across nodes.
srun_step=0
[ -r "$srun_dir/.step" ] && read -r srun_step <"$srun_dir/.step"
case $srun_step in '' | *[!0-9]*) srun_step=0 ;; esac
printf '%s\n' $((srun_step + 1)) >"$srun_dir/.step" 2>/dev/null
if [ "$srun_node" -ge "$srun_nodes" ] || [ "$srun_here" = 0 ]; then
	srun_note "this step runs on the first $srun_nodes node(s) of the job; node $srun_node has none of its tasks"
	exit 0
fi

# The step's own view, as Slurm sets it for the tasks of a step.
srun_nodelist=${SLURM_JOB_NODELIST:-}
if [ "$srun_nodes" -lt "$srun_job_nodes" ] && [ -n "$srun_nodelist" ]; then
	srun_nodelist=$("$srun_dir/scontrol" show hostnames "$srun_nodelist" | {
		srun_i=0
		while [ "$srun_i" -lt "$srun_nodes" ] && IFS= read -r srun_h; do
			printf '%s\n' "$srun_h"
			srun_i=$((srun_i + 1))
		done
	} | "$srun_dir/scontrol" show hostlist -) || exit 1
fi
export SLURM_STEP_ID=$srun_step SLURM_STEPID=$srun_step
export SLURM_STEP_NUM_TASKS=$srun_ntasks SLURM_NTASKS=$srun_ntasks SLURM_NPROCS=$srun_ntasks
export SLURM_STEP_NUM_NODES=$srun_nodes SLURM_NNODES=$srun_nodes
export SLURM_STEP_NODELIST="$srun_nodelist" SLURM_NODELIST="$srun_nodelist"
export SLURM_STEP_TASKS_PER_NODE="$srun_layout" SLURM_TASKS_PER_NODE="$srun_layout"
[ -n "$srun_tpn" ] && export SLURM_NTASKS_PER_NODE=$srun_tpn
[ -n "$srun_cpt" ] && export SLURM_CPUS_PER_TASK=$srun_cpt
if [ -n "$srun_exports" ]; then
	srun_old_ifs=$IFS
	IFS=$srun_nl
	for srun_item in $srun_exports; do
		export "$srun_item"
	done
	IFS=$srun_old_ifs
fi
if [ -n "$srun_chdir" ]; then
	cd "$srun_chdir" || srun_die "cannot change to $srun_chdir"
fi

# Prefix each line with the task's rank, as --label does.
srun_labelled() {
	while IFS= read -r srun_line || [ -n "$srun_line" ]; do
		printf '%s: %s\n' "$1" "$srun_line"
	done
}

# One task, in a subshell of its own: the command runs in the background so
# that a signal can reach it, and a failure tells srun when --kill-on-bad-exit.
srun_task() {
	export SLURM_PROCID=$1 SLURM_LOCALID=$2
	shift 2
	srun_child=
	srun_got=0
	trap 'srun_got=1; [ -z "$srun_child" ] || kill -TERM "$srun_child" 2>/dev/null' TERM INT
	if [ "$srun_label" = 1 ]; then
		srun_fifo=$srun_tmp/$SLURM_PROCID
		mkfifo "$srun_fifo.out" "$srun_fifo.err" || exit 1
		srun_labelled "$SLURM_PROCID" <"$srun_fifo.out" &
		srun_labelled "$SLURM_PROCID" <"$srun_fifo.err" >&2 &
		"$@" >"$srun_fifo.out" 2>"$srun_fifo.err" &
	else
		"$@" &
	fi
	srun_child=$!
	srun_rc=0
	wait "$srun_child" || srun_rc=$?
	while [ "$srun_got" = 1 ] && [ "$srun_rc" -gt 128 ]; do
		srun_got=0
		srun_rc=0
		wait "$srun_child" || srun_rc=$?
	done
	wait
	if [ "$srun_rc" -ne 0 ]; then
		printf 'srun: error: task %s: exited with exit code %s\n' "$SLURM_PROCID" "$srun_rc" >&2
		if [ "$srun_kill" = 1 ]; then
			: >"$srun_bad"
			kill -USR1 "$srun_pid" 2>/dev/null
		fi
	fi
	exit "$srun_rc"
}

srun_pid=$$
# A task that failed under --kill-on-bad-exit leaves this mark before its USR1
# to srun, so a USR1 from anyone else is not taken for one.
srun_bad=$srun_dir/.srun.$$.bad
srun_tmp=
if [ "$srun_label" = 1 ]; then
	srun_tmp=$srun_dir/.srun.$$
	mkdir "$srun_tmp" || srun_die "cannot make $srun_tmp for --label"
fi
srun_pids=
srun_stopping=0
srun_stopped=0
srun_stop() {
	srun_stopping=1
	srun_stopped=1
	for srun_q in $srun_pids; do
		kill -TERM "$srun_q" 2>/dev/null
	done
}
# Once stopped, the tasks that fail for being stopped need not say it again.
# The wait below is woken either way, and waits again.
srun_bad_exit() {
	srun_stopping=1
	[ -e "$srun_bad" ] || return 0
	[ "$srun_stopped" = 0 ] || return 0
	srun_note "a task failed: stopping the others (--kill-on-bad-exit)"
	srun_stop
}
trap srun_stop TERM INT
trap srun_bad_exit USR1
srun_i=0
while [ "$srun_i" -lt "$srun_here" ]; do
	srun_task $((srun_first + srun_i)) "$srun_i" "$@" &
	srun_pids="$srun_pids $!"
	srun_i=$((srun_i + 1))
done

# The worst exit code of the tasks. A trapped signal makes wait return
# early, so each task is waited for until it has really ended.
srun_worst=0
for srun_p in $srun_pids; do
	while :; do
		srun_stopping=0
		srun_rc=0
		wait "$srun_p" || srun_rc=$?
		[ "$srun_stopping" = 1 ] && [ "$srun_rc" -gt 128 ] || break
	done
	[ "$srun_rc" -gt "$srun_worst" ] && srun_worst=$srun_rc
done
[ -n "$srun_tmp" ] && rm -rf "$srun_tmp"
rm -f "$srun_bad"
exit "$srun_worst"
CADRE_SRUN
	cat >"$CADRE_BIN_DIR/scontrol" <<'CADRE_SCONTROL' &&
#!/bin/sh
# scontrol in a cadre pod: the hostlist commands batch scripts use, with
# Slurm's rules (cadre's api/hostlist.c is the same code in C). Written by
# the cadre entrypoint; the job's status is the TrainingJob's, not here.
hl_tab='	'
hl_nl='
'
hl_sep="[][, $hl_tab$hl_nl]"

hl_die() {
	printf 'scontrol: error: %s\n' "$*" >&2
	exit 1
}

# $1 without leading zeros ("0" for zeros only), in hl_num.
hl_strip() {
	hl_num=${1#"${1%%[!0]*}"}
	[ -n "$hl_num" ] || hl_num=0
}

# $2 written at width $1 into hl_pad.
hl_padded() {
	hl_pad=$2
	while [ "${#hl_pad}" -lt "$1" ]; do
		hl_pad=0$hl_pad
	done
}

# Print the hosts of one token (a name with bracket groups), one a line;
# 1 if malformed. Called in a subshell: it recurses for a second group.
hl_host() {
	case $1 in
	*'['*) ;;
	*']'*) return 1 ;;
	*) printf '%s\n' "$1" || exit 141; return 0 ;;
	esac
	hl_pre=${1%%\[*}
	hl_after=${1#*\[}
	case $hl_pre in *']'*) return 1 ;; esac
	case $hl_after in *']'*) ;; *) return 1 ;; esac
	hl_group=${hl_after%%\]*}
	hl_suf=${hl_after#*\]}
	case $hl_group in '' | *'['*) return 1 ;; esac
	hl_items=$hl_group,
	while [ -n "$hl_items" ]; do
		hl_item=${hl_items%%,*}
		hl_items=${hl_items#*,}
		case $hl_item in
		*-*) hl_lo=${hl_item%%-*} hl_hi=${hl_item#*-} ;;
		*) hl_lo=$hl_item hl_hi=$hl_item ;;
		esac
		case $hl_lo$hl_hi in *[!0-9]*) return 1 ;; esac
		case $hl_lo in '' | ??????????*) return 1 ;; esac
		case $hl_hi in '' | ??????????*) return 1 ;; esac
		hl_strip "$hl_lo"
		hl_n=$hl_num
		hl_strip "$hl_hi"
		[ "$hl_n" -le "$hl_num" ] || return 1
		[ $((hl_num - hl_n)) -lt 1048576 ] || return 1
		while [ "$hl_n" -le "$hl_num" ]; do
			hl_padded "${#hl_lo}" "$hl_n"
			case $hl_suf in
			*[][]*) (hl_host "$hl_pre$hl_pad$hl_suf") || return $? ;;
			*) printf '%s\n' "$hl_pre$hl_pad$hl_suf" || exit 141 ;;
			esac
			hl_n=$((hl_n + 1))
		done
	done
}

# The hosts of one token $1 of list $2, or exit: 1 with the error when the
# token is malformed; quietly, with the subshell's status, when the hosts
# could not be written (141, or SIGPIPE's death): a reader that stopped
# reading, as `scontrol show hostnames | head -n 1` does, is no error of the
# list, and Slurm's scontrol dies of SIGPIPE there without a word.
hl_one() {
	(hl_host "$1")
	hl_rc=$?
	[ "$hl_rc" = 0 ] && return 0
	[ "$hl_rc" -gt 128 ] && exit "$hl_rc"
	hl_die "invalid hostlist: $2"
}

# Print the hosts of expression $1, one a line; exit 1 if malformed.
hl_expand() {
	hl_rest=$1
	hl_tok=
	hl_depth=0
	while [ -n "$hl_rest" ]; do
		hl_chunk=${hl_rest%%$hl_sep*}
		hl_tok=$hl_tok$hl_chunk
		hl_rest=${hl_rest#"$hl_chunk"}
		[ -n "$hl_rest" ] || break
		hl_c=${hl_rest%"${hl_rest#?}"}
		hl_rest=${hl_rest#?}
		case $hl_c in
		'[') hl_depth=$((hl_depth + 1)) hl_tok=$hl_tok$hl_c ;;
		']') hl_depth=$((hl_depth - 1)) hl_tok=$hl_tok$hl_c ;;
		*)
			if [ "$hl_depth" -gt 0 ]; then
				hl_tok=$hl_tok$hl_c
			elif [ -n "$hl_tok" ]; then
				hl_one "$hl_tok" "$1"
				hl_tok=
			fi
			;;
		esac
	done
	if [ -n "$hl_tok" ]; then
		hl_one "$hl_tok" "$1"
	fi
}

# Zero padding of number $1 written at width $2, in hl_zp.
hl_zero_padding() {
	hl_zp=$(($2 - ${#1}))
	[ "$hl_zp" -gt 0 ] || hl_zp=0
}

# The hosts on stdin, one a line, compressed in the order given.
hl_compress() {
	hl_len=0
	while IFS= read -r hl_name || [ -n "$hl_name" ]; do
		[ -n "$hl_name" ] || continue
		hl_digits=${hl_name##*[!0-9]}
		hl_single=0
		case $hl_digits in '' | ??????????*) hl_single=1 hl_digits= ;; esac
		hl_p=${hl_name%"$hl_digits"}
		if [ "$hl_single" = 0 ]; then
			hl_strip "$hl_digits"
			hl_v=$hl_num
			hl_w=${#hl_digits}
		fi
		if [ "$hl_len" -gt 0 ] && [ "$hl_single" = 0 ]; then
			eval "hl_ts=\$hl_single_$hl_len hl_tp=\$hl_pre_$hl_len"
			eval "hl_tlo=\$hl_lo_$hl_len hl_thi=\$hl_hi_$hl_len hl_tw=\$hl_w_$hl_len"
			if [ "$hl_ts" = 0 ] && [ "$hl_tp" = "$hl_p" ] &&
			   [ $((hl_thi + 1)) -eq "$hl_v" ]; then
				# Slurm's _width_equiv: who keeps their padding takes the other's width.
				hl_zero_padding "$hl_tlo" "$hl_tw"
				hl_a=$hl_zp
				hl_zero_padding "$hl_tlo" "$hl_w"
				hl_n_keeps=$((hl_a == hl_zp))
				hl_zero_padding "$hl_v" "$hl_w"
				hl_a=$hl_zp
				hl_zero_padding "$hl_v" "$hl_tw"
				hl_m_keeps=$((hl_a == hl_zp))
				if [ "$hl_n_keeps" = 1 ] || [ "$hl_m_keeps" = 1 ]; then
					[ "$hl_n_keeps" = 1 ] && hl_tw=$hl_w
					eval "hl_hi_$hl_len=\$hl_v hl_w_$hl_len=\$hl_tw"
					continue
				fi
			fi
		fi
		hl_len=$((hl_len + 1))
		eval "hl_single_$hl_len=\$hl_single hl_pre_$hl_len=\$hl_p"
		eval "hl_lo_$hl_len=\${hl_v:-0} hl_hi_$hl_len=\${hl_v:-0} hl_w_$hl_len=\${hl_w:-0}"
	done
	hl_out=
	hl_i=1
	while [ "$hl_i" -le "$hl_len" ]; do
		[ "$hl_i" -gt 1 ] && hl_out=$hl_out,
		eval "hl_s=\$hl_single_$hl_i hl_p=\$hl_pre_$hl_i"
		hl_out=$hl_out$hl_p
		if [ "$hl_s" = 0 ]; then
			eval "hl_lo=\$hl_lo_$hl_i hl_hi=\$hl_hi_$hl_i"
			hl_shares "$hl_i"
			hl_bracket=$(((hl_lo != hl_hi) || hl_share))
			[ "$hl_bracket" = 1 ] && hl_out=$hl_out[
			while :; do
				eval "hl_lo=\$hl_lo_$hl_i hl_hi=\$hl_hi_$hl_i hl_w=\$hl_w_$hl_i"
				hl_padded "$hl_w" "$hl_lo"
				hl_out=$hl_out$hl_pad
				if [ "$hl_lo" != "$hl_hi" ]; then
					hl_padded "$hl_w" "$hl_hi"
					hl_out=$hl_out-$hl_pad
				fi
				hl_shares "$hl_i"
				[ "$hl_share" = 1 ] || break
				hl_out=$hl_out,
				hl_i=$((hl_i + 1))
			done
			[ "$hl_bracket" = 1 ] && hl_out=$hl_out]
		fi
		hl_i=$((hl_i + 1))
	done
	printf '%s\n' "$hl_out"
}

# hl_share=1 when range $1 and the next share one bracket.
hl_shares() {
	hl_share=0
	hl_j=$(($1 + 1))
	[ "$hl_j" -le "$hl_len" ] || return 0
	eval "hl_sa=\$hl_single_$1 hl_sb=\$hl_single_$hl_j hl_pa=\$hl_pre_$1 hl_pb=\$hl_pre_$hl_j"
	if [ "$hl_sa" = 0 ] && [ "$hl_sb" = 0 ] && [ "$hl_pa" = "$hl_pb" ]; then
		hl_share=1
	fi
}

# The argument of hostlist: a list, a file (an absolute path), or - for stdin.
hl_input() {
	case $1 in
	-) cat ;;
	/*) [ -f "$1" ] && cat "$1" || printf '%s\n' "$1" ;;
	*) printf '%s\n' "$1" ;;
	esac
}

case ${1:-} in
show) ;;
'' | -h | --help | help)
	printf 'usage: scontrol show hostnames [LIST] | scontrol show hostlist LIST\n' >&2
	printf '(cadre provides these two; a TrainingJob is seen with kubectl or cadre)\n' >&2
	exit 1
	;;
*) hl_die "scontrol $1 is not available in a cadre pod: see the TrainingJob (cadre status, kubectl)" ;;
esac
shift
case ${1:-} in
hostname | hostnames)
	shift
	if [ $# -eq 0 ]; then
		# Slurm reads SLURM_NODELIST here (src/scontrol/scontrol.c), not SLURM_JOB_NODELIST.
		[ -n "${SLURM_NODELIST:-}" ] || hl_die "no hostlist given and SLURM_NODELIST is not set"
		set -- "$SLURM_NODELIST"
	fi
	hl_expand "$*"
	;;
hostlist)
	shift
	[ $# -gt 0 ] || hl_die "hostlist needs a list of hosts"
	hl_text=$(hl_input "$*") || exit 1
	hl_hosts=$(hl_expand "$hl_text") || exit 1
	printf '%s\n' "$hl_hosts" | hl_compress
	;;
*) hl_die "scontrol show ${1:-} is not available in a cadre pod: only hostnames and hostlist" ;;
esac
CADRE_SCONTROL
	cat >"$CADRE_BIN_DIR/module" <<'CADRE_MODULE' &&
#!/bin/sh
# module (Environment Modules, Lmod) in a cadre pod: the software a batch
# script loads comes with the container image, so every subcommand is a
# no-op that says so and succeeds. Written by the cadre entrypoint.
printf 'module: cadre: "module %s" does nothing here: the image provides the software\n' "$*" >&2
exit 0
CADRE_MODULE
	cat >"$CADRE_BIN_DIR/cadre-signal" <<'CADRE_SIGNAL' &&
#!/bin/sh
# cadre-signal [--all] SIG: `cadre scancel --signal=SIG` runs this through
# exec in every rank's container, and the entrypoint for spec.signal. It
# sends SIG to the program the entrypoint runs (the pid it keeps in
# program.pid beside this file) and to that program's descendants, never to
# the entrypoint itself, pid 1 or a process group. As Slurm's scancel
# --signal and --signal=SIG@T leave a batch script's shell alone, so does
# this: a shell (the program's, or one it started) that has no trap for SIG
# would die of it, so it is left out and its children get SIG; one that
# traps SIG gets it. cadre's srun passes nothing on and is left out too:
# its tasks get SIG themselves. --all sends to every one of them (the
# watchdog's TERM and KILL). Written by the cadre entrypoint (docs/cli.md).
all=0
if [ "${1:-}" = --all ]; then
	all=1
	shift
fi
sig=${1:-}
case $sig in '' | *[!A-Z0-9]*) echo "cadre-signal: usage: cadre-signal [--all] SIGNAL" >&2; exit 2 ;; esac
pid=
read -r pid 2>/dev/null <"${0%/*}/program.pid"
case $pid in
'' | *[!0-9]*) echo "cadre-signal: no program is running in this container" >&2; exit 3 ;;
esac
if [ "$pid" -le 1 ] || ! kill -0 "$pid" 2>/dev/null; then
	echo "cadre-signal: no program is running in this container" >&2
	exit 3
fi
# SIG's number, to read a shell's traps: the shell's own kill -l says it.
num=
case $sig in
[0-9]*) num=$sig ;;
*)
	n=1
	while [ "$n" -le 31 ]; do
		[ "$(kill -l "$n" 2>/dev/null)" = "$sig" ] && { num=$n; break; }
		n=$((n + 1))
	done
	;;
esac
# Whether process $1 catches SIG: its bit in SigCgt of /proc/$1/status (the
# low 32 bits, where the standard signals are).
catches() {
	cgt=
	while read -r k v; do
		[ "$k" = SigCgt: ] && { cgt=$v; break; }
	done 2>/dev/null <"/proc/$1/status"
	[ -n "$cgt" ] && [ -n "$num" ] && [ "$num" -le 32 ] || return 1
	cgt=${cgt#"${cgt%????????}"}
	[ $(((0x$cgt >> (num - 1)) & 1)) = 1 ]
}
# The program's descendants, found by their parent pids in /proc; a pass
# adds the children of what is already listed until nothing is added.
all_pids=" $pid "
more=1
while [ "$more" = 1 ]; do
	more=0
	for st in /proc/[0-9]*/stat; do
		line=
		read -r line 2>/dev/null <"$st" || continue
		p=${line%% *}
		rest=${line##*) }
		set -- $rest
		case $all_pids in *" $p "*) continue ;; esac
		case $all_pids in *" ${2:-x} "*) all_pids="$all_pids$p " more=1 ;; esac
	done
done
sent=0
rc=0
for p in $all_pids; do
	[ "$p" -gt 1 ] && [ "$p" != "$$" ] || continue
	if [ "$all" = 0 ]; then
		line=
		read -r line 2>/dev/null <"/proc/$p/stat" || continue
		comm=${line#*(}
		comm=${comm%)*}
		case $comm in
		srun) continue ;;
		bash | sh | dash | ash | ksh | mksh | zsh) catches "$p" || continue ;;
		esac
	fi
	if kill -s "$sig" "$p" 2>/dev/null; then
		sent=$((sent + 1))
	elif [ "$p" = "$pid" ]; then
		rc=1
	fi
done
if [ "$sent" = 0 ] && [ "$rc" = 0 ]; then
	echo "cadre-signal: no process of the program takes SIG$sig (its shell has no trap for it, and runs nothing else)" >&2
	rc=1
fi
exit "$rc"
CADRE_SIGNAL
	cat >"$CADRE_BIN_DIR/sbcast" <<'CADRE_SBCAST' &&
#!/bin/sh
# sbcast [options] SOURCE DEST in a cadre pod: the batch script runs on every
# node, so each node copies SOURCE (on a shared Volume) to DEST (on its own
# scratch) itself. Once per node: the first caller copies under a lock, the
# others wait for it and find the copy done. A directory is copied whole.
# Written by the cadre entrypoint (docs/volumes.md).
sb_note() {
	printf 'sbcast: cadre: %s\n' "$*" >&2
}
sb_die() {
	printf 'sbcast: error: %s\n' "$*" >&2
	exit 1
}
sb_force=0 sb_preserve=
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-f | --force) sb_force=1 ;;
	-p | --preserve) sb_preserve=-p ;;
	-[Fjst] | --fanout | --jobid | --size | --timeout)
		sb_note "ignoring $1: the copy is local to this node"
		[ $# -gt 1 ] && shift ;;
	-C | --compress | --*=* | -[CFjst]?*)
		sb_note "ignoring ${1%%=*}: the copy is local to this node" ;;
	-v | --verbose | -V | --version) ;;
	-*) sb_note "ignoring the option $1, which cadre does not know" ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 2 ] || sb_die "usage: sbcast [options] SOURCE DEST"
sb_src=$1 sb_dst=$2
[ -e "$sb_src" ] || sb_die "cannot read $sb_src: no such file or directory"
# One marker and one lock per DEST, named by DEST with '/' as '%'.
sb_key= sb_rest=$sb_dst
while [ -n "$sb_rest" ]; do
	case $sb_rest in
	*/*) sb_key="$sb_key${sb_rest%%/*}%" sb_rest=${sb_rest#*/} ;;
	*) sb_key="$sb_key$sb_rest" sb_rest= ;;
	esac
done
sb_dir=${0%/*}/.sbcast
mkdir -p "$sb_dir" 2>/dev/null || sb_die "cannot write $sb_dir"
sb_done=$sb_dir/$sb_key.done sb_lock=$sb_dir/$sb_key.lock
[ -e "$sb_done" ] && [ "$sb_force" = 0 ] && exit 0
sb_stale=
until mkdir "$sb_lock" 2>/dev/null; do
	# A holder that died leaves its lock behind: taken over once the same dead
	# holder is read there twice, a second apart. A holder that ends removes its
	# lock before it exits, so a dead one read once may be from a lock that a
	# live caller has taken since, which must not be removed under it.
	sb_pid=
	read -r sb_pid 2>/dev/null <"$sb_lock/pid"
	if [ -n "$sb_pid" ] && ! kill -0 "$sb_pid" 2>/dev/null; then
		if [ "$sb_pid" = "$sb_stale" ]; then
			rm -rf "$sb_lock"
			sb_stale=
			continue
		fi
		sb_stale=$sb_pid
	else
		sb_stale=
	fi
	sleep 1
done
echo $$ >"$sb_lock/pid"
sb_rc=0
if [ ! -e "$sb_done" ] || [ "$sb_force" = 1 ]; then
	if [ -e "$sb_dst" ] && [ "$sb_force" = 0 ]; then
		printf 'sbcast: error: %s exists; --force replaces it\n' "$sb_dst" >&2
		sb_rc=1
	else
		case $sb_dst in */*) mkdir -p "${sb_dst%/*}" 2>/dev/null ;; esac
		rm -rf "$sb_dst" 2>/dev/null
		if cp -R $sb_preserve "$sb_src" "$sb_dst"; then
			: >"$sb_done"
		else
			printf 'sbcast: error: cannot copy %s to %s\n' "$sb_src" "$sb_dst" >&2
			sb_rc=1
		fi
	fi
fi
rm -rf "$sb_lock"
exit "$sb_rc"
CADRE_SBCAST
	chmod 755 "$CADRE_BIN_DIR/srun" "$CADRE_BIN_DIR/scontrol" "$CADRE_BIN_DIR/module" \
		"$CADRE_BIN_DIR/cadre-signal" "$CADRE_BIN_DIR/sbcast"
}
if [ -n "${CADRE_BIN_DIR:-}" ]; then
	cadre_install 2>/dev/null ||
		cadre_fail 121 "cannot write srun, scontrol, sbcast and module into $CADRE_BIN_DIR"
	PATH=$CADRE_BIN_DIR${PATH:+:$PATH}
	export PATH
fi

# In-place restart (spec.restartStrategy InPlace). When a rank fails the
# controller keeps the gang: the kubelet restarts a container that exits
# non-zero, and the controller begins a new attempt by raising the pod's
# label cadre.dev/restart-attempt, which the kubelet projects into
# CADRE_ATTEMPT_FILE. The controller cannot exec into the pod and this script
# cannot reach the API, so that file is all the two share, and what this rank
# did with each attempt is kept in the state file in CADRE_BIN_DIR (an
# emptyDir: it outlives the container). The state file says
#   (absent)    no run of any attempt began in this pod;
#   running A   setup or run of attempt A began and has not ended: found at
#               start, the container was killed while they ran;
#   ended A     this rank's run of attempt A ended, and the container's end
#               said so (cadre_exit).
# The label's value may be missing or half written while the kubelet updates
# the file: a read that is not all digits is tried again.
cadre_read_attempt() {
	cadre_a=
	read -r cadre_a 2>/dev/null <"$CADRE_ATTEMPT_FILE"
	case $cadre_a in
	'' | *[!0-9]*) return 1 ;;
	esac
}
if [ -n "${CADRE_ATTEMPT_FILE:-}" ]; then
	[ -n "${CADRE_BIN_DIR:-}" ] ||
		cadre_fail 121 "CADRE_ATTEMPT_FILE (spec.restartStrategy InPlace) needs CADRE_BIN_DIR, where the attempt is kept across restarts of the container"
	cadre_state=$CADRE_BIN_DIR/.cadre-attempt
	if ! cadre_read_attempt; then
		cadre_say "waiting for $CADRE_ATTEMPT_FILE to hold the attempt"
		until cadre_read_attempt; do
			sleep 0.2 2>/dev/null || sleep 1
		done
	fi
	cadre_was= cadre_m=
	read -r cadre_was cadre_m 2>/dev/null <"$cadre_state"
	case $cadre_m in
	'' | *[!0-9]*) cadre_was= ;;
	esac
	if [ "$cadre_was" = running ] && [ "$cadre_m" -ge "$cadre_a" ]; then
		# What the killed container could not say, said now for it; the
		# kubelet restarts this one, which then waits as below.
		cadre_attempt=$cadre_m
		cadre_exit 137 "cadre: the run of attempt $cadre_m ended without an exit status (the container was killed)"
	fi
	if [ "$cadre_was" = ended ] && [ "$cadre_m" -ge "$cadre_a" ]; then
		# The kubelet restarted the container after this rank's run ended;
		# the controller has not begun the next attempt yet. No timeout: a
		# job given up deletes the pod.
		cadre_say "attempt $cadre_m ended on this rank; waiting for the next attempt (in-place restart)"
		until cadre_read_attempt && [ "$cadre_a" -gt "$cadre_m" ]; do
			sleep 0.2 2>/dev/null || sleep 1
		done
	fi
	cadre_attempt=$cadre_a
	# The marks of an earlier attempt's run (a stop for this one, the
	# spec.signal notice already sent) are not this run's.
	cadre_restart=$CADRE_BIN_DIR/.cadre/restart
	rm -f "$cadre_restart" "$CADRE_BIN_DIR/.cadre/signalled"
	# The pod's environment holds the attempt it was created at.
	export CADRE_RESTART_ATTEMPT="$cadre_attempt" SLURM_RESTART_COUNT="$cadre_attempt"
	# spec.hang's dump directory is per attempt, and so are PyTorch's files
	# in it that the controller named (a job's own are left alone).
	cadre_tail=${CADRE_NCCL_DUMP_DIR:-}
	cadre_tail=${cadre_tail##*/attempt-}
	case $cadre_tail in
	'' | *[!0-9]* | "${CADRE_NCCL_DUMP_DIR:-}") ;;
	*)
		cadre_old=$CADRE_NCCL_DUMP_DIR
		CADRE_NCCL_DUMP_DIR=${cadre_old%/attempt-*}/attempt-$cadre_attempt
		[ "${TORCH_FR_DUMP_TEMP_FILE:-}" != "$cadre_old/rank_" ] ||
			TORCH_FR_DUMP_TEMP_FILE=$CADRE_NCCL_DUMP_DIR/rank_
		[ "${TORCH_NCCL_DEBUG_INFO_TEMP_FILE:-}" != "$cadre_old/rank_" ] ||
			TORCH_NCCL_DEBUG_INFO_TEMP_FILE=$CADRE_NCCL_DUMP_DIR/rank_
		;;
	esac
fi

# Seconds since an arbitrary origin, without a process: /proc/uptime is
# monotonic. Where it cannot be read, count polls instead.
cadre_polls=0
cadre_now() {
	if read -r cadre_up cadre_idle 2>/dev/null </proc/uptime; then
		cadre_t=${cadre_up%%.*}
	else
		cadre_t=$cadre_polls
	fi
}

# Sets cadre_ip to the first IPv4 address of $1 (any address on an IPv6-only
# cluster), or to "" while the name does not resolve.
cadre_resolve() {
	cadre_out=$(getent ahostsv4 "$1" 2>/dev/null) ||
		cadre_out=$(getent hosts "$1" 2>/dev/null) || cadre_out=
	cadre_out=${cadre_out%%"$cadre_nl"*}
	cadre_ip=${cadre_out%%[ 	]*}
}

# Wait until every peer's DNS name resolves; a peer's record appears once its
# pod has an IP (the Service publishes not-ready addresses), so this is also
# the moment every pod of the gang exists. Resolved peers are not asked again.
if [ -n "$CADRE_PEERS" ]; then
	command -v getent >/dev/null 2>&1 ||
		cadre_fail 121 "getent is not in the image; cadre needs it to resolve the peers"
	set -f
	cadre_npeers=0
	for cadre_peer in $CADRE_PEERS; do
		cadre_npeers=$((cadre_npeers + 1))
	done
	cadre_now
	cadre_start=$cadre_t
	cadre_next_report=$cadre_t
	while :; do
		cadre_i=0
		cadre_missing=
		cadre_nmissing=0
		for cadre_peer in $CADRE_PEERS; do
			cadre_i=$((cadre_i + 1))
			eval "cadre_ip=\${cadre_ip_$cadre_i:-}"
			if [ -z "$cadre_ip" ]; then
				cadre_resolve "$cadre_peer"
				eval "cadre_ip_$cadre_i=\$cadre_ip"
			fi
			if [ -z "$cadre_ip" ]; then
				cadre_missing="$cadre_missing $cadre_peer"
				cadre_nmissing=$((cadre_nmissing + 1))
			fi
		done
		[ "$cadre_nmissing" -eq 0 ] && break
		cadre_now
		cadre_elapsed=$((cadre_t - cadre_start))
		# Say so before giving up: on a slow node the first pass alone may
		# use the whole timeout, and a job must never fail without having
		# said what it waited for.
		if [ "$cadre_t" -ge "$cadre_next_report" ]; then
			cadre_say "waiting for $cadre_nmissing of $cadre_npeers peers to resolve (${cadre_elapsed}s of ${cadre_timeout}s):$cadre_missing"
			cadre_next_report=$((cadre_t + 10))
		fi
		if [ "$cadre_elapsed" -ge "$cadre_timeout" ]; then
			cadre_fail 124 "timed out after ${cadre_elapsed}s waiting for $cadre_nmissing of $cadre_npeers peers to resolve:$cadre_missing"
		fi
		sleep 1
		cadre_polls=$((cadre_polls + 1))
	done
	cadre_i=0
	SKYPILOT_NODE_IPS=
	for cadre_peer in $CADRE_PEERS; do
		cadre_i=$((cadre_i + 1))
		eval "cadre_ip=\$cadre_ip_$cadre_i"
		SKYPILOT_NODE_IPS=${SKYPILOT_NODE_IPS:+$SKYPILOT_NODE_IPS$cadre_nl}$cadre_ip
	done
	export SKYPILOT_NODE_IPS
	set +f
	cadre_say "all $cadre_npeers peers resolved"
fi

# spec.stageIn (entrypoint.h): each FROM copied to TO through sbcast, so a
# batch script's own sbcast of the same file finds it done; how long each
# copy took goes to the log. Every rank is here at once: the copies of one
# node are made once, the copies of the gang side by side.
cadre_centis() {
	if read -r cadre_up cadre_idle 2>/dev/null </proc/uptime; then
		case $cadre_up in
		*.*) cadre_c=${cadre_up%%.*}${cadre_up#*.} ;;
		*) cadre_c=${cadre_up}00 ;;
		esac
		cadre_c=${cadre_c#"${cadre_c%%[!0]*}"}
		cadre_c=${cadre_c:-0}
	else
		cadre_c=$(($(date +%s) * 100))
	fi
}
if [ -n "${CADRE_STAGE_IN:-}" ]; then
	cadre_sbcast=${CADRE_BIN_DIR:+$CADRE_BIN_DIR/sbcast}
	[ -n "$cadre_sbcast" ] && [ -x "$cadre_sbcast" ] ||
		cadre_fail 121 "spec.stageIn needs sbcast in CADRE_BIN_DIR"
	cadre_from=
	while IFS= read -r cadre_line; do
		if [ -z "$cadre_from" ]; then
			cadre_from=$cadre_line
			continue
		fi
		cadre_centis
		cadre_t0=$cadre_c
		"$cadre_sbcast" "$cadre_from" "$cadre_line" ||
			cadre_fail 120 "stageIn: cannot copy $cadre_from to $cadre_line"
		cadre_centis
		cadre_t0=$((cadre_c - cadre_t0))
		cadre_say "staged in $cadre_from to $cadre_line in $((cadre_t0 / 100)).$((cadre_t0 / 10 % 10))$((cadre_t0 % 10))s"
		cadre_from=
	done <<CADRE_STAGE_LIST
$CADRE_STAGE_IN
CADRE_STAGE_LIST
fi

# spec.hang and spec.signal (entrypoint.h): their inputs, checked before the
# gang is held any longer.
cadre_number() {
	case $2 in
	'' | *[!0-9]*) cadre_fail 121 "$1 must be a whole number of seconds, not '$2'" ;;
	esac
}
cadre_hang=${CADRE_HANG_PROGRESS_SECONDS:-}
if [ -n "$cadre_hang" ]; then
	cadre_number CADRE_HANG_PROGRESS_SECONDS "$cadre_hang"
	cadre_hang_start=${CADRE_HANG_STARTUP_SECONDS:-$cadre_hang}
	cadre_number CADRE_HANG_STARTUP_SECONDS "$cadre_hang_start"
	if [ -n "${CADRE_NCCL_DUMP_DIR:-}" ]; then
		mkdir -p "$CADRE_NCCL_DUMP_DIR" 2>/dev/null ||
			cadre_say "cannot make $CADRE_NCCL_DUMP_DIR for NCCL flight recorder dumps"
	fi
fi
cadre_sig=${CADRE_SIGNAL:-}
cadre_sig_before=${CADRE_SIGNAL_SECONDS_BEFORE:-0}
cadre_number CADRE_SIGNAL_SECONDS_BEFORE "$cadre_sig_before"
[ -z "${CADRE_DEADLINE:-}" ] || cadre_number CADRE_DEADLINE "$CADRE_DEADLINE"
# The helpers' own files: the watchdog's fifos and marks, who signalled.
cadre_work=${CADRE_BIN_DIR:-${TMPDIR:-/tmp}}/.cadre
mkdir -p "$cadre_work" 2>/dev/null || cadre_work=
# The signals a helper of the entrypoint must outlive: they are meant for the program.
cadre_immune='trap "" TERM INT HUP QUIT USR1 USR2 ALRM'

# sbatch --output and --error (spec.output, spec.error): a file name pattern,
# expanded as sbatch expands it (%x job name, %j job id, %A the array's job id,
# %a the array index, %N the host name, %t and %n this node's rank, %u the user,
# %% a percent sign), relative to the working directory. The program's output is
# appended to the file as well as going to the container log; without an error
# file its stderr goes to the output file too, as in Slurm.
cadre_pattern() {
	cadre_p=$1
	cadre_o=
	while [ -n "$cadre_p" ]; do
		case $cadre_p in
		%%*) cadre_o="$cadre_o%" ;;
		%x*) cadre_o="$cadre_o${SLURM_JOB_NAME:-}" ;;
		%j*) cadre_o="$cadre_o${SLURM_JOB_ID:-}" ;;
		%A*) cadre_o="$cadre_o${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-}}" ;;
		%a*) cadre_o="$cadre_o${SLURM_ARRAY_TASK_ID:-4294967294}" ;;
		%N*) cadre_o="$cadre_o$(hostname 2>/dev/null || printf '%s' "${HOSTNAME:-}")" ;;
		%t* | %n*) cadre_o="$cadre_o${SLURM_NODEID:-0}" ;;
		%u*) cadre_o="$cadre_o$(id -un 2>/dev/null || printf '%s' "${USER:-}")" ;;
		%*) cadre_o="$cadre_o${cadre_p%"${cadre_p#??}"}" ;;
		*)
			cadre_o="$cadre_o${cadre_p%"${cadre_p#?}"}"
			cadre_p=${cadre_p#?}
			continue
			;;
		esac
		cadre_p=${cadre_p#??}
	done
	printf '%s' "$cadre_o"
}
cadre_out_file=
cadre_err_file=
[ -z "${CADRE_OUTPUT:-}" ] || cadre_out_file=$(cadre_pattern "$CADRE_OUTPUT")
[ -z "${CADRE_ERROR:-}" ] || cadre_err_file=$(cadre_pattern "$CADRE_ERROR")
for cadre_f in "$cadre_out_file" "$cadre_err_file"; do
	[ -n "$cadre_f" ] || continue
	case $cadre_f in
	*/*) mkdir -p "${cadre_f%/*}" 2>/dev/null ;;
	esac
	: >>"$cadre_f" 2>/dev/null ||
		cadre_say "cannot write $cadre_f (--output/--error); the output goes to the container log only"
done
if [ -n "$cadre_out_file$cadre_err_file" ] && ! command -v tee >/dev/null 2>&1; then
	cadre_say "tee is not in the image: --output/--error are not written; the output goes to the container log"
	cadre_out_file=
	cadre_err_file=
fi
[ -n "$cadre_err_file" ] || cadre_err_file=$cadre_out_file

# Send SIG to the program and its descendants, never to this shell or its
# helpers: cadre-signal [--all] SIG, which leaves out shells without a trap
# for it and srun unless --all. Without cadre-signal, to the program alone.
cadre_signal_program() {
	if [ -n "${CADRE_BIN_DIR:-}" ] && [ -x "$CADRE_BIN_DIR/cadre-signal" ]; then
		"$CADRE_BIN_DIR/cadre-signal" "$@" >/dev/null 2>&1 && return 0
		# A shell left out on purpose is not to be signalled after all.
		[ "$1" = --all ] || return 1
	fi
	[ "$1" != --all ] || shift
	kill -s "$1" "$cadre_child" 2>/dev/null
}

# The spec.signal notice, once: by the deadline timer or on the first TERM.
cadre_notice() {
	[ -n "$cadre_sig" ] || return 1
	if [ -n "$cadre_work" ]; then
		[ -e "$cadre_work/signalled" ] && return 1
		: >"$cadre_work/signalled"
	fi
	cadre_say "sending SIG$cadre_sig to the program: $1"
	cadre_signal_program "$cadre_sig"
}

# The first TERM or INT goes on to the whole process group, so the user's
# processes (not just their shell) can shut down cleanly; this shell is
# usually PID 1, which would otherwise ignore it. Outside a group of our own
# only the child is told. With spec.signal, the program gets that signal
# first and SIGTERM secondsBefore later (unless the notice came already, at
# the deadline); the helpers ignore both.
cadre_child=
cadre_signalled=0
cadre_stopping=0
cadre_forward() {
	trap '' TERM INT
	cadre_signalled=1
	cadre_stopping=1
	if cadre_notice "the pod is being stopped; SIGTERM follows in ${cadre_sig_before}s"; then
		(eval "$cadre_immune"; sleep "$cadre_sig_before"
		 kill -TERM -$$ 2>/dev/null || kill -TERM "$cadre_child" 2>/dev/null) &
		return
	fi
	kill -TERM -$$ 2>/dev/null || kill -TERM "$cadre_child" 2>/dev/null
}

# Seconds of the clock the watchdog counts in (cadre_now's).
cadre_since() {
	cadre_now
	cadre_el=$((cadre_t - $1))
}

# The bytes the output copiers have passed on so far (from /proc/PID/io), or
# "" when they cannot be read.
cadre_copied() {
	cadre_n=0
	for cadre_p in "$@"; do
		cadre_w=
		while read -r cadre_k cadre_v; do
			[ "$cadre_k" = wchar: ] && cadre_w=$cadre_v
		done 2>/dev/null <"/proc/$cadre_p/io"
		[ -n "$cadre_w" ] || { cadre_n=; return; }
		cadre_n=$((cadre_n + cadre_w))
	done
}

# End the program's whole tree: SIGTERM, and SIGKILL once it has had 10 s.
cadre_stop_program() {
	cadre_signal_program --all TERM
	cadre_i=0
	while [ "$cadre_i" -lt 10 ] && kill -0 "$cadre_child" 2>/dev/null; do
		sleep 1
		cadre_i=$((cadre_i + 1))
	done
	cadre_signal_program --all KILL
}

# The watchdog of spec.hang, in the background for one of setup and run. No
# progress (output passed on, the heartbeat file touched) for the startup
# time, then for the progress time, ends the program: it writes why in
# hung, sends SIGTERM and SIGKILL 10 s later. $1 $2: the output copiers.
cadre_watchdog() {
	eval "$cadre_immune"
	cadre_hb=${CADRE_HEARTBEAT_FILE:-}
	: >"$cadre_work/mark"
	cadre_now
	cadre_last=$cadre_t
	cadre_seen=0
	# The copiers are new with the program: what they passed on before this
	# first look is progress too.
	cadre_bytes=
	[ -n "$1" ] && cadre_copied "$@" && [ -n "$cadre_n" ] && cadre_bytes=0
	[ -n "$cadre_bytes" ] || [ -z "$1" ] ||
		cadre_say "cannot count the program's output (/proc/<pid>/io); only $cadre_hb shows progress"
	while kill -0 "$cadre_child" 2>/dev/null; do
		sleep 1
		cadre_polls=$((cadre_polls + 1))
		cadre_moved=0
		if [ -n "$cadre_bytes" ]; then
			cadre_copied "$@"
			if [ -n "$cadre_n" ] && [ "$cadre_n" != "$cadre_bytes" ]; then
				cadre_moved=1
				cadre_bytes=$cadre_n
			fi
		fi
		if [ -n "$cadre_hb" ] && [ -e "$cadre_hb" ] && [ "$cadre_hb" -nt "$cadre_work/mark" ]; then
			cadre_moved=1
		fi
		: >"$cadre_work/mark"
		cadre_now
		if [ "$cadre_moved" = 1 ]; then
			cadre_last=$cadre_t
			cadre_seen=1
			continue
		fi
		# Without a way to see output, a program that never touched the
		# heartbeat file has shown nothing the watchdog could judge.
		[ -n "$cadre_bytes" ] || [ "$cadre_seen" = 1 ] || continue
		cadre_limit=$cadre_hang_start
		[ "$cadre_seen" = 1 ] && cadre_limit=$cadre_hang
		# Whole seconds: more than the limit, so that a rank is given at
		# least the limit however the seconds fall.
		[ $((cadre_t - cadre_last)) -gt "$cadre_limit" ] || continue
		if [ "$cadre_seen" = 1 ]; then
			cadre_why="no progress for ${cadre_limit}s (spec.hang.progressSeconds)"
		else
			cadre_why="no progress in the first ${cadre_limit}s (spec.hang.startupSeconds)"
		fi
		if [ -n "${CADRE_NCCL_DUMP_DIR:-}" ]; then
			cadre_why="$cadre_why; NCCL flight recorder dumps, if PyTorch wrote any: $CADRE_NCCL_DUMP_DIR"
		fi
		printf 'rank %s %s\n' "${SLURM_NODEID:-?}" "$cadre_why" >"$cadre_work/hung"
		cadre_say "rank ${SLURM_NODEID:-?} is hung: $cadre_why; stopping it"
		cadre_stop_program
		return 0
	done
}

# In the in-place mode, in the background for one of setup and run: once the
# controller begins a newer attempt, this rank's run of the old one is
# stopped as a pod stop would stop it (the spec.signal notice, SIGTERM
# secondsBefore later, SIGKILL 10 s after that), and cadre_exit is told why
# in $cadre_restart. Looked at first at once: the attempt may have moved on
# while the gang was awaited.
cadre_watch_attempt() {
	eval "$cadre_immune"
	while kill -0 "$cadre_child" 2>/dev/null; do
		if cadre_read_attempt && [ "$cadre_a" -gt "$cadre_attempt" ]; then
			printf '%s\n' "$cadre_a" >"$cadre_restart"
			cadre_say "attempt $cadre_a began (in-place restart): stopping attempt $cadre_attempt"
			if cadre_notice "attempt $cadre_a began; SIGTERM follows in ${cadre_sig_before}s"; then
				sleep "$cadre_sig_before"
			fi
			cadre_stop_program
			return 0
		fi
		# A read of a file, five times a second: the restart waits on it.
		sleep 0.2 2>/dev/null || sleep 1
	done
}

# Copy fifo $1 to the container log (fd $3: 1 or 2), and append it to file $2 if set.
cadre_copy() {
	eval "$cadre_immune"
	if [ -n "$2" ]; then
		if [ "$3" = 2 ]; then exec tee -a "$2" <"$1" >&2; else exec tee -a "$2" <"$1"; fi
	fi
	if [ "$3" = 2 ]; then exec cat "$1" >&2; else exec cat "$1"; fi
}

# Run $1 under the user shell and set cadre_rc to its exit status. A trapped
# signal makes wait return early, so wait again for the real status. With
# spec.hang or an output file, stdout and stderr pass through fifos to
# copiers (cat, or tee into the file) whose byte counts are the output's
# progress, and with spec.hang a watchdog runs beside; in the in-place mode,
# the attempt's watcher does.
cadre_exec() {
	trap cadre_forward TERM INT
	cadre_copiers=
	cadre_dog=
	if { [ -n "$cadre_hang" ] || [ -n "$cadre_out_file" ]; } && [ -n "$cadre_work" ]; then
		rm -f "$cadre_work/out" "$cadre_work/err" "$cadre_work/hung"
		if mkfifo "$cadre_work/out" "$cadre_work/err" 2>/dev/null; then
			cadre_copy "$cadre_work/out" "$cadre_out_file" 1 &
			cadre_copiers=$!
			cadre_copy "$cadre_work/err" "$cadre_err_file" 2 &
			cadre_copiers="$cadre_copiers $!"
			"$cadre_shell" -c "$1" >"$cadre_work/out" 2>"$cadre_work/err" &
		else
			cadre_say "mkfifo is not in the image: only $CADRE_HEARTBEAT_FILE shows progress, and --output is not written"
			"$cadre_shell" -c "$1" &
		fi
		cadre_child=$!
		if [ -n "$cadre_hang" ]; then
			cadre_watchdog $cadre_copiers &
			cadre_dog=$!
		fi
	else
		"$cadre_shell" -c "$1" &
		cadre_child=$!
	fi
	# cadre-signal (scancel --signal) finds the program here.
	if [ -n "${CADRE_BIN_DIR:-}" ]; then
		printf '%s\n' "$cadre_child" >"$CADRE_BIN_DIR/program.pid" 2>/dev/null || :
	fi
	cadre_watcher=
	if [ -n "$cadre_attempt" ]; then
		cadre_watch_attempt &
		cadre_watcher=$!
	fi
	cadre_rc=0
	wait "$cadre_child" || cadre_rc=$?
	while [ "$cadre_signalled" = 1 ]; do
		cadre_signalled=0
		cadre_rc=0
		wait "$cadre_child" || cadre_rc=$?
	done
	for cadre_p in $cadre_dog $cadre_watcher; do
		kill -KILL "$cadre_p" 2>/dev/null
		wait "$cadre_p" 2>/dev/null
	done
	# The copiers end with the program's output; one held open by a process
	# the program left behind is not waited for longer than a moment.
	for cadre_p in $cadre_copiers; do
		cadre_i=0
		while [ "$cadre_i" -lt 20 ] && kill -0 "$cadre_p" 2>/dev/null; do
			sleep 0.1 2>/dev/null || sleep 1
			cadre_i=$((cadre_i + 1))
		done
		kill -KILL "$cadre_p" 2>/dev/null
		wait "$cadre_p" 2>/dev/null
	done
	if [ -n "$cadre_dog" ] && [ -s "$cadre_work/hung" ]; then
		read -r cadre_hung <"$cadre_work/hung"
		cadre_fail 125 "hung: $cadre_hung"
	fi
}

# spec.signal before activeDeadlineSeconds: the notice secondsBefore the
# deadline, from a timer of its own.
cadre_timer=
if [ -n "$cadre_sig" ] && [ -n "${CADRE_DEADLINE:-}" ]; then
	(
		eval "$cadre_immune"
		cadre_at=$((CADRE_DEADLINE - cadre_sig_before))
		cadre_epoch=$(date +%s 2>/dev/null) || exit 0
		[ "$cadre_at" -gt "$cadre_epoch" ] && sleep $((cadre_at - cadre_epoch))
		cadre_notice "activeDeadlineSeconds runs out in ${cadre_sig_before}s"
	) &
	cadre_timer=$!
fi

[ -z "$cadre_attempt" ] || printf 'running %s\n' "$cadre_attempt" >"$cadre_state"
if [ -n "${CADRE_SETUP:-}" ]; then
	cadre_exec "$CADRE_SETUP"
	# Stopped because a newer attempt began: no failure of setup, whatever
	# its exit code, and no run of the old attempt.
	[ ! -e "$cadre_restart" ] || cadre_exit "$cadre_rc" ""
	if [ "$cadre_rc" -ne 0 ]; then
		cadre_fail "$cadre_rc" "setup failed with exit code $cadre_rc; run was not started"
	fi
	# Told to stop while setup ran, and setup still exited 0.
	[ "$cadre_stopping" = 0 ] || cadre_fail 143 "stopped during setup; run was not started"
fi
cadre_exec "$CADRE_RUN"
[ -z "$cadre_timer" ] || kill -KILL "$cadre_timer" 2>/dev/null
cadre_exit "$cadre_rc" ""
