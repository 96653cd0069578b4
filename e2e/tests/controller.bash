# Helpers for the bats files that run cadre-controller against the e2e cluster.
# Load after helpers:
#
#   load helpers
#   load controller
#   setup_file()    { crds_install; controller_start; }
#   teardown_file() { controller_stop; }
#   setup()         { e2e_namespace; controller_mark; }
#   teardown()      { test_cleanup; }
#
# One controller per file, started in setup_file with its log in $BATS_FILE_TMPDIR and
# stopped with SIGTERM in teardown_file, which fails if it crashed or exited non-zero. It
# runs under a small wrapper shell that writes its exit status to a file, so the status is
# known whichever process started it (a test may kill it and start a new one).
#
# test_cleanup, in teardown, deletes the test's TrainingJobs and Volumes and waits until
# their pods are gone, so the next test has the GPUs back; it fails the test if the
# controller died during it, and prints the controller's log lines of this test and the
# state of the namespace (bats shows them only for a failed test).
#
# Environment:
#   CADRE_CONTROLLER                 the binary (default $REPO_ROOT/build/cadre-controller)
#   CADRE_E2E_CONTROLLER_READY_TIMEOUT  seconds to wait for /readyz (default 90)
#   CADRE_E2E_CONTROLLER_KUBECONFIG     the controller's kubeconfig (default: the cluster
#                                       admin's $KUBECONFIG; a ServiceAccount's one checks RBAC)

CADRE_CONTROLLER=${CADRE_CONTROLLER:-$REPO_ROOT/build/cadre-controller}
CRD_DIR=$REPO_ROOT/crd
# shellcheck disable=SC2034 # read by the bats files that load this one
SAMPLES=$REPO_ROOT/manifests/samples
# shellcheck disable=SC2034
JOBS=$REPO_ROOT/e2e/testdata/jobs

# Seconds the controller has to finish after SIGTERM before it counts as hung.
controller_stop_grace=30

# The controller's files: pid, rc (written when it exits), log, health (host:port), args.
_controller_dir() {
	echo "$BATS_FILE_TMPDIR/controller"
}

# A TCP port on 127.0.0.1 that nothing listens on, below Linux's ephemeral range so no
# outgoing connection can be holding it.
_free_port() {
	local taken port
	taken=" $(ss -Htln 2>/dev/null | awk '{n = split($4, a, ":"); print a[n]}' | tr '\n' ' ') "
	port=$((15000 + RANDOM % 5000))
	while [[ $taken == *" $port "* ]]; do port=$((port + 1)); done
	echo "$port"
}

# controller_log_tail N: the last N lines of the controller's log.
controller_log_tail() {
	local log
	log=$(_controller_dir)/log
	[[ -f $log ]] || return 0
	echo "---- last $1 lines of the controller log ($log)"
	tail -n "$1" "$log"
	echo "----"
}

# controller_pid: the running controller's pid; fails when none is running.
controller_pid() {
	local dir pid
	dir=$(_controller_dir)
	[[ -f $dir/pid && ! -f $dir/rc ]] || return 1
	pid=$(<"$dir/pid")
	kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

# controller_start [ARGS...]: starts cadre-controller on the e2e cluster with ARGS added
# to its flags, and waits until /readyz answers 200 (its caches have synced). The ARGS are
# kept for controller_restart.
controller_start() {
	local dir port log t0 timeout=${CADRE_E2E_CONTROLLER_READY_TIMEOUT:-90}
	dir=$(_controller_dir)
	mkdir -p "$dir"
	if [[ ! -x $CADRE_CONTROLLER ]]; then
		echo "controller_start: $CADRE_CONTROLLER is missing (run make build)" >&2
		return 1
	fi
	if controller_pid >/dev/null; then
		echo "controller_start: a controller is already running (pid $(controller_pid))" >&2
		return 1
	fi
	# No arguments is an empty file: printf would write one empty line, read back as "".
	: >"$dir/args"
	if (($#)); then printf '%s\n' "$@" >"$dir/args"; fi
	rm -f "$dir/pid" "$dir/rc"
	port=$(_free_port)
	echo "127.0.0.1:$port" >"$dir/health"
	log=$dir/log
	echo "==== cadre-controller started $(date -u +%FT%TZ) by ${BATS_TEST_NAME:-setup_file}" >>"$log"
	# The wrapper records the exit status; fd 3 is closed so bats does not wait for it.
	# bats' errexit and ERR trap would end the wrapper at a non-zero status: drop them.
	(
		set +eE
		trap - ERR
		"$CADRE_CONTROLLER" --kubeconfig "${CADRE_E2E_CONTROLLER_KUBECONFIG:-$KUBECONFIG}" --metrics-addr 127.0.0.1:0 \
			--health-addr "127.0.0.1:$port" "$@" >>"$log" 2>&1 </dev/null &
		echo $! >"$dir/pid.tmp"
		mv "$dir/pid.tmp" "$dir/pid"
		wait $!
		echo "$?" >"$dir/rc.tmp"
		mv "$dir/rc.tmp" "$dir/rc"
	) </dev/null >/dev/null 2>&1 3>&- &
	t0=$SECONDS
	while [[ ! -f $dir/pid ]]; do
		((SECONDS - t0 > 10)) && { echo "controller_start: no pid after 10s" >&2; return 1; }
		sleep 0.05
	done
	while ! curl -fsS --max-time 2 "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
		if [[ -f $dir/rc ]]; then
			echo "controller_start: cadre-controller exited with status $(<"$dir/rc") before it was ready" >&2
			controller_log_tail 60 >&2
			return 1
		fi
		if ((SECONDS - t0 > timeout)); then
			echo "controller_start: /readyz not 200 after ${timeout}s" >&2
			controller_log_tail 60 >&2
			return 1
		fi
		sleep 0.2
	done
}

# controller_restart: starts the controller again with the arguments of the last start.
controller_restart() {
	local args=()
	mapfile -t args <"$(_controller_dir)/args"
	controller_start "${args[@]}"
}

# _controller_wait_rc SECONDS: waits for the wrapper to record the exit status.
_controller_wait_rc() {
	local dir t0=$SECONDS
	dir=$(_controller_dir)
	while [[ ! -f $dir/rc ]]; do
		((SECONDS - t0 >= $1)) && return 1
		sleep 0.1
	done
}

# controller_kill: SIGKILL, as a crash or an OOM kill would; waits until it is gone.
controller_kill() {
	local pid dir
	dir=$(_controller_dir)
	pid=$(controller_pid) || { echo "controller_kill: no controller is running" >&2; return 1; }
	kill -KILL "$pid"
	_controller_wait_rc 10 || { echo "controller_kill: pid $pid still there" >&2; return 1; }
	echo "==== cadre-controller killed (SIGKILL) by ${BATS_TEST_NAME:-?}" >>"$dir/log"
	rm -f "$dir/pid" "$dir/rc"
}

# controller_stop: SIGTERM, then the controller must exit 0 within the grace period.
# Fails when it had already exited (a crash), hangs, or exits non-zero.
controller_stop() {
	local dir pid rc
	dir=$(_controller_dir)
	[[ -f $dir/pid ]] || return 0
	pid=$(<"$dir/pid")
	if [[ -f $dir/rc ]]; then
		echo "controller_stop: cadre-controller had already exited with status $(<"$dir/rc")" >&2
		controller_log_tail 60 >&2
		rm -f "$dir/pid"
		return 1
	fi
	kill -TERM "$pid" 2>/dev/null || true
	if ! _controller_wait_rc "$controller_stop_grace"; then
		echo "controller_stop: still running ${controller_stop_grace}s after SIGTERM; killing it" >&2
		kill -KILL "$pid" 2>/dev/null || true
		_controller_wait_rc 10 || true
		controller_log_tail 60 >&2
		rm -f "$dir/pid"
		return 1
	fi
	rc=$(<"$dir/rc")
	rm -f "$dir/pid"
	if [[ $rc != 0 ]]; then
		echo "controller_stop: cadre-controller exited with status $rc after SIGTERM" >&2
		controller_log_tail 60 >&2
		return 1
	fi
}

# controller_mark: remembers where the log is, so a failed test shows only its own lines.
controller_mark() {
	local log
	log=$(_controller_dir)/log
	CONTROLLER_LOG_MARK=0
	[[ -f $log ]] && CONTROLLER_LOG_MARK=$(wc -l <"$log")
	return 0
}

# controller_log_since_mark N: at most the last N lines logged since the mark.
controller_log_since_mark() {
	local log
	log=$(_controller_dir)/log
	[[ -f $log ]] || return 0
	echo "---- controller log during this test (at most $1 lines of $log from line $((${CONTROLLER_LOG_MARK:-0} + 1)))"
	tail -n "+$((${CONTROLLER_LOG_MARK:-0} + 1))" "$log" | tail -n "$1"
	echo "----"
}

# controller_log_has TEXT: the controller logged TEXT since the mark.
controller_log_has() {
	tail -n "+$((${CONTROLLER_LOG_MARK:-0} + 1))" "$(_controller_dir)/log" | grep -qF -- "$1"
}

# controller_check: fails when the controller is no longer running.
controller_check() {
	local dir
	dir=$(_controller_dir)
	if [[ -f $dir/rc ]]; then
		echo "cadre-controller exited with status $(<"$dir/rc") during this test" >&2
		return 1
	fi
	if ! controller_pid >/dev/null; then
		echo "cadre-controller is not running" >&2
		return 1
	fi
}

# crds_install: applies the CRDs (idempotent) and waits until both are Established. The
# files are named, not the directory, which also holds a kustomization.
crds_install() {
	kubectl apply -f "$CRD_DIR/trainingjobs.cadre.dev.yaml" -f "$CRD_DIR/volumes.cadre.dev.yaml" >/dev/null
	kubectl wait --for=condition=Established --timeout=60s \
		crd/trainingjobs.cadre.dev crd/volumes.cadre.dev >/dev/null
}

# ---------------------------------------------------------------------------------------
# Cleanup

# track_pv NAME: a PersistentVolume this test made (cluster-scoped, so namespace deletion
# does not take it); test_cleanup deletes it.
track_pv() {
	echo "$1" >>"$BATS_TEST_TMPDIR/pvs"
}

# track_pid PID: a background process this test started (a watch); test_cleanup ends it.
track_pid() {
	echo "$1" >>"$BATS_TEST_TMPDIR/pids"
}

# no_job_pods: succeeds when $NS has no pod of any TrainingJob.
no_job_pods() {
	[[ -z $(kubectl -n "$NS" get pods -l cadre.dev/job-name -o name 2>/dev/null) ]]
}

no_volumes() {
	[[ -z $(kubectl -n "$NS" get volumes.cadre.dev -o name 2>/dev/null) ]]
}

# jobs_cleanup: deletes every TrainingJob of $NS and waits until their pods are gone (the
# garbage collector takes them through the owner references). Pods that are still there
# after that are deleted here, so the next test has the GPUs, and the cleanup fails.
jobs_cleanup() {
	local rc=0
	[[ -n ${NS:-} ]] || return 0
	kubectl -n "$NS" delete trainingjobs --all --wait=false >/dev/null 2>&1 || true
	if ! wait_for -t 120 no_job_pods; then
		echo "jobs_cleanup: pods of deleted TrainingJobs still exist in $NS after 120s; deleting them" >&2
		kubectl -n "$NS" get pods -o wide >&2 || true
		kubectl -n "$NS" delete pods -l cadre.dev/job-name --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
		rc=1
	fi
	return $rc
}

# volumes_cleanup: deletes the Volumes of $NS while the controller still runs to release
# its finalizer; a Volume it does not release is unblocked here, and the cleanup fails.
volumes_cleanup() {
	local rc=0 v
	[[ -n ${NS:-} ]] || return 0
	kubectl -n "$NS" delete volumes.cadre.dev --all --wait=false >/dev/null 2>&1 || true
	if ! wait_for -t 60 no_volumes; then
		echo "volumes_cleanup: Volumes of $NS still exist 60s after deletion; removing their finalizers" >&2
		kubectl -n "$NS" get volumes.cadre.dev -o yaml >&2 || true
		for v in $(kubectl -n "$NS" get volumes.cadre.dev -o name 2>/dev/null); do
			kubectl -n "$NS" patch "$v" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
		done
		rc=1
	fi
	return $rc
}

# pvs_cleanup: deletes the PVs the test made and those cadre made for its nfs Volumes.
pvs_cleanup() {
	local pvs=() made=()
	[[ -f $BATS_TEST_TMPDIR/pvs ]] && mapfile -t pvs <"$BATS_TEST_TMPDIR/pvs"
	if [[ -n ${NS:-} ]]; then
		mapfile -t made < <(kubectl get pv -o name 2>/dev/null | sed -n "s|^persistentvolume/\(cadre-$NS-.*\)|\1|p")
		pvs+=("${made[@]}")
	fi
	((${#pvs[@]})) || return 0
	kubectl delete pv "${pvs[@]}" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# show_state: what a person would look at when a test fails.
show_state() {
	[[ -n ${NS:-} ]] || return 0
	echo "---- state of namespace $NS"
	kubectl -n "$NS" get trainingjobs,volumes.cadre.dev -o wide 2>&1 || true
	kubectl -n "$NS" get trainingjobs -o json 2>/dev/null | jq -c '.items[] | {name: .metadata.name, status}' 2>/dev/null || true
	kubectl -n "$NS" get pods,svc,pvc -o wide 2>&1 || true
	# STATUS SchedulingGated above comes from the scheduler's PodScheduled condition, which
	# only a working scheduler updates: say what the pods' specs hold.
	kubectl -n "$NS" get pods -o json 2>/dev/null | jq -c '.items[] | {name: .metadata.name,
		gates: [.spec.schedulingGates[]?.name], node: .spec.nodeName,
		scheduled: (.status.conditions // [] | map(select(.type == "PodScheduled")) |
			map(.status + "/" + (.reason // "")) | first)}' 2>/dev/null || true
	kubectl -n "$NS" get events --sort-by=.lastTimestamp 2>&1 | tail -n 25 || true
	"$REPO_ROOT/e2e/cluster" status 2>&1 || true
	echo "----"
}

# test_cleanup: teardown for a test that ran TrainingJobs. Stops its watches, prints what a
# failure needs (bats shows a test's output only when it fails), gives the GPUs back,
# deletes its PVs and namespace, and fails when the controller died during the test.
test_cleanup() {
	local rc=0 p
	if [[ -f $BATS_TEST_TMPDIR/pids ]]; then
		while read -r p; do kill "$p" 2>/dev/null || true; done <"$BATS_TEST_TMPDIR/pids"
	fi
	show_state
	controller_log_since_mark 80
	controller_check || rc=1
	jobs_cleanup || rc=1
	volumes_cleanup || rc=1
	pvs_cleanup
	e2e_namespace_delete
	return $rc
}

# ---------------------------------------------------------------------------------------
# Cluster capacity

# gpu_nodes: how many Ready kwok nodes offer nvidia.com/gpu (4 after `up`; more after
# add-nodes).
gpu_nodes() {
	kubectl get nodes -l type=kwok -o json | jq '[.items[]
		| select(.status.allocatable["nvidia.com/gpu"] != null)
		| select(.spec.unschedulable != true)
		| select(any(.status.conditions[]; .type == "Ready" and .status == "True"))] | length'
}

# gpus_in_use: nvidia.com/gpu requested by non-terminal pods anywhere in the cluster.
gpus_in_use() {
	kubectl get pods -A -o json | jq '[.items[]
		| select(.status.phase != "Succeeded" and .status.phase != "Failed")
		| .spec.containers[].resources.requests["nvidia.com/gpu"] // "0" | tonumber] | add // 0'
}

gpus_all_free() {
	[[ $(gpus_in_use) == 0 ]]
}

# wait_gpus_free: waits until no pod anywhere holds or waits for a GPU (pods of earlier
# tests' namespaces are deleted asynchronously).
wait_gpus_free() {
	wait_for -t 120 gpus_all_free
}

# ---------------------------------------------------------------------------------------
# TrainingJobs and their pods

# job_pods JOB: names of the job's pods, sorted.
job_pods() {
	kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json | jq -r '.items[].metadata.name' | sort
}

# job_pod_count_is JOB N
job_pod_count_is() {
	[[ $(kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o name | wc -l) -eq $2 ]]
}

# phase_is JOB PHASE
phase_is() {
	field_is "trainingjob/$1" '{.status.phase}' "$2"
}

# condition_is JOB TYPE STATUS [REASON]
condition_is() {
	local got
	got=$(jp "trainingjob/$1" "{.status.conditions[?(@.type==\"$2\")].status}/{.status.conditions[?(@.type==\"$2\")].reason}") || return 1
	if (($# > 3)); then
		[[ $got == "$3/$4" ]]
	else
		[[ ${got%%/*} == "$3" ]]
	fi
}

# all_pods_running JOB N: N pods, every one Running, none being deleted, none gated.
all_pods_running() {
	kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json | jq -e --argjson n "$2" '
		(.items | length) == $n and
		all(.items[]; .status.phase == "Running" and .metadata.deletionTimestamp == null
			and ((.spec.schedulingGates // []) | length) == 0)' >/dev/null
}

# ungated_pods JOB: how many of the job's pods carry no cadre.dev/gang gate or are bound.
ungated_pods() {
	kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json | jq '[.items[]
		| select((any((.spec.schedulingGates // [])[]; .name == "cadre.dev/gang") | not)
			or .spec.nodeName != null)] | length'
}

# phase_watch_start JOB: records every phase the job's status goes through, from now on,
# in $BATS_TEST_TMPDIR/phases.JOB (a watch sees each write, even one that lasts a moment).
phase_watch_start() {
	local out=$BATS_TEST_TMPDIR/phases.$1
	: >"$out"
	kubectl -n "$NS" get "trainingjob/$1" --watch -o 'jsonpath={.status.phase}{"\n"}' \
		>"$out" 2>/dev/null </dev/null 3>&- &
	track_pid $!
	# The watch is in place once it has printed the current state; a change made before
	# that would be missed.
	wait_for -t 30 test -s "$out"
}

# phases_seen JOB: the phases recorded so far, one per line, repeats squeezed.
phases_seen() {
	uniq <"$BATS_TEST_TMPDIR/phases.$1"
}

# phase_seen JOB PHASE
phase_seen() {
	grep -qx -- "$2" "$BATS_TEST_TMPDIR/phases.$1"
}

# pod_env POD: the main container's env as one JSON object, name -> value; a variable
# taken from a Secret reads "secret:<name>/<key>".
pod_env() {
	kubectl -n "$NS" get "pod/$1" -o json | jq '[.spec.containers[] | select(.name == "main")
		| .env[]? | {key: .name, value: (if .valueFrom.secretKeyRef then
			"secret:\(.valueFrom.secretKeyRef.name)/\(.valueFrom.secretKeyRef.key)" else .value // "" end)}]
		| from_entries'
}

# make_pv NAME SIZE ACCESS_MODE [CLAIM_NAMESPACE CLAIM_NAME]: a PersistentVolume with
# storageClassName "" (no provisioner here), optionally reserved for one claim so that
# tests running the same Volume name in other namespaces cannot take it. Nothing mounts it:
# there is no kubelet.
make_pv() {
	local claim=""
	if (($# >= 5)); then
		claim="  claimRef: {namespace: $4, name: $5}"
	fi
	kubectl create -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $1
  labels: {e2e.cadre.dev/test: "true"}
spec:
  capacity: {storage: $2}
  accessModes: [$3]
  storageClassName: ""
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: /tmp/cadre-e2e-pv/$1}
$claim
EOF
	track_pv "$1"
}

# pv_name SUFFIX: a PV name unique to this test (PVs are cluster-scoped).
pv_name() {
	echo "$NS-$1"
}

# json_has JSON JQ_EXPR: succeeds when the expression is true of JSON; otherwise prints the
# expression and the JSON, so the failed assertion explains itself.
json_has() {
	if ! jq -e "$2" <<<"$1" >/dev/null 2>&1; then
		echo "expected: $2" >&2
		echo "of: $(jq -c . <<<"$1" 2>/dev/null || echo "$1")" >&2
		return 1
	fi
}

# same_for SECONDS COMMAND...: COMMAND keeps succeeding, checked every second for SECONDS
# seconds (for "stays Queued", "never ungated").
same_for() {
	local t=$1 i
	shift
	for ((i = 0; i <= t; i++)); do
		"$@" || { echo "same_for: failed after ${i}s: $*" >&2; return 1; }
		((i < t)) && sleep 1
	done
	return 0
}
