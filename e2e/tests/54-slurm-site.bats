#!/usr/bin/env bats
# A Slurm site's daily work on the real control plane (issue 30): the demo's Partitions
# (manifests/samples/partitions: gpu, the default, with a default image; debug), the seed's
# train.sh submitted with no flag, -p onto a partition's nodes, an unknown partition
# refused in Slurm's words, -w/-x/--exclusive placing ranks, a partition's allowedNamespaces and maxJobPriority refused at
# sbatch and by the controller and shown by scontrol show partition, a job array throttled by %2 with every element's task id, an
# afterok chain and a failed parent, sbatch --wait's exit code, and sinfo, squeue of an
# array and scontrol show job compared byte for byte with Slurm's formats.
#
# Slurm's formats, as the reference lines below are built (SchedMD/slurm 284c3b9):
#   sinfo     src/sinfo/opts.c: "partition:9 ,available:.5 ,time:.10 ,nodes:.6
#             ,statecompact:.6 ,nodelist:0", PARTITION as wide as the longest name with
#             its "*" (print.c _set_part_field_size, at least 9)
#   squeue    src/squeue/opts.c: "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"; an array's
#             pending elements "%u_[%s]" (print.c _print_job_job_id)
#   scontrol  src/scontrol/info_job.c _sprint_job_info: "JobId=%u JobName=%s", then each
#             line after "\n   ", the record ended by a blank line

load helpers
load controller

CADRE=$REPO_ROOT/build/cadre
SEED=$REPO_ROOT/unit/testdata/convert/train.sh
PARTITIONS=$REPO_ROOT/manifests/samples/partitions
DEMO_IMAGE=nvcr.io/nvidia/pytorch:24.05-py3
POOL=e2e.cadre.dev/pool

setup_file() {
	crds_install
	kubectl apply -k "$PARTITIONS" >/dev/null
	controller_start
}

teardown_file() {
	controller_stop
	kubectl delete -k "$PARTITIONS" --ignore-not-found >/dev/null
	kubectl delete partition fenced capped --ignore-not-found >/dev/null
	kubectl label nodes -l "$POOL" "$POOL-" >/dev/null 2>&1 || true
}

setup() {
	e2e_namespace
	controller_mark
	wait_gpus_free
}

teardown() {
	test_cleanup
}

# cli ARGS...: runs cadre in $NS (times in UTC); $rc is its exit status,
# $BATS_TEST_TMPDIR/{out,err} its output.
cli() {
	rc=0
	TZ=UTC "$CADRE" -n "$NS" "$@" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" </dev/null || rc=$?
	echo "cadre -n $NS $* -> $rc"
	echo "stdout: $(<"$BATS_TEST_TMPDIR/out")"
	echo "stderr: $(<"$BATS_TEST_TMPDIR/err")"
}

# sleeper NAME [SBATCH_LINES]: a batch script that runs until its pods are told to exit.
sleeper() {
	printf '#!/bin/bash\n#SBATCH --job-name=%s\n%s\nsleep 100000\n' "$1" "${2:-}" >"$BATS_TEST_TMPDIR/$1.sh"
	echo "$BATS_TEST_TMPDIR/$1.sh"
}

# job NAME NODES EXIT AFTER [SPEC_YAML]: a TrainingJob of 8-GPU ranks whose pods exit EXIT
# after AFTER (kwok's annotations through podTemplate), with more spec lines.
job() {
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  numNodes: $2
  resources:
    accelerators: "H100:8"
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
${5:-}
  podTemplate:
    metadata:
      annotations:
        e2e.cadre.dev/exit-code: "$3"
        e2e.cadre.dev/exit-after: "$4"
EOF
}

# hostlist NAME...: Slurm's compressed form of names PREFIX-N sorted by N (one prefix).
hostlist() {
	local prefix=${1%-*} out="" lo="" prev="" n
	if (($# == 1)); then echo "$1"; return; fi
	for n in $(printf '%s\n' "$@" | sed 's/.*-//' | sort -n) ""; do
		if [[ -n $prev && $n == $((prev + 1)) ]]; then prev=$n; continue; fi
		if [[ -n $lo ]]; then
			out+=${out:+,}$lo
			[[ $prev != "$lo" ]] && out+=-$prev
		fi
		lo=$n prev=$n
	done
	echo "$prefix-[$out]"
}

# sinfo_line PARTITION AVAIL TIMELIMIT NODES STATE NODELIST: sinfo's default format with
# a PARTITION of width 9.
sinfo_line() {
	printf '%-9.9s %5.5s %10.10s %6.6s %6.6s %s\n' "$@"
}

# squeue_line ID PARTITION NAME USER ST TIME NODES NODELIST: squeue's default format.
squeue_line() {
	printf '%18.18s %9.9s %8.8s %8.8s %2.2s %10.10s %6.6s %s\n' "$@"
}

# admitted_elements ARRAY: how many of the array's elements are admitted and not ended.
admitted_elements() {
	kubectl -n "$NS" get tj -l "cadre.dev/array-job=$1" -o json | jq '[.items[]
		| select(.status.admittedTime != null)
		| select(.status.phase != "Succeeded" and .status.phase != "Failed")] | length'
}

@test "the seed's train.sh with no flag runs on the default partition with its image; -p lands on the partition's nodes; an unknown partition is refused in Slurm's words" {
	cli sbatch "$SEED"
	[ "$rc" -eq 0 ]
	grep -q '^Submitted batch job [0-9]*$' "$BATS_TEST_TMPDIR/out"
	grep -qF "partition gpu's defaultImage $DEMO_IMAGE runs the job" "$BATS_TEST_TMPDIR/err"
	wait_for -t 120 phase_is llama-pretrain Running
	[ "$(jp tj/llama-pretrain '{.status.partition}')" = gpu ]
	[ "$(jp pod/llama-pretrain-0 '{.spec.containers[?(@.name=="main")].image}')" = "$DEMO_IMAGE" ]
	[ "$(jp tj/llama-pretrain '{.spec.image}')" = "" ]
	cli scancel llama-pretrain
	[ "$rc" -eq 0 ]
	wait_for -t 60 not kubectl -n "$NS" get tj llama-pretrain
	wait_gpus_free

	# gpu's nodes become two of the four: its jobs land there.
	mapfile -t nodes < <(kubectl get nodes -l type=kwok -o name | sed 's|node/||' | sort -t- -k3 -n)
	kubectl label node "${nodes[-1]}" "${nodes[-2]}" "$POOL=gpu" --overwrite >/dev/null
	kubectl patch partition gpu --type merge -p "{\"spec\":{\"nodeSelector\":{\"$POOL\":\"gpu\"}}}" >/dev/null
	cli sbatch -p gpu -N 2 --gpus-per-node=h100:8 "$(sleeper placed)"
	[ "$rc" -eq 0 ]
	wait_for -t 120 phase_is placed Running
	for pod in placed-0 placed-1; do
		on=$(jp "pod/$pod" '{.spec.nodeName}')
		[[ $on == "${nodes[-1]}" || $on == "${nodes[-2]}" ]]
	done
	kubectl patch partition gpu --type json -p "[{\"op\":\"replace\",\"path\":\"/spec/nodeSelector\",\"value\":{\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\"}}]" >/dev/null

	# An unknown partition: slurmctld's words, exit 1, nothing created.
	cli sbatch -p nope "$(sleeper refused)"
	[ "$rc" -eq 1 ]
	[ "$(<"$BATS_TEST_TMPDIR/err")" = "sbatch: error: invalid partition specified: nope" ]
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
	run kubectl -n "$NS" get tj refused
	[ "$status" -ne 0 ]
}

@test "sbatch -w, -x and --exclusive put the ranks where asked; a node that does not exist is refused in Slurm's words" {
	mapfile -t nodes < <(kubectl get nodes -l type=kwok -o name | sed 's|node/||' | sort -t- -k3 -n)
	# One GPU of the first node busy: --exclusive keeps off it even with room left.
	cli sbatch -N 1 --gpus-per-node=h100:1 -w "${nodes[0]}" "$(sleeper small)"
	[ "$rc" -eq 0 ]
	wait_for -t 120 phase_is small Running
	cli sbatch -N 2 --gpus-per-node=h100:1 -w "${nodes[2]}" -x "${nodes[1]}" --exclusive \
		"$(sleeper picky)"
	[ "$rc" -eq 0 ]
	wait_for -t 120 phase_is picky Running
	# Rank 0 on the listed node; rank 1 on a node of its own: not the listed one, not the
	# excluded one, not the one another job is on (the cluster may have more than four).
	[ "$(jp pod/picky-0 '{.spec.nodeName}')" = "${nodes[2]}" ]
	second=$(jp pod/picky-1 '{.spec.nodeName}')
	[[ $second != "${nodes[0]}" && $second != "${nodes[1]}" && $second != "${nodes[2]}" ]]
	cli scontrol show job picky
	grep -qF "ReqNodeList=${nodes[2]} ExcNodeList=${nodes[1]}" "$BATS_TEST_TMPDIR/out"
	grep -qF "Exclusive=NODE" "$BATS_TEST_TMPDIR/out"
	# Its nodes are held whole: a one-GPU job goes to the node left, not beside it.
	cli sbatch -N 1 --gpus-per-node=h100:1 "$(sleeper after)"
	wait_for -t 120 phase_is after Running
	on=$(jp pod/after-0 '{.spec.nodeName}')
	[[ $on != "${nodes[2]}" && $on != "$second" ]]
	cli sbatch -N 1 -w no-such-node "$(sleeper nowhere)"
	[ "$rc" -eq 1 ]
	[ "$(<"$BATS_TEST_TMPDIR/err")" = "sbatch: error: Batch job submission failed: Invalid node name specified (no node no-such-node)" ]
}

@test "a partition's allowedNamespaces and maxJobPriority refuse a job at sbatch and in its status, naming the field" {
	# The schema: namespace names, each once, and an int32.
	run kubectl apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: fenced}
spec: {allowedNamespaces: [Bad_NS, ml, ml], maxJobPriority: 4294967296}
EOF
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *'spec.allowedNamespaces[0]'* && $output == *'spec.allowedNamespaces[2]: Duplicate value'* ]]
	[[ $output == *'spec.maxJobPriority'* ]]
	kubectl apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: fenced}
spec: {allowedNamespaces: [vision]}
---
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata: {name: capped}
spec: {allowedNamespaces: [vision, $NS], maxJobPriority: 50}
EOF

	# sbatch refuses each in one line, Slurm's words then the field's; nothing is created.
	cli sbatch -p fenced "$(sleeper fenced)"
	[ "$rc" -eq 1 ]
	[ "$(<"$BATS_TEST_TMPDIR/err")" = "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified (partition fenced: namespace $NS is not in spec.allowedNamespaces)" ]
	cli sbatch -p capped --priority 100 "$(sleeper capped)"
	[ "$rc" -eq 1 ]
	[ "$(<"$BATS_TEST_TMPDIR/err")" = "sbatch: error: Batch job submission failed: Access/permission denied (spec.priority 100 is above partition capped's maxJobPriority 50)" ]
	run kubectl -n "$NS" get tj fenced capped
	[ "$status" -ne 0 ]
	# scontrol show partition: AllowAccounts as slurm.conf lists it, ALL without a list.
	cli scontrol show partition capped
	[ "$rc" -eq 0 ]
	[ "$(sed -n 2p "$BATS_TEST_TMPDIR/out")" = "   AllowGroups=ALL AllowAccounts=vision,$NS AllowQos=ALL" ]
	cli scontrol show partition debug
	[ "$(sed -n 2p "$BATS_TEST_TMPDIR/out")" = "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL" ]
	cli scontrol show partition nope
	[ "$rc" -eq 1 ]
	[ "$(<"$BATS_TEST_TMPDIR/out")" = "Partition nope not found" ]

	# Applied anyway, the controller fails them with InvalidPartition and the same words.
	job outsider 1 0 1h "  partition: fenced"
	job eager 1 0 1h "  partition: capped
  priority: 100"
	wait_for -t 30 phase_is outsider Failed
	[ "$(jp tj/outsider '{.status.message}')" = "partition fenced: namespace $NS is not in spec.allowedNamespaces" ]
	[ "$(jp tj/outsider '{.status.conditions[?(@.type=="Failed")].reason}')" = InvalidPartition ]
	wait_for -t 30 phase_is eager Failed
	[ "$(jp tj/eager '{.status.message}')" = "spec.priority 100 is above partition capped's maxJobPriority 50" ]
	kubectl delete partition fenced capped >/dev/null
}

@test "an array of 10 with %2 never has more than 2 elements admitted, and every element sees its task id" {
	job sweep 1 0 2s '  array: "0-9%2"'
	samples=$BATS_TEST_TMPDIR/samples
	: >"$samples"
	deadline=$((SECONDS + 240))
	while [[ $(jp tj/sweep '{.status.phase}') != Succeeded ]]; do
		admitted_elements sweep >>"$samples"
		((SECONDS < deadline)) || { echo "sweep did not succeed"; kubectl -n "$NS" get tj; false; }
		sleep 0.3
	done
	echo "samples: $(sort -n "$samples" | uniq -c | tr '\n' ' ')"
	[ "$(sort -n "$samples" | tail -n 1)" -le 2 ]
	grep -qx 2 "$samples"
	[ "$(kubectl -n "$NS" get tj -l cadre.dev/array-job=sweep -o name | wc -l)" -eq 10 ]
	for i in $(seq 0 9); do
		[ "$(jp "tj/sweep-$i" '{.status.phase}')" = Succeeded ]
	done
	# Each element's pod had its own index (the pods are kept after success).
	for i in 0 5 9; do
		env=$(pod_env "sweep-$i-0")
		[ "$(jq -r .SLURM_ARRAY_TASK_ID <<<"$env")" = "$i" ]
		[ "$(jq -r .SLURM_ARRAY_JOB_ID <<<"$env")" = "$(jp tj/sweep '{.status.jobId}')" ]
		[ "$(jq -r .SLURM_ARRAY_TASK_COUNT <<<"$env")" = 10 ]
		[ "$(jq -r .SLURM_ARRAY_TASK_MAX <<<"$env")" = 9 ]
	done
}

@test "an array element whose name another job holds fails, named, and the array ends" {
	job taken-1 1 0 1h
	job taken 1 0 1s '  array: "0-2"'
	wait_for -t 90 phase_is taken Failed
	[ "$(jp tj/taken '{.status.array.failed}')" = 1 ]
	[ "$(jp tj/taken-0 '{.status.phase}')" = Succeeded ]
	[ "$(jp tj/taken-2 '{.status.phase}')" = Succeeded ]
	# The other job is left alone: not adopted, not deleted.
	[ -z "$(jp tj/taken-1 '{.metadata.ownerReferences}')" ]
	kubectl -n "$NS" describe tj taken | grep -q 'ElementNameTaken.*trainingjob taken-1 exists and is not this array'
	kubectl -n "$NS" delete tj taken taken-1 --wait=false >/dev/null
}

@test "an afterok chain starts in order; a failed parent makes the child DependencyNeverSatisfied" {
	job chain-a 1 0 3s
	job chain-b 1 0 3s "$(printf '  dependency:\n    items:\n    - type: afterok\n      jobs: [chain-a]')"
	job chain-c 1 0 1s "$(printf '  dependency:\n    items:\n    - type: afterok\n      jobs: [chain-b]')"
	wait_for -t 60 condition_is chain-c Admitted False Dependency
	wait_for -t 180 phase_is chain-c Succeeded
	a=$(jp tj/chain-a '{.status.completionTime}')
	b=$(jp tj/chain-b '{.status.startTime}')
	b_end=$(jp tj/chain-b '{.status.completionTime}')
	c=$(jp tj/chain-c '{.status.startTime}')
	echo "a ended $a, b started $b ended $b_end, c started $c"
	[[ ! $b < $a ]]
	[[ ! $c < $b_end ]]

	job parent 1 3 1s
	job child 1 0 1s "$(printf '  dependency:\n    items:\n    - type: afterok\n      jobs: [parent]')"
	wait_for -t 120 phase_is parent Failed
	wait_for -t 60 phase_is child Failed
	wait_for -t 10 condition_is child Failed True DependencyNeverSatisfied
	[ "$(kubectl -n "$NS" get pods -l cadre.dev/job-name=child -o name | wc -l)" -eq 0 ]
}

@test "sbatch --wait returns the job's exit code" {
	"$CADRE" -n "$NS" sbatch --wait --image registry.invalid/cadre/e2e:latest -N 1 --gpus-per-node=h100:8 "$(sleeper waited)" \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" </dev/null &
	pid=$!
	track_pid "$pid"
	wait_for -t 120 phase_is waited Running
	# sbatch reads the job's id every 200 ms: on kwok the job can be Running first.
	wait_for -t 10 grep -q '^Submitted batch job [0-9]*$' "$BATS_TEST_TMPDIR/out"
	kill -0 "$pid"
	kubectl -n "$NS" annotate pod waited-0 e2e.cadre.dev/exit-code=3 >/dev/null
	rc=0
	wait "$pid" || rc=$?
	cat "$BATS_TEST_TMPDIR/err"
	[ "$rc" -eq 3 ]
}

@test "sinfo, squeue of an array and scontrol show job, byte for byte" {
	# One job of one 8-GPU node: that node alloc, the others idle.
	cli sbatch --image registry.invalid/cadre/e2e:latest -N 1 --gpus-per-node=h100:8 -t 30:00 "$(sleeper one)"
	[ "$rc" -eq 0 ]
	id=$(sed 's/.* //' "$BATS_TEST_TMPDIR/out")
	wait_for -t 120 phase_is one Running
	busy=$(jp pod/one-0 '{.spec.nodeName}')
	mapfile -t idle < <(kubectl get nodes -l nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3 -o json |
		jq -r --arg busy "$busy" '.items[] | select(.spec.unschedulable != true)
			| select(any(.status.conditions[]; .type == "Ready" and .status == "True"))
			| .metadata.name | select(. != $busy)')
	cli sinfo
	[ "$rc" -eq 0 ]
	{
		sinfo_line PARTITION AVAIL TIMELIMIT NODES STATE NODELIST
		sinfo_line debug up 30:00 1 alloc "$busy"
		sinfo_line debug up 30:00 "${#idle[@]}" idle "$(hostlist "${idle[@]}")"
		sinfo_line 'gpu*' up 7-00:00:00 1 alloc "$busy"
		sinfo_line 'gpu*' up 7-00:00:00 "${#idle[@]}" idle "$(hostlist "${idle[@]}")"
	} >"$BATS_TEST_TMPDIR/want"
	diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out"

	# scontrol show job of the running job.
	user=$(jp tj/one '{.metadata.annotations.cadre\.dev/submitted-by}')
	utc() { TZ=UTC date -d "$1" +%Y-%m-%dT%H:%M:%S; }
	submit=$(utc "$(jp tj/one '{.metadata.creationTimestamp}')")
	start=$(utc "$(jp tj/one '{.status.startTime}')")
	end=$(TZ=UTC date -d "$(jp tj/one '{.status.startTime}') + 30 minutes" +%Y-%m-%dT%H:%M:%S)
	admitted=$(utc "$(jp tj/one '{.status.admittedTime}')")
	before=$(date +%s)
	cli scontrol show job "$id"
	after=$(date +%s)
	[ "$rc" -eq 0 ]
	t0=$(date -d "$(jp tj/one '{.status.startTime}')" +%s)
	ok=0
	for ((t = before; t <= after; t++)); do
		run_time=$(TZ=UTC date -d "@$((t - t0))" +%H:%M:%S)
		# WorkDir: the submit directory, which went along with the job (docs/code.md).
		cat >"$BATS_TEST_TMPDIR/want" <<EOF
JobId=$id JobName=one
   UserId=$user(0) GroupId=$NS(0) MCS_label=N/A
   Priority=0 Nice=0 Account=$NS QOS=normal
   JobState=RUNNING Reason=None Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=$run_time TimeLimit=00:30:00 TimeMin=N/A
   SubmitTime=$submit EligibleTime=$submit
   AccrueTime=$submit
   StartTime=$start EndTime=$end Deadline=N/A
   SuspendTime=None SecsPreSuspend=0 LastSchedEval=$admitted Scheduler=Main
   Partition=gpu AllocNode:Sid=cadre:0
   ReqNodeList=(null) ExcNodeList=(null)
   NodeList=one-0
   BatchHost=one-0
   NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=N/A ReqB:S:C:T=0:0:*:*
   ReqTRES=cpu=1,node=1,billing=1,gres/gpu=8
   AllocTRES=cpu=1,node=1,billing=1,gres/gpu=8
   Socks/Node=* NtasksPerN:B:S:C=1:0:*:* CoreSpec=*
   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0
   Features=(null) DelayBoot=00:00:00
   OverSubscribe=NO Exclusive=NO Contiguous=0 Licenses=(null) LicensesAlloc=(null) Network=(null)
   Command=one
   WorkDir=$(pwd -P)
   StdErr=(container log)
   StdIn=/dev/null
   StdOut=(container log)
   TresPerNode=gres/gpu:h100:8

EOF
		cmp -s "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out" && { ok=1; break; }
	done
	((ok)) || diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out"

	# An array of 4 with %1 whose elements run until told: one element R, the rest one row.
	cli sbatch --image registry.invalid/cadre/e2e:latest -N 1 --gpus-per-node=h100:8 --array=0-3%1 "$(sleeper arr)"
	[ "$rc" -eq 0 ]
	aid=$(sed 's/.* //' "$BATS_TEST_TMPDIR/out")
	wait_for -t 120 phase_is arr-0 Running
	cli squeue -j "$aid"
	[ "$rc" -eq 0 ]
	cli squeue -j "$aid" -o '%i %t %j %P %r'
	[ "$rc" -eq 0 ]
	{
		echo "JOBID ST NAME PARTITION REASON"
		echo "${aid}_[1-3%1] PD arr gpu JobArrayTaskLimit"
		echo "${aid}_0 R arr gpu None"
	} >"$BATS_TEST_TMPDIR/want"
	diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/out"
	cli scancel "${aid}_0"
	[ "$rc" -eq 0 ]
	wait_for -t 60 phase_is arr-1 Running
	cli scancel "$aid"
	[ "$rc" -eq 0 ]
	wait_for -t 60 not kubectl -n "$NS" get tj arr
}
