# The log every kwok container shows, for the tests of cadre logs (51-logs-*.bats): kwok
# gives every container the one file $CADRE_E2E_STATE/kwok/containers.log (e2e/cluster).

KWOK_DIR=$CADRE_E2E_STATE/kwok

# log_line TEXT: TEXT appended to every container's log, as the container runtime writes it.
log_line() {
	printf '%s stdout F %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)" "$1" >>"$KWOK_DIR/containers.log"
}

# lines_seen LINE N: the follower printed LINE exactly N times.
lines_seen() {
	[ "$(grep -cxF -- "$1" "$BATS_TEST_TMPDIR/follow")" -eq "$2" ]
}
