#!/usr/bin/env bats
# The submission commands of the cadre CLI (docs/design.md 9) against a real API server, with
# the user's kubeconfig: the seed's train.sh through `cadre sbatch` prints sbatch's line
# with the id the controller gave the job, which then runs as a gang; --parsable prints
# the id alone; the seed's volume.yaml through `cadre volumes apply` binds, and the seed's
# task.yaml through `cadre launch` runs with it mounted; an unreachable server and a user
# without rights each give one line on stderr and a non-zero exit.

load helpers
load controller

CADRE=$REPO_ROOT/build/cadre
SEED=$REPO_ROOT/unit/testdata/convert

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
	test_cleanup
}

# stdout_is TEXT: stdout is exactly TEXT and a newline.
stdout_is() {
	printf '%s\n' "$1" | cmp - "$BATS_TEST_TMPDIR/out"
}

# one_error_line TEXT: stderr is one line that holds TEXT; nothing on stdout.
one_error_line() {
	[ "$(wc -l <"$BATS_TEST_TMPDIR/err")" -eq 1 ]
	grep -qF -- "$1" "$BATS_TEST_TMPDIR/err"
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
}

job_id() {
	jp "trainingjob/$1" '{.status.jobId}'
}

# pods_ask_gpus JOB N: every pod of the job's main container asks for N GPUs.
pods_ask_gpus() {
	json_has "$(kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o json)" \
		"all(.items[].spec.containers[] | select(.name == \"main\");
			.resources.limits[\"nvidia.com/gpu\"] == \"$2\")"
}

# mounts_claim POD PATH CLAIM: the pod's main container mounts the claim at PATH.
mounts_claim() {
	json_has "$(kubectl -n "$NS" get pod "$1" -o json)" "((.spec.containers[] | select(.name == \"main\")
		| .volumeMounts[] | select(.mountPath == \"$2\") | .name) as \$v
		| any(.spec.volumes[]; .name == \$v and .persistentVolumeClaim.claimName == \"$3\"))"
}

@test "cadre sbatch train.sh prints Submitted batch job <jobId> and the job runs 2 pods of 8 GPUs" {
	cmp "$SEED/train.sh" - <<'SCRIPT'
#!/bin/bash
#SBATCH --job-name=llama-pretrain
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8

module load cuda/12.4
source /shared/envs/torch/bin/activate

srun torchrun \
    --nnodes=$SLURM_NNODES \
    --nproc_per_node=$SLURM_GPUS_PER_NODE \
    --rdzv_id=$SLURM_JOB_ID \
    --rdzv_backend=c10d \
    --rdzv_endpoint=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1):29500 \
    train.py --batch-size 32
SCRIPT
	cd "$SEED"
	cli -n "$NS" sbatch --container-image=registry.invalid/pytorch:24.05 train.sh
	[ "$rc" -eq 0 ]
	id=$(job_id llama-pretrain)
	[[ $id =~ ^[0-9]+$ ]]
	stdout_is "Submitted batch job $id"
	grep -qF 'train.sh:4: --gpus-per-node: no GPU type' "$BATS_TEST_TMPDIR/err"
	wait_for -t 120 phase_is llama-pretrain Running
	all_pods_running llama-pretrain 2
	pods_ask_gpus llama-pretrain 8
	tj=$(kubectl -n "$NS" get trainingjob llama-pretrain -o json)
	json_has "$tj" '.spec.image == "registry.invalid/pytorch:24.05" and .spec.numNodes == 2'
	json_has "$tj" '.metadata.annotations["cadre.dev/submitted-by"] | length > 0'

	# sbatch never replaces a job, and Slurm's names need not be unique: the same name again
	# is a second job, named apart, that keeps llama-pretrain as its Slurm name.
	cli sbatch --namespace "$NS" --container-image=registry.invalid/pytorch:24.05 train.sh
	[ "$rc" -eq 0 ]
	grep -qF "cadre sbatch: job name llama-pretrain is taken in namespace $NS: the TrainingJob is llama-pretrain-" "$BATS_TEST_TMPDIR/err"
	[ "$(job_id llama-pretrain)" = "$id" ]
	second=$(kubectl -n "$NS" get tj -l cadre.dev/slurm-name=llama-pretrain -o name)
	[[ $second == trainingjob.cadre.dev/llama-pretrain-????? ]]
	kubectl -n "$NS" delete "$second" --wait=false >/dev/null
}

@test "cadre sbatch --parsable prints the job id alone; command-line options win over #SBATCH lines" {
	cd "$SEED"
	cli sbatch --parsable --namespace "$NS" -J small -N 1 --gpus-per-node=h100:4 --image img:1 train.sh
	[ "$rc" -eq 0 ]
	id=$(job_id small)
	[[ $id =~ ^[0-9]+$ ]]
	stdout_is "$id"
	tj=$(kubectl -n "$NS" get trainingjob small -o json)
	json_has "$tj" '.spec.numNodes == 1 and .spec.resources.accelerators == "h100:4"'
	json_has "$tj" '.spec.image == "img:1"'
	wait_for -t 120 phase_is small Running
	pods_ask_gpus small 4
}

@test "cadre volumes apply -f volume.yaml binds, and cadre launch task.yaml runs with it at /mnt/checkpoints" {
	make_pv "$(pv_name ckpt)" 500Gi ReadWriteMany "$NS" shared-checkpoints
	cd "$SEED"
	cli -n "$NS" volumes apply -f volume.yaml
	[ "$rc" -eq 0 ]
	stdout_is "volume/shared-checkpoints created"
	wait_for -t 60 field_is volume.cadre.dev/shared-checkpoints '{.status.phase}' Bound
	cli -n "$NS" volumes apply -f volume.yaml
	[ "$rc" -eq 0 ]
	stdout_is "volume/shared-checkpoints unchanged"

	# The seed's task with the seed's volumes stanza.
	{ cat task.yaml; printf 'volumes:\n  /mnt/checkpoints: shared-checkpoints\n'; } >"$BATS_TEST_TMPDIR/task.yaml"
	cli -n "$NS" launch "$BATS_TEST_TMPDIR/task.yaml" --image nvcr.io/nvidia/pytorch:24.05-py3
	[ "$rc" -eq 0 ]
	id=$(job_id llama-pretrain)
	[[ $id =~ ^[0-9]+$ ]]
	stdout_is "Submitted job llama-pretrain (jobId $id)"
	wait_for -t 120 phase_is llama-pretrain Running
	all_pods_running llama-pretrain 2
	for rank in 0 1; do
		mounts_claim "llama-pretrain-$rank" /mnt/checkpoints shared-checkpoints
	done
}

@test "an unreachable API server, a token without rights and a bad token: one line on stderr, exit 1" {
	local kc=$BATS_TEST_TMPDIR/kubeconfig cluster token port
	cd "$SEED"
	# The cluster's own kubeconfig, its server moved to a port nothing listens on.
	port=$(free_ports 1)
	cp "$KUBECONFIG" "$BATS_TEST_TMPDIR/closed"
	cluster=$(kubectl --kubeconfig "$KUBECONFIG" config view --minify -o jsonpath='{.contexts[0].context.cluster}')
	kubectl --kubeconfig "$BATS_TEST_TMPDIR/closed" config set-cluster "$cluster" --server="https://127.0.0.1:$port" >/dev/null
	cli sbatch --kubeconfig "$BATS_TEST_TMPDIR/closed" --image i train.sh
	[ "$rc" -eq 1 ]
	one_error_line "cadre sbatch: cannot reach the API server https://127.0.0.1:$port"
	cli launch --kubeconfig "$BATS_TEST_TMPDIR/closed" --image i task.yaml
	[ "$rc" -eq 1 ]
	one_error_line "cadre launch: cannot reach the API server"
	cli volumes apply -f volume.yaml --kubeconfig "$BATS_TEST_TMPDIR/closed"
	[ "$rc" -eq 1 ]
	one_error_line "cadre volumes apply: cannot reach the API server"

	# A ServiceAccount with no role: the API server's own words, on one line.
	kubectl -n "$NS" create serviceaccount nobody >/dev/null
	token=$(kubectl -n "$NS" create token nobody)
	cp "$KUBECONFIG" "$kc"
	kubectl --kubeconfig "$kc" config set-credentials nobody --token="$token" >/dev/null
	kubectl --kubeconfig "$kc" config set-context nobody --cluster="$cluster" --user=nobody --namespace="$NS" >/dev/null
	kubectl --kubeconfig "$kc" config set-credentials forged --token=not-a-token >/dev/null
	kubectl --kubeconfig "$kc" config set-context forged --cluster="$cluster" --user=forged >/dev/null
	# The code goes first (docs/code.md): reading what the namespace holds of it is refused.
	cli sbatch --kubeconfig "$kc" --context nobody --image i train.sh
	[ "$rc" -eq 1 ]
	one_error_line "cadre sbatch: list the code bundles (configmaps) of namespace $NS: not allowed (403 Forbidden): configmaps is forbidden: User \"system:serviceaccount:$NS:nobody\" cannot list resource"
	cli sbatch --kubeconfig "$kc" --context nobody --image i --no-upload train.sh
	[ "$rc" -eq 1 ]
	one_error_line "cadre sbatch: create trainingjob \"llama-pretrain\" in namespace \"$NS\": not allowed (403 Forbidden): trainingjobs.cadre.dev is forbidden: User \"system:serviceaccount:$NS:nobody\" cannot create resource"
	cli volumes apply -f volume.yaml --kubeconfig "$kc" --context nobody
	[ "$rc" -eq 1 ]
	one_error_line "not allowed (403 Forbidden)"
	cli sbatch --kubeconfig "$kc" --context forged --image i train.sh
	[ "$rc" -eq 1 ]
	one_error_line "does not accept these credentials (401 Unauthorized)"
	[ -z "$(kubectl -n "$NS" get trainingjobs -o name)" ]
}
