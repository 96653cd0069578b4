#!/usr/bin/env bats
# Preemption by Partition tier in built-in mode (docs/design.md 3.5) on the real control
# plane: two kwok GPU nodes carved out as a pool, a scavenger tier 0 that anyone fills and
# an urgent tier 10 that takes nodes back. A Requeue victim gets its grace (kwok lets its
# pods go only when the grace has run, as a kubelet does), is queued again and runs again
# once there is room; a Cancel victim ends Failed, Preempted; an Off partition's jobs and
# jobs inside their exempt time are never preempted.

load helpers
load controller

POOL=e2e.cadre.dev/pool

setup_file() {
	crds_install
	mapfile -t nodes < <(kubectl get nodes -l type=kwok -o name | sed 's|node/||' | sort -t- -k3 -n)
	kubectl label nodes "${nodes[0]}" "${nodes[1]}" "$POOL=preempt" --overwrite >/dev/null
	kubectl apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: scavenger}
spec: {priorityTier: 0, preemptMode: Requeue, graceTimeSeconds: 8, nodeSelector: {$POOL: preempt}}
---
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: scav-cancel}
spec: {priorityTier: 0, preemptMode: Cancel, graceTimeSeconds: 1, nodeSelector: {$POOL: preempt}}
---
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: scav-off}
spec: {priorityTier: 0, preemptMode: "Off", nodeSelector: {$POOL: preempt}}
---
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: scav-exempt}
spec: {priorityTier: 0, preemptMode: Requeue, preemptExemptTimeSeconds: 3600, nodeSelector: {$POOL: preempt}}
---
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: urgent}
spec: {priorityTier: 10, nodeSelector: {$POOL: preempt}}
EOF
	controller_start
}

teardown_file() {
	controller_stop
	kubectl delete partition scavenger scav-cancel scav-off scav-exempt urgent \
		--ignore-not-found >/dev/null
	kubectl label nodes -l "$POOL" "$POOL-" >/dev/null 2>&1 || true
}

setup() {
	e2e_namespace
	controller_mark
	wait_gpus_free
}

teardown() {
	test_cleanup
}

# job NAME PARTITION [graceful]: a one-rank job of 8 GPUs that runs until stopped; with
# graceful, its pods go only once their grace has run (kwok's other pods go at once).
job() {
	local grace=""
	[[ ${3:-} == graceful ]] && grace='e2e.cadre.dev/honour-grace: "true"'
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  partition: $2
  numNodes: 1
  resources:
    accelerators: "H100:8"
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
  terminationGracePeriodSeconds: 3
  podTemplate:
    metadata:
      annotations: {${grace:+$grace}}
EOF
}

admitted_reason_is() {
	field_is "tj/$1" '{.status.conditions[?(@.type=="Admitted")].reason}' "$2"
}

# event_seen JOB REASON: the job has an event of that reason.
event_seen() {
	kubectl -n "$NS" get events --field-selector "involvedObject.name=$1,reason=$2" -o name |
		grep -q .
}

@test "a Requeue victim records its preemptor, gets its grace, is queued again and runs again; the urgent job runs on its node" {
	job old scavenger
	wait_for -t 120 phase_is old Running
	sleep 1
	job young scavenger graceful
	wait_for -t 120 phase_is young Running
	young_node=$(jp pod/young-0 '{.spec.nodeName}')
	job urgent-1 urgent
	# The youngest of the two is the one stopped, and only it.
	wait_for -t 60 field_is tj/young '{.status.preemption.preemptor}' "$NS/urgent-1"
	[ "$(jp tj/urgent-1 '{.status.preempting[0].job}')" = "$NS/young" ]
	[ "$(jp tj/young '{.status.preemptions}')" = 1 ]
	[ "$(jp tj/young '{.status.preemption.graceSeconds}')" = 8 ]
	[ "$(jp tj/young '{.status.conditions[?(@.type=="Restarting")].reason}')" = Preempted ]
	[ -z "$(jp tj/old '{.status.preemption}')" ]
	# Its pod was deleted with the grace, and it and its node stay its own until the
	# grace has run: the urgent job waits for them.
	wait_for -t 30 field_is pod/young-0 '{.metadata.deletionGracePeriodSeconds}' 8
	ends=$(date -d "$(jp pod/young-0 '{.metadata.deletionTimestamp}')" +%s)
	while (($(date +%s) < ends - 2)); do
		jp pod/young-0 '{.metadata.name}' >/dev/null
		refute phase_is urgent-1 Running
		sleep 1
	done
	wait_for -t 60 phase_is urgent-1 Running
	[ "$(jp pod/urgent-1-0 '{.spec.nodeName}')" = "$young_node" ]
	wait_for -t 30 phase_is young Queued
	[ "$(jp tj/young '{.status.restarts}')" = 0 ]
	[ "$(jp tj/young '{.status.infraRestarts}')" = 0 ]
	[ -z "$(jp tj/urgent-1 '{.status.preempting}')" ]
	wait_for -t 30 event_seen young Preempted
	wait_for -t 30 event_seen urgent-1 Preempting
	controller_scrape "$BATS_TEST_TMPDIR/metrics"
	[ "$(metric_of "$BATS_TEST_TMPDIR/metrics" 'cadre_preemptions_total{mode="Requeue"}')" = 1 ]
	# Room again: it runs again, as its next attempt.
	kubectl -n "$NS" delete tj urgent-1 --wait=false >/dev/null
	wait_for -t 120 phase_is young Running
	[ "$(jp pod/young-0 '{.metadata.labels.cadre\.dev/restart-attempt}')" = 1 ]
}

@test "Off and exempt partitions' jobs are never preempted; a Cancel victim ends Failed, Preempted" {
	job steady scav-off
	job fresh scav-exempt
	wait_for -t 120 phase_is steady Running
	wait_for -t 120 phase_is fresh Running
	job urgent-2 urgent
	wait_for -t 60 admitted_reason_is urgent-2 InsufficientCapacity
	sleep 5
	[ -z "$(jp tj/steady '{.status.preemption}')" ]
	[ -z "$(jp tj/fresh '{.status.preemption}')" ]
	[ -z "$(jp tj/urgent-2 '{.status.preempting}')" ]
	[ "$(jp tj/urgent-2 '{.status.phase}')" = Queued ]
	# A Cancel partition's job in the Off one's place is stopped for good.
	kubectl -n "$NS" delete tj urgent-2 steady --wait=false >/dev/null
	wait_for -t 60 not kubectl -n "$NS" get pod steady-0
	job doomed scav-cancel
	wait_for -t 120 phase_is doomed Running
	job urgent-3 urgent
	wait_for -t 60 phase_is doomed Failed
	[ "$(jp tj/doomed '{.status.conditions[?(@.type=="Failed")].reason}')" = Preempted ]
	[ "$(jp tj/doomed '{.status.preemption.mode}')" = Cancel ]
	[ "$(jp tj/doomed '{.status.preemption.preemptor}')" = "$NS/urgent-3" ]
	wait_for -t 60 phase_is urgent-3 Running
	[ "$(jp tj/fresh '{.status.phase}')" = Running ]
	[ -z "$(jp tj/fresh '{.status.preemption}')" ]
}
