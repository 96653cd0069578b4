#!/usr/bin/env bats
# Faults on the wire. The controller and the CLI reach the API server through
# e2e/faultproxy, which cuts connections mid-watch and mid-request, goes silent for 30 s,
# adds a second to every request, answers 429 and 503; the last fault compacts etcd and
# restarts the API server, so every watch comes back 410 Gone. During each, a burst of
# gangs starts, runs and ends (one of them fails once and is restarted); after each:
#   - no stored decision is broken at any sample (decisions_hold: no GPU promised twice, no
#     pod of an attempt the stored status does not admit, every pod on its stored node),
#   - every job converges, the failing one with exactly one restart of its own and no job
#     with an infrastructure restart,
#   - the controller recovers: a job created the moment the fault ends runs within a bound,
#     and that time is printed.
# The table at the end says, per fault: repetitions, the longest recovery, the samples
# taken and the violations seen. CADRE_CHAOS_REPS repeats each fault (make chaos).

load helpers
load controller
load runtime
load faults

REPS=${CADRE_CHAOS_REPS:-1}
# Seconds from the end of a fault to a new job running that count as recovered.
RECOVERY_BOUND=${CADRE_CHAOS_RECOVERY_BOUND:-60}

setup_file() {
	crds_install
	faultproxy_start
	CADRE_E2E_CONTROLLER_KUBECONFIG=$FAULT_KUBECONFIG
	export CADRE_E2E_CONTROLLER_KUBECONFIG
	controller_start
	: >"$BATS_FILE_TMPDIR/table"
}

teardown_file() {
	controller_stop
	faultproxy_stop
	{
		printf '\n%-30s %5s %12s %8s %10s\n' FAULT REPS RECOVERY_S SAMPLES VIOLATIONS
		cat "$BATS_FILE_TMPDIR/table"
		printf 'proxy: %s\n' "$(fault_stats 2>/dev/null || echo '(stopped)')"
	} >&3
}

setup() {
	e2e_namespace
	controller_mark
	wait_gpus_free
}

teardown() {
	fault clear >/dev/null 2>&1 || true
	apiserver_ensure_up
	test_cleanup
}

# running_or_done NAME: the job has started (or already ended).
running_or_done() {
	local phase
	phase=$(kubectl -n "$NS" get tj "$1" -o jsonpath='{.status.phase}' 2>/dev/null)
	[[ $phase == Running || $phase == Succeeded ]]
}

# burst R: eight one-node gangs of H100:8 that run 2 s and succeed (the four GPU nodes
# take four at a time), and one whose pod exits 1 every time: restarted once (maxRestarts
# 1), then Failed.
burst() {
	for i in 1 2 3 4 5 6 7 8; do exiting_gang "ok-$1-$i" 1 0 0; done
	exiting_gang "bad-$1" 1 1 1
}

# converged R: every job of repetition R ended as its exit codes make it, with the
# restarts they earned and nothing blamed on the infrastructure.
converged() {
	local r=$1 tj
	tj=$(kubectl -n "$NS" get tj -o json)
	json_has "$tj" "[.items[] | select(.metadata.name | startswith(\"ok-$r-\"))
		| select(.status.phase == \"Succeeded\" and (.status.restarts // 0) == 0
			and (.status.infraRestarts // 0) == 0)] | length == 8"
	json_has "$tj" ".items[] | select(.metadata.name == \"bad-$r\")
		| .status.phase == \"Failed\" and .status.restarts == 1 and (.status.infraRestarts // 0) == 0"
}

# ride FAULT: runs REPS repetitions of: a burst, the fault (the function inject_FAULT,
# which returns when the fault has ended), a probe job created at that moment, and the
# checks above; appends the fault's row to the table.
ride() {
	local name=$1 r t_end recovery worst=0 samples=0 violations=0 watch
	for r in $(seq 1 "$REPS"); do
		watch=$BATS_TEST_TMPDIR/violations-$r
		watch_decisions "$watch" &
		track_pid $!
		burst "$r"
		wait_for -t 30 running_or_done "ok-$r-1"
		"inject_$name"
		t_end=$(date +%s.%N)
		exiting_gang "probe-$r" 1 0 0
		wait_for -t "$RECOVERY_BOUND" running_or_done "probe-$r"
		recovery=$(awk -v a="$t_end" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		echo "$name, repetition $r: a job created when the fault ended ran after ${recovery}s"
		worst=$(awk -v a="$worst" -v b="$recovery" 'BEGIN { print (b > a ? b : a) }')
		wait_for -t 240 all_done
		touch "$watch.stop"
		sleep 1
		decisions_hold 2>>"$watch" || true
		samples=$((samples + $(cat "$watch.samples" 2>/dev/null || echo 0)))
		violations=$((violations + $(grep -c . "$watch" || true)))
		converged "$r"
		controller_check
		kubectl -n "$NS" delete tj --all --wait=false >/dev/null
		wait_for -t 120 no_job_pods
		wait_gpus_free
	done
	printf '%-30s %5s %12s %8s %10s\n' "$name" "$REPS" "$worst" "$samples" "$violations" \
		>>"$BATS_FILE_TMPDIR/table"
	if ((violations)); then
		cat "$BATS_TEST_TMPDIR"/violations-* >&2
		return 1
	fi
	# Each sample read every pod and job; a watcher that never sampled proved nothing.
	((samples > 0))
}

# Every connection cut five times, two seconds apart: watches and requests in flight die.
inject_cut() {
	local i n total=0
	for i in 1 2 3 4 5; do
		sleep 2
		n=$(fault cut | awk '{ print $2 }')
		total=$((total + n))
	done
	echo "cut $total connections"
	((total > 0))
}

# 30 s in which nothing moves: no answer, no error, connections left open.
inject_blackhole() {
	fault blackhole for=30s
	sleep 30
}

inject_latency() {
	fault latency delay=1s for=20s
	# The CLI, a second late on every request, still answers.
	cli_squeue
	sleep 5
}

inject_status_429() {
	fault status code=429 for=10s
	sleep 4
	# The CLI waits out the 429s as kubectl does (Retry-After), then answers.
	cli_squeue
	sleep 1
}

inject_status_503() {
	fault status code=503 for=10s
	sleep 10
}

# The history every watch holds thrown away: etcd compacted past it, and the API server
# restarted so that its watch cache cannot serve it either; every watch comes back 410 Gone.
inject_gone() {
	local rev
	gone_before=$(metric_at "$(<"$(_controller_dir)/metrics")" \
		'cadre_watch_restarts_total{resource="trainingjobs",reason="gone"}')
	kubectl create configmap "churn-$RANDOM" -n "$NS" >/dev/null
	rev=$(etcd_revision)
	etcd_compact "$rev"
	apiserver_stop
	apiserver_start
	wait_for -t 60 nodes_ready
	wait_for -t 90 metric_at_least "$(<"$(_controller_dir)/metrics")" \
		'cadre_watch_restarts_total{resource="trainingjobs",reason="gone"}' $((gone_before + 1))
}

# The CLI's kubeconfig: the proxy's, in the test's namespace.
cli_kubeconfig() {
	sed "s/namespace: .*}/namespace: $NS}/" "$FAULT_KUBECONFIG" >"$BATS_FILE_TMPDIR/cli-kubeconfig"
}

# cli_squeue: `cadre squeue` through the proxy lists the burst's jobs, within a minute.
cli_squeue() {
	local out t0=$SECONDS
	out=$(KUBECONFIG=$BATS_FILE_TMPDIR/cli-kubeconfig timeout 60 "$REPO_ROOT/build/cadre" squeue -h -t all)
	echo "cadre squeue through the fault answered in $((SECONDS - t0)) s"
	grep -q "ok-" <<<"$out"
}

@test "connections cut mid-watch and mid-request: decisions hold, every job converges, the controller recovers" {
	ride cut
}

@test "30 s of black hole: decisions hold, every job converges, the controller recovers" {
	ride blackhole
}

@test "1 s of latency on every request: decisions hold, jobs converge, the CLI still answers" {
	cli_kubeconfig
	ride latency
}

@test "the API server answers 429: decisions hold, jobs converge, the CLI waits it out" {
	cli_kubeconfig
	ride status_429
}

@test "the API server answers 503: decisions hold, jobs converge" {
	ride status_503
}

@test "etcd compacted and the API server restarted, every watch 410 Gone: decisions hold, jobs converge" {
	ride gone
}
