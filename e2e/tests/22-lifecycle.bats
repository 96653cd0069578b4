#!/usr/bin/env bats
# The life of a TrainingJob after admission (DESIGN.md 1.3): gang restarts after a failure
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

@test "rank 1 exits 3 with maxRestarts 1: Restarting, then a fresh gang of attempt 1; a second failure ends Failed/MaxRestartsExceeded" {
	kubectl -n "$NS" apply -f "$JOBS/flaky.yaml"
	wait_for -t 120 phase_is flaky Running
	before=$(pod_uids flaky)
	phase_watch_start flaky

	exit_pod flaky-1 3
	wait_for -t 60 field_is tj/flaky '{.status.restarts}' 1
	tj=$(kubectl -n "$NS" get tj flaky -o json)
	json_has "$tj" '.status.infraRestarts == 0'
	json_has "$tj" '.status.lastFailure.rank == 1 and .status.lastFailure.exitCode == 3
		and .status.lastFailure.pod == "flaky-1" and (.status.lastFailure.time | length > 0)'
	wait_for -t 30 phase_seen flaky Restarting

	# The whole gang goes, and after the 10 s backoff a new one of attempt 1 runs.
	wait_for -t 150 gang_of_attempt flaky 2 1
	wait_for -t 30 phase_is flaky Running
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
