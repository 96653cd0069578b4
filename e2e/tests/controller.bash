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
#   CADRE_E2E_CONTROLLER_KUBECONFIG     the controller's kubeconfig instead of its own
#                                       ServiceAccount's (see below); for debugging only
#
# The controller runs as cadre runs when installed: as ServiceAccount cadre-system/
# cadre-controller, with the RBAC of manifests/rbac.yaml and nothing else. The first
# controller_start of a file (or controller_kubeconfig) applies the namespace and RBAC of
# manifests/ and makes a kubeconfig holding only a token of that ServiceAccount; every
# controller of the file runs with it, as --kubeconfig and as its only KUBECONFIG. So a
# permission the controller uses but manifests/ lacks fails the test that needs it: the
# refused request is logged with the API server's words (RBAC's read "... cannot <verb>
# resource ..."), and test_cleanup fails a test whose controller logged one (but while the
# API server restarts: controller_excuse_begin). A refusal by admission (Pod Security, a
# quota, a webhook) is a 403 too, but not a missing permission, and is not matched. Tests keep the
# cluster admin's $KUBECONFIG for their own kubectl calls.

CADRE_CONTROLLER=${CADRE_CONTROLLER:-$REPO_ROOT/build/cadre-controller}
CRD_DIR=$REPO_ROOT/crd
# shellcheck disable=SC2034 # read by the bats files that load this one
SAMPLES=$REPO_ROOT/manifests/samples
# shellcheck disable=SC2034
JOBS=$REPO_ROOT/e2e/testdata/jobs

# The namespace, ServiceAccount and user cadre runs as (manifests/rbac.yaml).
MANIFESTS=$REPO_ROOT/manifests
INSTALL_NS=cadre-system
INSTALL_SA=cadre-controller
INSTALL_USER=system:serviceaccount:$INSTALL_NS:$INSTALL_SA

# Seconds the controller has to finish after SIGTERM before it counts as hung.
controller_stop_grace=30

# The controller's files: pid, rc (written when it exits), log, health and metrics
# (host:port; metrics is empty when --metrics-addr 0 turned it off), args.
_controller_dir() {
	echo "$BATS_FILE_TMPDIR/controller"
}

# ---------------------------------------------------------------------------------------
# Credentials

# install_rbac: the namespace, then the ServiceAccount, roles and bindings, as
# `kubectl apply -f` would install them one by one. A cadre-system still being deleted
# (40-install's teardown deletes it) is waited for first: nothing can be created in it.
install_rbac() {
	wait_for -t 120 not namespace_terminating "$INSTALL_NS"
	kubectl apply -f "$MANIFESTS/namespace.yaml" -f "$MANIFESTS/rbac.yaml" >/dev/null
	wait_for kubectl -n "$INSTALL_NS" get serviceaccount "$INSTALL_SA"
}

# namespace_terminating NS: NS exists and is being deleted.
namespace_terminating() {
	[[ $(kubectl get namespace "$1" -o jsonpath='{.status.phase}' 2>/dev/null) == Terminating ]]
}

# sa_credentials DIR SA [NAMESPACE]: a fresh token of ServiceAccount SA in NAMESPACE
# (default $INSTALL_NS), the cluster CA as the kube-root-ca.crt ConfigMap publishes it to
# every namespace, and the namespace: the three files of a pod's service-account
# directory. The token lasts 2 hours, longer than any e2e file runs.
sa_credentials() {
	local dir=$1 sa=$2 ns=${3:-$INSTALL_NS}
	mkdir -p "$dir"
	chmod 700 "$dir"
	wait_for kubectl -n "$ns" get configmap kube-root-ca.crt
	kubectl -n "$ns" get configmap kube-root-ca.crt -o jsonpath='{.data.ca\.crt}' >"$dir/ca.crt"
	kubectl create token "$sa" -n "$ns" --duration=2h >"$dir/token"
	printf '%s' "$ns" >"$dir/namespace"
	[[ -s $dir/ca.crt && -s $dir/token ]]
}

# sa_kubeconfig DIR FILE: a kubeconfig with DIR's token and CA and nothing else: no client
# certificate, so the API server knows the caller only as the ServiceAccount. Its context's
# namespace is DIR's.
sa_kubeconfig() {
	local dir=$1 file=$2
	cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: cadre-e2e
  cluster:
    server: $CADRE_E2E_APISERVER
    certificate-authority: $dir/ca.crt
users:
- name: serviceaccount
  user:
    token: $(<"$dir/token")
contexts:
- name: serviceaccount
  context: {cluster: cadre-e2e, user: serviceaccount, namespace: $(<"$dir/namespace")}
current-context: serviceaccount
EOF
	chmod 600 "$file"
}

# controller_kubeconfig: the path of the kubeconfig the file's controllers run with:
# $CADRE_E2E_CONTROLLER_KUBECONFIG when set, otherwise one holding only a token of cadre's
# ServiceAccount, made (with install_rbac) the first time a file asks. Call it in
# setup_file when a test may need it while the API server is down.
controller_kubeconfig() {
	local dir=$BATS_FILE_TMPDIR/controller-sa
	if [[ -n ${CADRE_E2E_CONTROLLER_KUBECONFIG:-} ]]; then
		echo "$CADRE_E2E_CONTROLLER_KUBECONFIG"
		return 0
	fi
	if [[ ! -s $dir/kubeconfig ]]; then
		{ install_rbac && sa_credentials "$dir" "$INSTALL_SA" &&
			sa_kubeconfig "$dir" "$dir/kubeconfig.tmp" &&
			mv "$dir/kubeconfig.tmp" "$dir/kubeconfig"; } >&2 ||
			{ echo "controller_kubeconfig: cannot make $INSTALL_USER's kubeconfig" >&2; return 1; }
	fi
	echo "$dir/kubeconfig"
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

# _metrics_addr_of PORT ARGS...: the address /metrics is served on: 127.0.0.1:PORT unless
# ARGS give --metrics-addr (the last one wins, as for every flag); empty for "0".
_metrics_addr_of() {
	local addr=127.0.0.1:$1
	shift
	while (($#)); do
		case $1 in
		--metrics-addr) addr=${2:-}; shift ;;
		--metrics-addr=*) addr=${1#--metrics-addr=} ;;
		esac
		shift
	done
	[[ $addr == 0 ]] && addr=
	[[ $addr == :* ]] && addr=127.0.0.1$addr
	echo "$addr"
}

# controller_start [ARGS...]: starts cadre-controller on the e2e cluster with ARGS added
# to its flags, and waits until /readyz answers 200 (its caches have synced). The ARGS are
# kept for controller_restart.
controller_start() {
	local dir port mport log kubeconfig t0 timeout=${CADRE_E2E_CONTROLLER_READY_TIMEOUT:-90}
	dir=$(_controller_dir)
	mkdir -p "$dir"
	if [[ ! -x $CADRE_CONTROLLER ]]; then
		echo "controller_start: $CADRE_CONTROLLER is missing (run make build)" >&2
		return 1
	fi
	kubeconfig=$(controller_kubeconfig) || return 1
	if controller_pid >/dev/null; then
		echo "controller_start: a controller is already running (pid $(controller_pid))" >&2
		return 1
	fi
	# No arguments is an empty file: printf would write one empty line, read back as "".
	: >"$dir/args"
	if (($#)); then printf '%s\n' "$@" >"$dir/args"; fi
	rm -f "$dir/pid" "$dir/rc"
	{ read -r port && read -r mport; } < <(free_ports 2)
	echo "127.0.0.1:$port" >"$dir/health"
	_metrics_addr_of "$mport" "$@" >"$dir/metrics"
	log=$dir/log
	echo "==== cadre-controller started $(date -u +%FT%TZ) by ${BATS_TEST_NAME:-setup_file}" >>"$log"
	# The wrapper records the exit status; fd 3 is closed so bats does not wait for it.
	# bats' errexit and ERR trap would end the wrapper at a non-zero status: drop them.
	# The admin's KUBECONFIG is not in the controller's environment either.
	(
		set +eE
		trap - ERR
		KUBECONFIG=$kubeconfig "$CADRE_CONTROLLER" --kubeconfig "$kubeconfig" --metrics-addr "127.0.0.1:$mport" \
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

# controller_excuse_begin / controller_excuse_end: refusals the controller logs between
# the two calls are not held against it. For a restart of the API server only: until its
# RBAC authorizer has filled its caches it refuses every request of a ServiceAccount
# (the same request succeeds a second later), and that is the API server's start-up,
# not a permission manifests/ lacks. A begin without an end excuses to the end of the log.
controller_excuse_begin() {
	local log
	log=$(_controller_dir)/log
	printf '%s ' "$(($([[ -f $log ]] && wc -l <"$log" || echo 0) + 1))" >>"$BATS_TEST_TMPDIR/excused"
}

controller_excuse_end() {
	local log
	log=$(_controller_dir)/log
	[[ -f $BATS_TEST_TMPDIR/excused ]] || return 0
	echo "$([[ -f $log ]] && wc -l <"$log" || echo 0)" >>"$BATS_TEST_TMPDIR/excused"
}

# controller_refused_nothing: the controller logged no RBAC refusal since
# the mark, outside what controller_excuse_begin/_end excused. Running with the RBAC of
# manifests/, a permission it lacks shows up as one, whether or not the test would notice
# the missing effect.
controller_refused_nothing() {
	local log lines ranges=
	log=$(_controller_dir)/log
	[[ -f $log ]] || return 0
	[[ -f $BATS_TEST_TMPDIR/excused ]] && ranges=$(tr '\n' ';' <"$BATS_TEST_TMPDIR/excused")
	if lines=$(awk -v from="$((${CONTROLLER_LOG_MARK:-0} + 1))" -v ranges="$ranges" '
		BEGIN {
			n = split(ranges, r, ";")
			for (i = 1; i <= n; i++) {
				k = split(r[i], ab, " ")
				lo[i] = k ? ab[1] : 0
				hi[i] = k > 1 ? ab[2] : 1e18
			}
		}
		NR < from { next }
		{ for (i = 1; i <= n; i++) if (lo[i] && NR >= lo[i] && NR <= hi[i]) next }
		/cannot [a-z]+ resource/ { print; found = 1 }
		END { exit !found }' "$log"); then
		echo "cadre-controller, running as $INSTALL_USER, was refused during this test:" >&2
		head -n 10 <<<"$lines" >&2
		return 1
	fi
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

# controller_scrape FILE: the running controller's /metrics, saved in FILE.
controller_scrape() {
	local addr
	addr=$(<"$(_controller_dir)/metrics")
	[[ -n $addr ]] || { echo "controller_scrape: the controller serves no /metrics" >&2; return 1; }
	curl -fsS --max-time 5 -o "$1" "http://$addr/metrics"
}

# metric_of FILE SERIES: the value of one series exactly as exposed, e.g.
#   metric_of "$file" 'cadre_job_restarts_total{reason="PodFailed"}'
# 0 when it is absent (a series appears with its first update).
metric_of() {
	awk -v s="$2" '$1 == s { v = $2 } END { print v == "" ? 0 : v }' "$1"
}

# metric_delta BEFORE AFTER SERIES: how much SERIES grew from file BEFORE to file AFTER.
metric_delta() {
	awk -v a="$(metric_of "$1" "$3")" -v b="$(metric_of "$2" "$3")" 'BEGIN { print b - a }'
}

# histogram_exposed FILE NAME [LABELS]: FILE holds the histogram NAME's HELP and TYPE lines
# and, for the series of LABELS (`kind="TrainingJob"`, or none), buckets ending with
# le="+Inf" equal to its _count, and a _sum. Says what is missing.
histogram_exposed() {
	local file=$1 name=$2 labels=${3:-} sel= le inf count
	[[ -n $labels ]] && sel="{$labels}"
	le="{${labels:+$labels,}le=\"+Inf\"}"
	grep -q "^# HELP $name " "$file" || { echo "no HELP line for $name" >&2; return 1; }
	grep -qx "# TYPE $name histogram" "$file" || { echo "no '# TYPE $name histogram' line" >&2; return 1; }
	awk -v s="${name}_bucket$le" '$1 == s { f = 1 } END { exit !f }' "$file" ||
		{ echo "no ${name}_bucket$le" >&2; return 1; }
	awk -v s="${name}_sum$sel" '$1 == s { f = 1 } END { exit !f }' "$file" ||
		{ echo "no ${name}_sum$sel" >&2; return 1; }
	inf=$(metric_of "$file" "${name}_bucket$le")
	count=$(metric_of "$file" "${name}_count$sel")
	[[ $inf == "$count" ]] || { echo "${name}: +Inf bucket $inf, _count $count" >&2; return 1; }
}

# events_about KIND NAME: the events.k8s.io Events in $NS about the object, as a JSON array
# of {type, reason, note, count} (count: 1 for an Event that has no series yet).
events_about() {
	kubectl -n "$NS" get events.events.k8s.io -o json | jq -c --arg kind "$1" --arg name "$2" '
		[.items[] | select(.regarding.kind == $kind and .regarding.name == $name)
			| {type, reason, note, count: (.series.count // 1)}]'
}

# event_recorded KIND NAME REASON: an Event with that reason about the object exists (for
# wait_for: the recorder sends in the background).
event_recorded() {
	events_about "$1" "$2" | jq -e --arg r "$3" 'any(.[]; .reason == $r)' >/dev/null
}

# crds_install: applies the CRDs and the topology policy (idempotent), waits until the four
# CRDs are Established, and applies the cluster's ClusterTopology.
crds_install() {
	kubectl apply -k "$CRD_DIR" >/dev/null
	kube_wait 60 --for=condition=Established \
		crd/trainingjobs.cadre.dev crd/volumes.cadre.dev crd/partitions.cadre.dev \
		crd/clustertopologies.cadre.dev >/dev/null
	kubectl apply -f "$CRD_DIR/../manifests/clustertopology-default.yaml" >/dev/null
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

# pvs_cleanup: deletes the PVs the test made and those cadre made for its nfs Volumes
# (labelled with the Volume's namespace, $NS or a second namespace $NS-*).
pvs_cleanup() {
	local pvs=() made=()
	[[ -f $BATS_TEST_TMPDIR/pvs ]] && mapfile -t pvs <"$BATS_TEST_TMPDIR/pvs"
	if [[ -n ${NS:-} ]]; then
		mapfile -t made < <(kubectl get pv -o json 2>/dev/null | jq -r --arg ns "$NS" '.items[]
			| select((.metadata.labels["cadre.dev/volume-namespace"] // "")
				| . == $ns or startswith($ns + "-")) | .metadata.name')
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
# deletes its PVs and namespace, and fails when the controller died during the test or was
# refused a request (a permission manifests/rbac.yaml lacks).
test_cleanup() {
	local rc=0 p
	if [[ -f $BATS_TEST_TMPDIR/pids ]]; then
		while read -r p; do kill "$p" 2>/dev/null || true; done <"$BATS_TEST_TMPDIR/pids"
	fi
	show_state
	controller_log_since_mark 80
	controller_check || rc=1
	controller_refused_nothing || rc=1
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

# on_stored_nodes JOB: every pod of JOB is bound to the node its rank's stored decision names.
on_stored_nodes() {
	local tj
	tj=$(kubectl -n "$NS" get tj "$1" -o json | jq -c '.status.nodes | map({key: (.rank | tostring), value: .node}) | from_entries')
	kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json | jq -e --argjson d "$tj" '
		(.items | length) > 0 and all(.items[];
			.spec.nodeName == $d[.metadata.labels["cadre.dev/node-rank"]])' >/dev/null
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

# pod_env POD: the main container's environment as the kubelet gives it, one JSON object,
# name -> value: the data of the ConfigMaps it takes by envFrom, then its own env, which
# wins; a variable taken from a Secret reads "secret:<name>/<key>".
pod_env() {
	local pod from='{}' cm
	pod=$(kubectl -n "$NS" get "pod/$1" -o json) || return 1
	for cm in $(jq -r '.spec.containers[] | select(.name == "main") | .envFrom[]?
			| .configMapRef.name // empty' <<<"$pod"); do
		from=$(jq -c --argjson d "$(kubectl -n "$NS" get configmap "$cm" -o json | jq -c '.data // {}')" \
			'. + $d' <<<"$from") || return 1
	done
	jq --argjson from "$from" '$from + ([.spec.containers[] | select(.name == "main")
		| .env[]? | {key: .name, value: (if .valueFrom.secretKeyRef then
			"secret:\(.valueFrom.secretKeyRef.name)/\(.valueFrom.secretKeyRef.key)" else .value // "" end)}]
		| from_entries)' <<<"$pod"
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

# cadre_pv NAMESPACE VOLUME: the PV cadre makes for an nfs Volume (docs/volumes.md):
# cadre.<namespace>.<name>.<the first 16 hex digits of SHA-256 of "namespace/name">.
cadre_pv() {
	local sum
	sum=$(printf '%s/%s' "$1" "$2" | sha256sum)
	echo "cadre.$1.$2.${sum:0:16}"
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

# json_has_now JOB JQ_EXPR: json_has of the TrainingJob JOB as the API server holds it now.
json_has_now() {
	json_has "$(kubectl -n "$NS" get tj "$1" -o json)" "$2"
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

# ---------------------------------------------------------------------------------------
# The invariants of a stored admission (docs/design.md 3.1), for tests that stop the
# controller at random moments or disturb its network.

# _decisions_jq: reads {p1, jobs, p2, nodes}: the namespace's pods, then its TrainingJobs,
# then its pods again, and the nodes, each a list as `kubectl get -o json` gives it; prints
# one line per violation:
#   - a pod (read before the jobs, so its job's status was stored before it was made) of
#     an attempt that the stored status neither admits nor has moved past, while the job
#     is not stored as Suspended or finished;
#   - a pod of the admitted attempt not pinned to (or not bound on) its rank's stored node;
#   - a pod kube-scheduler found no room for (Unschedulable): a node promised twice;
#   - a node whose GPUs are short of what its pods bound throughout (in both reads) and the
#     admitted ranks not yet bound there take.
_decisions_jq='
def attempt($s): ($s.restarts // 0) + ($s.infraRestarts // 0);
def admitted($s): any(($s.conditions // [])[]; .type == "Admitted" and .status == "True");
def decided($s; $r): (($s.nodes // []) | map(select(.rank == $r)) | first | .node) // null;
def lab($p; $k): $p.metadata.labels[$k];
def pinned($p): ([$p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
	.nodeSelectorTerms[0].matchFields[]? | select(.key == "metadata.name") | .values[0]]
	| first) // null;
def ended($p): $p.status.phase == "Succeeded" or $p.status.phase == "Failed";
def gpus($p): [$p.spec.containers[].resources.requests["nvidia.com/gpu"] // "0" | tonumber] | add;
(.jobs.items | map({key: .metadata.name, value: .}) | from_entries) as $J
| (.p1.items | map(.metadata.uid)) as $before
| ([.p2.items[] | select(.spec.nodeName != null and (ended(.) | not)
	and (.metadata.uid as $u | $before | index($u)))]) as $bound
| ([.p1.items[], .p2.items[] | select(.spec.nodeName != null)
	| "\(lab(.; "cadre.dev/job-name"))/\(lab(.; "cadre.dev/restart-attempt"))/\(lab(.; "cadre.dev/node-rank"))"]) as $placed
| (
  [.p1.items[] | . as $p | $J[lab($p; "cadre.dev/job-name")] as $j | select($j != null)
	| ($j.status // {}) as $s
	| (lab($p; "cadre.dev/restart-attempt") | tonumber) as $a
	| (lab($p; "cadre.dev/node-rank") | tonumber) as $r
	| if ((($a == attempt($s)) and admitted($s)) or ($a < attempt($s))
		or (["Suspended", "Succeeded", "Failed"] | index($s.phase // ""))) | not then
		"pod \($p.metadata.name) of attempt \($a) exists, but the stored status of job \($j.metadata.name) (phase \($s.phase), attempt \(attempt($s)), admitted \(admitted($s))) does not admit it"
	  elif ($a == attempt($s)) and admitted($s) and ($j.spec.queue // "") == ""
		and (pinned($p) != decided($s; $r)
		or ($p.spec.nodeName != null and $p.spec.nodeName != decided($s; $r))) then
		"pod \($p.metadata.name) is pinned to \(pinned($p)), bound to \($p.spec.nodeName), but rank \($r) was admitted on \(decided($s; $r))"
	  else empty end]
  + [.p2.items[] | select(any(.status.conditions[]?; .type == "PodScheduled"
	and .status == "False" and .reason == "Unschedulable"))
	| "pod \(.metadata.name) is unschedulable: \([.status.conditions[] | select(.type == "PodScheduled") | .message] | first)"]
  + [.nodes.items[] | . as $n
	| ([$bound[] | select(.spec.nodeName == $n.metadata.name) | gpus(.)] | add // 0) as $used
	| ([$J[] | select(admitted(.status // {})) | . as $j | ($j.status // {}) as $s
		| range(0; $j.spec.numNodes) as $r
		| select(decided($s; $r) == $n.metadata.name)
		| select(($placed | index("\($j.metadata.name)/\(attempt($s))/\($r)")) | not)
		| ($j.spec.resources.accelerators // "x:0" | split(":")[1] // "1" | tonumber)]
	  | add // 0) as $promised
	| ($n.status.allocatable["nvidia.com/gpu"] // "0" | tonumber) as $has
	| select($used + $promised > $has)
	| "node \($n.metadata.name): \($used) GPUs bound and \($promised) admitted, \($has) exist"]
  ) | .[]'

# decisions_hold [NAMESPACE]: no violation of the stored admissions in NAMESPACE (default
# $NS) now; prints each one and fails when there is any.
decisions_hold() {
	local ns=${1:-$NS} dir out
	dir=$(mktemp -d "${BATS_TEST_TMPDIR:-/tmp}/decisions.XXXXXX")
	if kubectl -n "$ns" get pods -o json >"$dir/p1" 2>/dev/null &&
		kubectl -n "$ns" get trainingjobs -o json >"$dir/jobs" 2>/dev/null &&
		kubectl -n "$ns" get pods -o json >"$dir/p2" 2>/dev/null &&
		kubectl get nodes -o json >"$dir/nodes" 2>/dev/null; then
		out=$(jq -n --slurpfile p1 "$dir/p1" --slurpfile jobs "$dir/jobs" \
			--slurpfile p2 "$dir/p2" --slurpfile nodes "$dir/nodes" \
			'{p1: $p1[0], jobs: $jobs[0], p2: $p2[0], nodes: $nodes[0]}' |
			jq -r "$_decisions_jq") || out="decisions_hold: jq failed"
	else
		out=""  # the API server did not answer: nothing to judge
	fi
	rm -rf "$dir"
	[[ -z $out ]] && return 0
	echo "$out" >&2
	return 1
}

# watch_decisions FILE: checks the stored decisions twice a second until FILE.stop exists;
# appends every violation, and counts the samples in FILE.samples.
watch_decisions() {
	local out=$1 samples=0
	: >"$out"
	while [[ ! -f $out.stop ]]; do
		decisions_hold 2>>"$out" || true
		samples=$((samples + 1))
		echo "$samples" >"$out.samples"
		sleep 0.5
	done
}

# all_done: every job has finished, as its exit codes make it.
all_done() {
	[[ $(kubectl -n "$NS" get tj -o json | jq '[.items[] | select(.status.phase == "Succeeded"
		or .status.phase == "Failed")] | length') == "$(kubectl -n "$NS" get tj -o name | wc -l)" ]]
}

# exiting_gang NAME SIZE CODE MAX_RESTARTS: SIZE x H100:8 whose pods run 2 s and exit CODE.
exiting_gang() {
	kubectl -n "$NS" apply -f - <<EOF >/dev/null
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  numNodes: $2
  maxRestarts: $4
  resources:
    accelerators: "H100:8"
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
  podTemplate:
    metadata:
      annotations:
        e2e.cadre.dev/exit-code: "$3"
        e2e.cadre.dev/exit-after: "2s"
EOF
}
