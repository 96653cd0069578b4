#!/usr/bin/env bats
# The user's code goes with the job (docs/code.md) on a real API server, with
# kube-controller-manager's garbage collector: cadre sbatch and cadre push store a
# directory as immutable ConfigMaps labelled with its digest, with the user's credentials;
# the same content is stored once whatever number of jobs use it, each job an owner; a
# job whose bundle is not in its namespace waits Pending (WaitingForCode) and starts once
# it is; a bundle goes with the last job that uses it, or after --code-retention once
# every job using it has finished, or after --code-orphan-seconds when no job names it;
# a directory over the cap is refused in one line and nothing is created.

load helpers
load controller

CADRE=$REPO_ROOT/build/cadre
SEED=$REPO_ROOT/unit/testdata/convert
IMAGE=registry.invalid/cadre/e2e:latest

setup_file() {
	crds_install
	controller_start --code-retention=6 --code-orphan-seconds=8
}

teardown_file() {
	controller_stop
}

setup() {
	e2e_namespace
	controller_mark
	PROJ=$BATS_TEST_TMPDIR/proj
	mkdir -p "$PROJ/out"
	cp "$SEED/train.sh" "$PROJ/"
	printf 'print("training")\n' >"$PROJ/train.py"
	printf 'checkpoint\n' >"$PROJ/out/ckpt.pt"
	printf 'out/\n' >"$PROJ/.gitignore"
}

teardown() {
	test_cleanup
}

# parts LABEL: the names of the bundle's ConfigMaps in $NS, one a line.
parts() {
	kubectl -n "$NS" get configmaps -l "cadre.dev/code=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'
}

# owners LABEL: the names of the owners of the bundle's first part, sorted, space-separated.
owners() {
	kubectl -n "$NS" get configmap "cadre-code-$1-0" \
		-o jsonpath='{range .metadata.ownerReferences[*]}{.name}{"\n"}{end}' | sort | xargs
}

count_is() {
	[ "$(parts "$1" | grep -c .)" -eq "$2" ]
}

@test "cadre sbatch stores the submit directory once, immutable, each job an owner; the pods mount it" {
	cd "$PROJ"
	cli -n "$NS" sbatch --image "$IMAGE" train.sh
	[ "$rc" -eq 0 ]
	cli -n "$NS" sbatch --image "$IMAGE" -J second train.sh
	[ "$rc" -eq 0 ]
	local digest label
	digest=$(jp trainingjob/llama-pretrain '{.spec.code[0].digest}')
	[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]]
	[ "$(jp trainingjob/llama-pretrain '{.spec.code[0].path}')" = "$(realpath "$PROJ")" ]
	[ "$(jp trainingjob/llama-pretrain '{.spec.workdir}')" = "$(realpath "$PROJ")" ]
	[ "$(jp trainingjob/second '{.spec.code[0].digest}')" = "$digest" ]
	label=${digest:7:40}
	# One bundle for both jobs: a ConfigMap of a few kilobytes, immutable, that says it all.
	[ "$(parts "$label")" = "cadre-code-$label-0" ]
	[ "$(jp "configmap/cadre-code-$label-0" '{.immutable}')" = true ]
	[ "$(jp "configmap/cadre-code-$label-0" '{.metadata.annotations.cadre\.dev/code-digest}')" = "$digest" ]
	# What .gitignore leaves out stayed behind; the archive's sha256 is the digest.
	kubectl -n "$NS" get configmap "cadre-code-$label-0" -o jsonpath='{.binaryData.part}' |
		base64 -d >"$BATS_TEST_TMPDIR/bundle.tgz"
	[ "sha256:$(sha256sum <"$BATS_TEST_TMPDIR/bundle.tgz" | cut -d' ' -f1)" = "$digest" ]
	tar -tzf "$BATS_TEST_TMPDIR/bundle.tgz" | sort >"$BATS_TEST_TMPDIR/names"
	grep -qx train.py "$BATS_TEST_TMPDIR/names"
	grep -qx train.sh "$BATS_TEST_TMPDIR/names"
	refute grep -q '^out' "$BATS_TEST_TMPDIR/names"
	wait_for owner_count_is "$label" 2
	[ "$(owners "$label")" = "llama-pretrain second" ]
	# What the namespace's bundles hold in etcd: sinfo -l's footer, and the gauge.
	cli -n "$NS" sinfo -l
	[ "$rc" -eq 0 ]
	tail -n 1 "$BATS_TEST_TMPDIR/out" | grep -Eqx "Code bundles in namespace $NS: [0-9]+\.[0-9] KiB in 1 ConfigMap \(cadre.dev/code\)"
	cli -n "$NS" sinfo -l -h
	refute grep -q 'Code bundles' "$BATS_TEST_TMPDIR/out"
	wait_for bundle_gauge_positive

	# The pods mount the bundle's parts and unpack it at the submit directory's own path.
	wait_for -t 120 phase_is llama-pretrain Running
	[ "$(jp pod/llama-pretrain-0 '{.spec.volumes[?(@.name=="code-0")].projected.sources[0].configMap.name}')" = "cadre-code-$label-0" ]
	[ "$(jp pod/llama-pretrain-0 '{.spec.containers[0].volumeMounts[?(@.name=="code-dir-0")].mountPath}')" = "$(realpath "$PROJ")" ]
	jp pod/llama-pretrain-0 '{.spec.containers[0].env[?(@.name=="CADRE_CODE")].value}' |
		grep -qx "$digest dir /cadre/code/0 $(realpath "$PROJ")"
	[ "$(kubectl -n "$NS" get configmap llama-pretrain-entrypoint -o jsonpath='{.data.SLURM_SUBMIT_DIR}')" = "$(realpath "$PROJ")" ]

	# The last job gone, Kubernetes' garbage collector takes the bundle with it.
	kubectl -n "$NS" delete trainingjob llama-pretrain >/dev/null
	wait_for owner_count_is "$label" 1
	count_is "$label" 1
	kubectl -n "$NS" delete trainingjob second >/dev/null
	wait_for -t 60 count_is "$label" 0
}

bundle_gauge_positive() {
	controller_scrape "$BATS_TEST_TMPDIR/metrics" &&
		[ "$(metric_of "$BATS_TEST_TMPDIR/metrics" "cadre_code_bundle_bytes{namespace=\"$NS\"}")" -gt 0 ]
}

owner_count_is() {
	[ "$(owners "$1" | wc -w)" -eq "$2" ]
}

@test "a job whose bundle is not in its namespace waits Pending with WaitingForCode, and starts once it is pushed" {
	local other digest
	# The digest of the project, from a push into another namespace.
	other=$NS-elsewhere
	kubectl create namespace "$other" >/dev/null
	kubectl label namespace "$other" e2e.cadre.dev/test=true >/dev/null
	cli -n "$other" push "$PROJ"
	kubectl delete namespace "$other" --wait=false >/dev/null
	[ "$rc" -eq 0 ]
	digest=$(<"$BATS_TEST_TMPDIR/out")
	[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]]

	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: gitops}
spec:
  numNodes: 2
  image: $IMAGE
  resources: {accelerators: "H100:8"}
  code: [{digest: "$digest", path: /workspace/proj}]
  workdir: /workspace/proj
  run: python train.py
EOF
	wait_for field_is trainingjob/gitops '{.status.phase}' Pending
	wait_for field_is trainingjob/gitops '{.status.conditions[?(@.type=="CodeReady")].reason}' WaitingForCode
	jp trainingjob/gitops '{.status.message}' | grep -qF "waiting for code $digest: no ConfigMap labelled cadre.dev/code=${digest:7:40} in namespace $NS"
	[ -z "$(kubectl -n "$NS" get pods -l cadre.dev/job-name=gitops -o name)" ]
	kubectl -n "$NS" get events --field-selector reason=WaitingForCode -o jsonpath='{.items[*].message}' |
		grep -qF "$digest"

	# Pushed with the user's credentials, the same digest: the job starts.
	cli -n "$NS" push "$PROJ"
	[ "$rc" -eq 0 ]
	[ "$(<"$BATS_TEST_TMPDIR/out")" = "$digest" ]
	wait_for -t 120 phase_is gitops Running
	[ "$(jp trainingjob/gitops '{.status.conditions[?(@.type=="CodeReady")].status}')" = True ]
	wait_for owner_count_is "${digest:7:40}" 1
}

@test "the schema refuses a malformed spec.code, naming the field" {
	run kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: bad}
spec:
  image: $IMAGE
  code: [{digest: "sha256:nothex", path: relative/dir}]
  run: "true"
EOF
	[ "$status" -ne 0 ]
	[[ $output == *'spec.code[0].digest'* ]]
	[[ $output == *'spec.code[0].path: Invalid value'*'path must be absolute'* ]]
	run kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: bad}
spec:
  image: $IMAGE
  volumes: {/mnt/shared: data}
  code: [{digest: "sha256:$(printf '0%.0s' {1..64})", path: /mnt/shared/code}]
  run: "true"
EOF
	[ "$status" -ne 0 ]
	[[ $output == *'spec.code: Invalid value'*'code on a Volume is already shared'* ]]
}

@test "a directory over the cap is refused in one line naming its largest files, and nothing is created" {
	head -c 300000 /dev/urandom >"$PROJ/weights.bin"
	cd "$PROJ"
	cli -n "$NS" sbatch --image "$IMAGE" --max-upload 100K train.sh
	[ "$rc" -eq 1 ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/err")" -eq 1 ]
	grep -q "^cadre sbatch: $(realpath "$PROJ") packs to over .* MiB compressed (the cap is .* MiB); largest: weights.bin (0.3 MiB)" "$BATS_TEST_TMPDIR/err"
	grep -qF -- '.cadreignore' "$BATS_TEST_TMPDIR/err"
	grep -qF -- '--no-upload' "$BATS_TEST_TMPDIR/err"
	[ -z "$(kubectl -n "$NS" get configmaps -l cadre.dev/code -o name)" ]
	[ -z "$(kubectl -n "$NS" get trainingjobs -o name)" ]
}

@test "a bundle whose jobs have all finished is collected after --code-retention; one no job names, after --code-orphan-seconds" {
	cd "$PROJ"
	cli -n "$NS" sbatch --image "$IMAGE" -N 1 --gpus-per-node=h100:8 -J quick train.sh
	[ "$rc" -eq 0 ]
	local label
	label=$(jp trainingjob/quick '{.spec.code[0].digest}')
	label=${label:7:40}
	wait_for -t 120 phase_is quick Running
	kubectl -n "$NS" annotate pod quick-0 e2e.cadre.dev/exit-code=0 >/dev/null
	wait_for -t 120 phase_is quick Succeeded
	# The job stays; its bundle goes --code-retention (6 s here) after its end.
	count_is "$label" 1
	wait_for -t 60 count_is "$label" 0
	controller_log_has "code: $NS/$label: deleting the code bundle: every job that uses it has finished"
	phase_is quick Succeeded

	# Pushed and never used: collected after --code-orphan-seconds (8 s here).
	printf 'other\n' >"$PROJ/train.py"
	cli -n "$NS" push "$PROJ"
	[ "$rc" -eq 0 ]
	label=$(<"$BATS_TEST_TMPDIR/out")
	label=${label:7:40}
	count_is "$label" 1
	wait_for -t 60 count_is "$label" 0
	controller_log_has "code: $NS/$label: deleting the code bundle: no job names it"
}
