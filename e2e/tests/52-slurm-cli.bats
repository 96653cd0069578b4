#!/usr/bin/env bats
# The daily Slurm commands of the cadre CLI against a real API server and controller, with
# the user's kubeconfig: two jobs from `cadre sbatch`, one holding every GPU node and one
# waiting for room, as `cadre squeue` prints them, byte for byte; `cadre scancel` by job
# id; `cadre sacct` of a job that completed and one that failed with exit 3, also as
# submitit asks; `cadre salloc` through a terminal, and Ctrl-C while it waits; one line
# and a non-zero exit for a server that cannot be reached or refuses the user.

load helpers
load controller

CADRE=$REPO_ROOT/build/cadre
IMAGE=registry.invalid/cadre/e2e:latest

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
	wait_gpus_free
}

teardown() {
	test_cleanup
}

# cli ARGS...: runs cadre in $NS; $rc is its exit status, $BATS_TEST_TMPDIR/{out,err} its output.
cli() {
	rc=0
	"$CADRE" -n "$NS" "$@" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" </dev/null || rc=$?
	echo "cadre -n $NS $* -> $rc"
	echo "stdout: $(<"$BATS_TEST_TMPDIR/out")"
	echo "stderr: $(<"$BATS_TEST_TMPDIR/err")"
}

# one_error_line TEXT: stderr is one line that holds TEXT; nothing on stdout.
one_error_line() {
	[ "$(wc -l <"$BATS_TEST_TMPDIR/err")" -eq 1 ]
	grep -qF -- "$1" "$BATS_TEST_TMPDIR/err"
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
}

# script NAME: a batch script that runs until its pods are told to exit.
script() {
	printf '#!/bin/bash\n#SBATCH --job-name=%s\nsleep 100000\n' "$1" >"$BATS_TEST_TMPDIR/$1.sh"
	echo "$BATS_TEST_TMPDIR/$1.sh"
}

# submit NAME SBATCH_OPTIONS...: cadre sbatch --parsable; the job id on stdout.
submit() {
	local name=$1 file
	shift
	file=$(script "$name")
	"$CADRE" -n "$NS" sbatch --parsable --image "$IMAGE" "$@" "$file"
}

gpus_per_node() {
	kubectl get nodes -l type=kwok -o json |
		jq -r '[.items[].status.allocatable["nvidia.com/gpu"] // empty | tonumber] | min'
}

# squeue_time SECONDS: TIME as squeue prints it.
squeue_time() {
	local s=$1
	if ((s >= 86400)); then
		printf '%d-%02d:%02d:%02d' $((s / 86400)) $((s / 3600 % 24)) $((s / 60 % 60)) $((s % 60))
	elif ((s >= 3600)); then
		printf '%d:%02d:%02d' $((s / 3600)) $((s / 60 % 60)) $((s % 60))
	else
		printf '%d:%02d' $((s / 60)) $((s % 60))
	fi
}

# squeue_line ID PARTITION NAME USER ST TIME NODES NODELIST: one line of squeue's default
# format "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R" (cut to the width, right-justified).
squeue_line() {
	printf '%18.18s %9.9s %8.8s %8.8s %2.2s %10.10s %6.6s %s\n' "$@"
}

# squeue_is RUNNING_JOB WAITING_JOB NODES: `cadre squeue` prints exactly the header, the
# waiting job as PD (Resources) and the running one as R with its compressed host list,
# TIME from its startTime at one of the seconds the command ran in.
squeue_is() {
	local run=$1 wait=$2 nodes=$3 start user before after t hosts="$1-[0-$(($3 - 1))]"
	((nodes > 1)) || hosts=$run-0
	start=$(date -d "$(jp "trainingjob/$run" '{.status.startTime}')" +%s) || return 1
	user=$(jp "trainingjob/$run" '{.metadata.annotations.cadre\.dev/submitted-by}')
	before=$(date +%s)
	"$CADRE" -n "$NS" squeue >"$BATS_TEST_TMPDIR/squeue" 2>&1 || return 1
	after=$(date +%s)
	for ((t = before; t <= after; t++)); do
		{
			squeue_line JOBID PARTITION NAME USER ST TIME NODES 'NODELIST(REASON)'
			squeue_line "$(jp "trainingjob/$wait" '{.status.jobId}')" - "$wait" "$user" PD 0:00 1 '(Resources)'
			squeue_line "$(jp "trainingjob/$run" '{.status.jobId}')" - "$run" "$user" R \
				"$(squeue_time $((t - start)))" "$nodes" "$hosts"
		} >"$BATS_TEST_TMPDIR/squeue.want"
		cmp -s "$BATS_TEST_TMPDIR/squeue.want" "$BATS_TEST_TMPDIR/squeue" && return 0
	done
	diff "$BATS_TEST_TMPDIR/squeue.want" "$BATS_TEST_TMPDIR/squeue"
	return 1
}

# salloc_pty SCRIPT.py: runs cadre salloc through a pseudo-terminal, driven by the python
# statements of SCRIPT.py (expect(REGEX), send(TEXT)); its exit status is salloc's, 99
# when an expect failed.
salloc_pty() {
	# bash as the shell, with a HOME of its own: no ~/.bashrc in the way
	CADRE="$CADRE" HOME="$BATS_TEST_TMPDIR" python3 - "$@" <<'PY'
import os, pty, re, select, sys, time

args = sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.environ["SHELL"] = "/bin/bash"
    os.environ["PS1"] = "$ "
    os.execv(os.environ["CADRE"], [os.environ["CADRE"]] + args)
seen = ""

def fail(message):
    sys.stderr.write("salloc_pty: %s; saw: %r\n" % (message, seen))
    os.kill(pid, 9)
    os._exit(99)

def expect(pattern, timeout=120):
    """Wait for pattern (a regular expression) in the output; the match, its groups str."""
    global seen
    deadline = time.time() + timeout
    while True:
        m = re.search(pattern, seen)
        if m:
            seen = seen[m.end():]
            return m
        left = deadline - time.time()
        if left <= 0:
            fail("no %r within %ss" % (pattern, timeout))
        r, _, _ = select.select([fd], [], [], left)
        try:
            data = os.read(fd, 4096) if r else b""
        except OSError:
            data = b""
        if r and not data:
            fail("end of output before %r" % pattern)
        text = data.decode(errors="replace")
        sys.stdout.write(text)
        sys.stdout.flush()
        seen += text

def send(text):
    os.write(fd, text.encode())

exec(open(sys.argv[1]).read())
while True:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    sys.stdout.write(data.decode(errors="replace"))
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
PY
}

@test "squeue: the running job R with its host list, the waiting one PD (Resources), byte for byte; Ctrl-C cancels a waiting salloc; scancel removes a job and its pods" {
	local nodes gpus hold wait
	nodes=$(gpu_nodes)
	gpus=$(gpus_per_node)
	((nodes >= 1 && gpus >= 1))
	hold=$(submit hold -N "$nodes" --gpus-per-node="h100:$gpus")
	wait=$(submit wait -N 1 --gpus-per-node="h100:$gpus")
	[[ $hold =~ ^[0-9]+$ && $wait =~ ^[0-9]+$ ]]
	wait_for -t 120 phase_is hold Running
	wait_for -t 60 condition_is wait Admitted False InsufficientCapacity
	wait_for -t 30 squeue_is hold wait "$nodes"

	# salloc asks for a node too; it waits, and Ctrl-C there cancels it, as salloc does.
	cat >"$BATS_TEST_TMPDIR/ctrl-c.py" <<'PY'
m = expect(r"salloc: Pending job allocation (\d+)\r?\n")
expect(r"salloc: job %s queued and waiting for resources" % m.group(1))
send("\x03")
expect(r"salloc: Job allocation %s has been revoked\." % m.group(1))
PY
	rc=0
	salloc_pty "$BATS_TEST_TMPDIR/ctrl-c.py" -n "$NS" salloc -J impatient -N 1 \
		--gpus-per-node="h100:$gpus" --image "$IMAGE" || rc=$?
	[ "$rc" -eq 1 ]
	[ -z "$(kubectl -n "$NS" get trainingjob impatient -o name --ignore-not-found)" ]

	cli scancel "$hold"
	[ "$rc" -eq 0 ]
	[ ! -s "$BATS_TEST_TMPDIR/out" ] && [ ! -s "$BATS_TEST_TMPDIR/err" ]
	wait_for -t 60 not kubectl -n "$NS" get trainingjob hold
	wait_for -t 60 job_pod_count_is hold 0
	# the nodes it held are free: the waiting job starts
	wait_for -t 120 phase_is wait Running

	cli scancel "$hold"
	[ "$rc" -eq 1 ]
	one_error_line "cadre scancel: error: Kill job error on job id $hold: Invalid job id specified"
}

@test "sacct: a completed job COMPLETED 0:0 and one that exited 3 FAILED 3:0, and as submitit reads it" {
	local ok bad
	ok=$(submit ok -N 1 --gpus-per-node=h100:1)
	bad=$(submit bad -N 1 --gpus-per-node=h100:1)
	wait_for -t 120 phase_is ok Running
	wait_for -t 120 phase_is bad Running
	kubectl -n "$NS" annotate pod ok-0 e2e.cadre.dev/exit-code=0 >/dev/null
	kubectl -n "$NS" annotate pod bad-0 e2e.cadre.dev/exit-code=3 >/dev/null
	wait_for -t 60 phase_is ok Succeeded
	wait_for -t 60 phase_is bad Failed

	cli sacct -o JobID,JobName,State,ExitCode -j "$ok,$bad"
	[ "$rc" -eq 0 ]
	{
		printf '%-12s %10s %10s %8s \n' JobID JobName State ExitCode \
			------------ ---------- ---------- --------
		# sacct lists jobs by id
		printf '%-12s %10s %10s %8s \n' "$ok" ok COMPLETED 0:0 "$bad" bad FAILED 3:0 |
			sort -n
	} | cmp - "$BATS_TEST_TMPDIR/out"

	# submitit: sacct -o JobID,State --parsable2 -j ID
	cli sacct -o JobID,State --parsable2 -j "$bad"
	[ "$rc" -eq 0 ]
	printf 'JobID|State\n%s|FAILED\n' "$bad" | cmp - "$BATS_TEST_TMPDIR/out"
}

@test "salloc through a terminal: granted, the shell has SLURM_JOB_ID, exec -it reaches a rank; exit or SIGTERM releases the nodes" {
	local pid
	cat >"$BATS_TEST_TMPDIR/shell.py" <<PY
m = expect(r"salloc: Granted job allocation (\d+)\r?\n")
job_id = m.group(1)
expect(r"salloc: Nodes dbg-\[0-1\] are ready for job\r?\n")
expect(r"salloc: To reach the nodes: cadre -n $NS exec dbg -it -- bash\r?\n")
send("echo ID=\$SLURM_JOB_ID NODES=\$SLURM_JOB_NODELIST N=\$SLURM_NNODES NAME=\$SLURM_JOB_NAME\n")
expect(r"ID=%s NODES=dbg-\[0-1\] N=2 NAME=dbg\r?\n" % job_id)
send("echo PHASE=\$(kubectl -n $NS get trainingjob dbg -o jsonpath='{.status.phase}') PODS=\$(kubectl -n $NS get pods -l cadre.dev/job-name=dbg --field-selector=status.phase=Running -o name | wc -l)\n")
expect(r"PHASE=Running PODS=2\r?\n")
# The printed command: a shell on rank 0 with a terminal (kwok runs it on this machine), then
# back to salloc's shell. One command at a time: kwok's terminal may drop what a shell
# writes just before it exits.
send("PS1='salloc-shell> '\n")
expect(r"salloc-shell> ")
send("$CADRE -n $NS exec dbg -it -- sh -c 'echo rank-shell-ready; exec sh'\n")
expect(r"rank-shell-ready\r?\n")
send("echo in-rank-\$((6 * 7))\r")
expect(r"in-rank-42")
send("exit\r")
expect(r"salloc-shell> ")
send("echo back-in-salloc-\$SLURM_JOB_ID\n")
expect(r"back-in-salloc-%s\r?\n" % job_id)
send("exit 3\n")
expect(r"salloc: Relinquishing job allocation %s\r?\n" % job_id)
PY
	rc=0
	salloc_pty "$BATS_TEST_TMPDIR/shell.py" -n "$NS" salloc -J dbg -N 2 --gpus-per-node=h100:1 \
		--image "$IMAGE" || rc=$?
	[ "$rc" -eq 3 ]
	# salloc returns once the job and its pods are gone
	[ -z "$(kubectl -n "$NS" get trainingjob dbg -o name --ignore-not-found)" ]
	[ -z "$(kubectl -n "$NS" get pods -l cadre.dev/job-name=dbg -o name)" ]

	# a command instead of the shell, its exit code salloc's, the job named after it
	rc=0
	"$CADRE" -n "$NS" salloc -N 1 --gpus-per-node=h100:1 --image "$IMAGE" -- sh -c 'echo "job $SLURM_JOB_ID $SLURM_JOB_NAME"; exit 7' \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" </dev/null || rc=$?
	cat "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/err"
	[ "$rc" -eq 7 ]
	grep -qE '^job [0-9]+ sh$' "$BATS_TEST_TMPDIR/out"
	grep -qE '^salloc: Granted job allocation [0-9]+$' "$BATS_TEST_TMPDIR/err"
	grep -qE '^salloc: To reach the nodes: cadre -n [^ ]+ exec sh-[a-z0-9]{5} -it -- bash$' "$BATS_TEST_TMPDIR/err"
	[ -z "$(kubectl -n "$NS" get trainingjobs -o name)" ]

	# SIGTERM to salloc while its command runs: passed on, and the allocation released
	"$CADRE" -n "$NS" salloc -J term -N 1 --gpus-per-node=h100:1 --image "$IMAGE" -- sleep 1000 \
		>"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" </dev/null &
	pid=$!
	track_pid "$pid"
	wait_for -t 60 grep -q 'salloc: To reach the nodes' "$BATS_TEST_TMPDIR/err"
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	cat "$BATS_TEST_TMPDIR/err"
	[ "$rc" -eq 1 ]
	grep -qE '^salloc: Relinquishing job allocation [0-9]+$' "$BATS_TEST_TMPDIR/err"
	[ -z "$(kubectl -n "$NS" get trainingjob term -o name --ignore-not-found)" ]
	[ -z "$(kubectl -n "$NS" get pods -l cadre.dev/job-name=term -o name)" ]
}

@test "squeue, sacct, scancel and salloc against an unreachable or unauthorised API server: one line, exit 1" {
	local kc=$BATS_TEST_TMPDIR/kubeconfig cluster token port cmd
	port=$(free_ports 1)
	cp "$KUBECONFIG" "$BATS_TEST_TMPDIR/closed"
	cluster=$(kubectl --kubeconfig "$KUBECONFIG" config view --minify -o jsonpath='{.contexts[0].context.cluster}')
	kubectl --kubeconfig "$BATS_TEST_TMPDIR/closed" config set-cluster "$cluster" --server="https://127.0.0.1:$port" >/dev/null
	for cmd in squeue sacct "scancel 1" "salloc --image i -N 1 true"; do
		# shellcheck disable=SC2086
		cli --kubeconfig "$BATS_TEST_TMPDIR/closed" $cmd
		[ "$rc" -eq 1 ]
		one_error_line "cadre ${cmd%% *}: cannot reach the API server https://127.0.0.1:$port"
	done

	kubectl -n "$NS" create serviceaccount nobody >/dev/null
	token=$(kubectl -n "$NS" create token nobody)
	cp "$KUBECONFIG" "$kc"
	kubectl --kubeconfig "$kc" config set-credentials nobody --token="$token" >/dev/null
	kubectl --kubeconfig "$kc" config set-context nobody --cluster="$cluster" --user=nobody >/dev/null
	kubectl --kubeconfig "$kc" config set-credentials forged --token=not-a-token >/dev/null
	kubectl --kubeconfig "$kc" config set-context forged --cluster="$cluster" --user=forged >/dev/null
	cli --kubeconfig "$kc" --context nobody squeue
	[ "$rc" -eq 1 ]
	one_error_line "cadre squeue: list trainingjobs in namespace \"$NS\": not allowed (403 Forbidden): trainingjobs.cadre.dev is forbidden"
	cli --kubeconfig "$kc" --context nobody salloc --image i -N 1 true
	[ "$rc" -eq 1 ]
	one_error_line "not allowed (403 Forbidden)"
	for cmd in sacct "salloc --image i -N 1 true"; do
		# shellcheck disable=SC2086
		cli --kubeconfig "$kc" --context forged $cmd
		[ "$rc" -eq 1 ]
		one_error_line "does not accept these credentials (401 Unauthorized)"
	done
	[ -z "$(kubectl -n "$NS" get trainingjobs -o name)" ]
}
