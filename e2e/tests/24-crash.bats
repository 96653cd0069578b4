#!/usr/bin/env bats
# The controller dies (SIGKILL, as an OOM kill or a node failure would do it) in the middle
# of creating a wide gang, and a new one takes over from what the API server holds:
# deterministic pod names and expectations rebuilt from the caches mean no duplicate, no
# stray pod and no lost rank (docs/design.md 2.2 and 5).
#
# The controller runs here with a low client-side rate limit, so creating 32 pods takes
# seconds and the kill reliably lands half-way.

load helpers
load controller

setup_file() {
	crds_install
	controller_start --kube-api-qps 4 --kube-api-burst 1
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

pod_count() {
	kubectl -n "$NS" get pods -o name | wc -l
}

# at_least N: the namespace has at least N pods.
at_least() {
	(($(pod_count) >= $1))
}

# the_32_pods: exactly wide-0 ... wide-31 in the namespace, each labelled with its own
# rank and attempt 0, and nothing else.
the_32_pods() {
	kubectl -n "$NS" get pods -o json | jq -e '
		[.items[] | {name: .metadata.name, rank: .metadata.labels["cadre.dev/node-rank"],
			attempt: .metadata.labels["cadre.dev/restart-attempt"],
			job: .metadata.labels["cadre.dev/job-name"]}] | sort_by(.rank | tonumber? // -1)
		== [range(32) | {name: "wide-\(.)", rank: "\(.)", attempt: "0", job: "wide"}]' >/dev/null
}

@test "killed with SIGKILL while creating a 32-node gang, a restarted controller finishes it: 32 pods, no duplicate, no stray, Running" {
	kubectl -n "$NS" apply -f "$JOBS/wide-32.yaml"
	wait_for -t 60 at_least 3
	controller_kill
	created=$(pod_count)
	echo "pods when the controller was killed: $created"
	((created < 32)) || { echo "the kill came after all 32 creates; the test did not test a crash mid-creation"; false; }
	# Nothing ran: the gang is all-or-nothing, and its gates are still on.
	[ "$(ungated_pods wide)" -eq 0 ]

	controller_restart
	wait_for -t 180 phase_is wide Running
	the_32_pods
	all_pods_running wide 32
	[ "$(kubectl -n "$NS" get pods -o json | jq '[.items[].metadata.name] | unique | length')" -eq 32 ]
	tj=$(kubectl -n "$NS" get tj wide -o json)
	json_has "$tj" '.status.readyNodes == 32'
	# The controller's own death is no failure of the job's.
	json_has "$tj" '.status.restarts == 0 and .status.infraRestarts == 0'
	json_has "$tj" '[.status.nodes[].rank] == [range(32)]'
	# And it stays that way: no late duplicate from a forgotten create.
	same_for 3 the_32_pods
}

@test "killed right after ungating starts, a restarted controller leaves one gang of 32 Running" {
	kubectl -n "$NS" apply -f "$JOBS/wide-32.yaml"
	# Every pod exists, and the gates are coming off.
	wait_for -t 120 at_least 32
	wait_for -t 60 bash -c "(( \$(kubectl -n $NS get pods -o json | jq '[.items[] | select((.spec.schedulingGates // []) | length == 0)] | length') > 0 ))"
	controller_kill
	echo "ungated when the controller was killed: $(ungated_pods wide) of $(pod_count)"

	controller_restart
	wait_for -t 180 phase_is wide Running
	the_32_pods
	all_pods_running wide 32
	tj=$(kubectl -n "$NS" get tj wide -o json)
	json_has "$tj" '.status.restarts == 0 and .status.infraRestarts == 0 and .status.readyNodes == 32'
}
