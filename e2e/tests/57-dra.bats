#!/usr/bin/env bats
# GPUs through Dynamic Resource Allocation (docs/dra.md) on the real control plane. Two kwok
# nodes publish 8 GPUs each only as a ResourceSlice (no nvidia.com/gpu in allocatable, no
# driver: kube-scheduler allocates from the slice alone), beside the four device-plugin
# nodes. A Partition names the DeviceClass; built-in admission counts the slices' devices
# less those allocated to claims, so a DRA gang is admitted whole onto the DRA nodes, a
# second one waits Queued until the devices are free, and a job of a partition without a
# class still goes to a device-plugin node.

load helpers
load controller

setup_file() {
	crds_install
	"$E2E_DIR/cluster" add-nodes 2 --dra --prefix dra-node >/dev/null
	kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}
---
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: dra}
spec: {deviceClassName: gpu.nvidia.com}
---
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: plugin}
spec: {}
EOF2
	controller_start
}

teardown_file() {
	controller_stop
	kubectl delete partition dra plugin --ignore-not-found >/dev/null
	kubectl delete deviceclass gpu.nvidia.com --ignore-not-found >/dev/null
	kubectl delete resourceslice dra-node-0-gpu.nvidia.com dra-node-1-gpu.nvidia.com \
		--ignore-not-found >/dev/null
	kubectl delete node dra-node-0 dra-node-1 --ignore-not-found >/dev/null
	kubectl delete -f "$E2E_DIR/testdata/computedomain-crd.yaml" --ignore-not-found >/dev/null
}

setup() {
	e2e_namespace
	controller_mark
	wait_gpus_free
	wait_for -t 60 no_claims_anywhere
}

teardown() {
	test_cleanup
}

# message_has JOB TEXT: the job's status.message holds TEXT.
message_has() {
	[[ $(jp "tj/$1" '{.status.message}') == *"$2"* ]]
}

no_claims_anywhere() {
	[[ -z $(kubectl get resourceclaims -A -o name) ]]
}

# job NAME PARTITION NODES [EXTRA-SPEC-YAML]: a job of 8 H100 per node that runs until stopped.
job() {
	kubectl -n "$NS" apply -f - >/dev/null <<EOF2
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  partition: $2
  numNodes: $3
  resources:
    accelerators: "H100:8"
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
${4:-}
EOF2
}

# claim_of POD: the name of the claim cadre's template made for the pod.
claim_of() {
	jp "pod/$1" '{.status.resourceClaimStatuses[?(@.name=="accelerators")].resourceClaimName}'
}

# allocated_on POD: "<count> <pool>..." of the devices allocated to the pod's claim.
allocated_on() {
	local claim
	claim=$(claim_of "$1") || return 1
	[[ -n $claim ]] || return 1
	kubectl -n "$NS" get resourceclaim "$claim" -o json |
		jq -r '[.status.allocation.devices.results[]?.pool] | "\(length) \(unique | join(","))"'
}

@test "a 2-node H100:8 gang on DRA nodes runs with 8 devices of its own node allocated to each pod" {
	job big dra 2
	wait_for -t 120 phase_is big Running
	# The job's template, owned by it, asking for its count and type of the class.
	[ "$(jp resourceclaimtemplate/big-accelerators '{.metadata.ownerReferences[0].name}')" = big ]
	[ "$(jp resourceclaimtemplate/big-accelerators '{.spec.spec.devices.requests[0].exactly.count}')" = 8 ]
	[ "$(jp resourceclaimtemplate/big-accelerators '{.spec.spec.devices.requests[0].exactly.deviceClassName}')" = gpu.nvidia.com ]
	nodes=""
	for r in 0 1; do
		node=$(jp "pod/big-$r" '{.spec.nodeName}')
		[[ $node == dra-node-* ]]
		[ "$(allocated_on "big-$r")" = "8 $node" ]
		[ -z "$(jp "pod/big-$r" '{.spec.containers[0].resources.requests.nvidia\.com/gpu}')" ]
		nodes+="$node "
	done
	# All or nothing, one rank a node, on the nodes its admission stored.
	[ "$nodes" = "dra-node-0 dra-node-1 " ] || [ "$nodes" = "dra-node-1 dra-node-0 " ]
	on_stored_nodes big
	[ "$(jp tj/big '{.status.conditions[?(@.type=="Admitted")].reason}')" = Admitted ]
}

@test "a second DRA gang waits Queued, naming the class, while the devices are allocated, and runs once they are free" {
	job first dra 2
	wait_for -t 120 phase_is first Running
	job second dra 2
	wait_for -t 60 field_is tj/second '{.status.conditions[?(@.type=="Admitted")].reason}' InsufficientCapacity
	[[ $(jp tj/second '{.status.message}') == *gpu.nvidia.com* ]]
	sleep 3
	[ "$(jp tj/second '{.status.phase}')" = Queued ]
	[ -z "$(kubectl -n "$NS" get pods -l cadre.dev/job-name=second -o name)" ]
	kubectl -n "$NS" delete tj first --wait=false >/dev/null
	wait_for -t 120 phase_is second Running
	for r in 0 1; do
		[ "$(allocated_on "second-$r")" = "8 $(jp "pod/second-$r" '{.spec.nodeName}')" ]
	done
}

@test "a mixed cluster: a partition without a class runs on device-plugin nodes, the DRA one on DRA nodes" {
	job plain plugin 1
	job dra-one dra 1
	wait_for -t 120 phase_is plain Running
	wait_for -t 120 phase_is dra-one Running
	[[ $(jp pod/plain-0 '{.spec.nodeName}') == gpu-node-* ]]
	[ "$(jp pod/plain-0 '{.spec.containers[0].resources.limits.nvidia\.com/gpu}')" = 8 ]
	[ -z "$(jp pod/plain-0 '{.spec.resourceClaims}')" ]
	[[ $(jp pod/dra-one-0 '{.spec.nodeName}') == dra-node-* ]]
	[ "$(allocated_on dra-one-0)" = "8 $(jp pod/dra-one-0 '{.spec.nodeName}')" ]
}

@test "spec.computeDomain: refused by name without its CRD; with it, one ComputeDomain per attempt, owned by the job, gone with it" {
	kubectl delete -f "$E2E_DIR/testdata/computedomain-crd.yaml" --ignore-not-found >/dev/null
	job nvl dra 1 "  computeDomain: {}"
	wait_for -t 60 message_has nvl "ComputeDomain nvl-0-cd"
	[[ $(jp tj/nvl '{.status.message}') == *"CRD is not installed"* ]]
	[ -z "$(kubectl -n "$NS" get pods -l cadre.dev/job-name=nvl -o name)" ]
	kubectl apply -f "$E2E_DIR/testdata/computedomain-crd.yaml" >/dev/null
	kubectl wait --for=condition=Established crd/computedomains.resource.nvidia.com --timeout=30s >/dev/null
	wait_for -t 60 jp computedomain/nvl-0-cd '{.metadata.name}'
	[ "$(jp computedomain/nvl-0-cd '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" = TrainingJob/nvl ]
	[ "$(jp computedomain/nvl-0-cd '{.spec.channel.resourceClaimTemplate.name}')" = nvl-0-cd-channel ]
	# Its pod claims the channel (NVIDIA's controller would make the template; none runs here).
	wait_for -t 60 jp pod/nvl-0 '{.metadata.name}'
	[ "$(jp pod/nvl-0 '{.spec.resourceClaims[?(@.name=="compute-domain")].resourceClaimTemplateName}')" = nvl-0-cd-channel ]
	kubectl -n "$NS" delete tj nvl >/dev/null
	wait_for -t 60 not kubectl -n "$NS" get computedomain nvl-0-cd
}
