#!/usr/bin/env bats
# Native gang mode (--gang-scheduler=native, docs/gang-admission.md) against the real 1.36
# kube-scheduler: cadre makes one scheduling.k8s.io/v1alpha2 PodGroup per attempt and
# ungated pods naming it; the scheduler binds the whole gang or none of it.
#   - on a cluster without the API the controller refuses to start, naming the flags,
#     and the built-in mode still starts there;
#   - a gang with room for one pod: no pod bound, the scheduler's message in status; a
#     node added: both bind together;
#   - a gang whose nodes are partly taken by pods cadre does not own never starts partly;
#   - a rank fails (maxRestarts 1): a PodGroup for attempt 1, the one of attempt 0 gone.
# The native controller runs as cadre's ServiceAccount (manifests/rbac.yaml) and is never
# refused anything.
#
# Its cluster: the run's shared one, switched with `e2e/cluster native-gang on` (which
# restarts kube-apiserver and kube-scheduler with the API and gates) by the tests that
# need it, and back off by the refusal test and by teardown_file, so every other file
# sees the default cluster (docs/e2e.md).

load helpers
load controller
load install

setup_file() {
	crds_install
	wait_for -t 120 no_namespace_terminating
}

teardown_file() {
	if controller_pid >/dev/null; then controller_stop; fi
	kubectl uncordon -l type=kwok >/dev/null 2>&1 || true
	kubectl label nodes -l type=kwok e2e.cadre.dev/rack- >/dev/null 2>&1 || true
	kubectl apply -f "$REPO_ROOT/manifests/clustertopology-default.yaml" >/dev/null 2>&1 || true
	uninstall
	"$E2E_DIR/cluster" native-gang off >/dev/null
}

setup() {
	e2e_namespace
}

teardown() {
	kubectl uncordon -l type=kwok >/dev/null 2>&1 || true
	if controller_pid >/dev/null; then test_cleanup; else e2e_namespace_delete; fi
}

# native_controller: the cluster with the PodGroup API and a controller in native mode,
# running as its own ServiceAccount with manifests/rbac.yaml (controller_log_clean then
# shows that the RBAC of native mode suffices).
native_controller() {
	if controller_pid >/dev/null && ! grep -qx -- --gang-scheduler=native "$(_controller_dir)/args"; then
		controller_stop
	fi
	"$E2E_DIR/cluster" native-gang on >/dev/null
	if ! controller_pid >/dev/null; then
		install_rbac
		sa_credentials "$BATS_FILE_TMPDIR/sa" "$INSTALL_SA"
		sa_kubeconfig "$BATS_FILE_TMPDIR/sa" "$BATS_FILE_TMPDIR/sa/kubeconfig"
		CADRE_E2E_CONTROLLER_KUBECONFIG=$BATS_FILE_TMPDIR/sa/kubeconfig \
			controller_start --gang-scheduler=native
	fi
	controller_mark
	wait_gpus_free
}

# gpu_node_names: the GPU nodes, sorted.
gpu_node_names() {
	kubectl get nodes -l type=kwok -o json |
		jq -r '.items[] | select(.status.allocatable["nvidia.com/gpu"] != null) | .metadata.name' | sort
}

# gang JOB NODES [EXTRA_SPEC]: NODES x H100:8, a whole node per pod.
gang() {
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  numNodes: $2
  maxRestarts: 1
  resources:
    accelerators: "H100:8"
  image: registry.invalid/cadre/e2e:latest
  run: torchrun --nnodes=\$SKYPILOT_NUM_NODES train.py
EOF
}

# bound_pods JOB: how many of JOB's pods have a node.
bound_pods() {
	kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json |
		jq '[.items[] | select(.spec.nodeName != null)] | length'
}

# none_bound_of JOB N: JOB has N pods and none is bound.
none_bound_of() {
	[[ $(job_pods "$1" | wc -l) -eq $2 && $(bound_pods "$1") -eq 0 ]]
}

# all_or_none JOB N: never a partial gang: 0 or N of JOB's pods bound.
all_or_none() {
	local b
	b=$(bound_pods "$1")
	[[ $b -eq 0 || $b -eq $2 ]] || { echo "$b of $2 pods of $1 bound"; return 1; }
}

# unschedulable JOB: Queued, Admitted False with the scheduler's reason and message.
unschedulable() {
	local tj
	tj=$(kubectl -n "$NS" get tj "$1" -o json) || return 1
	json_has "$tj" '.status.phase == "Queued"' &&
		json_has "$tj" 'any(.status.conditions[]; .type == "Admitted" and .status == "False"
			and .reason == "Unschedulable" and (.message | contains("pod group is unschedulable")))' &&
		json_has "$tj" '.status.message | contains("pod group is unschedulable")'
}

# podgroups JOB: the names of JOB's PodGroups that are not being deleted, one a line.
podgroups() {
	kubectl -n "$NS" get podgroups.v1alpha2.scheduling.k8s.io -l "cadre.dev/job-name=$1" -o json |
		jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name'
}

podgroups_are() {
	[[ "$(podgroups "$1" | sort | tr '\n' ' ')" == "$2" ]]
}

# foreign_pod NAME: a pod cadre does not own that takes a whole GPU node.
foreign_pod() {
	kubectl -n "$NS" create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
spec:
  restartPolicy: Never
$GPU_TOLERATION
  containers:
  - name: main
    image: registry.invalid/cadre/e2e:latest
    resources:
      requests: {nvidia.com/gpu: "8"}
      limits: {nvidia.com/gpu: "8"}
EOF
}

# scheduled_times JOB: each pod's PodScheduled=True time in Unix seconds, one a line.
scheduled_times() {
	kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json | jq -r '.items[].status.conditions[]
		| select(.type == "PodScheduled" and .status == "True") | .lastTransitionTime | fromdate'
}

@test "native mode refuses to start without the PodGroup API and names the flags; the built-in mode starts there" {
	if controller_pid >/dev/null; then controller_stop; fi
	"$E2E_DIR/cluster" native-gang off >/dev/null
	run kubectl get --raw /apis/scheduling.k8s.io/v1alpha2
	[ "$status" -ne 0 ]
	run timeout 60 "$CADRE_CONTROLLER" --kubeconfig "$KUBECONFIG" --gang-scheduler=native \
		--metrics-addr 0 --health-addr "127.0.0.1:$(free_ports 1)"
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || { echo "status $status: $output"; false; }
	[[ $output == *"--runtime-config=scheduling.k8s.io/v1alpha2=true"* ]] || { echo "$output"; false; }
	[[ $output == *"--feature-gates=GenericWorkload=true,GangScheduling=true"* ]] || { echo "$output"; false; }
	[[ $output == *"kube-scheduler"* ]] || { echo "$output"; false; }

	controller_start
	controller_mark
	gang plain 1
	wait_for -t 120 phase_is plain Running
}

@test "a 2-node gang with room for one pod: none bound, the scheduler's message in status; a node added, both bind together" {
	native_controller
	# Room for one such pod: every GPU node but one cordoned.
	mapfile -t nodes < <(gpu_node_names)
	for n in "${nodes[@]:1}"; do kubectl cordon "$n" >/dev/null; done
	[ "$(gpu_nodes)" -eq 1 ]
	gang pair 2
	wait_for -t 60 podgroups_are pair "pair-attempt-0 "
	json_has "$(kubectl -n "$NS" get podgroups.v1alpha2.scheduling.k8s.io pair-attempt-0 -o json)" \
		'.spec.schedulingPolicy.gang.minCount == 2 and .metadata.ownerReferences[0].kind == "TrainingJob"'
	wait_for -t 60 none_bound_of pair 2
	json_has "$(kubectl -n "$NS" get pods -l cadre.dev/job-name=pair -o json)" \
		'all(.items[]; .spec.schedulingGroup.podGroupName == "pair-attempt-0" and (.spec.schedulingGates // [] | length == 0))'
	wait_for -t 90 unschedulable pair
	# The scheduler holds the group: no pod of it is bound, now or a while on.
	same_for 5 none_bound_of pair 2

	"$E2E_DIR/cluster" add-nodes 1 >/dev/null
	wait_for -t 120 phase_is pair Running
	[ "$(bound_pods pair)" -eq 2 ]
	# One PodGroup scheduling cycle binds both: their PodScheduled times agree.
	times=$(scheduled_times pair | sort -n)
	first=$(head -n1 <<<"$times") last=$(tail -n1 <<<"$times")
	((last - first <= 1)) || { echo "bound at $times"; false; }
	json_has "$(kubectl -n "$NS" get tj pair -o json)" \
		'any(.status.conditions[]; .type == "Admitted" and .status == "True"
			and (.message | contains("kube-scheduler placed pod group pair-attempt-0")))'
	controller_log_clean
}

@test "a gang whose nodes are partly taken by pods cadre does not own never starts partly" {
	native_controller
	total=$(gpu_nodes)
	# Every GPU node but one is taken by somebody else's pod.
	for ((i = 1; i < total; i++)); do foreign_pod "other-$i"; done
	for ((i = 1; i < total; i++)); do wait_for -t 60 pod_phase_is "other-$i" Running; done
	gang partial 2
	wait_for -t 60 none_bound_of partial 2
	wait_for -t 90 unschedulable partial
	same_for 10 all_or_none partial 2
	none_bound_of partial 2

	# One node freed: room for the whole gang, which starts whole.
	kubectl -n "$NS" delete pod other-1 --wait=false >/dev/null
	wait_for -t 120 phase_is partial Running
	[ "$(bound_pods partial)" -eq 2 ]
	controller_log_clean
}

@test "spec.topology.required becomes the PodGroup's topology constraint and the scheduler keeps the gang in one rack; preferred is told as not expressible" {
	native_controller
	mapfile -t nodes < <(gpu_node_names)
	# Two racks of two: the first node of r0 is taken by somebody else.
	for i in 0 1 2 3; do
		kubectl label node "${nodes[i]}" --overwrite "e2e.cadre.dev/rack=r$((i / 2))" >/dev/null
	done
	kubectl apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: ClusterTopology
metadata:
  name: default
spec:
  levels: [{nodeLabel: e2e.cadre.dev/rack, name: rack}, {nodeLabel: e2e.cadre.dev/half, name: half}]
EOF
	kubectl -n "$NS" create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: other
spec:
  nodeName: ${nodes[0]}
$GPU_TOLERATION
  containers:
  - name: main
    image: registry.invalid/cadre/e2e:latest
    resources: {requests: {nvidia.com/gpu: "8"}, limits: {nvidia.com/gpu: "8"}}
EOF
	wait_for -t 60 pod_phase_is other Running
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: racked
spec:
  numNodes: 2
  topology: {required: e2e.cadre.dev/rack, preferred: e2e.cadre.dev/half}
  resources: {accelerators: "H100:8"}
  # Left to itself the scheduler would take ${nodes[1]}, the free node of r0, for one rank.
  podTemplate:
    spec:
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            preference:
              matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [${nodes[1]}]}]
  image: registry.invalid/cadre/e2e:latest
  run: torchrun train.py
EOF
	wait_for -t 60 podgroups_are racked "racked-attempt-0 "
	json_has "$(kubectl -n "$NS" get podgroups.v1alpha2.scheduling.k8s.io racked-attempt-0 -o json)" \
		'.spec.schedulingConstraints.topology == [{key: "e2e.cadre.dev/rack"}]'
	wait_for -t 120 phase_is racked Running
	json_has "$(kubectl -n "$NS" get pods -l cadre.dev/job-name=racked -o json)" \
		"[.items[].spec.nodeName] | sort == [\"${nodes[2]}\", \"${nodes[3]}\"]"
	kubectl -n "$NS" get events --field-selector involvedObject.name=racked,reason=TopologyNotExpressible \
		-o jsonpath='{.items[*].note}{.items[*].message}' | grep -q 'spec.topology.preferred'
}

@test "a rank fails with maxRestarts 1: a new PodGroup for attempt 1, the one of attempt 0 gone" {
	native_controller
	gang flaky 2
	wait_for -t 120 phase_is flaky Running
	podgroups_are flaky "flaky-attempt-0 "
	kubectl -n "$NS" annotate pod flaky-1 e2e.cadre.dev/exit-code=3 >/dev/null
	wait_for -t 60 field_is tj/flaky '{.status.restarts}' 1
	wait_for -t 120 podgroups_are flaky "flaky-attempt-1 "
	wait_for -t 60 not kubectl -n "$NS" get podgroups.v1alpha2.scheduling.k8s.io flaky-attempt-0
	wait_for -t 180 phase_is flaky Running
	json_has "$(kubectl -n "$NS" get pods -l cadre.dev/job-name=flaky -o json)" \
		'all(.items[]; .spec.schedulingGroup.podGroupName == "flaky-attempt-1"
			and .metadata.labels["cadre.dev/restart-attempt"] == "1")'
	controller_log_clean
}
