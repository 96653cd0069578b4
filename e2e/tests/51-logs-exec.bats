#!/usr/bin/env bats
# cadre logs, cadre exec and cadre scancel --signal through the real API server: pods/log
# and pods/exec go from the API server to the node's kubelet, which kwok plays (its
# ClusterLogs and ClusterExec, e2e/cluster). kwok gives every container the log file
# $CADRE_E2E_STATE/kwok/containers.log, and runs an exec'd command as a process on this
# machine (in $CADRE_E2E_STATE/kwok/exec, with CADRE_BIN_DIR=$CADRE_E2E_STATE/kwok/cadre-bin):
# so both ranks show the same log lines, and `hostname` names this machine on each rank.

load helpers
load controller
load kwok_logs

CADRE=$REPO_ROOT/build/cadre

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
	program_pid=
}

teardown() {
	# Only the process group this test started, by the pid it recorded.
	if [[ $program_pid =~ ^[0-9]+$ ]] && ((program_pid > 1)); then
		kill -TERM -- "-$program_pid" 2>/dev/null || true
	fi
	rm -f "$KWOK_DIR/cadre-bin/program.pid"
	test_cleanup
}

one_error_line() {
	[ "$(wc -l <"$BATS_TEST_TMPDIR/err")" -eq 1 ]
	grep -qF -- "$1" "$BATS_TEST_TMPDIR/err"
}

pair_running() {
	kubectl -n "$NS" apply -f "$E2E_DIR/testdata/jobs/pair.yaml" >/dev/null
	wait_for -t 120 all_pods_running pair 2
	wait_for -t 60 phase_is pair Running
}

@test "cadre logs prints both ranks' lines as 0: and 1:; -f follows them and ends when the job ends" {
	pair_running
	log_line "loss 2.31 at step $NS"
	cli -n "$NS" logs pair
	[ "$rc" -eq 0 ]
	grep -qxF "0: loss 2.31 at step $NS" "$BATS_TEST_TMPDIR/out"
	grep -qxF "1: loss 2.31 at step $NS" "$BATS_TEST_TMPDIR/out"
	cli -n "$NS" logs pair --rank 1
	[ "$rc" -eq 0 ]
	grep -qxF "1: loss 2.31 at step $NS" "$BATS_TEST_TMPDIR/out"
	refute grep -q '^0: ' "$BATS_TEST_TMPDIR/out"

	"$CADRE" -n "$NS" logs -f pair >"$BATS_TEST_TMPDIR/follow" 2>&1 </dev/null &
	local follower=$!
	wait_for grep -qxF "1: loss 2.31 at step $NS" "$BATS_TEST_TMPDIR/follow"
	log_line "loss 1.07 at step $NS"
	wait_for grep -qxF "0: loss 1.07 at step $NS" "$BATS_TEST_TMPDIR/follow"
	wait_for grep -qxF "1: loss 1.07 at step $NS" "$BATS_TEST_TMPDIR/follow"
	kubectl -n "$NS" annotate pods -l cadre.dev/job-name=pair e2e.cadre.dev/exit-code=0 >/dev/null
	wait_for -t 60 phase_is pair Succeeded
	local t=$SECONDS
	while kill -0 "$follower" 2>/dev/null && ((SECONDS - t < 20)); do sleep 0.2; done
	! kill -0 "$follower" 2>/dev/null || { kill "$follower"; false; }
	wait "$follower"
	# The finished job's pods go now, not when the garbage collector gets to them.
	kubectl -n "$NS" delete pods -l cadre.dev/job-name=pair --wait=false >/dev/null
}

@test "cadre logs -f opens a stream the kubelet ended again where it stopped: no line lost, none twice" {
	pair_running
	log_line "before the cut of $NS"
	"$CADRE" -n "$NS" logs -f pair >"$BATS_TEST_TMPDIR/follow" 2>&1 </dev/null &
	echo "$!" >>"$BATS_TEST_TMPDIR/pids"
	wait_for grep -qxF "0: before the cut of $NS" "$BATS_TEST_TMPDIR/follow"
	wait_for grep -qxF "1: before the cut of $NS" "$BATS_TEST_TMPDIR/follow"
	# kwok plays every node's kubelet: its restart ends both ranks' streams, the pods run on.
	"$E2E_DIR/cluster" stop kwok >/dev/null
	"$E2E_DIR/cluster" start kwok >/dev/null
	log_line "after the cut of $NS"
	wait_for -t 30 lines_seen "0: after the cut of $NS" 1
	wait_for -t 30 lines_seen "1: after the cut of $NS" 1
	sleep 1
	lines_seen "0: before the cut of $NS" 1
	lines_seen "1: before the cut of $NS" 1
	lines_seen "0: after the cut of $NS" 1
	# the reopening said on stderr for each rank (more than once if kwok was still down)
	for rank in 0 1; do
		grep -q "^cadre logs: rank $rank (pod pair-$rank): .* while the pod runs; reading on from 20" \
			"$BATS_TEST_TMPDIR/follow"
	done
}

@test "cadre exec runs the command on every rank, each line prefixed; the exit code is the worst rank's" {
	pair_running
	cli -n "$NS" exec pair -- hostname
	[ "$rc" -eq 0 ]
	[ "$(sort "$BATS_TEST_TMPDIR/out")" = "$(printf '0: %s\n1: %s' "$(hostname)" "$(hostname)")" ]
	cli -n "$NS" exec pair -- sh -c 'echo to-stderr >&2'
	[ "$rc" -eq 0 ]
	[ "$(sort "$BATS_TEST_TMPDIR/err")" = "$(printf '0: to-stderr\n1: to-stderr')" ]

	# Both ranks at once: the first to make the directory exits 1, the other 4.
	cli -n "$NS" exec pair -- sh -c "mkdir lock-$NS 2>/dev/null && exit 1; exit 4"
	rmdir "$KWOK_DIR/exec/lock-$NS"
	[ "$rc" -eq 4 ]
	cli -n "$NS" exec pair --rank 1 -- sh -c 'echo one; exit 3'
	[ "$rc" -eq 3 ]
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = "1: one" ]
	cli -n "$NS" exec pair --rank 7 -- true
	[ "$rc" -eq 1 ]
	one_error_line "rank 7 of job \"pair\" is not running"
}

@test "cadre exec -it runs a shell on one rank with a terminal, driven through a pty" {
	pair_running
	run python3 - "$CADRE" "$NS" <<'PY'
import fcntl, os, pty, select, struct, sys, termios, time
cadre, ns = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
    os.execv(cadre, [cadre, "-n", ns, "exec", "pair", "-it", "--", "sh"])
seen = b""
def until(text, timeout=20):
    global seen
    end = time.time() + timeout
    while text not in seen and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
    return text in seen
os.write(fd, b"echo ok-$((6 * 7))\r")
got = until(b"ok-42")
# One command at a time: kwok's terminal may drop what a shell writes just before it exits.
os.write(fd, b"stty size\r")
size = until(b"33 101")
os.write(fd, b"exit 5\r")
until(b"never", timeout=2)
for _ in range(100):
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    time.sleep(0.1)
else:
    os.kill(pid, 9)  # our own child, by its pid
    done, status = os.waitpid(pid, 0)
print(repr(seen))
print("saw", got, "size", size, "exit", os.waitstatus_to_exitcode(status))
PY
	echo "$output"
	[[ $output == *"saw True size True exit 5"* ]]
}

@test "cadre scancel --signal=USR1 reaches the program of every rank and keeps the job" {
	pair_running
	# This machine stands in for the ranks' containers: the real entrypoint runs a
	# program here, in a session of its own, and records its pid where cadre-signal looks.
	# Both ranks' cadre-signal find that one program, so their two USR1s may arrive as one.
	local log=$BATS_TEST_TMPDIR/signals
	CADRE_BIN_DIR=$KWOK_DIR/cadre-bin \
		CADRE_RUN="trap 'echo got USR1 >>$log' USR1; while :; do sleep 0.2; done" \
		setsid sh -c "$(<"$REPO_ROOT/controller/build/entrypoint.sh")" </dev/null >/dev/null 2>&1 &
	program_pid=$!
	wait_for test -s "$KWOK_DIR/cadre-bin/program.pid"

	cli -n "$NS" scancel --signal=USR1 pair
	[ "$rc" -eq 0 ]
	[ ! -s "$BATS_TEST_TMPDIR/out" ] && [ ! -s "$BATS_TEST_TMPDIR/err" ]
	wait_for grep -q 'got USR1' "$log"
	kill -0 "$program_pid"
	phase_is pair Running

	# Once the program has ended, each rank says so: the signal went to both.
	kill -TERM -- "-$program_pid"
	wait "$program_pid" || true
	program_pid=
	cli -n "$NS" scancel --signal=SIGUSR1 pair
	[ "$rc" -eq 1 ]
	[ "$(sort "$BATS_TEST_TMPDIR/err")" = "$(printf '%s\n' \
		"0: cadre-signal: no program is running in this container" \
		"1: cadre-signal: no program is running in this container")" ]
	phase_is pair Running

	cli -n "$NS" scancel --signal=NOTASIGNAL pair
	[ "$rc" -eq 2 ]
	one_error_line "Invalid job signal: NOTASIGNAL"
}

@test "logs and exec against an unreachable or unauthorised API server: one line, exit 1" {
	local port cluster kc=$BATS_TEST_TMPDIR/kubeconfig
	port=$(free_ports 1)
	cp "$KUBECONFIG" "$kc"
	cluster=$(kubectl --kubeconfig "$kc" config view --minify -o jsonpath='{.contexts[0].context.cluster}')
	kubectl --kubeconfig "$kc" config set-cluster closed --server="https://127.0.0.1:$port" >/dev/null
	kubectl --kubeconfig "$kc" config set-context closed --cluster=closed --user="$(kubectl --kubeconfig "$kc" config view --minify -o jsonpath='{.contexts[0].context.user}')" >/dev/null
	kubectl --kubeconfig "$kc" config set-credentials forged --token=not-a-token >/dev/null
	kubectl --kubeconfig "$kc" config set-context forged --cluster="$cluster" --user=forged >/dev/null
	for cmd in "logs pair" "exec pair -- true" "scancel --signal=USR1 pair"; do
		# shellcheck disable=SC2086
		cli --kubeconfig "$kc" --context closed $cmd
		[ "$rc" -eq 1 ]
		one_error_line "cannot reach the API server https://127.0.0.1:$port"
		# shellcheck disable=SC2086
		cli --kubeconfig "$kc" --context forged $cmd
		[ "$rc" -eq 1 ]
		one_error_line "does not accept these credentials (401 Unauthorized)"
	done
}
