#!/usr/bin/env bats
# The harness itself: the control plane is real, the fake GPU nodes behave like nodes, and
# kwok's stages give pods the lifecycle cadre's tests rely on. Tests run in file order; the
# ones that stop components or add nodes come last.

load helpers

setup() {
	e2e_namespace
}

teardown() {
	# A test that stopped the scheduler and failed must not leave it stopped.
	"$E2E_DIR/cluster" status >/dev/null 2>&1 || "$E2E_DIR/cluster" start scheduler >/dev/null 2>&1 || true
	e2e_namespace_delete
}

@test "the API server is Kubernetes v1.36" {
	run kubectl get --raw /version
	[ "$status" -eq 0 ]
	version=$(jq -r .gitVersion <<<"$output")
	[[ $version == v1.36.* ]] || { echo "gitVersion $version"; false; }
	[ "$(jq -r .major <<<"$output")" = 1 ]
	[ "$(jq -r .minor <<<"$output")" = 36 ]
}

@test "the cluster starts with 4 Ready H100 nodes of 8 GPUs, tainted for GPU pods only" {
	nodes=$(kubectl get nodes -l type=kwok -o json)
	[ "$(jq '.items | length' <<<"$nodes")" -eq 4 ]
	[ "$(jq '[.items[] | select(.status.conditions[] | .type == "Ready" and .status == "True")] | length' <<<"$nodes")" -eq 4 ]
	[ "$(jq '[.items[] | select(.status.allocatable["nvidia.com/gpu"] == "8")] | length' <<<"$nodes")" -eq 4 ]
	[ "$(jq '[.items[] | select(.status.capacity["nvidia.com/gpu"] == "8")] | length' <<<"$nodes")" -eq 4 ]
	[ "$(jq '[.items[] | select(.metadata.labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3")] | length' <<<"$nodes")" -eq 4 ]
	[ "$(jq '[.items[] | select(.spec.taints[]? | .key == "nvidia.com/gpu" and .value == "present" and .effect == "NoSchedule")] | length' <<<"$nodes")" -eq 4 ]
	[ "$(jq -r '[.items[].metadata.name] | sort | join(",")' <<<"$nodes")" = gpu-node-0,gpu-node-1,gpu-node-2,gpu-node-3 ]
}

@test "a pod that tolerates the GPU taint is scheduled and Running with a pod IP" {
	make_pod plain
	wait_for pod_phase_is plain Running
	[ -n "$(jp pod/plain '{.spec.nodeName}')" ]
	[[ $(jp pod/plain '{.spec.nodeName}') == gpu-node-* ]]
	ip=$(jp pod/plain '{.status.podIP}')
	[[ $ip =~ ^10\.244\.[0-9]+\.[0-9]+$ ]] || { echo "podIP '$ip'"; false; }
	[ "$(jp pod/plain '{.status.conditions[?(@.type=="Ready")].status}')" = True ]
	[ "$(jp pod/plain '{.status.containerStatuses[0].state.running.startedAt}')" != "" ]
}

@test "a pod that requests 8 GPUs fits a node; one that requests 9 is unschedulable" {
	kubectl -n "$NS" create -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: gpus-8}
spec:
  restartPolicy: Never
$GPU_TOLERATION
  containers:
  - name: main
    image: registry.invalid/cadre/e2e:latest
    resources: {limits: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Pod
metadata: {name: gpus-9}
spec:
  restartPolicy: Never
$GPU_TOLERATION
  containers:
  - name: main
    image: registry.invalid/cadre/e2e:latest
    resources: {limits: {nvidia.com/gpu: "9"}}
EOF
	wait_for pod_phase_is gpus-8 Running
	wait_for field_is pod/gpus-9 '{.status.conditions[?(@.type=="PodScheduled")].reason}' Unschedulable
	[ -z "$(jp pod/gpus-9 '{.spec.nodeName}')" ]
}

@test "a pod without the GPU toleration is not scheduled onto the GPU nodes" {
	kubectl -n "$NS" run no-toleration --image=registry.invalid/cadre/e2e:latest --restart=Never
	wait_for field_is pod/no-toleration '{.status.conditions[?(@.type=="PodScheduled")].reason}' Unschedulable
	[ "$(jp pod/no-toleration '{.status.phase}')" = Pending ]
}

@test "a pod annotated exit-code 3 runs, then ends Failed with exitCode 3" {
	make_pod fails '    e2e.cadre.dev/exit-code: "3"'
	wait_for pod_phase_is fails Failed
	[ "$(jp pod/fails '{.status.containerStatuses[0].state.terminated.exitCode}')" = 3 ]
	[ "$(jp pod/fails '{.status.containerStatuses[0].state.terminated.reason}')" = Error ]
	[ -n "$(jp pod/fails '{.status.podIP}')" ]
}

@test "a pod annotated exit-code 0 ends Succeeded with exitCode 0" {
	make_pod succeeds '    e2e.cadre.dev/exit-code: "0"'
	wait_for pod_phase_is succeeds Succeeded
	[ "$(jp pod/succeeds '{.status.containerStatuses[0].state.terminated.exitCode}')" = 0 ]
	[ "$(jp pod/succeeds '{.status.containerStatuses[0].state.terminated.reason}')" = Completed ]
}

@test "annotating a running pod with exit-code makes it exit, with the reason and message asked for" {
	make_pod later
	wait_for pod_phase_is later Running
	kubectl -n "$NS" annotate pod later e2e.cadre.dev/exit-code=137 \
		e2e.cadre.dev/exit-reason=OOMKilled e2e.cadre.dev/exit-message="out of memory"
	wait_for pod_phase_is later Failed
	[ "$(jp pod/later '{.status.containerStatuses[0].state.terminated.exitCode}')" = 137 ]
	[ "$(jp pod/later '{.status.containerStatuses[0].state.terminated.reason}')" = OOMKilled ]
	[ "$(jp pod/later '{.status.containerStatuses[0].state.terminated.message}')" = "out of memory" ]
}

@test "a pod with a scheduling gate stays Pending and unscheduled until the gate is removed" {
	make_pod gated "" '  schedulingGates:
  - name: cadre.dev/gang'
	sleep 3
	[ "$(jp pod/gated '{.status.phase}')" = Pending ]
	[ -z "$(jp pod/gated '{.spec.nodeName}')" ]
	[ "$(jp pod/gated '{.status.conditions[?(@.type=="PodScheduled")].reason}')" = SchedulingGated ]
	[ -z "$(jp pod/gated '{.status.podIP}')" ]
	kubectl -n "$NS" patch pod gated --type=json -p '[{"op":"remove","path":"/spec/schedulingGates"}]'
	wait_for pod_phase_is gated Running
	[ -n "$(jp pod/gated '{.spec.nodeName}')" ]
}

@test "deleting a running pod completes, even with a finalizer on it" {
	make_pod doomed
	wait_for pod_phase_is doomed Running
	kubectl -n "$NS" delete pod doomed --timeout=30s
	run kubectl -n "$NS" get pod doomed
	[ "$status" -ne 0 ]
	[[ $output == *NotFound* ]]

	kubectl -n "$NS" create -f - <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: held
  finalizers: [e2e.cadre.dev/hold]
spec:
  restartPolicy: Never
$GPU_TOLERATION
  containers:
  - name: main
    image: registry.invalid/cadre/e2e:latest
EOF
	wait_for pod_phase_is held Running
	kubectl -n "$NS" delete pod held --timeout=30s
	run kubectl -n "$NS" get pod held
	[ "$status" -ne 0 ]
}

@test "a Deployment gets its pods Running, and deleting it garbage-collects them" {
	kubectl -n "$NS" create -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
$(sed 's/^/    /' <<<"$GPU_TOLERATION")
      containers:
      - name: main
        image: registry.invalid/cadre/e2e:latest
EOF
	wait_for field_is deployment/web '{.status.readyReplicas}' 3
	[ "$(kubectl -n "$NS" get pods -l app=web --field-selector=status.phase=Running -o name | wc -l)" -eq 3 ]
	kubectl -n "$NS" delete deployment web
	wait_for bash -c "[ -z \"\$(kubectl -n $NS get pods -l app=web -o name)\" ]"
}

@test "the service account controllers run: a new namespace gets its token-bearing default ServiceAccount" {
	[ "$(jp serviceaccount/default '{.metadata.name}')" = default ]
	wait_for field_is configmap/kube-root-ca.crt '{.metadata.name}' kube-root-ca.crt
	token=$(kubectl -n "$NS" create token default)
	[ -n "$token" ]
}

@test "stop apiserver / start apiserver comes back on the same address with the same data" {
	kubectl -n "$NS" create configmap survivor --from-literal=answer=42
	apiserver_before=$CADRE_E2E_APISERVER
	"$E2E_DIR/cluster" stop apiserver
	run kubectl -n "$NS" get configmap survivor --request-timeout=2s
	[ "$status" -ne 0 ]
	"$E2E_DIR/cluster" start apiserver
	eval "$("$E2E_DIR/cluster" env)"
	[ "$CADRE_E2E_APISERVER" = "$apiserver_before" ]
	[ "$(jp configmap/survivor '{.data.answer}')" = 42 ]
	# The scheduler, controller manager and kwok reconnect on their own.
	make_pod after-restart
	wait_for -t 180 pod_phase_is after-restart Running
}

@test "stop etcd / start etcd: the API server becomes ready again with the same data" {
	kubectl -n "$NS" create configmap kept --from-literal=answer=42
	"$E2E_DIR/cluster" stop etcd
	wait_for not kubectl get --raw /readyz --request-timeout=5s
	"$E2E_DIR/cluster" start etcd
	wait_for -t 180 kubectl get --raw /readyz
	[ "$(jp configmap/kept '{.data.answer}')" = 42 ]
}

# scheduler_line: the scheduler's line of `e2e/cluster status`.
scheduler_line() {
	"$E2E_DIR/cluster" status 2>/dev/null | grep '^scheduler '
}

# scheduler_back_after PID: a scheduler other than PID runs and is healthy.
scheduler_back_after() {
	local line
	line=$(scheduler_line) || return 1
	[[ $line == *healthy* && $line != *" pid $1 "* ]]
}

@test "a component that exits on its own is started again, as a kubelet would; stop keeps it stopped" {
	pid=$(<"$CADRE_E2E_STATE/run/scheduler.pid")
	kill -KILL "$pid"
	wait_for -t 30 scheduler_back_after "$pid"
	grep -q "scheduler exited with status 137" "$CADRE_E2E_STATE/logs/restarts.log"
	[[ $(scheduler_line) == *"exited on its own and was restarted: "[1-9]* ]]
	make_pod after-crash
	wait_for -t 60 pod_phase_is after-crash Running
	# Stopped on purpose, it stays stopped.
	"$E2E_DIR/cluster" stop scheduler
	sleep 3
	[[ $(scheduler_line) == *" stopped "* ]]
	"$E2E_DIR/cluster" start scheduler
	[[ $(scheduler_line) == *healthy* ]]
}

@test "add-nodes 1 adds a fifth Ready GPU node, continuing the numbering" {
	"$E2E_DIR/cluster" add-nodes 1
	[ "$(kubectl get nodes -l type=kwok -o name | wc -l)" -eq 5 ]
	[ "$(kubectl get node gpu-node-4 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
	[ "$(kubectl get node gpu-node-4 -o 'jsonpath={.status.allocatable.nvidia\.com/gpu}')" = 8 ]
}

@test "free-ports never hands out a port of a control plane's ports file, stopped or not, and a shard only its own part of the range" {
	local state=$BATS_TEST_TMPDIR/state lo=30000
	mkdir -p "$state"
	# Every port of 30000-30009 but 30007 belongs to a control plane, none of them listening.
	for ((p = lo; p < lo + 10; p++)); do
		((p == lo + 7)) || echo "component_$((p - lo))_port=$p"
	done >"$state/ports"
	[ "$(CADRE_PORT_SHARD= CADRE_E2E_STATE=$state CADRE_PORT_RANGE=$lo-$((lo + 9)) "$REPO_ROOT/scripts/free-ports" 1)" = $((lo + 7)) ]
	run env CADRE_PORT_SHARD= CADRE_E2E_STATE="$state" CADRE_PORT_RANGE=$lo-$((lo + 9)) "$REPO_ROOT/scripts/free-ports" 2
	[ "$status" -ne 0 ]

	# Two shards of 30000-30009: the second picks only in 30005-30009.
	for _ in 1 2 3 4 5; do
		p=$(CADRE_PORT_SHARD=2/2 CADRE_PORT_RANGE=$lo-$((lo + 9)) "$REPO_ROOT/scripts/free-ports" 1)
		((p >= lo + 5 && p <= lo + 9))
	done
}
