#!/usr/bin/env bats
# The CustomResourceDefinitions on a real API server: they install, kubectl shows cadre's
# kinds as docs/design.md says (columns, explain, the cadre category), and the server itself
# refuses bad input with a message that names the field, keeps immutable fields immutable
# and drops pod settings outside podTemplate's safe subset. No controller runs in this
# file: where a status is needed, the test writes it through the status subresource.
#
# The CRDs are left installed: later files use them, and e2e/run tears the cluster down.

load helpers

CRD_DIR=$REPO_ROOT/crd
SAMPLES=$REPO_ROOT/manifests/samples
INVALID=$REPO_ROOT/e2e/testdata/invalid
INVALID_POLICY=$REPO_ROOT/e2e/testdata/invalid-policy
TOPOLOGY_DEFAULT=$REPO_ROOT/manifests/clustertopology-default.yaml
# The CRD files by name: crd/ and manifests/samples/ also hold a kustomization.yaml, which
# `kubectl -f DIR` would try to create; `-k DIR` is the way to take a whole directory.
CRD_FILES=(-f "$CRD_DIR/trainingjobs.cadre.dev.yaml" -f "$CRD_DIR/volumes.cadre.dev.yaml"
	-f "$CRD_DIR/partitions.cadre.dev.yaml" -f "$CRD_DIR/clustertopologies.cadre.dev.yaml"
	-f "$CRD_DIR/topology-policy.yaml")

setup_file() {
	kubectl apply "${CRD_FILES[@]}"
	kube_wait 60 --for=condition=Established \
		crd/trainingjobs.cadre.dev crd/volumes.cadre.dev crd/partitions.cadre.dev \
		crd/clustertopologies.cadre.dev
	kubectl apply -f "$TOPOLOGY_DEFAULT"
	# The API server configures the admission policy once the ClusterTopology kind is in
	# its discovery, some seconds after the CRD is Established.
	wait_for -t 90 policy_refuses_unknown_levels
}

policy_refuses_unknown_levels() {
	! kubectl -n default create --dry-run=server -f "$INVALID_POLICY/topology-unknown-level.yaml" \
		>/dev/null 2>&1
}

setup() {
	e2e_namespace
}

teardown() {
	e2e_namespace_delete
}

# squeeze: the table on stdin with runs of spaces made one, for comparing headers.
squeeze() {
	tr -s ' '
}

# A small valid job; $1 is its name, the rest of the spec may follow on stdin.
valid_job() {
	kubectl -n "$NS" create -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  numNodes: 2
  image: busybox:1.36
  setup: echo setting up
  run: hostname
  envs: {BATCH_SIZE: "32"}
EOF
}

@test "the CRDs install and become Established, names accepted, without warnings" {
	run kubectl apply "${CRD_FILES[@]}"
	[ "$status" -eq 0 ]
	[[ $output != *[Ww]arning* ]] || { echo "$output"; false; }
	for crd in trainingjobs.cadre.dev volumes.cadre.dev partitions.cadre.dev \
		clustertopologies.cadre.dev; do
		kube_wait 60 --for=condition=Established "crd/$crd"
		[ "$(kubectl get crd "$crd" -o 'jsonpath={.status.conditions[?(@.type=="NamesAccepted")].status}')" = True ]
	done
	run kubectl api-resources --api-group=cadre.dev --no-headers
	[ "$status" -eq 0 ]
	[[ $(grep '^trainingjobs ' <<<"$output" | squeeze) == "trainingjobs tj cadre.dev/v1alpha1 true TrainingJob" ]] || { echo "$output"; false; }
	[[ $(grep '^volumes ' <<<"$output" | squeeze) == "volumes cvol cadre.dev/v1alpha1 true Volume" ]] || { echo "$output"; false; }
	[[ $(grep '^partitions ' <<<"$output" | squeeze) == "partitions part cadre.dev/v1alpha1 false Partition" ]] || { echo "$output"; false; }
}

@test "kubectl validates the CRDs and the samples client-side" {
	kubectl apply --dry-run=client "${CRD_FILES[@]}"
	kubectl apply --dry-run=client -k "$CRD_DIR/"
	for f in "$SAMPLES"/*.yaml; do
		[[ $(basename "$f") == kustomization.yaml ]] && continue
		kubectl -n "$NS" create --dry-run=client -f "$f"
	done
	kubectl -n "$NS" apply --dry-run=client -k "$SAMPLES/"
}

@test "the samples apply, and the server fills in the design's defaults" {
	run kubectl -n "$NS" apply -k "$SAMPLES/"
	[ "$status" -eq 0 ]
	[[ $output != *[Ww]arning* ]] || { echo "$output"; false; }
	for name in shared-checkpoints datasets; do
		[ "$(jp "volume.cadre.dev/$name" '{.metadata.name}')" = "$name" ]
	done
	for name in llama-pretrain smoke-test; do
		[ "$(jp "trainingjob/$name" '{.metadata.name}')" = "$name" ]
	done

	[ "$(jp tj/llama-pretrain '{.spec.numNodes}')" = 2 ]
	[ "$(jp tj/llama-pretrain '{.spec.tasksPerNode}')" = 1 ]
	[ "$(jp tj/llama-pretrain '{.spec.resources.accelerators}')" = H100:8 ]
	[ "$(jp tj/llama-pretrain '{.spec.resources.memory}')" = 256Gi ]
	[ "$(jp tj/llama-pretrain '{.spec.volumes./mnt/checkpoints}')" = shared-checkpoints ]
	[ "$(jp tj/llama-pretrain '{.spec.resources.acceleratorResource}')" = nvidia.com/gpu ]
	[ "$(jp tj/llama-pretrain '{.spec.priority}')" = 0 ]
	[ "$(jp tj/llama-pretrain '{.spec.maxRestarts}')" = 0 ]
	[ "$(jp tj/llama-pretrain '{.spec.successPolicy}')" = All ]
	[ "$(jp tj/llama-pretrain '{.spec.suspend}')" = false ]
	[ "$(jp tj/llama-pretrain '{.spec.gang.timeoutSeconds}')" = 600 ]
	[ "$(jp tj/llama-pretrain '{.spec.masterPort}')" = 29500 ]
	[ "$(jp tj/smoke-test '{.spec.numNodes}')" = 1 ]
	[ "$(jp cvol/shared-checkpoints '{.spec.accessMode}')" = ReadWriteMany ]
	[ "$(jp cvol/shared-checkpoints '{.spec.reclaimPolicy}')" = Retain ]
	[ "$(jp cvol/datasets '{.spec.nfs.readOnly}')" = true ]

	# Applying the same files again changes nothing: defaults are not drift.
	run kubectl -n "$NS" diff -k "$SAMPLES/"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
}

# merged_job MANAGER SPEC_YAML: server-side apply of the TrainingJob "merged" as MANAGER.
merged_job() {
	kubectl -n "$NS" apply --server-side --field-manager="$1" -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: merged}
spec:
$2
EOF
}

@test "server-side apply: a second manager owns a mutable field without conflicting with GitOps" {
	local gitops='  image: busybox:1.36
  run: hostname
  secretEnvs:
  - {name: HF_TOKEN, secretKeyRef: {name: hf, key: token}}'
	merged_job gitops "$gitops"
	# The same manifest again changes nothing.
	merged_job gitops "$gitops"
	# Another manager may own suspend alone without touching the rest.
	merged_job operator-ui '  run: hostname
  suspend: true'
	[ "$(jp tj/merged '{.spec.suspend}/{.spec.secretEnvs[0].name}/{.spec.image}')" = true/HF_TOKEN/busybox:1.36 ]
	managers=$(kubectl -n "$NS" get tj merged --show-managed-fields -o json |
		jq -r '[.metadata.managedFields[].manager] | sort | join(",")')
	[ "$managers" = gitops,operator-ui ] || { echo "managers: $managers"; false; }
}

@test "kubectl get tj shows PHASE NODES READY ACCELERATORS RESTARTS AGE; -o wide adds JOBID PARTITION QUEUE TOPOLOGY MESSAGE" {
	kubectl -n "$NS" apply -f "$SAMPLES/llama-pretrain.yaml"
	kubectl -n "$NS" patch tj llama-pretrain --subresource=status --type=merge -p \
		'{"status":{"phase":"Running","readyNodes":2,"restarts":1,"jobId":"482913307","message":"all 2 nodes Running"}}'

	[ "$(kubectl -n "$NS" get tj | head -n 1 | squeeze)" = "NAME PHASE NODES READY ACCELERATORS RESTARTS AGE" ]
	row=$(kubectl -n "$NS" get tj llama-pretrain --no-headers | squeeze)
	[[ $row == "llama-pretrain Running 2 2 H100:8 1 "* ]] || { echo "row: $row"; false; }

	[ "$(kubectl -n "$NS" get tj -o wide | head -n 1 | squeeze)" = "NAME PHASE NODES READY ACCELERATORS RESTARTS AGE JOBID PARTITION QUEUE TOPOLOGY MESSAGE" ]
	row=$(kubectl -n "$NS" get tj llama-pretrain -o wide --no-headers | squeeze)
	[[ $row == "llama-pretrain Running 2 2 H100:8 1 "* ]] || { echo "row: $row"; false; }
	[[ $row == *" 482913307 "* ]] || { echo "row: $row"; false; }
	[[ $row == *" all 2 nodes Running" ]] || { echo "row: $row"; false; }

	# The same through the long and singular names.
	kubectl -n "$NS" get trainingjobs llama-pretrain >/dev/null
	kubectl -n "$NS" get trainingjob llama-pretrain >/dev/null
}

@test "kubectl get cvol shows TYPE SIZE ACCESS PHASE USED-BY AGE" {
	kubectl -n "$NS" apply -f "$SAMPLES/shared-checkpoints.yaml"
	kubectl -n "$NS" patch cvol shared-checkpoints --subresource=status --type=merge -p \
		'{"status":{"phase":"Bound","claimName":"shared-checkpoints","capacity":"500Gi","accessModes":["ReadWriteMany"],"usedBy":["llama-pretrain"]}}'

	[ "$(kubectl -n "$NS" get cvol | head -n 1 | squeeze)" = "NAME TYPE SIZE ACCESS PHASE USED-BY AGE" ]
	row=$(kubectl -n "$NS" get cvol shared-checkpoints --no-headers | squeeze)
	[[ $row == "shared-checkpoints k8s-pvc 500Gi ReadWriteMany Bound "*llama-pretrain* ]] || { echo "row: $row"; false; }
	# Every status field cadre writes is kept, none pruned.
	[ "$(jp cvol/shared-checkpoints '{.status.claimName}/{.status.capacity}/{.status.accessModes[0]}')" = shared-checkpoints/500Gi/ReadWriteMany ]
	kubectl -n "$NS" get volumes.cadre.dev shared-checkpoints >/dev/null
}

@test "the status subresource keeps every status field of the design" {
	valid_job status-check
	kubectl -n "$NS" patch tj status-check --subresource=status --type=merge -p "$(cat <<'EOF'
{"status": {
  "phase": "Restarting", "observedGeneration": 1, "jobId": "482913307", "taskId": "status-check-1a2b",
  "readyNodes": 1, "restarts": 1, "infraRestarts": 2, "requeues": 3,
  "admittedTime": "2026-01-01T00:00:00Z", "startTime": "2026-01-01T00:00:05Z",
  "nodes": [{"rank": 0, "pod": "status-check-0", "node": "gpu-node-0", "ip": "10.244.0.5", "phase": "Running"},
            {"rank": 1, "pod": "status-check-1", "node": "gpu-node-1", "ip": "10.244.1.5", "phase": "Failed"}],
  "lastFailure": {"rank": 1, "pod": "status-check-1", "node": "gpu-node-1", "exitCode": 137,
                  "reason": "OOMKilled", "message": "out of memory", "time": "2026-01-01T00:01:00Z"},
  "conditions": [{"type": "Restarting", "status": "True", "reason": "PodFailed", "message": "rank 1 exited 137",
                  "observedGeneration": 1, "lastTransitionTime": "2026-01-01T00:01:00Z"}],
  "message": "restarting after rank 1 failed"}}
EOF
)"
	status_json=$(kubectl -n "$NS" get tj status-check -o json | jq -c .status)
	for path in .phase .observedGeneration .jobId .taskId .readyNodes .restarts .infraRestarts .requeues \
		.admittedTime .startTime '.nodes[1].ip' '.nodes[1].phase' .lastFailure.exitCode \
		.lastFailure.reason .lastFailure.time '.conditions[0].reason' '.conditions[0].observedGeneration' .message; do
		[ "$(jq -r "$path" <<<"$status_json")" != null ] || { echo "status$path was dropped: $status_json"; false; }
	done
	# The status subresource never changes spec, and spec writes never change status.
	[ "$(jp tj/status-check '{.spec.numNodes}')" = 2 ]

	# A condition without the fields metav1.Condition requires is refused.
	run kubectl -n "$NS" patch tj status-check --subresource=status --type=merge -p \
		'{"status":{"conditions":[{"type":"Admitted","status":"Maybe"}]}}'
	[ "$status" -ne 0 ]
	[[ $output == *status.conditions* ]] || { echo "$output"; false; }
}

@test "kubectl explain describes every field of trainingjob.spec.resources" {
	run kubectl explain trainingjob.spec.resources
	[ "$status" -eq 0 ]
	for f in accelerators cpus memory acceleratorResource; do
		grep -E "^ +$f\b" <<<"$output" >/dev/null || { echo "no $f in: $output"; false; }
	done
	# Each field's own text, not only its name.
	[[ $output == *"TYPE[:COUNT]"* ]] || { echo "$output"; false; }
	[[ $output == *"Kubernetes quantity"* ]] || { echo "$output"; false; }
	[[ $output == *"Default nvidia.com/gpu"* ]] || { echo "$output"; false; }

	for path in trainingjob.spec.numNodes tj.spec.envs tj.spec.podTemplate.spec.tolerations \
		tj.status.lastFailure.exitCode volume.spec.nfs.path cvol.spec.reclaimPolicy; do
		run kubectl explain "$path"
		[ "$status" -eq 0 ] || { echo "$path: $output"; false; }
		[[ $output == *DESCRIPTION:* ]] || { echo "$path: $output"; false; }
		# A description line is indented text after DESCRIPTION:, never empty.
		desc=$(sed -n '/^DESCRIPTION:/,/^FIELDS:/p' <<<"$output" | sed '1d;/^FIELDS:/d' | tr -d '[:space:]')
		[ -n "$desc" ] || { echo "$path has an empty description: $output"; false; }
	done
	run kubectl explain tj.spec.envs
	[[ $output == *CADRE_RESTART_ATTEMPT* ]] || { echo "$output"; false; }
}

@test "kubectl get cadre lists TrainingJobs and Volumes together" {
	kubectl -n "$NS" apply -f "$SAMPLES/shared-checkpoints.yaml" -f "$SAMPLES/llama-pretrain.yaml"
	run kubectl -n "$NS" get cadre -o name
	[ "$status" -eq 0 ]
	[[ $output == *trainingjob.cadre.dev/llama-pretrain* ]] || { echo "$output"; false; }
	[[ $output == *volume.cadre.dev/shared-checkpoints* ]] || { echo "$output"; false; }
}

# refused_as FILE: creating FILE fails with its '# field:' and '# expect:' lines in the answer.
refused_as() {
	local field expect
	field=$(sed -n 's/^# field: //p' "$1")
	expect=$(sed -n 's/^# expect: //p' "$1")
	[[ -n $field && -n $expect ]] || { echo "$1: needs '# field:' and '# expect:' lines"; return 1; }
	run kubectl -n "$NS" create -f "$1"
	if [[ $status -eq 0 ]]; then
		echo "$(basename "$1"): accepted, should break $field"
		return 1
	elif [[ $output != *"$field"* || $output != *"$expect"* ]]; then
		echo "$(basename "$1"): want '$field' and '$expect' in: $output"
		return 1
	fi
}

@test "spec.topology naming a level ClusterTopology default does not list, or a segment wider than required, is refused by the admission policy naming the field" {
	local failed=0 file
	for file in "$INVALID_POLICY"/*.yaml; do
		refused_as "$file" || failed=1
	done
	[ "$failed" -eq 0 ]
	# The same job with levels the cluster lists is accepted.
	kubectl -n "$NS" create -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: known-level
spec:
  numNodes: 4
  image: busybox
  run: hostname
  topology:
    required: topology.kubernetes.io/zone
    segment: {size: 2, required: nvidia.com/gpu.clique}
EOF
	# A ClusterTopology of another name, or a defaultLevel not among its levels, is refused.
	run kubectl create -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: ClusterTopology
metadata:
  name: racks
spec:
  levels: [{nodeLabel: example.com/rack}]
EOF
	[ "$status" -ne 0 ]
	[[ $output == *"cadre reads one ClusterTopology, named default"* ]] || { echo "$output"; false; }
	run kubectl apply --dry-run=server -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: ClusterTopology
metadata:
  name: default
spec:
  levels: [{nodeLabel: example.com/rack}]
  defaultLevel: example.com/block
EOF
	[ "$status" -ne 0 ]
	[[ $output == *"spec.defaultLevel"*"must be the nodeLabel of one of levels"* ]] || { echo "$output"; false; }
}

@test "each invalid object in e2e/testdata/invalid is refused with a message that names its field" {
	local failed=0 n=0 file field expect
	for file in "$INVALID"/*.yaml; do
		n=$((n + 1))
		field=$(sed -n 's/^# field: //p' "$file")
		expect=$(sed -n 's/^# expect: //p' "$file")
		if [[ -z $field || -z $expect ]]; then
			echo "$file: needs '# field:' and '# expect:' lines"
			failed=1
			continue
		fi
		run kubectl -n "$NS" create -f "$file"
		if [[ $status -eq 0 ]]; then
			echo "$(basename "$file"): accepted, should break $field"
			failed=1
		elif [[ $output != *"$field"* || $output != *"$expect"* ]]; then
			echo "$(basename "$file"): want '$field' and '$expect' in: $output"
			failed=1
		fi
	done
	[ "$n" -ge 10 ]
	[ "$failed" -eq 0 ]
	# Nothing was created along the way.
	[ -z "$(kubectl -n "$NS" get cadre -o name)" ]
}

@test "immutable TrainingJob fields cannot change; suspend, maxRestarts, priority, deadlines and gang can" {
	valid_job frozen

	expect_immutable() {
		local field=$1 patch=$2
		run kubectl -n "$NS" patch tj frozen --type=merge -p "$patch"
		[ "$status" -ne 0 ] || { echo "patch $patch was accepted"; return 1; }
		[[ $output == *"$field"*"field is immutable"* ]] || { echo "want $field: field is immutable, got: $output"; return 1; }
	}
	expect_immutable spec.numNodes '{"spec":{"numNodes":3}}'
	expect_immutable spec.tasksPerNode '{"spec":{"tasksPerNode":4}}'
	expect_immutable spec.image '{"spec":{"image":"busybox:1.37"}}'
	expect_immutable spec.run '{"spec":{"run":"uptime"}}'
	expect_immutable spec.resources '{"spec":{"resources":{"accelerators":"H100:8"}}}'
	expect_immutable spec.envs '{"spec":{"envs":{"BATCH_SIZE":"64"}}}'
	expect_immutable spec.masterPort '{"spec":{"masterPort":29501}}'
	# Adding or removing an optional field is a change too.
	expect_immutable spec.workdir '{"spec":{"workdir":"/workspace"}}'
	expect_immutable spec.setup '{"spec":{"setup":null}}'
	expect_immutable spec.queue '{"spec":{"queue":"team-a"}}'
	expect_immutable spec.podTemplate '{"spec":{"podTemplate":{"spec":{"nodeSelector":{"zone":"a"}}}}}'
	expect_immutable spec.volumes '{"spec":{"volumes":{"/data":"datasets"}}}'
	[ "$(jp tj/frozen '{.spec.numNodes}/{.spec.image}')" = 2/busybox:1.36 ]

	kubectl -n "$NS" patch tj frozen --type=merge -p '{"spec":{"suspend":true}}'
	kubectl -n "$NS" patch tj frozen --type=merge -p '{"spec":{"maxRestarts":3}}'
	kubectl -n "$NS" patch tj frozen --type=merge -p '{"spec":{"priority":10}}'
	kubectl -n "$NS" patch tj frozen --type=merge -p '{"spec":{"activeDeadlineSeconds":3600,"ttlSecondsAfterFinished":60}}'
	kubectl -n "$NS" patch tj frozen --type=merge -p '{"spec":{"gang":{"timeoutSeconds":120}}}'
	[ "$(jp tj/frozen '{.spec.suspend}/{.spec.maxRestarts}/{.spec.priority}/{.spec.activeDeadlineSeconds}/{.spec.ttlSecondsAfterFinished}/{.spec.gang.timeoutSeconds}')" = true/3/10/3600/60/120 ]
	kubectl -n "$NS" patch tj frozen --type=merge -p '{"spec":{"suspend":false,"activeDeadlineSeconds":null}}'
	[ "$(jp tj/frozen '{.spec.suspend}')" = false ]

	# A whole-object update that only re-sends the same spec is no change.
	kubectl -n "$NS" get tj frozen -o json | kubectl -n "$NS" replace -f -
}

@test "cadre convert's YAML for the seed's train.sh, task.yaml and volume.yaml is accepted as it is" {
	local cadre=${CADRE_CLI:-$REPO_ROOT/build/cadre} data=$REPO_ROOT/unit/testdata/convert
	[ -x "$cadre" ] || { echo "$cadre is missing: run make build"; false; }
	for file in volume.yaml train.sh; do
		"$cadre" convert "$data/$file" --image busybox:1.36 >"$BATS_TEST_TMPDIR/$file.out"
		run kubectl -n "$NS" create -f "$BATS_TEST_TMPDIR/$file.out"
		[ "$status" -eq 0 ] || { echo "$file: $output"; false; }
		[[ $output != *[Ww]arning* ]] || { echo "$file: $output"; false; }
	done
	[ "$(jp tj/llama-pretrain '{.spec.numNodes}/{.spec.resources.accelerators}')" = 2/NVIDIA:8 ]
	[ "$(jp cvol/shared-checkpoints '{.spec.size}/{.spec.accessMode}')" = 500Gi/ReadWriteMany ]
	# The task has the job name of the script, so it goes in under another one.
	"$cadre" convert "$data/task.yaml" | sed 's/name: llama-pretrain/name: llama-task/' |
		kubectl -n "$NS" create -f -
	[ "$(jp tj/llama-task '{.spec.resources.accelerators}')" = H100:8 ]
	# A job with more than one task per node keeps the count.
	printf '#!/bin/bash\n#SBATCH -J multi -N 2 --ntasks-per-node=8\nsrun hostname\n' >"$BATS_TEST_TMPDIR/multi.sh"
	"$cadre" convert "$BATS_TEST_TMPDIR/multi.sh" --image busybox:1.36 | kubectl -n "$NS" create -f -
	[ "$(jp tj/multi '{.spec.tasksPerNode}')" = 8 ]
}

@test "immutable Volume fields cannot change; reclaimPolicy can" {
	kubectl -n "$NS" apply -f "$SAMPLES/shared-checkpoints.yaml"
	run kubectl -n "$NS" patch cvol shared-checkpoints --type=merge -p '{"spec":{"size":"1Ti"}}'
	[ "$status" -ne 0 ]
	[[ $output == *spec.size*"field is immutable"* ]] || { echo "$output"; false; }
	run kubectl -n "$NS" patch cvol shared-checkpoints --type=merge -p '{"spec":{"accessMode":"ReadWriteOnce"}}'
	[ "$status" -ne 0 ]
	[[ $output == *spec.accessMode*"field is immutable"* ]] || { echo "$output"; false; }
	run kubectl -n "$NS" patch cvol shared-checkpoints --type=merge -p '{"spec":{"storageClassName":"fast"}}'
	[ "$status" -ne 0 ]
	[[ $output == *spec.storageClassName*"field is immutable"* ]] || { echo "$output"; false; }
	kubectl -n "$NS" patch cvol shared-checkpoints --type=merge -p '{"spec":{"reclaimPolicy":"Delete"}}'
	[ "$(jp cvol/shared-checkpoints '{.spec.reclaimPolicy}')" = Delete ]
}

@test "pod settings outside podTemplate's subset never pass: refused by strict kubectl, pruned otherwise" {
	local job
	job=$(cat <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: sneaky
spec:
  image: busybox:1.36
  run: hostname
  hostNetwork: true
  podTemplate:
    metadata:
      labels: {team: vision}
    spec:
      hostNetwork: true
      hostPID: true
      nodeSelector: {pool: a100}
      securityContext: {privileged: true}
      volumes: [{name: root, hostPath: {path: /}}]
      containers: [{name: evil, image: busybox, securityContext: {privileged: true}}]
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule, extra: dropped}
EOF
)
	# kubectl asks the server for strict field validation by default: unknown fields are errors.
	run kubectl -n "$NS" create -f - <<<"$job"
	[ "$status" -ne 0 ]
	[[ $output == *'unknown field "spec.podTemplate.spec.hostNetwork"'* ]] || { echo "$output"; false; }

	# Without it the API server prunes them: the object keeps only what the schema knows.
	kubectl -n "$NS" create --validate=false -f - <<<"$job"
	spec=$(kubectl -n "$NS" get tj sneaky -o json | jq -c .spec)
	for path in .hostNetwork .podTemplate.spec.hostNetwork .podTemplate.spec.hostPID \
		.podTemplate.spec.securityContext.privileged .podTemplate.spec.volumes .podTemplate.spec.containers \
		'.podTemplate.spec.tolerations[0].extra'; do
		[ "$(jq -c "$path" <<<"$spec")" = null ] || { echo "$path survived: $spec"; false; }
	done
	[ "$(jq -r .podTemplate.spec.nodeSelector.pool <<<"$spec")" = a100 ]
	[ "$(jq -r .podTemplate.metadata.labels.team <<<"$spec")" = vision ]
	[ "$(jq -r '.podTemplate.spec.tolerations[0].key' <<<"$spec")" = nvidia.com/gpu ]
}
