#!/usr/bin/env bats
# GitOps health (docs/design.md 1.2): what Flux and kpt (sigs.k8s.io/cli-utils kstatus, the
# library itself, built by e2e/kstatus/build) and Argo CD (cadre's Lua health checks in
# manifests/argocd, run by e2e/health/argocd-health) read from real TrainingJobs and
# Volumes in each phase: Running and Succeeded are Current/Healthy, waiting jobs are
# InProgress/Progressing, Failed is Failed/Degraded. And every condition carries the
# generation the status was computed from, also after a spec patch (issue 11, defect 6).

load helpers
load controller

setup_file() {
	KSTATUS=$("$REPO_ROOT/e2e/kstatus/build")
	export KSTATUS
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

# job NAME NODES GPUS MAXRESTARTS [VOLUME]: a TrainingJob of NODES nodes with GPUS H100 each.
job() {
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  numNodes: $2
  resources:
    accelerators: "H100:$3"
    cpus: "1"
    memory: 1Gi
  maxRestarts: $4
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
$([[ -n ${5:-} ]] && printf '  volumes:\n    /data: %s\n' "$5")
EOF
}

# health RESOURCE/NAME: "<kstatus verdict> <Argo CD status>" of the object as stored now.
health() {
	local obj kstatus argocd
	obj=$(kubectl -n "$NS" get "$1" -o json) || return 1
	kstatus=$("$KSTATUS" <<<"$obj") || return 1
	argocd=$("$REPO_ROOT/e2e/health/argocd-health" <<<"$obj") || return 1
	echo "${kstatus##* } ${argocd##* }"
}

# health_is RESOURCE/NAME KSTATUS ARGOCD (for wait_for): prints what it saw when it differs.
health_is() {
	local got
	got=$(health "$1") || return 1
	[[ $got == "$2 $3" ]] || { echo "$1: kstatus and Argo CD say '$got', want '$2 $3'"; return 1; }
}

# generations_observed RESOURCE/NAME: status.observedGeneration and every condition's
# observedGeneration equal metadata.generation.
generations_observed() {
	json_has "$(kubectl -n "$NS" get "$1" -o json)" '.metadata.generation as $g
		| .status.observedGeneration == $g and (.status.conditions | length > 0)
		and all(.status.conditions[]; .observedGeneration == $g)'
}

exit_pod() {
	kubectl -n "$NS" annotate pod "$1" "e2e.cadre.dev/exit-code=$2" >/dev/null
}

@test "kstatus and Argo CD read a TrainingJob that waits as InProgress/Progressing: Queued (too big to fit) and Pending (no Volume)" {
	# One node more than the cluster has (earlier files may have added nodes).
	job huge "$(($(gpu_nodes) + 1))" 8 0
	job lonely 1 1 0 missing-volume
	wait_for -t 60 phase_is huge Queued
	wait_for -t 60 phase_is lonely Pending
	wait_for -t 30 health_is trainingjob/huge InProgress Progressing
	wait_for -t 30 health_is trainingjob/lonely InProgress Progressing
	tj=$(kubectl -n "$NS" get tj huge -o json)
	json_has "$tj" '.status.message as $m | any(.status.conditions[]; .type == "Reconciling"
		and .status == "True" and .reason == "InsufficientCapacity" and .message == $m)'
	json_has "$tj" 'all(.status.conditions[]; .type != "Stalled" or .status == "False")'
	json_has "$(kubectl -n "$NS" get tj lonely -o json)" 'any(.status.conditions[];
		.type == "Reconciling" and .status == "True" and .reason == "VolumeNotFound")'
	# Both at once, as kpt and Flux see a List, with kstatus's own message.
	out=$(kubectl -n "$NS" get tj -o json | "$KSTATUS" -m)
	[[ $out == *"TrainingJob/huge InProgress"$'\t'"needs"* ]] || { echo "$out"; false; }
	[[ $out == *"TrainingJob/lonely InProgress"$'\t'"waiting for volumes"* ]] || { echo "$out"; false; }
	# Waiting is stable: no write loop (the resourceVersion stays put).
	rv=$(jp tj/huge '{.metadata.resourceVersion}')
	same_for 3 field_is tj/huge '{.metadata.resourceVersion}' "$rv"
}

@test "kstatus and Argo CD read Running and Succeeded as Current/Healthy, and a job that exits 1 with maxRestarts 0 as Failed/Degraded" {
	job good 2 1 0
	job bad 1 1 0
	wait_for -t 120 phase_is good Running
	wait_for -t 120 phase_is bad Running
	wait_for -t 30 health_is trainingjob/good Current Healthy
	wait_for -t 30 health_is trainingjob/bad Current Healthy

	exit_pod good-0 0
	exit_pod good-1 0
	exit_pod bad-0 1
	wait_for -t 60 phase_is good Succeeded
	wait_for -t 60 phase_is bad Failed
	wait_for -t 30 health_is trainingjob/good Current Healthy
	wait_for -t 30 health_is trainingjob/bad Failed Degraded
	tj=$(kubectl -n "$NS" get tj bad -o json)
	json_has "$tj" 'any(.status.conditions[]; .type == "Stalled" and .status == "True"
		and .reason == "MaxRestartsExceeded")'
	json_has "$tj" 'any(.status.conditions[]; .type == "Reconciling" and .status == "False")'
	out=$(kubectl -n "$NS" get tj bad -o json | "$KSTATUS" -m)
	[[ $out == "TrainingJob/bad Failed"$'\t'*"no restarts left"* ]] || { echo "$out"; false; }
	generations_observed tj/good
	generations_observed tj/bad
}

@test "kstatus and Argo CD read a Volume: Pending as InProgress/Progressing, Bound as Current/Healthy, a lost claim as Failed/Degraded" {
	kubectl -n "$NS" apply -f "$JOBS/scratch.yaml" >/dev/null
	wait_for -t 60 field_is volume.cadre.dev/scratch '{.status.phase}' Pending
	wait_for -t 30 health_is volume.cadre.dev/scratch InProgress Progressing
	json_has "$(kubectl -n "$NS" get volume.cadre.dev scratch -o json)" 'any(.status.conditions[];
		.type == "Reconciling" and .status == "True" and .reason == "ClaimPending")'

	pv=$(pv_name scratch)
	make_pv "$pv" 100Gi ReadWriteMany "$NS" scratch
	wait_for -t 60 field_is volume.cadre.dev/scratch '{.status.phase}' Bound
	wait_for -t 30 health_is volume.cadre.dev/scratch Current Healthy
	generations_observed volume.cadre.dev/scratch

	# The PersistentVolume goes away under the bound claim: the claim is Lost.
	kubectl delete pv "$pv" --wait=false >/dev/null
	kubectl patch pv "$pv" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
	wait_for -t 90 field_is volume.cadre.dev/scratch '{.status.phase}' Failed
	wait_for -t 30 health_is volume.cadre.dev/scratch Failed Degraded
	json_has "$(kubectl -n "$NS" get volume.cadre.dev scratch -o json)" 'any(.status.conditions[];
		.type == "Stalled" and .status == "True" and .reason == "ClaimLost")'
}

@test "after a spec patch every condition, also the ones the reconcile leaves alone, carries the new generation" {
	job pair 2 1 1
	wait_for -t 120 phase_is pair Running
	wait_for -t 30 generations_observed tj/pair
	before=$(kubectl -n "$NS" get tj pair -o json)
	json_has "$before" '.metadata.generation == 1'

	kubectl -n "$NS" patch tj pair --type=merge -p '{"spec":{"maxRestarts":3}}' >/dev/null
	wait_for -t 30 field_is tj/pair '{.status.observedGeneration}' 2
	wait_for -t 30 generations_observed tj/pair
	after=$(kubectl -n "$NS" get tj pair -o json)
	# The conditions that held still hold, with the times they first held.
	for type in Admitted Running VolumesReady; do
		t1=$(jq -r --arg t "$type" '.status.conditions[] | select(.type == $t) | .lastTransitionTime' <<<"$before")
		t2=$(jq -r --arg t "$type" '.status.conditions[] | select(.type == $t) | .lastTransitionTime' <<<"$after")
		[[ -n $t1 && $t1 == "$t2" ]] || { echo "$type: lastTransitionTime $t1 -> $t2"; false; }
	done
	health_is trainingjob/pair Current Healthy
	# Nothing more to write once the new generation is observed.
	rv=$(jp tj/pair '{.metadata.resourceVersion}')
	same_for 3 field_is tj/pair '{.metadata.resourceVersion}' "$rv"
}
