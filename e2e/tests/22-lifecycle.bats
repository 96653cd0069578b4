#!/usr/bin/env bats
# The life of a TrainingJob after admission (docs/design.md 1.3): gang restarts after a failure
# of user code, counted against maxRestarts; infrastructure restarts, not counted; the two
# success policies; suspend and resume; activeDeadlineSeconds; ttlSecondsAfterFinished.
#
# Pods "exit" through kwok: the annotation e2e.cadre.dev/exit-code on a running pod ends
# it Succeeded (0) or Failed (n) with that exit code (docs/e2e.md).

load helpers
load controller

setup_file() {
	crds_install
	controller_start
}

teardown_file() {
	controller_stop
}

setup() {
	e2e_namespace
	controller_mark
}

teardown() {
	test_cleanup
}

# exit_pod POD CODE: the pod's main container exits with CODE.
exit_pod() {
	kubectl -n "$NS" annotate pod "$1" "e2e.cadre.dev/exit-code=$2" >/dev/null
}

# pod_uids JOB: "name=uid" of the job's pods, sorted.
pod_uids() {
	kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json |
		jq -r '.items[] | "\(.metadata.name)=\(.metadata.uid)"' | sort
}

# gang_of_attempt JOB N ATTEMPT: N pods, all Running and ungated, all labelled ATTEMPT.
gang_of_attempt() {
	all_pods_running "$1" "$2" || return 1
	kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json | jq -e --arg a "$3" \
		'all(.items[]; .metadata.labels["cadre.dev/restart-attempt"] == $a)' >/dev/null
}

# phases_in_order JOB PHASE...: the recorded phases contain PHASE... in this order.
phases_in_order() {
	local seen want
	seen=" $(phases_seen "$1" | tr '\n' ' ')"
	shift
	want=" $(printf '%s .*' "$@")"
	[[ $seen =~ $want ]] || { echo "phases seen:$seen; wanted in order: $*" >&2; return 1; }
}

# seconds_between T1 T2: T2 - T1 for two RFC 3339 times.
seconds_between() {
	echo $(($(date -d "$2" +%s) - $(date -d "$1" +%s)))
}

not_terminal() {
	local phase
	phase=$(jp "trainingjob/$1" '{.status.phase}') || return 1
	[[ $phase != Succeeded && $phase != Failed ]]
}

@test "rank 1 exits 3 with maxRestarts 1: lastFailure says where and why, Requeued, a fresh gang of attempt 1, each step in /metrics; a second failure ends Failed/MaxRestartsExceeded" {
	m=$BATS_TEST_TMPDIR/metrics
	controller_scrape "$m.0"
	kubectl -n "$NS" apply -f "$JOBS/flaky.yaml"
	wait_for -t 120 phase_is flaky Running
	controller_scrape "$m.1"
	before=$(pod_uids flaky)
	node=$(jp pod/flaky-1 '{.spec.nodeName}')
	[[ -n $node ]]
	phase_watch_start flaky

	failed_at=$(date +%s)
	kubectl -n "$NS" annotate pod flaky-1 >/dev/null \
		"e2e.cadre.dev/exit-message=CUDA error: an illegal memory access" e2e.cadre.dev/exit-code=3
	wait_for -t 60 field_is tj/flaky '{.status.restarts}' 1
	tj=$(kubectl -n "$NS" get tj flaky -o json)
	json_has "$tj" '.status.infraRestarts == 0'
	json_has "$tj" '.status.lastFailure.rank == 1 and .status.lastFailure.exitCode == 3
		and .status.lastFailure.pod == "flaky-1" and (.status.lastFailure.time | length > 0)'
	# Where and why: the node the rank ran on, the container's reason, cadre's sentence
	# with the container's own message, and a time between the exit and now.
	json_has "$tj" ".status.lastFailure.node == \"$node\" and .status.lastFailure.reason == \"Error\""
	json_has "$tj" '.status.lastFailure.message ==
		"rank 1 (pod flaky-1) failed with exit code 3: CUDA error: an illegal memory access"'
	json_has "$tj" "(.status.lastFailure.time | fromdateiso8601) as \$t
		| \$t >= $((failed_at - 1)) and \$t <= $(($(date +%s) + 1))"
	wait_for -t 30 phase_seen flaky Restarting

	# The whole gang goes, and after the 10 s backoff a new one of attempt 1 runs.
	wait_for -t 150 gang_of_attempt flaky 2 1
	wait_for -t 30 phase_is flaky Running
	controller_scrape "$m.2"
	after=$(pod_uids flaky)
	[ "$(cut -d= -f1 <<<"$after" | tr '\n' ' ')" = "flaky-0 flaky-1 " ]
	for line in $after; do
		[[ $before != *"${line#*=}"* ]] || { echo "pod ${line%%=*} kept its uid ${line#*=}"; false; }
	done
	for rank in 0 1; do
		json_has "$(pod_env "flaky-$rank")" '.CADRE_RESTART_ATTEMPT == "1"'
	done
	tj=$(kubectl -n "$NS" get tj flaky -o json)
	json_has "$tj" '.status.restarts == 1 and .status.infraRestarts == 0'
	json_has "$tj" '.status.lastFailure.rank == 1 and .status.lastFailure.exitCode == 3'
	row=$(kubectl -n "$NS" get tj flaky --no-headers | tr -s ' ')
	[[ $row == "flaky Running 2 2 H100:1 1 "* ]] || { echo "row: $row"; false; }

	# Restarting -> Queued was told once, with what comes next.
	wait_for -t 30 event_recorded TrainingJob flaky Requeued
	json_has "$(events_about TrainingJob flaky)" '[.[] | select(.reason == "Requeued")]
		| length == 1 and .[0].type == "Normal" and .[0].count == 1
		and (.[0].note | test("old gang is gone; attempt 1 .*admission"))'

	# /metrics: one admission and one start per run, the restart under its reason, with
	# figures that fit (the second admission waited out the 10 s backoff).
	problems=()
	for step in "0 1" "1 2"; do
		read -r a b <<<"$step"
		for series in cadre_gang_admission_wait_seconds_count cadre_time_to_all_running_seconds_count; do
			d=$(metric_delta "$m.$a" "$m.$b" "$series")
			[[ $d == 1 ]] || problems+=("$series grew by $d from scrape $a to $b, not 1")
		done
	done
	d=$(metric_delta "$m.0" "$m.2" 'cadre_job_restarts_total{reason="PodFailed"}')
	[[ $d == 1 ]] || problems+=("cadre_job_restarts_total{reason=\"PodFailed\"} grew by $d, not 1")
	d=$(metric_delta "$m.1" "$m.2" cadre_gang_admission_wait_seconds_sum)
	awk -v d="$d" 'BEGIN { exit !(d >= 10 && d < 150) }' ||
		problems+=("the readmission after the 10 s backoff waited ${d}s by cadre_gang_admission_wait_seconds_sum")
	d=$(metric_delta "$m.0" "$m.1" cadre_gang_admission_wait_seconds_sum)
	awk -v d="$d" 'BEGIN { exit !(d >= 0 && d < 120) }' ||
		problems+=("the first admission waited ${d}s by cadre_gang_admission_wait_seconds_sum")
	d=$(metric_delta "$m.0" "$m.2" cadre_time_to_all_running_seconds_sum)
	awk -v d="$d" 'BEGIN { exit !(d >= 0 && d < 300) }' ||
		problems+=("two starts took ${d}s by cadre_time_to_all_running_seconds_sum")
	d=$(metric_of "$m.2" 'cadre_reconcile_duration_seconds_count{kind="TrainingJob"}')
	awk -v d="$d" 'BEGIN { exit !(d > 0) }' ||
		problems+=("cadre_reconcile_duration_seconds_count{kind=\"TrainingJob\"} is $d")
	grep -qE '^cadre_workqueue_depth [0-9]+$' "$m.2" ||
		problems+=("cadre_workqueue_depth: '$(grep '^cadre_workqueue_depth' "$m.2")'")
	for h in "cadre_reconcile_duration_seconds kind=\"TrainingJob\"" cadre_gang_admission_wait_seconds \
		cadre_time_to_all_running_seconds; do
		# shellcheck disable=SC2086 # name, then its labels
		out=$(histogram_exposed "$m.2" $h 2>&1) || problems+=("$out")
	done
	grep -qx '# TYPE cadre_job_restarts_total counter' "$m.2" || problems+=("no TYPE line for cadre_job_restarts_total")
	grep -qx '# TYPE cadre_workqueue_depth gauge' "$m.2" || problems+=("no TYPE line for cadre_workqueue_depth")
	out=$("$REPO_ROOT/scripts/check-metrics" "$m.2" 2>&1) || problems+=("check-metrics: $out")
	if ((${#problems[@]})); then
		printf '%s\n' "${problems[@]}"
		false
	fi

	# No restarts left: the next failure is final.
	exit_pod flaky-0 5
	wait_for -t 60 phase_is flaky Failed
	tj=$(kubectl -n "$NS" get tj flaky -o json)
	json_has "$tj" 'any(.status.conditions[]; .type == "Failed" and .status == "True"
		and .reason == "MaxRestartsExceeded")'
	json_has "$tj" '.status.restarts == 1'
	json_has "$tj" '.status.lastFailure.rank == 0 and .status.lastFailure.exitCode == 5
		and .status.lastFailure.pod == "flaky-0"'
	json_has "$tj" '.status.completionTime != null'
	phases_in_order flaky Running Restarting Running Failed
	# The failed pod is kept for kubectl logs; its running peer is stopped.
	[ "$(jp pod/flaky-0 '{.status.phase}')" = Failed ]
	wait_for -t 60 not kubectl -n "$NS" get pod flaky-1
	# Terminal means terminal: nothing is restarted later.
	same_for 3 phase_is flaky Failed
	[ "$(job_pods flaky | tr '\n' ' ')" = "flaky-0 " ]
}

@test "deleting a running pod is an infrastructure restart: infraRestarts 1, restarts 0, a fresh gang of attempt 1" {
	kubectl -n "$NS" apply -f "$JOBS/pair.yaml"
	wait_for -t 120 phase_is pair Running
	before=$(pod_uids pair)
	phase_watch_start pair

	kubectl -n "$NS" delete pod pair-0 --wait=false
	wait_for -t 60 field_is tj/pair '{.status.infraRestarts}' 1
	[ "$(jp tj/pair '{.status.restarts}')" = 0 ]
	wait_for -t 150 gang_of_attempt pair 2 1
	wait_for -t 30 phase_is pair Running
	after=$(pod_uids pair)
	for line in $after; do
		[[ $before != *"${line#*=}"* ]] || { echo "pod ${line%%=*} kept its uid ${line#*=}"; false; }
	done
	tj=$(kubectl -n "$NS" get tj pair -o json)
	json_has "$tj" '.status.restarts == 0 and .status.infraRestarts == 1'
	json_has "$(pod_env pair-1)" '.CADRE_RESTART_ATTEMPT == "1"'
	phases_in_order pair Running Restarting Running
	# The RESTARTS column counts restarts against maxRestarts only.
	row=$(kubectl -n "$NS" get tj pair --no-headers | tr -s ' ')
	[[ $row == "pair Running 2 2 H100:1 0 "* ]] || { echo "row: $row"; false; }
}

@test "successPolicy All: one pod done is not success; every pod exiting 0 is, and the pods are kept" {
	kubectl -n "$NS" apply -f "$JOBS/all.yaml"
	wait_for -t 120 phase_is all Running
	exit_pod all-0 0
	wait_for -t 30 pod_phase_is all-0 Succeeded
	same_for 5 not_terminal all

	exit_pod all-1 0
	wait_for -t 60 phase_is all Succeeded
	tj=$(kubectl -n "$NS" get tj all -o json)
	json_has "$tj" 'any(.status.conditions[]; .type == "Succeeded" and .status == "True")'
	json_has "$tj" 'all(.status.conditions[]; .type != "Failed" or .status == "False")'
	json_has "$tj" '.status.completionTime != null and .status.restarts == 0'
	# Pods of a finished job stay for kubectl logs.
	same_for 3 job_pod_count_is all 2
	[ "$(jp pod/all-0 '{.status.phase}')" = Succeeded ]
	[ "$(jp pod/all-1 '{.status.phase}')" = Succeeded ]
}

@test "successPolicy Rank0: rank 0 exiting 0 is success, and the other pods are deleted" {
	kubectl -n "$NS" apply -f "$JOBS/rank0.yaml"
	wait_for -t 120 phase_is rank0 Running
	exit_pod rank0-0 0
	wait_for -t 60 phase_is rank0 Succeeded
	tj=$(kubectl -n "$NS" get tj rank0 -o json)
	json_has "$tj" 'any(.status.conditions[]; .type == "Succeeded" and .status == "True")'
	json_has "$tj" '.status.completionTime != null'
	wait_for -t 60 job_pod_count_is rank0 1
	[ "$(job_pods rank0)" = rank0-0 ]
	[ "$(jp pod/rank0-0 '{.status.phase}')" = Succeeded ]
	same_for 3 phase_is rank0 Succeeded
}

@test "suspend deletes the pods and keeps the Service; resume runs the gang again" {
	kubectl -n "$NS" apply -f "$JOBS/pair.yaml"
	wait_for -t 120 phase_is pair Running
	svc_uid=$(jp service/pair '{.metadata.uid}')

	kubectl -n "$NS" patch tj pair --type=merge -p '{"spec":{"suspend":true}}'
	wait_for -t 60 phase_is pair Suspended
	wait_for -t 60 no_job_pods
	same_for 3 no_job_pods
	tj=$(kubectl -n "$NS" get tj pair -o json)
	json_has "$tj" 'any(.status.conditions[]; .type == "Suspended" and .status == "True")'
	json_has "$tj" '.status.readyNodes == 0'
	[ "$(jp service/pair '{.metadata.uid}')" = "$svc_uid" ]

	kubectl -n "$NS" patch tj pair --type=merge -p '{"spec":{"suspend":false}}'
	wait_for -t 120 phase_is pair Running
	all_pods_running pair 2
	tj=$(kubectl -n "$NS" get tj pair -o json)
	json_has "$tj" 'any(.status.conditions[]; .type == "Suspended" and .status == "False")'
	json_has "$tj" '.status.readyNodes == 2'
	# Suspending is not a failure: nothing was counted.
	json_has "$tj" '.status.restarts == 0 and .status.infraRestarts == 0'
	[ "$(jp service/pair '{.metadata.uid}')" = "$svc_uid" ]
}

@test "activeDeadlineSeconds: the job fails with DeadlineExceeded and its pods are deleted" {
	kubectl -n "$NS" apply -f "$JOBS/deadline.yaml"
	wait_for -t 120 phase_is deadline Running
	wait_for -t 90 phase_is deadline Failed
	tj=$(kubectl -n "$NS" get tj deadline -o json)
	json_has "$tj" 'any(.status.conditions[]; .type == "Failed" and .status == "True"
		and .reason == "DeadlineExceeded")'
	json_has "$tj" '.status.restarts == 0'
	# Not before the deadline: 20 s counted from admission.
	elapsed=$(seconds_between "$(jq -r .status.admittedTime <<<"$tj")" "$(jq -r .status.completionTime <<<"$tj")")
	((elapsed >= 20)) || { echo "failed $elapsed s after admission"; false; }
	wait_for -t 60 no_job_pods
}

@test "ttlSecondsAfterFinished: the job is deleted that long after it succeeds, and its pods with it" {
	kubectl -n "$NS" apply -f "$JOBS/ttl.yaml"
	wait_for -t 120 phase_is ttl Succeeded
	# Still there right after it finished.
	completed=$(jp tj/ttl '{.status.completionTime}')
	[ -n "$completed" ]
	wait_for -t 90 not kubectl -n "$NS" get tj ttl
	now=$(date -u +%FT%TZ)
	elapsed=$(seconds_between "$completed" "$now")
	((elapsed >= 10)) || { echo "deleted $elapsed s after completion"; false; }
	wait_for -t 60 no_job_pods
	wait_for -t 60 not kubectl -n "$NS" get service ttl
}
