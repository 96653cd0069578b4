#!/usr/bin/env bats
# Kueue mode (spec.queue, docs/design.md 3.2, docs/kueue.md) against a real Kueue v0.17.0 and the
# real kube-scheduler: Kueue admits each job's pod group by quota; cadre mirrors Kueue's
# Workload in the job's status and never admits on its own.
#   - quota: two 2-node jobs on a 16-GPU ClusterQueue; one runs, the other waits with
#     Kueue's message and not one of its pods is bound; the first finishes, the second runs;
#   - fair share: team A borrows team B's idle quota in their cohort; team B submits; Kueue
#     preempts A's borrowing job, which counts it as an infrastructure restart and runs
#     again when quota frees;
#   - all or nothing: a gang larger than the free quota never starts partly;
#   - priority: with WorkloadPriorityClasses the higher-priority job is admitted first;
#   - `kubectl describe tj` tells each story with Kueue's messages.
# The controller runs as cadre's ServiceAccount (manifests/rbac.yaml): reading Workloads
# is all it needs of Kueue.
#
# Its cluster: the run's shared one, with Kueue switched on (`e2e/cluster kueue on`) here
# and off again in teardown_file, so every other file sees the default cluster. Kueue
# manages pods only in namespaces labelled kueue-managed=true, which this file's are.

load helpers
load controller
load install

SAMPLES_KUEUE=$REPO_ROOT/manifests/samples/kueue

setup_file() {
	crds_install
	"$E2E_DIR/cluster" kueue on
	kubectl apply -f - >/dev/null <<EOF
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: e2e-h100
EOF
	install_rbac
	sa_credentials "$BATS_FILE_TMPDIR/sa" "$INSTALL_SA"
	sa_kubeconfig "$BATS_FILE_TMPDIR/sa" "$BATS_FILE_TMPDIR/sa/kubeconfig"
	CADRE_E2E_CONTROLLER_KUBECONFIG=$BATS_FILE_TMPDIR/sa/kubeconfig controller_start
}

teardown_file() {
	if controller_pid >/dev/null; then controller_stop; fi
	kubectl delete clusterqueues,workloadpriorityclasses,resourceflavors,topologies.kueue.x-k8s.io \
		-l e2e.cadre.dev/test=true --ignore-not-found --wait=false >/dev/null 2>&1 || true
	kubectl label nodes -l e2e.cadre.dev/tas=true e2e.cadre.dev/tas- e2e.cadre.dev/block- \
		e2e.cadre.dev/rack- >/dev/null 2>&1 || true
	kubectl apply -f "$REPO_ROOT/manifests/clustertopology-default.yaml" >/dev/null 2>&1 || true
	uninstall
	"$E2E_DIR/cluster" kueue off >/dev/null
}

setup() {
	e2e_namespace
	kubectl label namespace "$NS" kueue-managed=true >/dev/null
	controller_mark
	wait_gpus_free
}

teardown() {
	test_cleanup
	# The samples' test uses the namespaces of manifests/samples/kueue/.
	kubectl delete -f "$SAMPLES_KUEUE/llama-pretrain-team-a.yaml" --ignore-not-found --wait=false >/dev/null 2>&1 || true
	kubectl delete clusterqueues -l "e2e.cadre.dev/ns=$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# cluster_queue NAME GPUS [COHORT] [WITHIN_QUEUE_PREEMPTION]: a ClusterQueue of GPUS
# nvidia.com/gpu of flavor e2e-h100 (cpu and memory plenty) that may borrow the cohort's
# idle quota and reclaims what it lent, preempting in the queue by priority
# (LowerPriority) unless told Never; and a LocalQueue of the same name in $NS.
cluster_queue() {
	local name=$1 gpus=$2 cohort=${3:-} within=${4:-LowerPriority}
	kubectl apply -f - >/dev/null <<EOF
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: $name
  labels:
    e2e.cadre.dev/test: "true"
    e2e.cadre.dev/ns: $NS
spec:
  namespaceSelector: {}
$([[ -n $cohort ]] && echo "  cohortName: $cohort")
  preemption:
    reclaimWithinCohort: Any
    withinClusterQueue: $within
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: e2e-h100
      resources:
      - name: cpu
        nominalQuota: "1000"
      - name: memory
        nominalQuota: 100Ti
      - name: nvidia.com/gpu
        nominalQuota: $gpus
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: $name
  namespace: $NS
spec:
  clusterQueue: $name
EOF
}

# kueue_job NAME NODES QUEUE [PRIORITY_CLASS]: a gang of NODES x H100:8 in LocalQueue QUEUE.
kueue_job() {
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
$([[ -n ${4:-} ]] && printf '  labels:\n    kueue.x-k8s.io/priority-class: %s\n' "$4")
spec:
  numNodes: $2
  queue: $3
  resources:
    accelerators: "H100:8"
    cpus: "8"
    memory: 64Gi
  image: registry.invalid/cadre/e2e:latest
  run: torchrun --nnodes=\$SKYPILOT_NUM_NODES train.py
EOF
}

# bound_pods JOB: how many of the job's pods are bound to a node.
bound_pods() {
	kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json |
		jq '[.items[] | select(.spec.nodeName != null and .spec.nodeName != "")] | length'
}

no_pod_bound() { [[ $(bound_pods "$1") == 0 ]]; }

# waiting_for_kueue JOB: Queued, Admitted False/WaitingForKueue, with Kueue's own message.
waiting_for_kueue() {
	local tj
	tj=$(kubectl -n "$NS" get tj "$1" -o json) || return 1
	json_has "$tj" '.status.phase == "Queued"' &&
		json_has "$tj" 'any(.status.conditions[]; .type == "Admitted" and .status == "False"
			and .reason == "WaitingForKueue")' &&
		json_has "$tj" '.status.message | contains("insufficient unused quota for nvidia.com/gpu")'
}

# finish JOB: every pod of the job exits 0 (kwok's pod-exit stage).
finish() {
	kubectl -n "$NS" annotate pods -l "cadre.dev/job-name=$1" e2e.cadre.dev/exit-code=0 --overwrite >/dev/null
}

# running_admitted JOB NODES: Running, Admitted True by Kueue, every pod running.
running_admitted() {
	phase_is "$1" Running && condition_is "$1" Admitted True && all_pods_running "$1" "$2"
}

@test "quota: a 16-GPU ClusterQueue runs one of two 16-GPU jobs, the other waits with Kueue's reason, unbound" {
	"$E2E_DIR/cluster" status | grep -E '^kueue +pid [0-9]+ +healthy'
	cluster_queue "q-$NS" 16
	kueue_job first 2 "q-$NS"
	wait_for -t 60 running_admitted first 2
	kueue_job second 2 "q-$NS"
	wait_for -t 60 waiting_for_kueue second
	# The cluster has 32 GPUs: only Kueue's quota keeps the second job off them.
	same_for 8 no_pod_bound second
	same_for 1 running_admitted first 2
	job_pod_count_is second 2
	# Kueue's visibility server, on its own loopback port, lists the waiting Workload.
	source "$CADRE_E2E_STATE/ports"
	pki=$CADRE_E2E_STATE/pki
	pending=$(curl -fsS --max-time 10 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
		"https://127.0.0.1:$kueue_visibility_port/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/q-$NS/pendingworkloads")
	echo "$pending"
	jq -e '[.items[].metadata.name] == ["second-0"]' <<<"$pending" >/dev/null
	wide=$(kubectl -n "$NS" get tj second -o wide)
	echo "$wide"
	grep -q 'insufficient unused quota for nvidia.com/gpu' <<<"$wide"
	json_has "$(kubectl -n "$NS" get tj second -o json)" '.status.admittedTime == null'

	finish first
	wait_for -t 60 phase_is first Succeeded
	wait_for -t 60 running_admitted second 2
	condition_is second Admitted True Admitted
	kubectl -n "$NS" get tj second -o json | jq -e '.status.conditions[] | select(.type == "Admitted")
		| .message | contains("admitted by Kueue to ClusterQueue q-")' >/dev/null
	# The story, in describe's events: Kueue's word while it waited, then its admission.
	events=$(kubectl -n "$NS" describe tj second | describe_events)
	echo "$events"
	grep -q '^Normal|WaitingForKueue|.*insufficient unused quota for nvidia.com/gpu' <<<"$events"
	grep -q "^Normal|Admitted|.*admitted by Kueue to ClusterQueue q-$NS" <<<"$events"
	[[ $(grep -n 'WaitingForKueue' <<<"$events" | head -1 | cut -d: -f1) -lt \
		$(grep -n '|Admitted|' <<<"$events" | head -1 | cut -d: -f1) ]]
}

# requeues_of JOB: status.requeues (0 when absent).
requeues_of() {
	kubectl -n "$NS" get tj "$1" -o json | jq '.status.requeues // 0'
}

# preempted_one_of JOB...: exactly one of the jobs was requeued; prints it.
preempted_one_of() {
	local j hit=()
	for j in "$@"; do
		[[ $(requeues_of "$j") -ge 1 ]] && hit+=("$j")
	done
	((${#hit[@]} == 1)) && echo "${hit[0]}"
}

@test "fair share: team A borrows team B's idle quota; B submits; Kueue preempts A's job, which is requeued (no failure, no infrastructure restart) and runs again" {
	cluster_queue "a-$NS" 16 "co-$NS"
	cluster_queue "b-$NS" 16 "co-$NS"
	kueue_job a1 2 "a-$NS"
	wait_for -t 60 running_admitted a1 2
	# Team B is idle: A's second job runs on B's lent quota (the whole cluster is busy).
	kueue_job a2 2 "a-$NS"
	wait_for -t 60 running_admitted a2 2

	kueue_job b1 2 "b-$NS"
	wait_for -t 90 preempted_one_of a1 a2
	victim=$(preempted_one_of a1 a2)
	other=$([[ $victim == a1 ]] && echo a2 || echo a1)
	echo "Kueue preempted $victim"
	wait_for -t 90 running_admitted b1 2
	tj=$(kubectl -n "$NS" get tj "$victim" -o json)
	json_has "$tj" '.status.requeues == 1'
	json_has "$tj" '(.status.restarts // 0) == 0 and (.status.infraRestarts // 0) == 0'
	json_has "$tj" '(.status.failures // []) | length == 0'
	# Requeued: its new attempt waits in Kueue, unbound, while B's job holds the quota.
	wait_for -t 60 waiting_for_kueue "$victim"
	same_for 5 no_pod_bound "$victim"
	running_admitted "$other" 2
	events=$(kubectl -n "$NS" describe tj "$victim" | describe_events)
	echo "$events"
	grep -q '^Warning|InCohortReclamation|.*Kueue evicted Workload '"$victim"'-0.*reclamation within the cohort' <<<"$events"

	finish b1
	wait_for -t 60 phase_is b1 Succeeded
	wait_for -t 90 running_admitted "$victim" 2
	[[ $(requeues_of "$victim") == 1 ]]
}

@test "all or nothing: a gang larger than the free quota never starts partly" {
	cluster_queue "q-$NS" 24
	kueue_job holder 2 "q-$NS"
	wait_for -t 60 running_admitted holder 2
	# 8 GPUs of quota and 16 of the cluster are free: one of its two pods would fit.
	kueue_job big 2 "q-$NS"
	wait_for -t 60 waiting_for_kueue big
	same_for 8 no_pod_bound big
	job_pod_count_is big 2
	kubectl -n "$NS" get tj big -o json | jq -e '.status.message | contains("8 more needed")' >/dev/null
	finish holder
	wait_for -t 90 running_admitted big 2
}

@test "topology through Kueue: spec.topology.required becomes Kueue TAS, and the real Kueue puts the gang in one rack, ranks as its pod index" {
	local n
	# gpu-node-0 and -1 in rack r0, -2 and -3 in rack r1; a Topology of block, rack, host.
	for n in 0 1 2 3; do
		kubectl label node "gpu-node-$n" --overwrite e2e.cadre.dev/tas=true \
			e2e.cadre.dev/block=b0 "e2e.cadre.dev/rack=r$((n / 2))" >/dev/null
	done
	# cadre's levels (the admission policy checks spec.topology against them) and Kueue's.
	kubectl apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: ClusterTopology
metadata:
  name: default
spec:
  levels:
  - {nodeLabel: e2e.cadre.dev/block, name: block}
  - {nodeLabel: e2e.cadre.dev/rack, name: rack}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata:
  name: e2e-racks
  labels: {e2e.cadre.dev/test: "true"}
spec:
  levels:
  - nodeLabel: e2e.cadre.dev/block
  - nodeLabel: e2e.cadre.dev/rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: e2e-tas
  labels: {e2e.cadre.dev/test: "true"}
spec:
  nodeLabels: {e2e.cadre.dev/tas: "true"}
  topologyName: e2e-racks
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: tas-$NS
  labels: {e2e.cadre.dev/test: "true", e2e.cadre.dev/ns: $NS}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: e2e-tas
      resources:
      - {name: cpu, nominalQuota: "1000"}
      - {name: memory, nominalQuota: 100Ti}
      - {name: nvidia.com/gpu, nominalQuota: 32}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: tas
  namespace: $NS
spec:
  clusterQueue: tas-$NS
EOF
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: racked
spec:
  numNodes: 2
  queue: tas
  topology: {required: e2e.cadre.dev/rack}
  resources: {accelerators: "H100:8", cpus: "8", memory: 64Gi}
  image: registry.invalid/cadre/e2e:latest
  run: torchrun train.py
EOF
	wait_for -t 90 running_admitted racked 2
	pods=$(kubectl -n "$NS" get pods -l cadre.dev/job-name=racked -o json)
	# Kueue read the request and the rank: its pod index is cadre's node rank.
	json_has "$pods" 'all(.items[]; .metadata.annotations["kueue.x-k8s.io/podset-required-topology"] == "e2e.cadre.dev/rack")'
	json_has "$pods" 'all(.items[]; .metadata.labels["kueue.x-k8s.io/pod-group-pod-index"] == .metadata.labels["cadre.dev/node-rank"])'
	racks=$(for n in $(jq -r '.items[].spec.nodeName' <<<"$pods"); do
		kubectl get node "$n" -o "jsonpath={.metadata.labels['e2e\.cadre\.dev/rack']}{\"\n\"}"; done | sort -u)
	[ "$(wc -l <<<"$racks")" -eq 1 ] || { echo "racks: $racks"; false; }
	# The Workload carries Kueue's topology assignment, and the job says which rack.
	kubectl -n "$NS" get workloads -o json | jq -e '[.items[].status.admission.podSetAssignments[].topologyAssignment | select(. != null)] | length == 1' >/dev/null
	wait_for -t 30 json_has_now racked ".status.topology.domains == [\"$racks\"]"
	# A gang no rack holds waits: Kueue says so, cadre mirrors it.
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: toowide
spec:
  numNodes: 3
  queue: tas
  topology: {required: e2e.cadre.dev/rack}
  resources: {accelerators: "H100:8", cpus: "8", memory: 64Gi}
  image: registry.invalid/cadre/e2e:latest
  run: torchrun train.py
EOF
	wait_for -t 60 phase_is toowide Queued
	same_for 5 no_pod_bound toowide
	# The first gang ends and a third node joins rack r0: Kueue places the wide one there.
	finish racked
	kubectl label node gpu-node-2 --overwrite e2e.cadre.dev/rack=r0 >/dev/null
	wait_for -t 120 running_admitted toowide 3
	racks=$(for n in $(kubectl -n "$NS" get pods -l cadre.dev/job-name=toowide -o jsonpath='{.items[*].spec.nodeName}'); do
		kubectl get node "$n" -o "jsonpath={.metadata.labels['e2e\.cadre\.dev/rack']}{\"\n\"}"; done | sort -u)
	[ "$racks" = r0 ] || { echo "racks: $racks"; false; }
}

@test "priority: with WorkloadPriorityClasses the higher-priority job is admitted first" {
	kubectl apply -f - >/dev/null <<EOF
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: hi-$NS
  labels:
    e2e.cadre.dev/test: "true"
value: 1000
description: urgent
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: lo-$NS
  labels:
    e2e.cadre.dev/test: "true"
value: 10
description: batch
EOF
	cluster_queue "q-$NS" 16 "" Never
	kueue_job blocker 2 "q-$NS"
	wait_for -t 60 running_admitted blocker 2
	kueue_job low 2 "q-$NS" "lo-$NS"
	wait_for -t 60 waiting_for_kueue low
	sleep 2
	kueue_job high 2 "q-$NS" "hi-$NS"
	wait_for -t 60 waiting_for_kueue high
	[ "$(jp pod/high-0 '{.metadata.labels.kueue\.x-k8s\.io/priority-class}')" = "hi-$NS" ]
	finish blocker
	wait_for -t 90 running_admitted high 2
	same_for 5 waiting_for_kueue low
	no_pod_bound low
	finish high
	wait_for -t 90 running_admitted low 2
}

# in_ns NS FUNCTION ARGS...: a helper that reads $NS, in another namespace.
in_ns() {
	local NS=$1
	"${@:2}"
}

@test "the samples: a team's ClusterQueue in the cohort admits the sample job on H100 quota" {
	kubectl apply -k "$SAMPLES_KUEUE" >/dev/null
	kubectl apply -f "$SAMPLES_KUEUE/llama-pretrain-team-a.yaml" >/dev/null
	wait_for -t 90 in_ns team-a running_admitted llama-pretrain 2
	kubectl -n team-a get tj llama-pretrain -o json | jq -e '.status.conditions[] | select(.type == "Admitted")
		| .message | contains("admitted by Kueue to ClusterQueue team-a")' >/dev/null
	# Kueue put the flavor's node label on the pods, and its priority class is the sample's.
	[ "$(kubectl -n team-a get pod llama-pretrain-0 -o jsonpath='{.spec.nodeSelector.nvidia\.com/gpu\.product}')" = NVIDIA-H100-80GB-HBM3 ]
	[ "$(kubectl -n team-a get workloads.kueue.x-k8s.io llama-pretrain-0 -o jsonpath='{.spec.priorityClassRef.name}')" = research-high ]
	kubectl delete -f "$SAMPLES_KUEUE/llama-pretrain-team-a.yaml" >/dev/null
	wait_for -t 120 in_ns team-a no_job_pods
	kubectl delete -k "$SAMPLES_KUEUE" --wait=false >/dev/null
}
