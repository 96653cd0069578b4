#!/usr/bin/env bats
# cadre installed as users install it (docs/install.md): the image the Dockerfile describes,
# built from it by e2e/realnode/build controller (the Dockerfile read and run without docker:
# its packages, its cmake line, its user and entrypoint), and `kubectl apply -k` of
# manifests/, unchanged, under an overlay with only what a cluster with a private registry
# adds: the image's name (kustomize `images:`) and where the pods may run (here the real node,
# this cluster's one node that runs pods, which is tainted). The controller then runs as a pod
# of the real node with nothing but what the Deployment gives it: in-cluster configuration
# through the `kubernetes` Service (10.96.0.1:443; e2e/realnode.bash plays kube-proxy for
# it), the ServiceAccount's token, the restricted Pod Security level with a read-only root
# file system. No controller of the harness runs in this file: whatever happens to a
# TrainingJob here is the Deployment's doing.

load helpers

setup_file() {
	"$E2E_DIR/cluster" real-node on
	eval "$("$E2E_DIR/cluster" real-node env)"
	# Builds the image the first time (about 2 minutes), and again after a change to what
	# the Dockerfile copies (a compile, about half a minute); otherwise finds it.
	local dir
	dir=$("$E2E_DIR/realnode/build" controller)
	"$E2E_DIR/cluster" real-node import "$dir"
	CONTROLLER_IMAGE=$(<"$dir/REF")
	export CONTROLLER_IMAGE
	# A namespace an earlier file deleted refuses creates until it is gone.
	wait_for -t 120 no_namespace_terminating
}

teardown_file() {
	# What the overlay installed, but the CRDs (other files share them), as 40-install's
	# uninstall: the namespace first, whose pods the real node stops before it goes off.
	kubectl delete namespace cadre-system --ignore-not-found --wait=false >/dev/null 2>&1 || true
	kubectl delete clusterrole,clusterrolebinding -l app.kubernetes.io/name=cadre \
		--ignore-not-found >/dev/null 2>&1 || true
	wait_for -t 120 not kubectl get namespace cadre-system || true
	"$E2E_DIR/cluster" real-node off
}

setup() {
	e2e_namespace
}

teardown() {
	if [[ -n ${BATS_TEST_COMPLETED:-} ]]; then
		e2e_namespace_delete
		return 0
	fi
	# What a failure needs to be understood: the pods, their events, their logs.
	kubectl -n cadre-system get pods -o wide 2>&1 || true
	kubectl -n cadre-system get events --sort-by=.lastTimestamp 2>&1 | tail -n 20 || true
	local p
	for p in $(kubectl -n cadre-system get pods -o name 2>/dev/null); do
		echo "--- $p"
		kubectl -n cadre-system logs "$p" --tail=20 2>&1 || true
	done
	e2e_namespace_delete
}

# holder_is_a_pod: the controller's Lease names one of the Deployment's pods as its holder
# ("<hostname>_<16 hex digits>"; a pod's hostname is its name).
holder_is_a_pod() {
	local holder pod
	holder=$(kubectl -n cadre-system get lease cadre-controller -o jsonpath='{.spec.holderIdentity}') || return 1
	for pod in $(kubectl -n cadre-system get pods -l app.kubernetes.io/component=controller \
		-o jsonpath='{.items[*].metadata.name}'); do
		[[ $holder =~ ^${pod}_[0-9a-f]{16}$ ]] && return 0
	done
	echo "holder: $holder"
	return 1
}

@test "kubectl apply -k manifests/ under an image overlay runs the Dockerfile's image on the real node: Ready under restricted with a read-only root as 65532, the leader Lease taken in-cluster, a TrainingJob run to Succeeded" {
	local overlay=$BATS_TEST_TMPDIR/my-cluster
	mkdir -p "$overlay"
	cat >"$overlay/kustomization.yaml" <<EOF
# What docs/install.md tells a cluster with its own registry to write: manifests/ as it is,
# the image's name, and (this cluster) where the pods may run.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(realpath --relative-to="$overlay" "$REPO_ROOT/manifests")
images:
- name: cadre/controller
  newName: ${CONTROLLER_IMAGE%:*}
  newTag: ${CONTROLLER_IMAGE##*:}
patches:
- target: {kind: Deployment, name: cadre-controller}
  patch: |-
    - op: add
      path: /spec/template/spec/nodeSelector
      value: {cadre.dev/real-node: "true"}
    - op: add
      path: /spec/template/spec/tolerations
      value: [{key: cadre.dev/real-node, operator: Exists, effect: NoSchedule}]
EOF
	run kubectl apply -k "$overlay"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"deployment.apps/cadre-controller created"* ]]
	# Restricted Pod Security accepts the Deployment as it is: no warning, and the namespace
	# enforces it.
	[[ $output != *[Ww]arning* ]]
	[ "$(kubectl get namespace cadre-system -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}')" = restricted ]

	# Both replicas Ready: their caches listed everything through the API server, reached
	# at the `kubernetes` Service with the ServiceAccount's token.
	kubectl -n cadre-system rollout status deployment/cadre-controller --timeout=180s
	local pods
	pods=$(kubectl -n cadre-system get pods -l app.kubernetes.io/component=controller -o json)
	jq -e --arg image "$CONTROLLER_IMAGE" --arg node "$CADRE_E2E_REAL_NODE" '
		(.items | length) == 2 and all(.items[];
			.spec.nodeName == $node and .spec.containers[0].image == $image
			and .spec.containers[0].securityContext.readOnlyRootFilesystem == true
			and .status.containerStatuses[0].ready == true
			and .status.containerStatuses[0].restartCount == 0
			and (.spec.containers[0].env | any(.name == "CADRE_LEADER_ELECTION_NAMESPACE")))' <<<"$pods"
	local pod
	pod=$(jq -r '.items[0].metadata.name' <<<"$pods")
	# The image's user, and a root file system it cannot write.
	[ "$(kubectl -n cadre-system exec "$pod" -- id -u)" = 65532 ]
	run kubectl -n cadre-system exec "$pod" -- touch /usr/local/bin/written
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
	# The CLI came with it, kubectl-cadre too.
	kubectl -n cadre-system exec "$pod" -- kubectl-cadre --help >/dev/null

	# One replica leads, through the Lease manifests/rbac.yaml lets it write.
	wait_for -t 60 holder_is_a_pod

	# A TrainingJob on the kwok GPU nodes: admitted, its pod created, run and Succeeded, by
	# the Deployment alone.
	kube_wait 60 --for=condition=Established crd/trainingjobs.cadre.dev
	kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: installed
spec:
  numNodes: 1
  resources:
    accelerators: "H100:8"
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
  podTemplate:
    metadata:
      annotations:
        e2e.cadre.dev/exit-code: "0"
        e2e.cadre.dev/exit-after: "2s"
EOF
	wait_for -t 120 field_is trainingjob/installed '{.status.phase}' Succeeded
	[[ $(jp pod/installed-0 '{.spec.nodeName}') == gpu-node-* ]]

	# Never refused anything: the RBAC of manifests/ is enough for the installed controller.
	for pod in $(jq -r '.items[].metadata.name' <<<"$pods"); do
		[ -z "$(kubectl -n cadre-system logs "$pod" | grep -i forbidden)" ]
	done
}
