#!/usr/bin/env bats
# The gang guarantee under a burst of submissions (docs/design.md 3.1): 30 jobs of mixed size and
# priority submitted in bursts onto a cluster that holds a few of them at a time, some
# deleted and others added while the rest run. A sampler lists every cadre pod about twice a
# second and checks, at every sample:
#   - no node has more GPUs requested by its bound, live pods than it allocates;
#   - the GPUs of every admitted gang (all live cadre pods: in built-in mode a pod exists
#     only once its gang is admitted; unbound ones being deleted hold nothing) fit in what
#     the cluster allocates in total, i.e. no two gangs were admitted onto the same GPUs;
#   - no gang runs partially: no job has a bound pod while another pod of the same attempt
#     is Unschedulable.
# It prints the number of samples and the largest overcommit seen, which must be 0.
#
# Every pod asks for a whole node (8 GPUs), so the scheduler's choice of node cannot
# fragment capacity: a breach here is cadre's admission, not the scheduler's placement.

load helpers
load controller

# Four more nodes for this file (8 or more in all, as where the race was first seen),
# removed again at the end so later files find the cluster as they expect.
setup_file() {
	crds_install
	"$E2E_DIR/cluster" add-nodes 4 --prefix burst-node >/dev/null
	controller_start --workers 4
}

teardown_file() {
	controller_stop
	kubectl delete node burst-node-0 burst-node-1 burst-node-2 burst-node-3 \
		--ignore-not-found >/dev/null
}

setup() {
	e2e_namespace
	controller_mark
	wait_gpus_free
}

teardown() {
	[[ -z ${SAMPLER_PID:-} ]] || kill "$SAMPLER_PID" 2>/dev/null || true
	test_cleanup
}

# burst_job I: the manifest of job b<I>: 1-4 whole nodes, priority 0/5/10, running 2-4 s.
burst_job() {
	local i=$1 sizes=(1 2 1 3 1 2 4 1 2 1) runs=(2 3 4)
	cat <<EOF
---
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: b$(printf '%02d' "$i")
spec:
  numNodes: ${sizes[i % 10]}
  priority: $(((i * 7 % 3) * 5))
  resources:
    accelerators: "H100:8"
  image: registry.invalid/cadre/e2e:latest
  run: torchrun train.py
  podTemplate:
    metadata:
      annotations:
        e2e.cadre.dev/exit-code: "0"
        e2e.cadre.dev/exit-after: "${runs[i % 3]}s"
EOF
}

# burst FIRST LAST: creates jobs FIRST..LAST all at once, one kubectl each, in parallel.
burst() {
	local i pids=()
	for ((i = $1; i <= $2; i++)); do
		burst_job "$i" | kubectl -n "$NS" create -f - >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
}

# sample ALLOC TOTAL: one line "node_overcommit total_overcommit partial_gangs" for the
# cluster now; ALLOC is {node: gpus}, TOTAL their sum.
sample() {
	kubectl get pods -A -l cadre.dev/job-name -o json | jq -r --argjson alloc "$1" --argjson total "$2" '
		def gpus: (.spec.containers[0].resources.requests["nvidia.com/gpu"] // "0") | tonumber;
		[.items[] | select(.status.phase != "Succeeded" and .status.phase != "Failed")] as $live
		| ([$live[] | select(.spec.nodeName != null)] | group_by(.spec.nodeName)
			| map((map(gpus) | add) - ($alloc[.[0].spec.nodeName] // 0)) | max // 0
			| if . < 0 then 0 else . end) as $node
		| ([$live[] | select(.spec.nodeName != null or .metadata.deletionTimestamp == null) | gpus]
			| add // 0 | . - $total | if . < 0 then 0 else . end) as $over
		| ($live | group_by([.metadata.namespace, .metadata.labels["cadre.dev/job-name"],
				.metadata.labels["cadre.dev/restart-attempt"]])
			| map(select(any(.[]; .spec.nodeName != null) and any(.[];
				any((.status.conditions // [])[]; .type == "PodScheduled"
					and .status == "False" and .reason == "Unschedulable"))))
			| length) as $partial
		| "\($node) \($over) \($partial)"'
}

# sampler FILE: samples into FILE until FILE.stop exists (at most 6 minutes).
sampler() {
	local alloc total end=$((SECONDS + 360))
	alloc=$(kubectl get nodes -o json | jq -c '[.items[]
		| {key: .metadata.name, value: ((.status.allocatable["nvidia.com/gpu"] // "0") | tonumber)}]
		| from_entries')
	total=$(jq 'add' <<<"$alloc")
	while [[ ! -e $1.stop ]] && ((SECONDS < end)); do
		sample "$alloc" "$total" >>"$1" 2>/dev/null || true
		sleep 0.3
	done
}

# finished_count: how many jobs of $NS are Succeeded.
succeeded_count() {
	kubectl -n "$NS" get tj -o json | jq '[.items[] | select(.status.phase == "Succeeded")] | length'
}

all_succeeded() {
	local want=$1
	[[ $(succeeded_count) -ge $want ]]
}

@test "a burst of 30 gangs never books a GPU twice and never runs a gang partially" {
	samples=$BATS_TEST_TMPDIR/samples
	sampler "$samples" 3>&- &
	SAMPLER_PID=$!

	burst 1 12
	sleep 8
	burst 13 24
	sleep 4
	# Deleted while they run or wait, and replaced by the last burst.
	kubectl -n "$NS" delete tj b02 b07 b13 --wait=false >/dev/null
	burst 25 30
	wait_for -t 240 all_succeeded 27

	touch "$samples.stop"
	wait "$SAMPLER_PID" || true
	SAMPLER_PID=
	n=$(wc -l <"$samples")
	read -r node_max over_max partial_max < <(awk '
		{ if ($1 > a) a = $1; if ($2 > b) b = $2; if ($3 > c) c = $3 }
		END { print a + 0, b + 0, c + 0 }' "$samples")
	echo "# $n samples; largest GPU overcommit: $node_max on one node, $over_max over the cluster; partial gangs: $partial_max" >&3
	[ "$n" -ge 20 ]
	[ "$node_max" -eq 0 ]
	[ "$over_max" -eq 0 ]
	[ "$partial_max" -eq 0 ]
	# Every gang that ran, ran whole: each Succeeded job had all its pods succeed.
	json_has "$(kubectl -n "$NS" get tj -o json)" \
		'all(.items[] | select(.status.phase == "Succeeded"); .status.restarts == 0)'
}
