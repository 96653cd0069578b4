#!/usr/bin/env bats
# Real pods: the real node (e2e/realnode.bash; docs/e2e.md, "The real node") beside kwok's,
# where a kubelet, containerd and runc run cadre's pods for real, CoreDNS answers the
# cluster.local names, and the training image has python3-torch (CPU) and no code of ours:
# train.py reaches every pod as a code bundle (docs/code.md), from the project directory
# cadre sbatch runs in, a task's workdir, or `cadre push` and spec.code for the jobs made
# with kubectl. What kwok can only stand in for is shown here on real processes: the
# entrypoint and its srun and scontrol, peer DNS through the headless Service, a shared
# Volume, torch.distributed (gloo) across two pods, cadre logs, exec, salloc and scancel
# --signal, a restricted namespace, the hang watchdog and the signal before the deadline.
#
# Each job lands on the real node through cadre's --node-selector and --toleration (or the
# same in podTemplate), and the seed's files (unit/testdata/convert/) are submitted byte for
# byte. Seconds of training each: train.py's defaults are 20 steps of a linear model.

load helpers
load controller

CADRE=$REPO_ROOT/build/cadre
SEED=$REPO_ROOT/unit/testdata/convert
PLACE=(--node-selector=cadre.dev/real-node=true --toleration=cadre.dev/real-node:NoSchedule)

setup_file() {
	# Builds the kubelet, CoreDNS and the images the first time (minutes), then seconds.
	"$E2E_DIR/cluster" real-node on
	eval "$("$E2E_DIR/cluster" real-node env)"
	crds_install
	controller_start
}

teardown_file() {
	local n
	n=$(cat "$CADRE_E2E_STATE/real-node/index" 2>/dev/null || true)
	if controller_pid >/dev/null; then controller_stop; fi
	kubectl delete partition real-scavenger real-urgent --ignore-not-found >/dev/null
	"$E2E_DIR/cluster" real-node off
	# What `on` changed on this machine is back: no bridge, cgroup or mount of this node.
	[ -n "$n" ]
	refute ip link show "cadre-e2e-$n" >/dev/null 2>&1
	refute ls -d /sys/fs/cgroup/*/"cadre-e2e-$n" 2>/dev/null
	refute grep -q " $CADRE_E2E_STATE/real-node/" /proc/self/mounts
	[ -z "$(kubectl get node "$CADRE_E2E_REAL_NODE" -o name --ignore-not-found)" ]
}

# A project directory of each test's own: the seed's script and task, and the test data's
# train.py and requirements.txt, none of which the image has.
setup() {
	e2e_namespace
	controller_mark
	PROJ=$BATS_TEST_TMPDIR/proj
	mkdir -p "$PROJ"
	cp "$SEED/train.sh" "$SEED/task.yaml" "$E2E_DIR/testdata/real/train.py" \
		"$E2E_DIR/testdata/real/requirements.txt" "$PROJ/"
}

# push: the project into $NS (cadre push); its digest in $DIGEST.
push() {
	DIGEST=$("$CADRE" -n "$NS" push "$PROJ")
	[[ $DIGEST =~ ^sha256:[0-9a-f]{64}$ ]]
}

teardown() {
	test_cleanup
}

# logs JOB [ARGS...]: the job's merged log (cadre logs) in $BATS_TEST_TMPDIR/logs.
logs() {
	"$CADRE" -n "$NS" logs "$@" >"$BATS_TEST_TMPDIR/logs" 2>&1
}

# loss_at FILE PREFIX STEP: the loss train.py printed at STEP, in lines starting PREFIX.
loss_at() {
	sed -n "s/^$2step $3 loss \([0-9.]*\) .*/\1/p" "$1" | head -n 1
}

# falls A B: B is less than a quarter of A (20 steps take the loss down twentyfold).
falls() {
	[[ -n $1 && -n $2 ]] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(b < a / 4) }'
}

# a_volume NAME: a cadre Volume (k8s-pvc, ReadWriteMany) whose claim a directory of the
# real node backs; the directory's path in $VOLUME_DIR.
a_volume() {
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: Volume
metadata: {name: $1}
spec: {type: k8s-pvc, size: 1Gi, accessMode: ReadWriteMany}
EOF
	VOLUME_DIR=$("$E2E_DIR/cluster" real-node volume "$NS" "$1")
	wait_for field_is "volume.cadre.dev/$1" '{.status.phase}' Bound
}

# job NAME SPEC: a TrainingJob on the real node, with the training image and the project
# pushed as its code at /workspace, where it runs; SPEC is YAML lines under spec, indented
# by two spaces.
job() {
	push
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: $1}
spec:
  image: $CADRE_E2E_TORCH_IMAGE
  code: [{digest: "$DIGEST", path: /workspace}]
  workdir: /workspace
$2
  podTemplate:
    spec:
      nodeSelector: {cadre.dev/real-node: "true"}
      tolerations: [{key: cadre.dev/real-node, operator: Exists, effect: NoSchedule}]
EOF
}

on_the_real_node() {
	local nodes
	nodes=$(kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" -o jsonpath='{.items[*].spec.nodeName}')
	[[ -n $nodes && $(tr ' ' '\n' <<<"$nodes" | sort -u) == "$CADRE_E2E_REAL_NODE" ]]
}

@test "the seed's train.sh through cadre sbatch from its project directory trains on two real pods: the code goes along, DNS rendezvous, the loss falls, COMPLETED 0:0, the checkpoint on the shared Volume" {
	cli -n "$NS" volumes apply -f "$SEED/volume.yaml"
	[ "$rc" -eq 0 ]
	local dir
	dir=$("$E2E_DIR/cluster" real-node volume "$NS" shared-checkpoints)
	wait_for field_is volume.cadre.dev/shared-checkpoints '{.status.phase}' Bound

	# train.py is in the project directory only: the image has none.
	cd "$PROJ"
	cli -n "$NS" sbatch --parsable --image="$CADRE_E2E_TORCH_IMAGE" "${PLACE[@]}" \
		--container-mounts=shared-checkpoints:/mnt/checkpoints train.sh
	[ "$rc" -eq 0 ]
	[ "$(jp trainingjob/llama-pretrain '{.spec.code[0].path}')" = "$(realpath "$PROJ")" ]
	local id
	id=$(<"$BATS_TEST_TMPDIR/out")
	wait_for -t 240 phase_is llama-pretrain Succeeded
	on_the_real_node llama-pretrain

	logs llama-pretrain
	# Both ranks resolved each other through CoreDNS, and the rendezvous at rank 0's short
	# name (scontrol show hostnames | head -n 1) gathered 2 x 8 workers.
	grep -qx '0: cadre: all 2 peers resolved' "$BATS_TEST_TMPDIR/logs"
	grep -qx '1: cadre: all 2 peers resolved' "$BATS_TEST_TMPDIR/logs"
	grep -q "llama-pretrain-0.llama-pretrain.$NS.svc.cluster.local" "$CADRE_E2E_STATE/logs/coredns.log"
	[ "$(grep -c '^0: rank [0-7] of 16 joined the process group on llama-pretrain-0$' "$BATS_TEST_TMPDIR/logs")" -eq 8 ]
	[ "$(grep -c '^1: rank \([89]\|1[0-5]\) of 16 joined the process group on llama-pretrain-1$' "$BATS_TEST_TMPDIR/logs")" -eq 8 ]
	refute grep -q 'scontrol: error' "$BATS_TEST_TMPDIR/logs"
	falls "$(loss_at "$BATS_TEST_TMPDIR/logs" '0: ' 0)" "$(loss_at "$BATS_TEST_TMPDIR/logs" '0: ' 19)"
	grep -qx '0: done: 20 steps' "$BATS_TEST_TMPDIR/logs"

	cli -n "$NS" sacct -j "$id" -o JobID,State,ExitCode -P -n
	[ "$(<"$BATS_TEST_TMPDIR/out")" = "$id|COMPLETED|0:0" ]
	# Rank 0 wrote it to /mnt/checkpoints, which is the Volume's claim, which is this
	# directory of the real node.
	[ -s "$dir/checkpoint.pt" ]
}

@test "the seed's task.yaml with workdir: . through cadre launch: setup on both pods, run with --node_rank and --master_addr from SKYPILOT_NODE_IPS" {
	# As SkyPilot users write it: the task's code is its directory (workdir: .).
	printf 'workdir: .\n' >>"$PROJ/task.yaml"
	cd "$PROJ"
	cli -n "$NS" launch --image="$CADRE_E2E_TORCH_IMAGE" "${PLACE[@]}" task.yaml
	[ "$rc" -eq 0 ]
	grep -q '^Submitted job llama-pretrain (jobId [0-9]*)$' "$BATS_TEST_TMPDIR/out"
	wait_for -t 240 phase_is llama-pretrain Succeeded
	on_the_real_node llama-pretrain

	logs llama-pretrain
	local r
	for r in 0 1; do
		# setup's three pip lines, on each pod, find what the image has.
		grep -q "^$r: Requirement already satisfied: pip " "$BATS_TEST_TMPDIR/logs"
		grep -q "^$r: Requirement already satisfied: torchvision " "$BATS_TEST_TMPDIR/logs"
		grep -q "^$r: Requirement already satisfied: numpy " "$BATS_TEST_TMPDIR/logs"
	done
	# --node_rank put ranks 0-7 on pod 0 and 8-15 on pod 1, around rank 0's IP.
	[ "$(grep -c '^0: rank [0-7] of 16 joined the process group on llama-pretrain-0$' "$BATS_TEST_TMPDIR/logs")" -eq 8 ]
	[ "$(grep -c '^1: rank \([89]\|1[0-5]\) of 16 joined the process group on llama-pretrain-1$' "$BATS_TEST_TMPDIR/logs")" -eq 8 ]
	falls "$(loss_at "$BATS_TEST_TMPDIR/logs" '0: ' 0)" "$(loss_at "$BATS_TEST_TMPDIR/logs" '0: ' 19)"
}

@test "cadre launch syncs workdir and a local file_mounts file to both ranks, and again after a gang restart" {
	mkdir -p "$PROJ/conf"
	printf 'lr 0.1\n' >"$PROJ/conf/params.txt"
	printf 'secret-token\n' >"$BATS_TEST_TMPDIR/token"
	cat >"$PROJ/sync.yaml" <<EOF
name: sync
num_nodes: 2
workdir: .
file_mounts:
  /etc/cadre-test/token: $BATS_TEST_TMPDIR/token
resources:
  job_recovery:
    max_restarts_on_errors: 1
run: |
  echo "rank \$SKYPILOT_NODE_RANK in \$(pwd) attempt \$CADRE_RESTART_ATTEMPT: \$(cat conf/params.txt) \$(cat /etc/cadre-test/token)"
  python3 train.py --steps 2 --checkpoint-dir ""
  if [ "\$CADRE_RESTART_ATTEMPT" = 0 ] && [ "\$SKYPILOT_NODE_RANK" = 1 ]; then exit 3; fi
EOF
	cd "$PROJ"
	cli -n "$NS" launch --image="$CADRE_E2E_TORCH_IMAGE" "${PLACE[@]}" sync.yaml
	[ "$rc" -eq 0 ]
	[ "$(jp trainingjob/sync '{.spec.code[*].path}')" = "/root/sky_workdir /etc/cadre-test/token" ]
	# The first attempt's rank 1 fails once its run is done; the gang starts again.
	wait_for -t 180 field_is trainingjob/sync '{.status.restarts}' 1
	wait_for -t 240 phase_is sync Succeeded
	on_the_real_node sync
	logs sync
	local r
	for r in 0 1; do
		grep -qx "$r: rank $r in /root/sky_workdir attempt 1: lr 0.1 secret-token" "$BATS_TEST_TMPDIR/logs"
		grep -qx "$r: done: 2 steps" "$BATS_TEST_TMPDIR/logs"
	done
}

@test "a rank killed for real restarts the gang, which resumes from the checkpoint on the shared Volume" {
	a_volume ckpt
	job resume '  numNodes: 2
  resources: {accelerators: "H100:1"}
  maxRestarts: 1
  volumes: {/mnt/checkpoints: ckpt}
  run: |
    srun torchrun --nnodes=$SLURM_NNODES --nproc_per_node=$SLURM_GPUS_PER_NODE \
      --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT \
      train.py --steps 24 --step-seconds 0.3'
	wait_for -t 120 bash -c "'$CADRE' -n '$NS' logs resume | grep -q '^0: step 4 '"
	# Read now: a restart makes new pods of the same names, and the old ones' logs go.
	logs resume
	cp "$BATS_TEST_TMPDIR/logs" "$BATS_TEST_TMPDIR/attempt-0"

	# The worker on rank 1 (torchrun's child, python3 -u train.py), killed as the OOM killer
	# would. The pattern's brackets keep it from matching the shell that runs pgrep.
	cli -n "$NS" exec resume --rank 1 -- sh -c 'kill -KILL $(pgrep -f "[-]u train[.]py")'
	[ "$rc" -eq 0 ]
	wait_for -t 120 field_is trainingjob/resume '{.status.restarts}' 1
	wait_for -t 240 phase_is resume Succeeded

	logs resume --attempt 1
	local step first
	step=$(sed -n 's/^0: resumed from step \([0-9]*\) .*/\1/p' "$BATS_TEST_TMPDIR/logs")
	[ -n "$step" ] && [ "$step" -ge 4 ] && [ "$step" -lt 23 ]
	# The second attempt starts where the first stopped: at the step after the checkpoint's,
	# with the loss it had reached, not the first step's.
	refute grep -q '^0: step 0 ' "$BATS_TEST_TMPDIR/logs"
	first=$(loss_at "$BATS_TEST_TMPDIR/logs" '0: ' $((step + 1)))
	awk -v start="$(loss_at "$BATS_TEST_TMPDIR/attempt-0" '0: ' 0)" -v first="$first" \
		'BEGIN { exit !(start > 0 && first > 0 && first < start / 2) }'
	grep -qx '0: done: 24 steps' "$BATS_TEST_TMPDIR/logs"
	[ "$(jp trainingjob/resume '{.status.lastFailure.reason}')" != Hung ]
}

@test "cadre logs with and without -f, exec on every rank and scancel --signal=USR1 reach the real program" {
	printf '#!/bin/bash\n#SBATCH --nodes=2\nsrun python3 train.py --steps 100000 --step-seconds 0.5 --checkpoint-dir ""\n' \
		>"$PROJ/long.sh"
	cd "$PROJ"
	cli -n "$NS" sbatch --image="$CADRE_E2E_TORCH_IMAGE" "${PLACE[@]}" long.sh
	[ "$rc" -eq 0 ]
	wait_for -t 120 phase_is long Running

	"$CADRE" -n "$NS" logs -f long >"$BATS_TEST_TMPDIR/follow" 2>&1 </dev/null &
	local follower=$!
	track_pid "$follower"
	wait_for -t 60 grep -q '^0: step 2 ' "$BATS_TEST_TMPDIR/follow"
	wait_for -t 60 grep -q '^1: step 2 ' "$BATS_TEST_TMPDIR/follow"

	# Each rank is a container of its own, with the host name of its pod.
	cli -n "$NS" exec long -- sh -c 'echo "$(hostname) $SLURM_NODEID $(id -u)"'
	[ "$rc" -eq 0 ]
	[ "$(sort "$BATS_TEST_TMPDIR/out")" = "$(printf '0: long-0 0 0\n1: long-1 1 0')" ]

	# USR1 reaches train.py under the batch script's srun; the job runs on.
	cli -n "$NS" scancel --signal=USR1 long
	[ "$rc" -eq 0 ]
	wait_for -t 30 grep -q '^0: rank 0: got SIGUSR1 at step ' "$BATS_TEST_TMPDIR/follow"
	wait_for -t 30 grep -q '^1: rank 1: got SIGUSR1 at step ' "$BATS_TEST_TMPDIR/follow"
	local at
	at=$(sed -n 's/^0: rank 0: got SIGUSR1 at step \([0-9]*\)$/\1/p' "$BATS_TEST_TMPDIR/follow")
	wait_for -t 30 grep -q "^0: step $((at + 2)) " "$BATS_TEST_TMPDIR/follow"
	phase_is long Running

	logs long
	grep -q '^0: rank 0: got SIGUSR1 at step ' "$BATS_TEST_TMPDIR/logs"
	grep -q '^1: step 2 loss ' "$BATS_TEST_TMPDIR/logs"

	# Cancelled, the job ends, and so does logs -f.
	cli -n "$NS" scancel long
	[ "$rc" -eq 0 ]
	local t=$SECONDS
	while kill -0 "$follower" 2>/dev/null && ((SECONDS - t < 60)); do sleep 0.2; done
	refute kill -0 "$follower" 2>/dev/null
	wait "$follower"
}

@test "cadre salloc holds a real node, and a shell on rank 0 runs there" {
	cli -n "$NS" salloc -J shell -N 1 --image="$CADRE_E2E_TORCH_IMAGE" "${PLACE[@]}" -- \
		sh -c 'printf "hostname; echo nodes \$SLURM_JOB_NODELIST; python3 -c \"import torch; print(torch.__version__)\"; exit 3\n" |
			"$0" -n "$1" exec "$SLURM_JOB_ID" -it -- bash' "$CADRE" "$NS"
	[ "$rc" -eq 3 ]
	grep -qx 'shell-0' "$BATS_TEST_TMPDIR/out"
	grep -qx 'nodes shell-0' "$BATS_TEST_TMPDIR/out"
	grep -q '^1\.13' "$BATS_TEST_TMPDIR/out"
	grep -q '^salloc: Granted job allocation [0-9]*$' "$BATS_TEST_TMPDIR/err"
	grep -q '^salloc: Relinquishing job allocation [0-9]*$' "$BATS_TEST_TMPDIR/err"
	# Released: the job and its pod are gone.
	[ -z "$(kubectl -n "$NS" get trainingjobs,pods -o name)" ]
}

@test "a job in a namespace enforcing the restricted Pod Security Standard runs as a non-root user on the real node, its run text as written" {
	kubectl label namespace "$NS" pod-security.kubernetes.io/enforce=restricted >/dev/null
	# The code too is unpacked by that user, into an emptyDir under a read-only root.
	push
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: locked}
spec:
  numNodes: 2
  image: $CADRE_E2E_TORCH_IMAGE
  code: [{digest: "$DIGEST", path: /workspace}]
  workdir: /workspace
  run: |
    echo "uid \$(id -u) gid \$(id -g)"
    echo "verbatim \$\$ sub \$(NNODES)"
    python3 train.py --steps 3 --checkpoint-dir ""
  podTemplate:
    spec:
      nodeSelector: {cadre.dev/real-node: "true"}
      tolerations: [{key: cadre.dev/real-node, operator: Exists}]
      securityContext:
        runAsUser: 1000
        runAsGroup: 1000
        runAsNonRoot: true
        seccompProfile: {type: RuntimeDefault}
      containerSecurityContext:
        allowPrivilegeEscalation: false
        capabilities: {drop: [ALL]}
        readOnlyRootFilesystem: true
EOF
	wait_for -t 120 phase_is locked Succeeded
	on_the_real_node locked
	logs locked
	grep -qx '0: uid 1000 gid 1000' "$BATS_TEST_TMPDIR/logs"
	grep -qx '1: uid 1000 gid 1000' "$BATS_TEST_TMPDIR/logs"
	grep -qx '1: done: 3 steps' "$BATS_TEST_TMPDIR/logs"
	# The run text reached the shell as written: $$ is its pid and $(NNODES) a command
	# substitution (that finds no such command), not the kubelet's escape and reference
	# ("verbatim $ sub 2"), which apply to a pod's env values only.
	grep -Eqx '0: verbatim [0-9]+ sub ' "$BATS_TEST_TMPDIR/logs"
}

@test "the watchdog ends a real process that stops making progress, and the gang restarts as Hung" {
	job frozen '  numNodes: 1
  maxRestarts: 1
  hang: {startupSeconds: 60, progressSeconds: 4}
  run: python3 train.py --steps 100000 --step-seconds 0.5 --checkpoint-dir ""'
	wait_for -t 120 bash -c "'$CADRE' -n '$NS' logs frozen | grep -q '^0: step 2 '"
	# Stopped, it writes nothing more and answers no TERM: the watchdog's KILL ends it.
	cli -n "$NS" exec frozen -- sh -c 'kill -STOP $(pgrep -f "python3 train[.]py")'
	[ "$rc" -eq 0 ]
	wait_for -t 90 field_is trainingjob/frozen '{.status.restarts}' 1
	[ "$(jp trainingjob/frozen '{.status.lastFailure.reason}')" = Hung ]
	jp trainingjob/frozen '{.status.lastFailure.message}' | grep -q 'no progress for 4s (spec.hang.progressSeconds)'
	# The next attempt runs again.
	wait_for -t 120 bash -c "'$CADRE' -n '$NS' logs frozen | grep -q '^0: step 2 '"
}

@test "spec.signal: USR1 reaches the real program its seconds before the deadline, and the job then ends DeadlineExceeded" {
	job deadline '  numNodes: 1
  activeDeadlineSeconds: 20
  signal: {name: USR1, secondsBefore: 8}
  run: |
    echo start
    srun python3 train.py --steps 100000 --step-seconds 0.5 --checkpoint-dir ""'
	wait_for -t 60 field_is trainingjob/deadline '{.status.phase}' Running
	local deadline
	deadline=$(jp pod/deadline-0 '{.spec.containers[0].env[?(@.name=="CADRE_DEADLINE")].value}')
	[[ $deadline =~ ^[0-9]+$ ]]
	wait_for -t 60 bash -c "'$CADRE' -n '$NS' logs deadline | grep -q 'got SIGUSR1 at step'"
	# The program and its batch shell outlive the signal: the steps go on (the pod is
	# deleted at the deadline, its log with it, so it is read now).
	local step
	step=$("$CADRE" -n "$NS" logs deadline | sed -n 's/^0: rank 0: got SIGUSR1 at step \([0-9]*\)$/\1/p')
	wait_for -t 10 bash -c "'$CADRE' -n '$NS' logs deadline | grep -q '^0: step $((step + 3)) '"
	logs --timestamps deadline
	grep -q '^0: [^ ]* cadre: sending SIGUSR1 to the program: activeDeadlineSeconds runs out in 8s$' "$BATS_TEST_TMPDIR/logs"
	local at got
	at=$(sed -n 's/^0: \([^ ]*\) rank 0: got SIGUSR1 at step .*/\1/p' "$BATS_TEST_TMPDIR/logs")
	got=$(date -d "$at" +%s.%N)
	# The notice is due at the deadline less 8 s; train.py says so at its next step (0.5 s).
	awk -v got="$got" -v due=$((deadline - 8)) 'BEGIN { exit !(got >= due - 1 && got < due + 2) }'
	wait_for -t 60 phase_is deadline Failed
	[ "$(jp trainingjob/deadline '{.status.conditions[?(@.type=="Failed")].reason}')" = DeadlineExceeded ]
}

# docs/volumes.md, "Scratch": the dataset on the shared Volume, a copy on each node's own
# disk before the run, which reads it there (TMPDIR points at the scratch).
@test "spec.stageIn copies a file from the shared Volume into each rank's scratch before the run, which reads it there" {
	a_volume data
	echo "the dataset" >"$VOLUME_DIR/ds.txt"
	job staged '  numNodes: 2
  volumes: {/mnt/data: data}
  scratch: {/scratch: {size: 1Gi}}
  stageIn: [{from: /mnt/data/ds.txt, to: /scratch/ds.txt}]
  run: |
    echo "read $(cat /scratch/ds.txt) in $TMPDIR"'
	wait_for -t 120 phase_is staged Succeeded
	on_the_real_node staged
	logs staged
	local r
	for r in 0 1; do
		grep -q "^$r: cadre: staged in /mnt/data/ds.txt to /scratch/ds.txt in [0-9]*\.[0-9][0-9]s$" \
			"$BATS_TEST_TMPDIR/logs" || { cat "$BATS_TEST_TMPDIR/logs"; false; }
		grep -qx "$r: read the dataset in /scratch" "$BATS_TEST_TMPDIR/logs"
	done
}

@test "a preempted job's program gets its signal and writes a checkpoint before it is stopped; the higher tier's job then runs on the node" {
	kubectl apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: real-scavenger}
spec: {priorityTier: 0, preemptMode: Requeue}
---
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: real-urgent}
spec: {priorityTier: 10}
EOF
	a_volume ckpt
	# Every GPU of the real node, so the urgent job fits only once this one is gone. The
	# grace is its own signal's secondsBefore (no graceTimeSeconds on the partition).
	job victim '  numNodes: 1
  partition: real-scavenger
  resources: {accelerators: "H100:16"}
  signal: {name: USR1, secondsBefore: 10}
  volumes: {/mnt/checkpoints: ckpt}
  run: |
    trap "echo checkpoint at step \$step >/mnt/checkpoints/victim; echo saved; exit 0" USR1
    step=0
    echo ready to be preempted
    while true; do step=$((step + 1)); sleep 0.2; done'
	wait_for -t 120 phase_is victim Running
	# Running is the pod's; the program traps its signal once the entrypoint has set up
	# and run it, which it says. A preemption before that stops a program not yet started.
	wait_for -t 60 bash -c "'$CADRE' -n '$NS' logs victim | grep -q 'ready to be preempted'"
	job urgent '  numNodes: 1
  partition: real-urgent
  resources: {accelerators: "H100:16"}
  run: sleep 600'
	wait_for -t 60 field_is trainingjob/victim '{.status.preemption.preemptor}' "$NS/urgent"
	[ "$(jp trainingjob/victim '{.status.preemption.graceSeconds}')" = 10 ]
	# The program trapped USR1 and saved its state on the shared Volume, then ended.
	wait_for -t 30 grep -q '^checkpoint at step [0-9][0-9]*$' "$VOLUME_DIR/victim"
	wait_for -t 60 phase_is urgent Running
	on_the_real_node urgent
	wait_for -t 60 phase_is victim Queued
	[ "$(jp trainingjob/victim '{.status.preemptions}')" = 1 ]
	[ "$(jp trainingjob/victim '{.status.restarts}')" = 0 ]
	kubectl delete partition real-scavenger real-urgent >/dev/null
}

# pods_of JOB: the job's pods as "name uid" lines, by name.
pods_of() {
	kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1" \
		-o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}' | sort
}

two_pods() {
	[ "$(pods_of "$1" | wc -l)" -eq 2 ]
}

@test "InPlace: rank 1 exiting 3 restarts both ranks in their own pods: the same pod UIDs, restarts 1, both print attempt 1" {
	job inplace '  numNodes: 2
  maxRestarts: 1
  restartStrategy: InPlace
  run: |
    echo "rank $SLURM_NODEID attempt $CADRE_RESTART_ATTEMPT count $SLURM_RESTART_COUNT"
    if [ "$CADRE_RESTART_ATTEMPT" = 0 ]; then
      if [ "$SLURM_NODEID" = 1 ]; then sleep 5; exit 3; fi
      exec sleep 300
    fi
    sleep 2'
	wait_for -t 120 two_pods inplace
	local before r
	before=$(pods_of inplace)
	# The kubelet keeps no log of a container it restarted here: follow attempt 0's as it runs.
	for r in 0 1; do
		wait_for -t 120 pod_phase_is "inplace-$r" Running
		kubectl -n "$NS" logs -f "inplace-$r" >"$BATS_TEST_TMPDIR/attempt0-$r" 2>&1 &
	done
	wait_for -t 120 field_is trainingjob/inplace '{.status.restarts}' 1
	wait_for -t 120 phase_is inplace Succeeded
	[ "$(pods_of inplace)" = "$before" ]
	[ "$(jp trainingjob/inplace '{.status.inPlaceRestart.attempt}')" = 1 ]
	[ "$(jp trainingjob/inplace '{.status.lastFailure.rank}')" = 1 ]
	[ "$(jp trainingjob/inplace '{.status.lastFailure.exitCode}')" = 3 ]
	[ "$(jp trainingjob/inplace '{.status.infraRestarts}')" = 0 ]
	wait
	for r in 0 1; do
		grep -qx "rank $r attempt 0 count 0" "$BATS_TEST_TMPDIR/attempt0-$r"
		kubectl -n "$NS" logs "inplace-$r" | grep -qx "rank $r attempt 1 count 1"
		# One container restart each, in the pod it had.
		[ "$(jp "pod/inplace-$r" '{.status.containerStatuses[0].restartCount}')" = 1 ]
	done
	grep -q 'attempt 1 began (in-place restart): stopping attempt 0' "$BATS_TEST_TMPDIR/attempt0-0"
	# Rank 1's container, restarted by the kubelet after its exit, waited for the attempt.
	kubectl -n "$NS" logs inplace-1 | grep -q 'attempt 0 ended on this rank; waiting for the next attempt'
}

@test "InPlace: the seed's training resumes from its checkpoint after a rank is killed, in the same pods" {
	a_volume ckpt
	job resume '  numNodes: 2
  resources: {accelerators: "H100:1"}
  maxRestarts: 1
  restartStrategy: InPlace
  volumes: {/mnt/checkpoints: ckpt}
  run: |
    srun torchrun --nnodes=$SLURM_NNODES --nproc_per_node=$SLURM_GPUS_PER_NODE \
      --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT \
      train.py --steps 24 --step-seconds 0.3'
	wait_for -t 120 bash -c "'$CADRE' -n '$NS' logs resume | grep -q '^0: step 4 '"
	local before step
	before=$(pods_of resume)
	cli -n "$NS" exec resume --rank 1 -- sh -c 'kill -KILL $(pgrep -f "[-]u train[.]py")'
	[ "$rc" -eq 0 ]
	wait_for -t 120 field_is trainingjob/resume '{.status.restarts}' 1
	wait_for -t 240 phase_is resume Succeeded
	[ "$(pods_of resume)" = "$before" ]
	[ "$(jp trainingjob/resume '{.status.inPlaceRestart.attempt}')" = 1 ]
	logs resume --attempt 1
	step=$(sed -n 's/^0: resumed from step \([0-9]*\) .*/\1/p' "$BATS_TEST_TMPDIR/logs")
	[ -n "$step" ] && [ "$step" -ge 4 ] && [ "$step" -lt 23 ]
	refute grep -q '^0: step 0 ' "$BATS_TEST_TMPDIR/logs"
	grep -qx '0: done: 24 steps' "$BATS_TEST_TMPDIR/logs"
}

@test "InPlace: a rank's pod deleted by hand is made again alone, on its node, while the other rank restarts in its pod" {
	job partial '  numNodes: 2
  restartStrategy: InPlace
  run: |
    echo "rank $SLURM_NODEID attempt $CADRE_RESTART_ATTEMPT"
    if [ "$CADRE_RESTART_ATTEMPT" = 0 ]; then exec sleep 300; fi
    sleep 30'
	# Attempt 1 runs long enough for both ranks to find each other: a rank that ended takes
	# its name out of DNS, and a peer still resolving would wait for it.
	wait_for -t 120 phase_is partial Running
	local uid0 uid1
	uid0=$(jp pod/partial-0 '{.metadata.uid}')
	uid1=$(jp pod/partial-1 '{.metadata.uid}')
	kubectl -n "$NS" delete pod partial-1 --wait=false >/dev/null
	wait_for -t 120 field_is trainingjob/partial '{.status.infraRestarts}' 1
	wait_for -t 120 phase_is partial Succeeded
	[ "$(jp trainingjob/partial '{.status.restarts}')" = 0 ]
	[ "$(jp trainingjob/partial '{.status.lastFailure.reason}')" = Evicted ]
	[ "$(jp pod/partial-0 '{.metadata.uid}')" = "$uid0" ]
	[ "$(jp pod/partial-1 '{.metadata.uid}')" != "$uid1" ]
	on_the_real_node partial
	kubectl -n "$NS" logs partial-0 | grep -qx "rank 0 attempt 1"
	kubectl -n "$NS" logs partial-1 | grep -qx "rank 1 attempt 1"
	[ "$(jp pod/partial-0 '{.status.containerStatuses[0].restartCount}')" = 1 ]
	[ "$(jp pod/partial-1 '{.status.containerStatuses[0].restartCount}')" = 0 ]
}
