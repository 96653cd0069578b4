#!/usr/bin/env bats
# cadre logs -f across a gang restart, through the real API server and kwok's log streams
# (as 51-logs-exec.bats; kwok gives every container the one log file
# $CADRE_E2E_STATE/kwok/containers.log). kwok's stream of a deleted pod stays open and goes
# on sending the file's new lines, so the old attempt's streams must print nothing once
# they are stopped: a line appended within a stream's 100 ms tick of its stop was printed
# by both attempts' followers (1 run in 5 to 10 here before kube_http_stream stopped
# handing on data once its stop flag is set).

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
}

teardown() {
	# What the follower printed (and said on stderr: a stream it opened again), and whether
	# it still runs, for a failure's output.
	if [[ -f $BATS_TEST_TMPDIR/follow ]]; then
		echo "---- cadre logs -f printed (pid $(tail -n 1 "$BATS_TEST_TMPDIR/pids" 2>/dev/null)," \
			"$(kill -0 "$(tail -n 1 "$BATS_TEST_TMPDIR/pids" 2>/dev/null)" 2>/dev/null &&
				echo running || echo gone)):"
		grep -F -e "$NS" -e "cadre logs:" -- "$BATS_TEST_TMPDIR/follow" || true
	fi
	test_cleanup
}

@test "cadre logs -f follows the pods of a restart, which keep the old pods' names" {
	kubectl -n "$NS" apply -f "$E2E_DIR/testdata/jobs/flaky.yaml" >/dev/null
	wait_for -t 120 all_pods_running flaky 2
	log_line "epoch 1 of $NS"
	"$CADRE" -n "$NS" logs -f flaky >"$BATS_TEST_TMPDIR/follow" 2>&1 </dev/null &
	echo "$!" >>"$BATS_TEST_TMPDIR/pids"
	wait_for grep -qxF "1: epoch 1 of $NS" "$BATS_TEST_TMPDIR/follow"
	kubectl -n "$NS" annotate pod flaky-1 e2e.cadre.dev/exit-code=3 >/dev/null
	wait_for -t 60 field_is tj/flaky '{.status.restarts}' 1
	wait_for -t 120 all_pods_running flaky 2
	# kwok's log is one file: attempt 1's streams print it from its start again.
	wait_for -t 30 lines_seen "0: epoch 1 of $NS" 2
	wait_for -t 30 lines_seen "1: epoch 1 of $NS" 2
	log_line "epoch 2 of $NS"
	wait_for lines_seen "1: epoch 2 of $NS" 1
	# the old attempt's streams were stopped: the new line comes once per rank
	sleep 1
	lines_seen "0: epoch 2 of $NS" 1
}
