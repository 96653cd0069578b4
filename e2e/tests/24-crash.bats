#!/usr/bin/env bats
# The controller dies (SIGKILL, as an OOM kill or a node failure would do it) in the middle
# of its work, and a new one takes over from what the API server holds: the admission is
# stored before any pod exists (docs/design.md 3.1), deterministic pod names and
# expectations rebuilt from the caches mean no duplicate, no stray pod and no lost rank,
# and every pod is on the node its rank's stored decision names.
#
# The first tests run the controller with a low client-side rate limit, so creating a gang
# takes seconds and the kill reliably lands half-way; the last one kills it at random
# moments through twenty starts and restarts on a cluster that holds one gang at a time.

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
	wait_gpus_free
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

@test "killed while creating a 32-node gang, a restarted controller finishes it from the stored decision: 32 pods, each on its node, no duplicate" {
	kubectl -n "$NS" apply -f "$JOBS/wide-32.yaml"
	wait_for -t 60 at_least 3
	controller_kill
	created=$(pod_count)
	echo "pods when the controller was killed: $created"
	((created < 32)) || { echo "the kill came after all 32 creates; the test did not test a crash mid-creation"; false; }
	# The decision was stored before the first pod: Admitted, and a node for every rank.
	tj=$(kubectl -n "$NS" get tj wide -o json)
	json_has "$tj" 'any(.status.conditions[]; .type == "Admitted" and .status == "True")'
	json_has "$tj" '[.status.nodes[] | select(.node != null)] | length == 32'
	decisions_hold

	controller_restart
	wait_for -t 180 phase_is wide Running
	the_32_pods
	all_pods_running wide 32
	on_stored_nodes wide
	[ "$(kubectl -n "$NS" get pods -o json | jq '[.items[].metadata.name] | unique | length')" -eq 32 ]
	tj=$(kubectl -n "$NS" get tj wide -o json)
	json_has "$tj" '.status.readyNodes == 32'
	# The controller's own death is no failure of the job's.
	json_has "$tj" '.status.restarts == 0 and .status.infraRestarts == 0'
	json_has "$tj" '[.status.nodes[].rank] == [range(32)]'
	# And it stays that way: no late duplicate from a forgotten create.
	same_for 3 the_32_pods
}

# gpu_gang NAME NODES: NODES x H100:8, a whole node per pod.
gpu_gang() {
	kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  numNodes: $2
  resources:
    accelerators: "H100:8"
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
EOF
}

# The defect this design removes: the decision lived in memory until a status write after
# the pods, so a controller killed in between left pods holding GPUs under a job the next
# one took for unadmitted; on a cluster that holds only one copy of the gang it asked room
# for a second copy and waited for ever.
@test "killed mid-start on a cluster that holds exactly one copy of the gang, a restarted controller finishes that gang" {
	nodes=$(gpu_nodes)
	gpu_gang whole "$nodes"
	wait_for -t 60 at_least 1
	controller_kill
	created=$(pod_count)
	echo "pods of $nodes when the controller was killed: $created"
	((created < nodes)) || { echo "the kill came after every create; the test did not test a crash mid-start"; false; }
	decisions_hold

	controller_restart
	wait_for -t 120 phase_is whole Running
	all_pods_running whole "$nodes"
	on_stored_nodes whole
	json_has "$(kubectl -n "$NS" get tj whole -o json)" \
		'.status.restarts == 0 and .status.infraRestarts == 0'
}

# kill_loop FILE: kills the controller at random moments (1 to 6 s apart) and starts a
# new one, until FILE.stop exists; counts the kills in FILE.
kill_loop() {
	local out=$1 kills=0
	while [[ ! -f $out.stop ]]; do
		sleep "$((1 + RANDOM % 5)).$((RANDOM % 10))"
		[[ -f $out.stop ]] && break
		controller_kill >/dev/null 2>&1 || true
		kills=$((kills + 1))
		echo "$kills" >"$out"
		controller_restart >/dev/null 2>&1 || true
	done
}

# starts_so_far: the gangs started (first starts and restarts) across the test's jobs.
starts_so_far() {
	kubectl -n "$NS" get tj -o json | jq '[.items[] | select(.status.admittedTime != null)
		| 1 + (.status.restarts // 0) + (.status.infraRestarts // 0)] | add // 0'
}

@test "killed at random moments through twenty starts and restarts on a cluster that holds one gang at a time, every stored decision holds" {
	controller_stop
	controller_start
	size=$(($(gpu_nodes) / 2 + 1))
	# Fourteen gangs that run and succeed, two that fail twice and then for good: 14 + 2 x 3
	# starts, one gang at a time.
	for i in $(seq -w 1 14); do exiting_gang "ok-$i" "$size" 0 0; done
	exiting_gang bad-1 "$size" 1 2
	exiting_gang bad-2 "$size" 1 2
	log=$BATS_TEST_TMPDIR/kills
	violations=$BATS_TEST_TMPDIR/violations
	watch_decisions "$violations" &
	track_pid $!
	kill_loop "$log" &
	track_pid $!
	wait_for -t 420 all_done
	touch "$log.stop" "$violations.stop"
	wait
	controller_pid >/dev/null || controller_restart
	decisions_hold 2>>"$violations" || true
	kills=$(cat "$log" 2>/dev/null || echo 0)
	starts=$(starts_so_far)
	echo "# kill test: $kills kills during $starts starts and restarts; $(cat "$violations.samples") samples of the stored decisions, $(grep -c . "$violations" || true) violations" >&3
	[ -s "$violations" ] && { cat "$violations"; false; }
	((starts >= 20)) || { echo "only $starts starts"; false; }
	((kills >= 10)) || { echo "only $kills kills"; false; }
	# Each failure counted once, as the user's; the controller's deaths counted nowhere.
	tjs=$(kubectl -n "$NS" get tj -o json)
	json_has "$tjs" '[.items[] | select(.metadata.name | startswith("ok-"))
		| select(.status.phase == "Succeeded" and .status.restarts == 0
			and .status.infraRestarts == 0)] | length == 14'
	json_has "$tjs" '[.items[] | select(.metadata.name | startswith("bad-"))
		| select(.status.phase == "Failed" and .status.restarts == 2
			and .status.infraRestarts == 0 and .status.lastFailure.exitCode == 1)] | length == 2'
}
