# Helpers for 30-runtime.bats: the client runtime under faults of the control plane.
# Load after helpers and controller:
#
#   load helpers
#   load controller
#   load runtime
#
# controller.bash runs one controller per file; the leader-election tests need several at
# once, each with its own ports and log, so they are started here as named instances:
#
#   ctl_start NAME [ARGS...]   start one, wait for /readyz (its caches synced)
#   ctl_signal NAME SIG        send it a signal
#   ctl_stop NAME              SIGTERM; it must exit 0 within the grace period
#   ctl_stop_all               teardown: stop every instance of the test, whatever state it is in
#
# An instance's files are under $BATS_TEST_TMPDIR/ctl/NAME: pid, rc (written by the wrapper
# when it exits), log, ports. Instances belong to one test.
#
# Also: the e2e cluster's etcd (revision, compaction) and API server (stop and start), and
# reading a counter off /metrics.

# Seconds an instance has to exit after SIGTERM.
ctl_stop_grace=30

_ctl_dir() {
	echo "$BATS_TEST_TMPDIR/ctl/$1"
}

# ctl_pid NAME: the instance's pid while it runs; fails otherwise.
ctl_pid() {
	local dir pid
	dir=$(_ctl_dir "$1")
	[[ -f $dir/pid && ! -f $dir/rc ]] || return 1
	pid=$(<"$dir/pid")
	kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

# ctl_health NAME / ctl_metrics NAME: host:port of its health and metrics servers.
ctl_health() {
	sed -n 1p "$(_ctl_dir "$1")/ports"
}

ctl_metrics() {
	sed -n 2p "$(_ctl_dir "$1")/ports"
}

ctl_log() {
	echo "$(_ctl_dir "$1")/log"
}

# ctl_log_has NAME TEXT
ctl_log_has() {
	grep -qF -- "$2" "$(ctl_log "$1")"
}

# ctl_log_count NAME TEXT: how many lines of its log contain TEXT.
ctl_log_count() {
	grep -cF -- "$2" "$(ctl_log "$1")" || true
}

# ctl_readyz NAME: the HTTP status of its /readyz (000 when nothing answers).
ctl_readyz() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://$(ctl_health "$1")/readyz" || true
}

ctl_ready() {
	[[ $(ctl_readyz "$1") == 200 ]]
}

# ctl_launch NAME [ARGS...]: starts cadre-controller as instance NAME with ARGS added to
# its flags (a later --kubeconfig in ARGS wins), and returns at once. Like the file's
# controller, it runs as cadre's ServiceAccount (controller_kubeconfig).
ctl_launch() {
	local name=$1 dir log kubeconfig ports=()
	shift
	dir=$(_ctl_dir "$name")
	kubeconfig=$(controller_kubeconfig) || return 1
	if [[ ! -x $CADRE_CONTROLLER ]]; then
		echo "ctl_launch: $CADRE_CONTROLLER is missing (run make build)" >&2
		return 1
	fi
	if ctl_pid "$name" >/dev/null; then
		echo "ctl_launch: instance $name is already running" >&2
		return 1
	fi
	mkdir -p "$dir"
	rm -f "$dir/pid" "$dir/rc"
	mapfile -t ports < <(free_ports 2)
	printf '127.0.0.1:%s\n' "${ports[@]}" >"$dir/ports"
	log=$dir/log
	echo "==== cadre-controller $name started $(date -u +%FT%TZ) by $BATS_TEST_NAME" >>"$log"
	# As in controller.bash: the wrapper records the exit status, fd 3 is closed so bats
	# does not wait for it, and bats' errexit must not end the wrapper.
	(
		set +eE
		trap - ERR
		KUBECONFIG=$kubeconfig "$CADRE_CONTROLLER" --kubeconfig "$kubeconfig" \
			--health-addr "127.0.0.1:${ports[0]}" --metrics-addr "127.0.0.1:${ports[1]}" \
			"$@" >>"$log" 2>&1 </dev/null &
		echo $! >"$dir/pid.tmp"
		mv "$dir/pid.tmp" "$dir/pid"
		wait $!
		echo "$?" >"$dir/rc.tmp"
		mv "$dir/rc.tmp" "$dir/rc"
	) </dev/null >/dev/null 2>&1 3>&- &
	local t0=$SECONDS
	while [[ ! -f $dir/pid ]]; do
		((SECONDS - t0 > 10)) && { echo "ctl_launch: no pid after 10s" >&2; return 1; }
		sleep 0.05
	done
}

# ctl_start NAME [ARGS...]: ctl_launch, then wait until /readyz is 200.
ctl_start() {
	local name=$1 t0=$SECONDS timeout=${CADRE_E2E_CONTROLLER_READY_TIMEOUT:-90}
	ctl_launch "$@" || return 1
	while ! ctl_ready "$name"; do
		if [[ -f $(_ctl_dir "$name")/rc ]]; then
			echo "ctl_start: $name exited with status $(<"$(_ctl_dir "$name")/rc") before it was ready" >&2
			tail -n 40 "$(ctl_log "$name")" >&2
			return 1
		fi
		if ((SECONDS - t0 > timeout)); then
			echo "ctl_start: $name: /readyz not 200 after ${timeout}s" >&2
			tail -n 40 "$(ctl_log "$name")" >&2
			return 1
		fi
		sleep 0.2
	done
}

ctl_signal() {
	local pid
	pid=$(ctl_pid "$1") || { echo "ctl_signal: instance $1 is not running" >&2; return 1; }
	kill "-$2" "$pid"
}

# ctl_wait_exit NAME SECONDS: waits for the wrapper to record the exit status.
ctl_wait_exit() {
	local dir t0=$SECONDS
	dir=$(_ctl_dir "$1")
	while [[ ! -f $dir/rc ]]; do
		((SECONDS - t0 >= $2)) && return 1
		sleep 0.1
	done
}

# ctl_rc NAME: the exit status, once it has exited.
ctl_rc() {
	cat "$(_ctl_dir "$1")/rc"
}

# ctl_stop NAME: SIGTERM; fails unless it exits 0 within the grace period.
ctl_stop() {
	local name=$1 rc
	ctl_signal "$name" TERM || return 1
	if ! ctl_wait_exit "$name" "$ctl_stop_grace"; then
		echo "ctl_stop: $name still running ${ctl_stop_grace}s after SIGTERM" >&2
		return 1
	fi
	rc=$(ctl_rc "$name")
	if [[ $rc != 0 ]]; then
		echo "ctl_stop: $name exited with status $rc after SIGTERM" >&2
		return 1
	fi
}

# ctl_stop_all: for teardown. Every instance still running is resumed (a test may have
# stopped it with SIGSTOP), sent SIGTERM and, if it does not exit, SIGKILL. Each log's tail
# is printed (bats shows it for a failed test only).
ctl_stop_all() {
	local dir name pid
	[[ -d $BATS_TEST_TMPDIR/ctl ]] || return 0
	for dir in "$BATS_TEST_TMPDIR"/ctl/*/; do
		name=$(basename "$dir")
		if pid=$(ctl_pid "$name"); then
			kill -CONT "$pid" 2>/dev/null || true
			kill -TERM "$pid" 2>/dev/null || true
			if ! ctl_wait_exit "$name" "$ctl_stop_grace"; then
				kill -KILL "$pid" 2>/dev/null || true
				ctl_wait_exit "$name" 10 || true
			fi
		fi
		echo "---- last 30 lines of controller $name ($(ctl_log "$name"))"
		tail -n 30 "$(ctl_log "$name")" 2>/dev/null || true
	done
}

# ---------------------------------------------------------------------------------------
# /metrics

# metric_at HOST:PORT SERIES: the value of one series, e.g.
#   metric_at 127.0.0.1:8080 'cadre_watch_restarts_total{resource="trainingjobs",reason="gone"}'
# 0 when the series is absent (a counter not yet incremented is not exposed). Fails when
# /metrics does not answer.
metric_at() {
	local text
	text=$(curl -fsS --max-time 5 "http://$1/metrics") || return 1
	awk -v s="$2" '$1 == s { v = $2 } END { print v == "" ? 0 : v }' <<<"$text"
}

# metric_at_least HOST:PORT SERIES N (for wait_for)
metric_at_least() {
	local v
	v=$(metric_at "$1" "$2") || return 1
	awk -v v="$v" -v n="$3" 'BEGIN { exit !(v + 0 >= n + 0) }' || {
		echo "$2 = $v, want >= $3"
		return 1
	}
}

# watch_restarts_of HOST:PORT RESOURCE: every restart of that resource's watch, summed over
# reasons.
watch_restarts_of() {
	local text
	text=$(curl -fsS --max-time 5 "http://$1/metrics") || return 1
	awk -v r="cadre_watch_restarts_total{resource=\"$2\"," \
		'index($1, r) == 1 { n += $2 } END { print n + 0 }' <<<"$text"
}

# watch_restarts_above HOST:PORT RESOURCE N (for wait_for)
watch_restarts_above() {
	local n
	n=$(watch_restarts_of "$1" "$2") || return 1
	((n > $3)) || { echo "$2: $n watch restarts, want more than $3"; return 1; }
}

# ---------------------------------------------------------------------------------------
# The control plane

# Seconds `e2e/cluster stop` gives the API server after SIGTERM. Its graceful shutdown can
# take longer than the whole outage a test wants; after this it is killed, as a crashed
# API server would be, which is just as good a way to cut every watch.
apiserver_stop_grace=${CADRE_E2E_RUNTIME_STOP_GRACE:-3}

apiserver_running() {
	"$E2E_DIR/cluster" status 2>/dev/null | grep -Eq '^apiserver +pid'
}

# The file's controller is refused everything while the API server restarts (controller.bash,
# controller_excuse_begin): from the stop until its RBAC answers again, that is excused.
apiserver_stop() {
	controller_excuse_begin
	CADRE_E2E_STOP_GRACE=$apiserver_stop_grace "$E2E_DIR/cluster" stop apiserver
}

apiserver_start() {
	"$E2E_DIR/cluster" start apiserver || return 1
	wait_for -t 30 kubectl auth can-i watch pods -A --as="$INSTALL_USER"
	# A refusal received just before may be logged a moment later.
	sleep 1
	controller_excuse_end
}

# apiserver_ensure_up: for teardown, so a test that failed with the API server stopped does
# not take the following tests down with it.
apiserver_ensure_up() {
	apiserver_running || apiserver_start
}

# nodes_ready: every node is Ready. While the API server is down kwok cannot renew the
# nodes' Leases, and the node lifecycle controller may mark them NotReady for a while after
# it returns; capacity on NotReady nodes is no capacity.
nodes_ready() {
	kubectl get nodes -o json | jq -e 'all(.items[]; any(.status.conditions[];
		.type == "Ready" and .status == "True"))' >/dev/null
}

# etcd's JSON gateway (plain HTTP on loopback; the e2e cluster has no etcdctl). Keys and
# values are base64; "AA==" is the key "\0", whose range is cheap and answers with the
# store's current revision in its header.
_etcd_url() {
	local etcd_port
	etcd_port=$(sed -n 's/^etcd_port=//p' "$CADRE_E2E_STATE/ports")
	[[ -n $etcd_port ]] || { echo "no etcd port in $CADRE_E2E_STATE/ports" >&2; return 1; }
	echo "http://127.0.0.1:$etcd_port"
}

# etcd_revision: etcd's current revision (every resourceVersion the API server hands out
# is one of these).
etcd_revision() {
	local url
	url=$(_etcd_url) || return 1
	curl -fsS --max-time 5 -X POST "$url/v3/kv/range" -d '{"key":"AA=="}' | jq -er '.header.revision'
}

# etcd_compact REVISION: compacts etcd's history up to REVISION, physically, as the API
# server's own periodic compaction does: a watch from an earlier revision is then answered
# with "required revision has been compacted", which the API server turns into 410 Gone.
etcd_compact() {
	local url
	url=$(_etcd_url) || return 1
	curl -fsS --max-time 30 -X POST "$url/v3/kv/compaction" \
		-d "{\"revision\":\"$1\",\"physical\":true}" >/dev/null
}

# etcd_create_pair NAME: a pair TrainingJob (testdata/jobs/pair.yaml's spec) written straight
# into etcd under the key the API server stores it at, so that it can come into being while
# no API server runs. The API server fills in resourceVersion (etcd's revision) and the
# schema's defaults when it reads it back.
etcd_create_pair() {
	local url obj key
	url=$(_etcd_url) || return 1
	obj=$(jq -cn --arg name "$1" --arg ns "$NS" --arg uid "$(</proc/sys/kernel/random/uuid)" \
		--arg now "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '{
			apiVersion: "cadre.dev/v1alpha1", kind: "TrainingJob",
			metadata: {name: $name, namespace: $ns, uid: $uid, generation: 1,
				creationTimestamp: $now},
			spec: {numNodes: 2, resources: {accelerators: "H100:1", cpus: "1", memory: "1Gi"},
				image: "registry.invalid/cadre/e2e:latest", run: "python train.py"}}')
	key=$(printf '/registry/cadre.dev/trainingjobs/%s/%s' "$NS" "$1" | base64 -w0)
	curl -fsS --max-time 10 -X POST "$url/v3/kv/put" \
		-d "{\"key\":\"$key\",\"value\":\"$(printf '%s' "$obj" | base64 -w0)\"}" >/dev/null
}

# watch_from_is_gone PATH RV: a watch of PATH from RV is refused as expired (410), whether
# as the HTTP status or as an ERROR event, as the API server may answer either way.
watch_from_is_gone() {
	local out
	out=$(kubectl get --raw "$1?watch=1&resourceVersion=$2&timeoutSeconds=1" 2>&1) || true
	jq -e 'select(.type == "ERROR") | .object.code == 410' <<<"$out" >/dev/null 2>&1 ||
		grep -qiE 'Expired|\(Gone\)|too old resource version' <<<"$out"
}

# churn_configmaps N: N writes to etcd, in one kubectl call, in $NS.
churn_configmaps() {
	local i
	for ((i = 0; i < $1; i++)); do
		printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: churn-%d}\ndata: {i: "%d"}\n' "$i" "$i"
	done | kubectl -n "$NS" apply -f - >/dev/null
}

# ---------------------------------------------------------------------------------------
# TrainingJobs

# make_pair NAME: the two-node, one-GPU-each job of testdata/jobs/pair.yaml, named NAME.
make_pair() {
	sed "s/^  name: pair\$/  name: $1/" "$JOBS/pair.yaml" | kubectl -n "$NS" create -f - >/dev/null
}

# acted_on JOB: the controller has taken the job up (it has a phase) and made its 2 pods.
acted_on() {
	[[ -n $(jp "trainingjob/$1" '{.status.phase}') ]] && job_pod_count_is "$1" 2
}

# pair_released JOB: the controller has done its part of starting a pair job: both pods
# exist and neither carries a scheduling gate any more. (What `kubectl get pods` shows as
# SchedulingGated is the scheduler's PodScheduled condition, which stays until the
# scheduler sees the pod again; the spec is what the controller wrote.)
pair_released() {
	[[ $(kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json |
		jq '[.items[] | select((.spec.schedulingGates // []) == [])] | length') == 2 ]]
}

# pair_running JOB: a pair job is Running with both pods Running.
pair_running() {
	phase_is "$1" Running && all_pods_running "$1" 2
}

# lease_holder NAME: holderIdentity of the Lease NAME in cadre-system ("" when released),
# the one namespace where cadre's ServiceAccount may hold Leases.
lease_holder() {
	kubectl -n "$INSTALL_NS" get lease "$1" -o 'jsonpath={.spec.holderIdentity}'
}

lease_transitions() {
	kubectl -n "$INSTALL_NS" get lease "$1" -o 'jsonpath={.spec.leaseTransitions}'
}

# ctl_identity NAME: the identity instance NAME stands for election with, from its log
# ("leader: standing for election on Lease <ns>/<name> as <identity>").
ctl_identity() {
	sed -n 's/.* standing for election on Lease [^ ]* as \(.*\)$/\1/p' "$(ctl_log "$1")" | tail -n 1
}

ctl_standing() {
	[[ -n $(ctl_identity "$1") ]]
}

# now_ms: wall-clock milliseconds, for measuring takeovers.
now_ms() {
	date +%s%3N
}

# ctl_log_time_ms NAME TEXT: when instance NAME logged the first line containing TEXT, in
# milliseconds since the epoch (each line starts with its UTC time, 2026-11-30T02:33:07.841Z).
ctl_log_time_ms() {
	local line
	line=$(grep -m 1 -F -- "$2" "$(ctl_log "$1")") || return 1
	date -d "${line%% *}" +%s%3N
}
