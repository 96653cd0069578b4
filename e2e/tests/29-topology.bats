#!/usr/bin/env bats
# Topology-aware gangs in the built-in mode (docs/topology.md): 32 more kwok GPU nodes in
# 4 blocks x 2 racks x 4 nodes, a ClusterTopology naming the two levels, and other
# tenants' pods filling some nodes. A job that requires a rack lands in one, or waits
# saying which level and the largest room until a rack frees; preferred packs the fewest
# racks; segments of 4 each fill one rack with consecutive ranks; ranks follow the order
# of the network.

load helpers
load controller

BLOCK=e2e.cadre.dev/block
RACK=e2e.cadre.dev/rack

setup_file() {
	crds_install
	"$E2E_DIR/cluster" add-nodes 32 --prefix topo-node >/dev/null
	local i
	for ((i = 0; i < 32; i++)); do
		kubectl label node "topo-node-$i" --overwrite "$BLOCK=b$((i / 8))" \
			"$RACK=b$((i / 8))-r$((i / 4 % 2))" >/dev/null
	done
	kubectl apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: ClusterTopology
metadata:
  name: default
spec:
  levels:
  - {nodeLabel: $BLOCK, name: block}
  - {nodeLabel: $RACK, name: rack}
  defaultLevel: $RACK
EOF
	controller_start
}

teardown_file() {
	controller_stop
	kubectl delete node $(printf 'topo-node-%d ' {0..31}) --ignore-not-found >/dev/null
	kubectl apply -f "$REPO_ROOT/manifests/clustertopology-default.yaml" >/dev/null
}

setup() {
	e2e_namespace
	controller_mark
	wait_gpus_free
}

teardown() {
	test_cleanup
}

# tenant NODE...: another tenant's pod holding all 8 GPUs of each NODE.
tenant() {
	local node
	for node in "$@"; do
		kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: tenant-$node
spec:
  nodeName: $node
  tolerations: [{key: nvidia.com/gpu, operator: Exists}]
  containers:
  - name: c
    image: registry.invalid/tenant:1
    resources: {requests: {nvidia.com/gpu: "8"}, limits: {nvidia.com/gpu: "8"}}
EOF
	done
}

# tenants_running N: N pods of other tenants in the namespace, all Running.
tenants_running() {
	kubectl -n "$NS" get pods -l '!cadre.dev/job-name' -o json |
		jq -e --argjson n "$1" '(.items | length) == $n and all(.items[]; .status.phase == "Running")' >/dev/null
}

# topo_job NAME NODES TOPOLOGY: a gang of NODES x H100:8 with spec.topology TOPOLOGY (flow YAML).
topo_job() {
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  numNodes: $2
  resources: {accelerators: "H100:8"}
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
  topology: $3
EOF
}

# racks_of JOB: the rack of each rank's node, in rank order, one a line.
racks_of() {
	local tj node
	tj=$(kubectl -n "$NS" get tj "$1" -o json)
	for node in $(jq -r '.status.nodes | sort_by(.rank) | .[].node' <<<"$tj"); do
		kubectl get node "$node" -o "jsonpath={.metadata.labels['e2e\.cadre\.dev/rack']}{\"\n\"}"
	done
}

@test "a gang that requires a rack gets the fullest rack that holds it, ranks in rack order, and says which rack" {
	# b0-r0 has 1 free node, b0-r1 3, b1-r0 4 (whole), the rest whole.
	tenant topo-node-0 topo-node-1 topo-node-2 topo-node-4
	wait_for -t 60 tenants_running 4
	topo_job rack3 3 "{required: $RACK}"
	wait_for -t 120 all_pods_running rack3 3
	on_stored_nodes rack3
	[ "$(racks_of rack3 | sort -u)" = "b0-r1" ] || { racks_of rack3; false; }
	json_has_now rack3 '.status.topology == {level: "e2e.cadre.dev/rack", domains: ["b0-r1"]}'
	# kubectl get tj -o wide shows it.
	kubectl -n "$NS" get tj rack3 -o wide | grep -q 'b0-r1'
}

@test "a gang no rack holds waits Queued naming the level and the largest room, and starts when a rack frees" {
	local i
	# One node of every rack is taken: 3 free in each, 24 free in all.
	for ((i = 0; i < 32; i += 4)); do tenant "topo-node-$i"; done
	wait_for -t 60 tenants_running 8
	topo_job whole 4 "{required: $RACK}"
	wait_for -t 60 phase_is whole Queued
	wait_for -t 30 field_is trainingjob/whole '{.status.message}' \
		"needs 4 nodes in one rack (e2e.cadre.dev/rack); the largest rack has room for 3"
	condition_is whole Admitted False InsufficientCapacity
	same_for 3 phase_is whole Queued
	[ -z "$(job_pods whole)" ]
	# Rack b2-r1's tenant leaves: the gang takes that rack.
	kubectl -n "$NS" delete pod tenant-topo-node-20 --wait=true >/dev/null
	wait_for -t 120 all_pods_running whole 4
	[ "$(racks_of whole | sort -u)" = "b2-r1" ] || { racks_of whole; false; }
}

@test "preferred puts a gang in one rack when one holds it, and in as few as it can when none does" {
	# b0: 4 + 4 free; b1-r0 has 2 free; every other rack 4.
	tenant topo-node-8 topo-node-9
	wait_for -t 60 tenants_running 2
	topo_job pair 2 "{preferred: $RACK}"
	wait_for -t 120 all_pods_running pair 2
	[ "$(racks_of pair | sort -u)" = "b1-r0" ] || { racks_of pair; false; }
	# Six fit in no rack: one block, two racks, ranks grouped by rack.
	topo_job six 6 "{preferred: $RACK}"
	wait_for -t 120 all_pods_running six 6
	[ "$(racks_of six | sort -u | wc -l)" -eq 2 ] || { racks_of six; false; }
	[ "$(racks_of six | uniq | wc -l)" -eq 2 ] || { echo "ranks not grouped by rack:"; racks_of six; false; }
}

@test "16 nodes in segments of 4 get four whole racks, ranks 0-3, 4-7, 8-11 and 12-15 each in one rack" {
	# Half the racks have a tenant: four whole racks are left, b0-r1, b1-r1, b2-r1, b3-r1.
	tenant topo-node-0 topo-node-8 topo-node-16 topo-node-24
	wait_for -t 60 tenants_running 4
	topo_job seg 16 "{segment: {size: 4, required: $RACK}}"
	wait_for -t 120 all_pods_running seg 16
	mapfile -t racks < <(racks_of seg)
	[ "${#racks[@]}" -eq 16 ]
	local s
	for s in 0 4 8 12; do
		[ "${racks[s]}" = "${racks[s + 1]}" ] && [ "${racks[s]}" = "${racks[s + 2]}" ] &&
			[ "${racks[s]}" = "${racks[s + 3]}" ] || { printf '%s\n' "${racks[@]}"; false; }
	done
	[ "$(printf '%s\n' "${racks[@]}" | sort -u)" = "$(printf 'b%d-r1\n' 0 1 2 3)" ] ||
		{ printf '%s\n' "${racks[@]}"; false; }
	json_has_now seg '.status.topology.domains | length == 4'
}

@test "a level no node carries keeps the job waiting and says so; nothing crashes" {
	kubectl apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: ClusterTopology
metadata:
  name: default
spec:
  levels:
  - {nodeLabel: $BLOCK, name: block}
  - {nodeLabel: $RACK, name: rack}
  - {nodeLabel: e2e.cadre.dev/nvlink, name: nvlink}
EOF
	topo_job nvl 2 "{required: e2e.cadre.dev/nvlink}"
	wait_for -t 60 field_is trainingjob/nvl '{.status.message}' \
		"no node carries the label e2e.cadre.dev/nvlink (the level of spec.topology.required)"
	phase_is nvl Queued
	controller_check
	kubectl apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: ClusterTopology
metadata:
  name: default
spec:
  levels:
  - {nodeLabel: $BLOCK, name: block}
  - {nodeLabel: $RACK, name: rack}
  defaultLevel: $RACK
EOF
}
