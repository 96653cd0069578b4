#!/usr/bin/env bats
# Volumes (docs/design.md 4) on a real API server with the PersistentVolume binder of
# kube-controller-manager: a k8s-pvc Volume makes its claim and reports it Bound; a job
# waits in Pending for its Volumes; an nfs Volume makes its PV and claim; the protection
# finalizer holds a Volume while a job uses it; reclaimPolicy Retain keeps the claim and
# Delete removes it, and the claim's owner reference follows a change of reclaimPolicy
# both ways; a claim adopted through claimName is mounted and never deleted, even with
# Delete; each phase change is an Event (docs/volumes.md).
#
# There is no provisioner: each k8s-pvc test pre-creates a PersistentVolume with
# storageClassName "" reserved for its claim (claimRef), named after the test's namespace
# since PVs are cluster-scoped.

load helpers
load controller

setup_file() {
	crds_install
	controller_start
}

teardown_file() {
	controller_stop
}

setup() {
	e2e_namespace
	controller_mark
}

teardown() {
	# A second namespace of the test (second_namespace): its Volumes released first.
	if [[ -n ${NS2:-} ]]; then
		NS=$NS2 volumes_cleanup || true
		kubectl delete namespace "$NS2" --wait=false --ignore-not-found >/dev/null 2>&1 || true
	fi
	test_cleanup
}

# second_namespace NAME: a namespace beside $NS for this test, as NS2; teardown removes it.
second_namespace() {
	NS2=$1
	kubectl create namespace "$NS2" >/dev/null
	kubectl label namespace "$NS2" e2e.cadre.dev/test=true >/dev/null
}

# nfs_volume NAME POLICY: an nfs Volume of that name and reclaimPolicy, as YAML.
nfs_volume() {
	cat <<EOF
apiVersion: cadre.dev/v1alpha1
kind: Volume
metadata: {name: $1}
spec:
  type: nfs
  accessMode: ReadOnlyMany
  nfs: {server: 127.0.0.1, path: /exports/$1, readOnly: true}
  reclaimPolicy: $2
EOF
}

# old_pv NAME CLAIM_NS CLAIM [LABEL_NS LABEL_VOLUME]: an nfs PV as cadre named them before
# (cadre-<namespace>-<name>), reserved for that claim, labelled as that Volume's if given.
old_pv() {
	local labels='e2e.cadre.dev/test: "true"'
	(($# >= 5)) && labels+=", cadre.dev/volume: $5, cadre.dev/volume-namespace: $4"
	kubectl create -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $1
  labels: {$labels}
spec:
  capacity: {storage: 1Mi}
  accessModes: [ReadOnlyMany]
  storageClassName: ""
  persistentVolumeReclaimPolicy: Retain
  nfs: {server: 127.0.0.1, path: /exports/$3, readOnly: true}
  claimRef: {namespace: $2, name: $3}
EOF
	track_pv "$1"
}

volume_phase_is() {
	field_is "volume.cadre.dev/$1" '{.status.phase}' "$2"
}

# scratch_bound: the Volume scratch of scratch.yaml (or FILE), on a PV of its own, Bound.
scratch_bound() {
	make_pv "$(pv_name scratch)" 100Gi ReadWriteMany "$NS" scratch
	kubectl -n "$NS" apply -f "${1:-$JOBS/scratch.yaml}"
	wait_for -t 60 volume_phase_is scratch Bound
}

# mounts_claim POD PATH CLAIM: the pod's main container mounts the claim at PATH.
mounts_claim() {
	json_has "$(kubectl -n "$NS" get pod "$1" -o json)" "((.spec.containers[] | select(.name == \"main\")
		| .volumeMounts[] | select(.mountPath == \"$2\") | .name) as \$v
		| any(.spec.volumes[]; .name == \$v and .persistentVolumeClaim.claimName == \"$3\"))"
}

# claim_owned_by CLAIM UID: the claim names the Volume of that uid as an owner.
claim_owned_by() {
	json_has "$(kubectl -n "$NS" get pvc "$1" -o json)" \
		"any(.metadata.ownerReferences[]?; .kind == \"Volume\" and .uid == \"$2\")"
}

# claim_unowned CLAIM: the claim exists and no Volume owns it.
claim_unowned() {
	json_has "$(kubectl -n "$NS" get pvc "$1" -o json)" \
		'[.metadata.ownerReferences[]? | select(.kind == "Volume")] == []'
}

# claim_kept CLAIM UID: the claim of that uid is still there, not being deleted, unowned.
claim_kept() {
	local pvc
	pvc=$(kubectl -n "$NS" get pvc "$1" -o json) || return 1
	json_has "$pvc" ".metadata.uid == \"$2\" and .metadata.deletionTimestamp == null" &&
		json_has "$pvc" '[.metadata.ownerReferences[]? | select(.kind == "Volume")] == []'
}

# volume_event VOLUME TYPE REASON TEXT: $NS has an Event of TYPE and REASON about the
# Volume whose message contains TEXT.
volume_event() {
	kubectl -n "$NS" get events -o json | jq -e --arg n "$1" --arg t "$2" --arg r "$3" \
		--arg m "$4" 'any(.items[]; .involvedObject.kind == "Volume" and
			.involvedObject.name == $n and .type == $t and .reason == $r and
			(.message | contains($m)))' >/dev/null
}

# protected_and_going VOLUME: deletion requested, the protection finalizer still holds it.
protected_and_going() {
	local vol
	vol=$(kubectl -n "$NS" get volume.cadre.dev "$1" -o json) || return 1
	json_has "$vol" '.metadata.deletionTimestamp != null' &&
		json_has "$vol" '.metadata.finalizers | index("cadre.dev/volume-protection") != null'
}

@test "a k8s-pvc Volume makes its claim, binds to a pre-created RWX PV and reports Bound with claimName, capacity and accessModes" {
	pv=$(pv_name scratch)
	scratch_bound
	vol=$(kubectl -n "$NS" get volume.cadre.dev scratch -o json)
	json_has "$vol" '.status.phase == "Bound"'
	json_has "$vol" '.status.claimName == "scratch"'
	json_has "$vol" '.status.capacity == "100Gi"'
	json_has "$vol" '.status.accessModes == ["ReadWriteMany"]'
	json_has "$vol" 'any(.status.conditions[]; .type == "Ready" and .status == "True")'
	json_has "$vol" '(.status.usedBy // []) == []'
	json_has "$vol" '.metadata.finalizers == ["cadre.dev/volume-protection"]'

	pvc=$(kubectl -n "$NS" get pvc scratch -o json)
	json_has "$pvc" '.spec.accessModes == ["ReadWriteMany"]'
	json_has "$pvc" '.spec.resources.requests.storage == "100Gi"'
	json_has "$pvc" ".spec.volumeName == \"$pv\""
	json_has "$pvc" '.status.phase == "Bound"'
	# Retain: the claim is not owned by the Volume, so it outlives it.
	json_has "$pvc" '[.metadata.ownerReferences[]? | select(.kind == "Volume")] == []'

	[ "$(kubectl -n "$NS" get cvol | head -n 1 | tr -s ' ')" = "NAME TYPE SIZE ACCESS PHASE USED-BY AGE" ]
	row=$(kubectl -n "$NS" get cvol scratch --no-headers | tr -s ' ')
	[[ $row == "scratch k8s-pvc 100Gi ReadWriteMany Bound "* ]] || { echo "row: $row"; false; }
}

@test "a job waits in Pending with VolumesReady False until its Volume exists and is Bound, then starts; each wait is one event" {
	kubectl -n "$NS" apply -f "$JOBS/trainer.yaml"
	wait_for -t 60 phase_is trainer Pending
	wait_for -t 30 condition_is trainer VolumesReady False VolumeNotFound
	message=$(jp tj/trainer '{.status.message}')
	[[ $message == *scratch* ]] || { echo "status.message: $message"; false; }
	no_job_pods

	# The Volume exists but no PV can satisfy its claim yet.
	kubectl -n "$NS" apply -f "$JOBS/scratch.yaml"
	wait_for -t 60 condition_is trainer VolumesReady False VolumeNotBound
	[ "$(jp volume.cadre.dev/scratch '{.status.phase}')" = Pending ]
	same_for 3 phase_is trainer Pending
	no_job_pods
	message=$(jp tj/trainer '{.status.message}')
	[[ $message == *scratch* ]] || { echo "status.message: $message"; false; }
	# Each reason was told once, as it began, however often the job was reconciled since.
	wait_for -t 30 event_recorded TrainingJob trainer VolumeNotBound
	events=$(events_about TrainingJob trainer)
	json_has "$events" '[.[] | select(.reason == "VolumeNotFound")] | length == 1
		and .[0].type == "Warning" and .[0].count == 1
		and (.[0].note | contains("Volume \"scratch\" (mounted at /mnt/scratch) does not exist"))
		and (.[0].note | contains("create it"))'
	json_has "$events" '[.[] | select(.reason == "VolumeNotBound")] | length == 1
		and .[0].type == "Normal" and .[0].count == 1
		and (.[0].note | contains("Volume \"scratch\" (mounted at /mnt/scratch) is not Bound yet"))'

	make_pv "$(pv_name scratch)" 100Gi ReadWriteMany "$NS" scratch
	wait_for -t 60 volume_phase_is scratch Bound
	wait_for -t 120 phase_is trainer Running
	condition_is trainer VolumesReady True
	for rank in 0 1; do
		mounts_claim "trainer-$rank" /mnt/scratch scratch
	done
	wait_for -t 30 field_is volume.cadre.dev/scratch '{.status.usedBy}' '["trainer"]'
}

@test "an nfs Volume creates its PV cadre.<namespace>.<name>.<hash> and a claim bound to it, which a job mounts" {
	kubectl -n "$NS" apply -f "$JOBS/nfs.yaml"
	pv=$(cadre_pv "$NS" datasets)
	wait_for -t 60 kubectl get pv "$pv"
	wait_for -t 60 volume_phase_is datasets Bound

	pvj=$(kubectl get pv "$pv" -o json)
	json_has "$pvj" '.spec.nfs == {server: "127.0.0.1", path: "/exports/datasets", readOnly: true}'
	json_has "$pvj" '.spec.accessModes == ["ReadOnlyMany"]'
	json_has "$pvj" '.spec.capacity.storage == "2Ti"'
	json_has "$pvj" '(.spec.storageClassName // "") == ""'
	json_has "$pvj" ".spec.claimRef.namespace == \"$NS\" and .spec.claimRef.name == \"datasets\""
	json_has "$pvj" ".metadata.labels[\"cadre.dev/volume\"] == \"datasets\" and .metadata.labels[\"cadre.dev/volume-namespace\"] == \"$NS\""
	pvc=$(kubectl -n "$NS" get pvc datasets -o json)
	json_has "$pvc" ".spec.volumeName == \"$pv\""
	json_has "$pvc" '(.spec.storageClassName // "") == ""'
	json_has "$pvc" '.status.phase == "Bound"'
	vol=$(kubectl -n "$NS" get volume.cadre.dev datasets -o json)
	json_has "$vol" '.status.claimName == "datasets" and .status.accessModes == ["ReadOnlyMany"]'

	kubectl -n "$NS" apply -f "$JOBS/reader.yaml"
	wait_for -t 120 phase_is reader Running
	mounts_claim reader-0 /data datasets
}

@test "a Volume in use cannot be deleted until its job is deleted" {
	scratch_bound
	kubectl -n "$NS" apply -f "$JOBS/trainer.yaml"
	wait_for -t 120 phase_is trainer Running
	wait_for -t 30 field_is volume.cadre.dev/scratch '{.status.usedBy}' '["trainer"]'

	kubectl -n "$NS" delete volume.cadre.dev scratch --wait=false
	wait_for -t 10 protected_and_going scratch
	same_for 5 protected_and_going scratch
	[ "$(jp volume.cadre.dev/scratch '{.status.usedBy}')" = '["trainer"]' ]
	[ "$(jp pvc/scratch '{.status.phase}')" = Bound ]
	[ "$(jp tj/trainer '{.status.phase}')" = Running ]

	kubectl -n "$NS" delete tj trainer --wait=false
	wait_for -t 60 not kubectl -n "$NS" get volume.cadre.dev scratch
}

@test "a Volume in use is released when its job finishes" {
	scratch_bound
	kubectl -n "$NS" apply -f "$JOBS/trainer.yaml"
	wait_for -t 120 phase_is trainer Running

	kubectl -n "$NS" delete volume.cadre.dev scratch --wait=false
	wait_for -t 10 protected_and_going scratch
	same_for 3 protected_and_going scratch

	kubectl -n "$NS" annotate pod trainer-0 trainer-1 e2e.cadre.dev/exit-code=0 >/dev/null
	wait_for -t 60 phase_is trainer Succeeded
	wait_for -t 60 not kubectl -n "$NS" get volume.cadre.dev scratch
	# The job itself is still there, finished.
	[ "$(jp tj/trainer '{.status.phase}')" = Succeeded ]
}

@test "reclaimPolicy Retain: deleting the Volume keeps its claim, and a new Volume of that name adopts it" {
	scratch_bound
	pvc_uid=$(jp pvc/scratch '{.metadata.uid}')
	kubectl -n "$NS" delete volume.cadre.dev scratch --wait=false
	wait_for -t 60 not kubectl -n "$NS" get volume.cadre.dev scratch
	same_for 3 field_is pvc/scratch '{.metadata.uid}' "$pvc_uid"
	[ -z "$(jp pvc/scratch '{.metadata.deletionTimestamp}')" ]
	[ "$(jp pvc/scratch '{.status.phase}')" = Bound ]

	kubectl -n "$NS" apply -f "$JOBS/scratch.yaml"
	wait_for -t 60 volume_phase_is scratch Bound
	[ "$(jp volume.cadre.dev/scratch '{.status.claimName}')" = scratch ]
	[ "$(jp pvc/scratch '{.metadata.uid}')" = "$pvc_uid" ]
}

@test "reclaimPolicy Delete: the claim is owned by the Volume and goes with it" {
	scratch_bound "$JOBS/scratch-delete.yaml"
	vol_uid=$(jp volume.cadre.dev/scratch '{.metadata.uid}')
	json_has "$(kubectl -n "$NS" get pvc scratch -o json)" \
		"any(.metadata.ownerReferences[]?; .kind == \"Volume\" and .name == \"scratch\" and .uid == \"$vol_uid\")"
	kubectl -n "$NS" delete volume.cadre.dev scratch --wait=false
	wait_for -t 60 not kubectl -n "$NS" get volume.cadre.dev scratch
	wait_for -t 60 not kubectl -n "$NS" get pvc scratch
}

@test "an nfs Volume: Retain keeps its PV and claim, Delete removes both" {
	kubectl -n "$NS" apply -f "$JOBS/nfs.yaml"
	pv=$(cadre_pv "$NS" datasets)
	wait_for -t 60 volume_phase_is datasets Bound
	pvc_uid=$(jp pvc/datasets '{.metadata.uid}')
	kubectl -n "$NS" delete volume.cadre.dev datasets --wait=false
	wait_for -t 60 not kubectl -n "$NS" get volume.cadre.dev datasets
	same_for 3 field_is pvc/datasets '{.metadata.uid}' "$pvc_uid"
	[ -z "$(kubectl get pv "$pv" -o 'jsonpath={.metadata.deletionTimestamp}')" ]

	# The same Volume with Delete adopts the claim and the PV, and takes them when it goes.
	kubectl -n "$NS" apply -f "$JOBS/nfs-delete.yaml"
	wait_for -t 60 volume_phase_is datasets Bound
	[ "$(jp pvc/datasets '{.metadata.uid}')" = "$pvc_uid" ]
	kubectl -n "$NS" delete volume.cadre.dev datasets --wait=false
	wait_for -t 60 not kubectl -n "$NS" get volume.cadre.dev datasets
	wait_for -t 60 not kubectl -n "$NS" get pvc datasets
	wait_for -t 60 not kubectl get pv "$pv"
}

# The old scheme named both PVs cadre-$NS-prod-data, and deleting either Volume deleted it.
@test "nfs Volumes prod-data in namespace NS and data in NS-prod get PVs of their own; deleting one leaves the other's" {
	second_namespace "$NS-prod"
	nfs_volume prod-data Delete | kubectl -n "$NS" apply -f - >/dev/null
	nfs_volume data Delete | kubectl -n "$NS2" apply -f - >/dev/null
	a=$(cadre_pv "$NS" prod-data)
	b=$(cadre_pv "$NS2" data)
	wait_for -t 60 volume_phase_is prod-data Bound
	NS=$NS2 wait_for -t 60 volume_phase_is data Bound
	[ "$(jp pvc/prod-data '{.spec.volumeName}')" = "$a" ]
	[ "$(NS=$NS2 jp pvc/data '{.spec.volumeName}')" = "$b" ]
	not kubectl get pv "cadre-$NS-prod-data"
	b_uid=$(kubectl get pv "$b" -o jsonpath='{.metadata.uid}')

	kubectl -n "$NS" delete volume.cadre.dev prod-data --wait=false
	wait_for -t 60 not kubectl get pv "$a"
	[ "$(kubectl get pv "$b" -o 'jsonpath={.metadata.uid}/{.metadata.deletionTimestamp}')" = "$b_uid/" ]
	NS=$NS2 volume_phase_is data Bound
}

@test "upgrade: an nfs Volume adopts its PV named the old way and labelled as its own; one not labelled so is never touched" {
	old_pv "cadre-$NS-datasets" "$NS" datasets "$NS" datasets
	old_pv "cadre-$NS-other" "$NS" someone-elses
	kept_uid=$(kubectl get pv "cadre-$NS-datasets" -o jsonpath='{.metadata.uid}')
	other_uid=$(kubectl get pv "cadre-$NS-other" -o jsonpath='{.metadata.uid}')
	nfs_volume datasets Delete | kubectl -n "$NS" apply -f - >/dev/null
	nfs_volume other Delete | kubectl -n "$NS" apply -f - >/dev/null

	wait_for -t 60 volume_phase_is datasets Bound
	[ "$(jp pvc/datasets '{.spec.volumeName}')" = "cadre-$NS-datasets" ]
	[ "$(kubectl get pv "cadre-$NS-datasets" -o jsonpath='{.metadata.uid}')" = "$kept_uid" ]
	not kubectl get pv "$(cadre_pv "$NS" datasets)"
	# The unlabelled one is someone else's: other gets a PV of the new name.
	wait_for -t 60 kubectl get pv "$(cadre_pv "$NS" other)"
	[ "$(jp pvc/other '{.spec.volumeName}')" = "$(cadre_pv "$NS" other)" ]

	kubectl -n "$NS" delete volume.cadre.dev datasets other --wait=false
	wait_for -t 60 not kubectl get pv "cadre-$NS-datasets"
	wait_for -t 60 not kubectl get pv "$(cadre_pv "$NS" other)"
	[ "$(kubectl get pv "cadre-$NS-other" -o 'jsonpath={.metadata.uid}/{.metadata.deletionTimestamp}')" = "$other_uid/" ]
}

# gc_witness VOLUME UID: a ConfigMap owned by the Volume, as the claim was. The garbage
# collector removes the dependents of an owner that is gone together, so once the witness is
# gone the collector has acted on the Volume's deletion: a claim still there then was kept,
# not merely not yet reached. Its timeout covers a collector slow to start on a busy
# machine (the claim in issue 11 went about a minute after its Volume).
GC_GRACE=90
gc_witness() {
	kubectl -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: gc-witness
  ownerReferences:
  - {apiVersion: cadre.dev/v1alpha1, kind: Volume, name: $1, uid: $2}
YAML
}

# kept_after_gc CLAIM UID: the garbage collector has removed the witness, and the claim is
# the same one, unowned and not deleted, then and 5 s later.
kept_after_gc() {
	wait_for -t "$GC_GRACE" not kubectl -n "$NS" get configmap gc-witness
	same_for 5 claim_kept "$1" "$2"
}

@test "reclaimPolicy Delete changed to Retain: the claim loses its owner reference at once and outlives the Volume" {
	scratch_bound "$JOBS/scratch-delete.yaml"
	vol_uid=$(jp volume.cadre.dev/scratch '{.metadata.uid}')
	pvc_uid=$(jp pvc/scratch '{.metadata.uid}')
	claim_owned_by scratch "$vol_uid"

	gc_witness scratch "$vol_uid"

	kubectl -n "$NS" patch volume.cadre.dev scratch --type=merge -p '{"spec":{"reclaimPolicy":"Retain"}}' >/dev/null
	wait_for -t 15 claim_unowned scratch
	kubectl -n "$NS" delete volume.cadre.dev scratch --wait=false
	wait_for -t 60 not kubectl -n "$NS" get volume.cadre.dev scratch
	kept_after_gc scratch "$pvc_uid"
	[ "$(jp pvc/scratch '{.status.phase}')" = Bound ]
}

@test "a Delete Volume changed to Retain and deleted while the controller is down: the claim still outlives it" {
	scratch_bound "$JOBS/scratch-delete.yaml"
	vol_uid=$(jp volume.cadre.dev/scratch '{.metadata.uid}')
	pvc_uid=$(jp pvc/scratch '{.metadata.uid}')
	claim_owned_by scratch "$vol_uid"
	gc_witness scratch "$vol_uid"

	# The controller's next look at the Volume is at its deletion, with the claim still owned.
	controller_stop
	kubectl -n "$NS" patch volume.cadre.dev scratch --type=merge -p '{"spec":{"reclaimPolicy":"Retain"}}' >/dev/null
	kubectl -n "$NS" delete volume.cadre.dev scratch --wait=false
	controller_restart
	wait_for -t 60 not kubectl -n "$NS" get volume.cadre.dev scratch
	claim_unowned scratch
	kept_after_gc scratch "$pvc_uid"
}

@test "reclaimPolicy Retain changed to Delete: the Volume becomes the claim's owner and takes it along" {
	scratch_bound
	vol_uid=$(jp volume.cadre.dev/scratch '{.metadata.uid}')
	claim_unowned scratch

	kubectl -n "$NS" patch volume.cadre.dev scratch --type=merge -p '{"spec":{"reclaimPolicy":"Delete"}}' >/dev/null
	wait_for -t 15 claim_owned_by scratch "$vol_uid"
	# Back to Retain and to Delete again: the reference follows each time, and is never doubled.
	kubectl -n "$NS" patch volume.cadre.dev scratch --type=merge -p '{"spec":{"reclaimPolicy":"Retain"}}' >/dev/null
	wait_for -t 15 claim_unowned scratch
	kubectl -n "$NS" patch volume.cadre.dev scratch --type=merge -p '{"spec":{"reclaimPolicy":"Delete"}}' >/dev/null
	wait_for -t 15 claim_owned_by scratch "$vol_uid"
	json_has "$(kubectl -n "$NS" get pvc scratch -o json)" \
		'[.metadata.ownerReferences[] | select(.kind == "Volume")] | length == 1'

	kubectl -n "$NS" delete volume.cadre.dev scratch --wait=false
	wait_for -t 60 not kubectl -n "$NS" get volume.cadre.dev scratch
	wait_for -t 60 not kubectl -n "$NS" get pvc scratch
}

@test "a Volume with claimName adopts an existing claim, a job mounts it, and deleting the Volume, even with Delete, leaves the claim" {
	make_pv "$(pv_name data)" 10Gi ReadWriteMany "$NS" team-data
	kubectl -n "$NS" create -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: team-data}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ""
  resources: {requests: {storage: 10Gi}}
EOF
	wait_for -t 60 field_is pvc/team-data '{.status.phase}' Bound
	pvc_uid=$(jp pvc/team-data '{.metadata.uid}')

	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: Volume
metadata: {name: shared}
spec: {type: k8s-pvc, claimName: team-data, reclaimPolicy: Delete}
EOF
	wait_for -t 60 volume_phase_is shared Bound
	vol=$(kubectl -n "$NS" get volume.cadre.dev shared -o json)
	json_has "$vol" '.status.claimName == "team-data" and .status.capacity == "10Gi"'
	json_has "$vol" '.status.accessModes == ["ReadWriteMany"]'
	# cadre makes no claim of its own for it and takes no ownership of this one.
	not kubectl -n "$NS" get pvc shared
	same_for 3 claim_kept team-data "$pvc_uid"

	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: adopter}
spec:
  numNodes: 1
  resources: {accelerators: "H100:1"}
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
  volumes: {/data: shared}
EOF
	wait_for -t 120 phase_is adopter Running
	mounts_claim adopter-0 /data team-data
	wait_for -t 30 field_is volume.cadre.dev/shared '{.status.usedBy}' '["adopter"]'

	kubectl -n "$NS" delete tj adopter --wait=false
	kubectl -n "$NS" delete volume.cadre.dev shared --wait=false
	wait_for -t 60 not kubectl -n "$NS" get volume.cadre.dev shared
	same_for 10 claim_kept team-data "$pvc_uid"
	[ "$(jp pvc/team-data '{.status.phase}')" = Bound ]
}

@test "each phase change of a Volume is an Event: Pending, then Bound, and a Warning when the claim is Lost" {
	pv=$(pv_name scratch)
	kubectl -n "$NS" apply -f "$JOBS/scratch.yaml"
	wait_for -t 60 volume_phase_is scratch Pending
	wait_for -t 30 volume_event scratch Normal Pending "phase Pending: PersistentVolumeClaim scratch "
	make_pv "$pv" 100Gi ReadWriteMany "$NS" scratch
	wait_for -t 60 volume_phase_is scratch Bound
	wait_for -t 30 volume_event scratch Normal Bound "phase Pending -> Bound: PersistentVolumeClaim scratch is Bound"

	# The PV goes from under the bound claim (its protection finalizer taken off by hand),
	# so the PersistentVolume controller marks the claim Lost.
	kubectl delete pv "$pv" --wait=false >/dev/null
	kubectl patch pv "$pv" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
	wait_for -t 60 volume_phase_is scratch Failed
	wait_for -t 30 volume_event scratch Warning Failed \
		"phase Bound -> Failed: PersistentVolumeClaim scratch lost its PersistentVolume"
}
