#!/usr/bin/env bats
# Long runs without a babysitter (docs/failures.md): a rank the entrypoint's watchdog ends is
# a restart with reason Hung; a node that lost a rank, or whose device went Unhealthy, is
# left behind by the job's next attempts (in place, that rank alone is placed again
# elsewhere); infrastructure restarts are capped; an exit code
# spec.failurePolicy does not retry fails the job at once.
#
# kwok runs no program, so the watchdog and the signal timing are tested by running the
# entrypoint itself (unit/test_entrypoint.c); here kwok plays what they leave behind: a
# container terminated with the watchdog's exit code and message, a node going NotReady,
# a device reported Unhealthy (e2e/kwok/stages.yaml).

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
	wait_gpus_free
}

teardown() {
	node_ready_again
	test_cleanup
}

# long_job NAME NODES GPUS EXTRA_SPEC: a gang of NODES x H100:GPUS with EXTRA_SPEC (YAML
# lines under spec, already indented).
long_job() {
	kubectl -n "$NS" apply -f - <<EOF >/dev/null
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  numNodes: $2
  resources:
    accelerators: "H100:$3"
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
$4
EOF
}

tj_json() {
	kubectl -n "$NS" get tj "$1" -o json
}

# attempt_running JOB N ATTEMPT: N pods of attempt ATTEMPT, every one Running.
attempt_running() {
	all_pods_running "$1" "$2" &&
		[[ $(kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1,cadre.dev/restart-attempt=$3" -o name | wc -l) -eq $2 ]]
}

# node_of POD
node_of() {
	jp "pod/$1" '{.spec.nodeName}'
}

# The node a test made NotReady (e2e/kwok/stages.yaml, node-not-ready), made Ready again in
# teardown whatever happened.
not_ready_node=
node_ready_again() {
	if [[ -n ${tainted_node:-} ]]; then
		kubectl taint node "$tainted_node" e2e.cadre.dev/health- >/dev/null || true
		tainted_node=
	fi
	[[ -n $not_ready_node ]] || return 0
	kubectl annotate node "$not_ready_node" e2e.cadre.dev/not-ready- >/dev/null
	wait_for -t 30 node_is_ready "$not_ready_node"
	not_ready_node=
}
node_is_ready() {
	[[ $(jp "node/$1" '{.status.conditions[?(@.type=="Ready")].status}') == True ]]
}

@test "a rank the watchdog ended restarts the gang as Hung, counted as the job's, naming rank and node; a queued job with spec.hang is never hung" {
	long_job hung 2 1 "  maxRestarts: 2
  hang: {progressSeconds: 5}"
	wait_for -t 120 phase_is hung Running
	node=$(node_of hung-1)
	kubectl -n "$NS" annotate pod hung-1 e2e.cadre.dev/exit-code=125 \
		"e2e.cadre.dev/exit-message=cadre: hung: rank 1 no progress for 5s (spec.hang.progressSeconds)" >/dev/null
	wait_for -t 60 json_has_now hung '.status.restarts == 1'
	tj=$(tj_json hung)
	json_has "$tj" '.status.infraRestarts == 0'
	json_has "$tj" ".status.lastFailure.reason == \"Hung\" and .status.lastFailure.rank == 1 and .status.lastFailure.node == \"$node\""
	json_has "$tj" '.status.lastFailure.message | contains("no progress for 5s")'
	json_has "$tj" '[.status.failures[] | select(.reason == "Hung")] | length == 1'
	kubectl -n "$NS" get events --field-selector involvedObject.name=hung,reason=Hung -o name | grep -q .
	wait_for -t 120 attempt_running hung 2 1

	# Too big to fit: it waits, with spec.hang, and nothing is ever hung.
	long_job waiting $(($(gpu_nodes) + 1)) 8 "  hang: {startupSeconds: 2, progressSeconds: 2}"
	wait_for -t 30 phase_is waiting Queued
	same_for 6 json_has_now waiting '.status.restarts == 0 and .status.infraRestarts == 0 and .status.phase == "Queued"'
}

@test "a node that lost a rank is left behind by the next attempt, in status.excludedNodes with its reason, and told on the Node" {
	long_job lost 2 8 ""
	wait_for -t 120 phase_is lost Running
	node=$(node_of lost-1)
	not_ready_node=$node
	kubectl annotate node "$node" e2e.cadre.dev/not-ready=27-long-runs >/dev/null
	wait_for -t 60 json_has_now lost '.status.infraRestarts == 1'
	tj=$(tj_json lost)
	json_has "$tj" ".status.excludedNodes == [{node: \"$node\", reason: \"NodeLost\", time: .status.excludedNodes[0].time}]"
	json_has "$tj" '.status.restarts == 0'
	node_ready_again
	wait_for -t 120 attempt_running lost 2 1
	# The new gang keeps off the node, though it is Ready again.
	[ "$(node_of lost-0)" != "$node" ]
	[ "$(node_of lost-1)" != "$node" ]
	json_has "$(tj_json lost)" "all(.status.nodes[]; .node != \"$node\")"
	# An administrator sees, on the Node, that jobs avoid it.
	kubectl get events -n default --field-selector "involvedObject.kind=Node,involvedObject.name=$node,reason=NodeExcluded" -o json |
		jq -e --arg ns "$NS" '[.items[] | select(.note // .message | contains($ns + "/lost"))] | length > 0' >/dev/null
}

@test "InPlace: a rank whose node is lost is placed again alone, on another node, while the other rank keeps its pod" {
	long_job keep 2 8 "  restartStrategy: InPlace"
	wait_for -t 120 phase_is keep Running
	node=$(node_of keep-1)
	uid0=$(jp pod/keep-0 '{.metadata.uid}')
	not_ready_node=$node
	kubectl annotate node "$node" e2e.cadre.dev/not-ready=27-long-runs >/dev/null
	wait_for -t 60 json_has_now keep '.status.infraRestarts == 1'
	tj=$(tj_json keep)
	json_has "$tj" '.status.inPlaceRestart.attempt == 1 and .status.lastFailure.reason == "NodeLost"'
	# (Its entry in status.nodes is forgotten until the rank is placed again: kwok may have
	# done all of it already, so unit/test_tj_plan.c shows that step.)
	json_has "$tj" ".status.excludedNodes[0].node == \"$node\" and all(.status.nodes[]; .node != \"$node\")"
	# Ready again, its pod goes; the node stays left behind.
	node_ready_again
	wait_for -t 120 attempt_running keep 2 1
	[ "$(jp pod/keep-0 '{.metadata.uid}')" = "$uid0" ]
	[ "$(node_of keep-1)" != "$node" ]
	tj=$(tj_json keep)
	json_has "$tj" "([.status.nodes[] | select(.rank == 1)][0].node) == \"$(node_of keep-1)\""
	json_has "$tj" '.status.infraRestarts == 1 and .status.restarts == 0'
	kubectl -n "$NS" get events --field-selector involvedObject.name=keep,reason=RanksPlaced -o json |
		jq -e --arg n "$(node_of keep-1)" '[.items[] | select(.message | endswith("rank 1 on " + $n))] | length == 1' >/dev/null
}

@test "a device reported Unhealthy under a running rank restarts the gang and leaves its node behind" {
	long_job device 2 8 ""
	wait_for -t 120 phase_is device Running
	node=$(node_of device-0)
	kubectl -n "$NS" annotate pod device-0 e2e.cadre.dev/device-unhealthy=GPU-4 >/dev/null
	wait_for -t 60 json_has_now device '.status.infraRestarts == 1'
	tj=$(tj_json device)
	json_has "$tj" ".status.excludedNodes[0].node == \"$node\" and .status.excludedNodes[0].reason == \"DeviceUnhealthy\""
	json_has "$tj" '.status.lastFailure.reason == "DeviceUnhealthy" and (.status.lastFailure.message | contains("GPU-4"))'
	wait_for -t 120 attempt_running device 2 1
	json_has "$(tj_json device)" "all(.status.nodes[]; .node != \"$node\")"
}

@test "a NoExecute taint the job does not tolerate: the controller manager evicts the rank, and the node is left behind as Tainted" {
	long_job taint 2 8 ""
	wait_for -t 120 phase_is taint Running
	wait_for -t 30 json_has_now taint '[.status.nodes[] | select(.phase == "Running")] | length == 2'
	node=$(node_of taint-1)
	tainted_node=$node
	kubectl taint node "$node" e2e.cadre.dev/health=failed:NoExecute >/dev/null
	wait_for -t 60 json_has_now taint '.status.infraRestarts == 1'
	tj=$(tj_json taint)
	json_has "$tj" ".status.excludedNodes[0].node == \"$node\" and .status.excludedNodes[0].reason == \"Tainted\""
	kubectl -n "$NS" get events --field-selector involvedObject.name=taint,reason=Evicted -o json |
		jq -e '[.items[] | select(.message | contains("NoExecute taint of node"))] | length > 0' >/dev/null
	wait_for -t 120 attempt_running taint 2 1
	json_has "$(tj_json taint)" "all(.status.nodes[]; .node != \"$node\")"
}

@test "a job whose pods keep being taken from it ends TooManyInfraRestarts, listing them" {
	long_job unlucky 2 1 "  maxInfraRestarts: 1"
	wait_for -t 120 phase_is unlucky Running
	kubectl -n "$NS" delete pod unlucky-1 --wait=false >/dev/null
	wait_for -t 60 json_has_now unlucky '.status.infraRestarts == 1'
	wait_for -t 120 attempt_running unlucky 2 1
	# Taken from the gang once the job has recorded it Running: a pod gone before the
	# stored status has seen it is one the start still has to make (tj_plan.c,
	# gang_deleted_outside), and that is recreated, not counted.
	wait_for -t 60 json_has_now unlucky '.status.phase == "Running" and .status.infraRestarts == 1'
	kubectl -n "$NS" delete pod unlucky-0 --wait=false >/dev/null
	wait_for -t 60 phase_is unlucky Failed
	tj=$(tj_json unlucky)
	json_has "$tj" 'any(.status.conditions[]; .type == "Failed" and .reason == "TooManyInfraRestarts")'
	json_has "$tj" '.status.message | contains("maxInfraRestarts 1") and contains("attempt 0: Evicted") and contains("attempt 1: Evicted")'
	json_has "$tj" '.status.infraRestarts == 1'
}

@test "spec.failurePolicy: an exit code it does not retry fails the job at once; one it restarts without counting does not use up maxRestarts" {
	long_job strict 2 1 "  maxRestarts: 3
  failurePolicy:
    rules:
    - action: RestartNotCounted
      onExitCodes: {operator: In, values: [33]}
    - action: Fail
      onExitCodes: {operator: NotIn, values: [1]}"
	wait_for -t 120 phase_is strict Running
	kubectl -n "$NS" annotate pod strict-1 e2e.cadre.dev/exit-code=33 >/dev/null
	wait_for -t 60 json_has_now strict '.status.infraRestarts == 1'
	json_has "$(tj_json strict)" '.status.restarts == 0'
	wait_for -t 120 attempt_running strict 2 1
	kubectl -n "$NS" annotate pod strict-0 e2e.cadre.dev/exit-code=3 >/dev/null
	wait_for -t 60 phase_is strict Failed
	tj=$(tj_json strict)
	json_has "$tj" 'any(.status.conditions[]; .type == "Failed" and .reason == "FailurePolicy")'
	json_has "$tj" '.status.restarts == 0 and .status.lastFailure.exitCode == 3'
}
