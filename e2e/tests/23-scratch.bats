#!/usr/bin/env bats
# Node-local scratch (docs/volumes.md, "Scratch") on a real API server with
# kube-controller-manager's ephemeral volume, garbage collector and PersistentVolume
# controllers: spec.scratch with a StorageClass is a generic ephemeral volume whose claim
# the ephemeral volume controller makes per pod and owns by the pod, so it goes with the
# pod and a restart's new pod gets a new one; without a class it is an emptyDir of that
# sizeLimit, asked of the node as ephemeral-storage.
#
# There is no provisioner: the StorageClass local-nvme has none, and each test pre-creates
# a PersistentVolume of that class reserved (claimRef) for the claim a pod will get,
# <pod>-scratch-0.

load helpers
load controller

setup_file() {
	crds_install
	controller_start
	kubectl apply -f - >/dev/null <<EOF2
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-nvme
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
EOF2
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

# exit_pod POD CODE: the pod's main container exits with CODE.
exit_pod() {
	kubectl -n "$NS" annotate pod "$1" "e2e.cadre.dev/exit-code=$2" >/dev/null
}

# nvme_pv NAME CLAIM: a 100Gi PV of class local-nvme reserved for the claim CLAIM in $NS.
nvme_pv() {
	kubectl create -f - >/dev/null <<EOF2
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $1
  labels: {e2e.cadre.dev/test: "true"}
spec:
  capacity: {storage: 100Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local-nvme
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: /tmp/cadre-e2e-pv/$1}
  claimRef: {namespace: $NS, name: $2}
EOF2
	track_pv "$1"
}

# pod_has_scratch POD: the pod mounts a 100Gi ReadWriteOnce ephemeral claim of local-nvme at
# /mnt/cache and a 20Gi emptyDir at /scratch/tmp, asks the node for 20Gi of its disk, and
# has TMPDIR at the first path.
pod_has_scratch() {
	json_has "$(kubectl -n "$NS" get pod "$1" -o json)" '
		(.spec.containers[] | select(.name == "main")) as $c |
		($c.volumeMounts | map({key: .name, value: .mountPath}) | from_entries) as $at |
		any(.spec.volumes[]; $at[.name] == "/mnt/cache" and
			.ephemeral.volumeClaimTemplate.spec.storageClassName == "local-nvme" and
			.ephemeral.volumeClaimTemplate.spec.accessModes == ["ReadWriteOnce"] and
			.ephemeral.volumeClaimTemplate.spec.resources.requests.storage == "100Gi") and
		any(.spec.volumes[]; $at[.name] == "/scratch/tmp" and .emptyDir.sizeLimit == "20Gi") and
		$c.resources.requests["ephemeral-storage"] == "20Gi" and
		($c.resources.limits["ephemeral-storage"] == null)'
	json_has "$(pod_env "$1")" '.TMPDIR == "/mnt/cache"'
}

# claim_of_pod POD: the claim <POD>-scratch-0 is Bound and owned (as controller) by the pod
# as it is now; prints the claim's uid.
claim_of_pod() {
	local uid pvc
	uid=$(kubectl -n "$NS" get pod "$1" -o jsonpath='{.metadata.uid}') || return 1
	pvc=$(kubectl -n "$NS" get pvc "$1-scratch-0" -o json 2>/dev/null) || return 1
	jq -e --arg u "$uid" '.status.phase == "Bound" and .metadata.deletionTimestamp == null and
		any(.metadata.ownerReferences[]?; .kind == "Pod" and .uid == $u and .controller)' \
		<<<"$pvc" >/dev/null || return 1
	jq -r .metadata.uid <<<"$pvc"
}

claims_bound() {
	claim_of_pod node-scratch-0 >/dev/null && claim_of_pod node-scratch-1 >/dev/null
}

# no_claim_of UID...: none of the claims of these uids exists any more.
no_claim_of() {
	local uids
	uids=$(kubectl -n "$NS" get pvc -o jsonpath='{.items[*].metadata.uid}')
	for u in "$@"; do [[ " $uids " != *" $u "* ]] || return 1; done
}

no_claims() {
	[ -z "$(kubectl -n "$NS" get pvc -o name)" ]
}

gang_of_attempt() {
	all_pods_running "$1" "$2" || return 1
	kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json | jq -e --arg a "$3" \
		'all(.items[]; .metadata.labels["cadre.dev/restart-attempt"] == $a)' >/dev/null
}

@test "two scratch paths: an ephemeral claim per pod and an emptyDir, at their paths and sizes; the claims go with the pods and a restart gets new ones" {
	nvme_pv "$(pv_name a0-r0)" node-scratch-0-scratch-0
	nvme_pv "$(pv_name a0-r1)" node-scratch-1-scratch-0
	kubectl -n "$NS" apply -f "$JOBS/node-scratch.yaml" >/dev/null
	wait_for -t 120 all_pods_running node-scratch 2
	pod_has_scratch node-scratch-0
	pod_has_scratch node-scratch-1
	wait_for -t 60 claims_bound
	local old0 old1 pods_before
	old0=$(claim_of_pod node-scratch-0)
	old1=$(claim_of_pod node-scratch-1)
	pods_before=$(kubectl -n "$NS" get pods -o jsonpath='{.items[*].metadata.uid}')

	# A restart: the old pods go, their claims with them; the new pods get claims of their own.
	exit_pod node-scratch-1 1
	wait_for -t 120 no_claim_of "$old0" "$old1"
	nvme_pv "$(pv_name a1-r0)" node-scratch-0-scratch-0
	nvme_pv "$(pv_name a1-r1)" node-scratch-1-scratch-0
	wait_for -t 180 gang_of_attempt node-scratch 2 1
	wait_for -t 60 claims_bound
	local new0 new1 p
	new0=$(claim_of_pod node-scratch-0)
	new1=$(claim_of_pod node-scratch-1)
	[ "$new0" != "$old0" ] && [ "$new1" != "$old1" ]
	for p in $(kubectl -n "$NS" get pods -o jsonpath='{.items[*].metadata.uid}'); do
		[[ " $pods_before " != *" $p "* ]]
	done
	pod_has_scratch node-scratch-0

	# The job gone, its pods and so their claims go too.
	kubectl -n "$NS" delete tj node-scratch --wait=false >/dev/null
	wait_for -t 120 no_claims
}
