#!/usr/bin/env bats
# The client runtime against a real control plane that misbehaves (docs/design.md 5): the
# controller syncs its caches before it calls itself ready; its watches survive the API
# server going away and coming back, a stopped process, and a resourceVersion that etcd
# compaction has made too old (410 Gone, then a relist); with --leader-elect exactly one
# replica leads, another takes over when the leader dies, and a SIGTERM hands the Lease
# over at once; and the process ends its run under valgrind with no leak and no error.
#
# Each test starts its own controller(s) and stops them in teardown, which also brings the
# API server back if a failed test left it stopped. Tests that stop the API server take
# about a minute each: on 2 busy cores it needs 20-40 s to come back.

load helpers
load controller
load runtime

setup_file() {
	crds_install
	# The ServiceAccount's kubeconfig, made now: a test starts a controller while the API
	# server is down.
	controller_kubeconfig >/dev/null
}

setup() {
	e2e_namespace
	controller_mark
}

teardown() {
	local rc=0 pid
	if pid=$(controller_pid); then
		kill -CONT "$pid" 2>/dev/null || true
	fi
	apiserver_ensure_up || rc=1
	ctl_stop_all
	# The leader-election test's Lease lives in cadre-system, which outlives $NS.
	if [[ -n ${LEASE:-} ]]; then
		kubectl -n "$INSTALL_NS" delete lease "$LEASE" --ignore-not-found >/dev/null 2>&1 || true
	fi
	if [[ -f $(_controller_dir)/pid ]]; then
		test_cleanup || rc=1
		controller_stop || rc=1
	else
		show_state
		jobs_cleanup || rc=1
		e2e_namespace_delete
	fi
	return $rc
}

# start_controller: the file's controller (controller.bash), with /metrics on a known port
# (a later --metrics-addr wins over controller_start's). Sets METRICS and HEALTH.
start_controller() {
	METRICS=127.0.0.1:$(free_ports 1)
	controller_start --metrics-addr "$METRICS"
	HEALTH=$(<"$(_controller_dir)/health")
}

# log_since_mark_has TEXT: the file's controller logged TEXT during this test.
log_since_mark_has() {
	controller_log_has "$1"
}

# How long pods may take to be bound and Running once the controller has released them,
# after the API server was away: kube-scheduler's and kwok's informers wait out client-go's
# backoff (800 ms doubling to 30 s, plus up to as much again of jitter, reset only after
# 2 minutes without a failure) before they list again. That wait is theirs; the
# controller's own part is checked with pair_released and the usual 60 s.
after_outage=150

# tj_gone_rv: the resourceVersion of the first TrainingJob watch that ended with 410 Gone
# during this test, from the log line
# "reflector: trainingjobs: watch from resourceVersion RV ended: gone".
tj_gone_rv() {
	tail -n "+$((${CONTROLLER_LOG_MARK:-0} + 1))" "$(_controller_dir)/log" |
		sed -n 's/.*reflector: trainingjobs: watch from resourceVersion \([^ ]*\) ended: gone$/\1/p' |
		head -n 1
}

# ---------------------------------------------------------------------------------------

@test "started as its own ServiceAccount, it syncs every cache, says so, and only then is ready" {
	start_controller
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$HEALTH/readyz")" = 200 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$HEALTH/healthz")" = 200 ]
	for cache in trainingjobs volumes pods "pods (other pods)" nodes services \
		persistentvolumeclaims persistentvolumes; do
		log_since_mark_has "manager: cache synced: $cache (" ||
			{ echo "no 'cache synced: $cache' in the log"; false; }
	done
	log_since_mark_has "manager: all caches synced"
	# It syncs before it leads: the order of the log is the order of start-up.
	log=$(tail -n "+$((CONTROLLER_LOG_MARK + 1))" "$(_controller_dir)/log")
	synced_line=$(grep -n 'manager: all caches synced' <<<"$log" | head -n 1 | cut -d: -f1)
	leader_line=$(grep -n 'leader: became leader' <<<"$log" | head -n 1 | cut -d: -f1)
	[[ -n $synced_line && -n $leader_line ]]
	((synced_line < leader_line))
	# What it cached is what the API server has.
	nodes=$(kubectl get nodes -o name | wc -l)
	[ "$(metric_at "$METRICS" 'cadre_cache_objects{resource="nodes"}')" -eq "$nodes" ]
	# And it is the watch metric the other tests read.
	curl -fsS "http://$METRICS/metrics" | grep -q '^# TYPE cadre_watch_restarts_total counter$'
}

@test "started while the API server is down, it is alive but not ready, and becomes ready once it can list" {
	apiserver_stop
	ctl_launch solo
	wait_for -t 30 curl -fsS -o /dev/null "http://$(ctl_health solo)/healthz"
	# Not ready for as long as nothing could be listed.
	same_for 5 not ctl_ready solo
	not ctl_log_has solo "all caches synced"
	not ctl_log_has solo "became leader"

	apiserver_start
	# Its list retries back off up to 30 s (client-go's 800 ms doubling).
	wait_for -t 90 ctl_ready solo
	ctl_log_has solo "manager: all caches synced"
	ctl_log_has solo "leader: became leader"
	wait_for -t 60 nodes_ready
	make_pair late
	wait_for -t 60 pair_released late
	wait_for -t "$after_outage" pair_running late
	ctl_stop solo
}

@test "after the API server is stopped and started again, its watches resume; a TrainingJob created while it was down and one created after are acted on" {
	start_controller
	make_pair before
	wait_for -t 60 pair_released before
	wait_for -t "$after_outage" pair_running before
	restarts_before=$(watch_restarts_of "$METRICS" trainingjobs)

	apiserver_stop
	# Created while no API server runs: written into etcd as the API server would store it.
	etcd_create_pair while-down
	sleep 3
	apiserver_start
	wait_for -t 60 nodes_ready
	# The API server serves it now, and it was not created through the API.
	fields=$(jp trainingjob/while-down '{.metadata.managedFields}')
	[ -z "$fields" ]

	# Its TrainingJob watch noticed and came back.
	wait_for -t 60 watch_restarts_above "$METRICS" trainingjobs "$restarts_before"
	log_since_mark_has "reflector: trainingjobs: watch from resourceVersion"
	wait_for -t 90 acted_on while-down
	wait_for -t 60 pair_released while-down
	make_pair after
	wait_for -t 60 pair_released after
	wait_for -t "$after_outage" pair_running while-down
	wait_for -t "$after_outage" pair_running after
	# The job from before the outage runs on, and nothing was blamed on its code. (It may
	# have been restarted as infrastructure: kwok cannot renew the nodes' Leases while the
	# API server is down, and a long outage has the node lifecycle controller mark nodes
	# NotReady, which the controller rightly treats as lost nodes.)
	wait_for -t "$after_outage" pair_running before
	[ "$(jp trainingjob/before '{.status.restarts}')" = 0 ]
	controller_check
}

@test "a TrainingJob created while the controller is stopped (SIGSTOP) is acted on once it continues" {
	start_controller
	pid=$(controller_pid)
	kill -STOP "$pid"
	make_pair while-stopped
	# Nothing acts on it meanwhile: it is this controller that will.
	same_for 3 bash -c "[[ -z \$(kubectl -n $NS get tj while-stopped -o jsonpath='{.status.phase}') ]]"
	job_pod_count_is while-stopped 0
	kill -CONT "$pid"
	wait_for -t 60 acted_on while-stopped
	wait_for -t 60 pair_released while-stopped
	# And the watch still works for what comes after.
	make_pair after
	wait_for -t 60 pair_released after
	# (The scheduler may still be backing off from an earlier test's outage.)
	wait_for -t "$after_outage" pair_running while-stopped
	wait_for -t "$after_outage" pair_running after
	controller_check
}

@test "after etcd compaction its watch gets 410 Gone, relists, and still sees TrainingJobs created afterwards" {
	start_controller
	make_pair old
	wait_for -t 60 pair_released old
	wait_for -t "$after_outage" pair_running old

	# Move etcd on past every resourceVersion the controller holds, then throw that
	# history away, as the API server's own compaction (every 5 minutes) would.
	churn_configmaps 20
	rev=$(etcd_revision)
	etcd_compact "$rev"
	echo "etcd compacted at revision $rev"
	gone_before=$(metric_at "$METRICS" 'cadre_watch_restarts_total{resource="trainingjobs",reason="gone"}')

	# A restarted API server makes every watch come back with the resourceVersion it had.
	apiserver_stop
	apiserver_start
	make_pair during

	wait_for -t 90 metric_at_least "$METRICS" \
		'cadre_watch_restarts_total{resource="trainingjobs",reason="gone"}' $((gone_before + 1))
	gone_rv=$(tj_gone_rv)
	echo "the TrainingJob watch from resourceVersion '$gone_rv' ended: gone"
	[[ $gone_rv =~ ^[0-9]+$ ]]
	# It was a resourceVersion from before the compaction, which nobody can watch from now.
	((gone_rv < rev))
	wait_for -t 30 watch_from_is_gone /apis/cadre.dev/v1alpha1/trainingjobs "$gone_rv"

	wait_for -t 60 nodes_ready
	make_pair after
	wait_for -t 90 pair_released during
	wait_for -t 60 pair_released after
	wait_for -t "$after_outage" pair_running during
	wait_for -t "$after_outage" pair_running after
	# The relist kept what it already knew: the old job runs on, and nothing was blamed on
	# its code (an infrastructure restart is possible: see the test above).
	wait_for -t "$after_outage" pair_running old
	[ "$(jp trainingjob/old '{.status.restarts}')" = 0 ]
	controller_check
}

@test "with --leader-elect two replicas elect one leader; SIGKILL: the other takes over once the lease expires (10-25 s); SIGTERM: the Lease passes on within 5 s" {
	# In cadre-system, where manifests/rbac.yaml lets cadre's ServiceAccount hold Leases;
	# named after the test's namespace, so no other run's Lease is in the way.
	LEASE=e2e-leader-$NS
	lease=$LEASE
	elect=(--leader-elect --leader-election-namespace "$INSTALL_NS" --leader-election-id "$lease")
	ctl_start a "${elect[@]}"
	ctl_start b "${elect[@]}"
	wait_for ctl_standing a
	wait_for ctl_standing b
	id_a=$(ctl_identity a)
	id_b=$(ctl_identity b)
	[[ $id_a != "$id_b" ]]

	wait_for -t 30 bash -c "[[ -n \$(kubectl -n $INSTALL_NS get lease $lease -o jsonpath='{.spec.holderIdentity}') ]]"
	holder=$(lease_holder "$lease")
	if [[ $holder == "$id_a" ]]; then
		leader=a follower=b
	elif [[ $holder == "$id_b" ]]; then
		leader=b follower=a
	else
		echo "the Lease is held by '$holder', neither a ($id_a) nor b ($id_b)"
		false
	fi
	id_leader=$(ctl_identity "$leader")
	id_follower=$(ctl_identity "$follower")
	wait_for ctl_log_has "$leader" "leader: became leader as $id_leader"
	# Exactly one leader, and it stays that way.
	one_leader() {
		[[ $(lease_holder "$lease") == "$id_leader" ]] &&
			(($(ctl_log_count a "became leader") + $(ctl_log_count b "became leader") == 1))
	}
	same_for 4 one_leader
	[ "$(metric_at "$(ctl_metrics "$leader")" cadre_leader)" = 1 ]
	[ "$(metric_at "$(ctl_metrics "$follower")" cadre_leader)" = 0 ]
	transitions=$(lease_transitions "$lease")

	# SIGKILL: nothing is released, so the follower must wait for the lease to expire.
	# client-go's rules (kube/leader.h): expiry is 15 s after the follower last SAW the
	# record change, and a follower looks every 2 s plus a jitter of up to 1.2 times that
	# (2 to 4.4 s). So the takeover comes between 15 - 4.4 and 15 + 4.4 + 4.4 s after the
	# kill: it saw the last renewal up to one look before or after the kill, and finds the
	# lease expired up to one look after that.
	t0=$(now_ms)
	ctl_signal "$leader" KILL
	ctl_wait_exit "$leader" 10
	wait_for -t 40 ctl_log_has "$follower" "leader: became leader as $id_follower"
	took=$(($(ctl_log_time_ms "$follower" "leader: became leader") - t0))
	# On fd 3, so the measurement is in the TAP output of a passing run too.
	echo "# $follower took over $took ms after $leader was killed" >&3
	((took < 25000))
	# And not before the lease expired: an earlier takeover would mean the follower
	# ignored a lease that was still valid.
	((took >= 10000))
	[ "$(lease_holder "$lease")" = "$id_follower" ]
	[ "$(lease_transitions "$lease")" -eq $((transitions + 1)) ]
	[ "$(metric_at "$(ctl_metrics "$follower")" cadre_leader)" = 1 ]

	# A third replica stands by without taking the Lease from a live leader.
	ctl_start c "${elect[@]}"
	wait_for ctl_standing c
	id_c=$(ctl_identity c)
	same_for 3 bash -c "[[ \$(kubectl -n $INSTALL_NS get lease $lease -o jsonpath='{.spec.holderIdentity}') == '$id_follower' ]]"
	not ctl_log_has c "became leader"

	# SIGTERM: the leader stops writing and releases the Lease; c takes it at its next
	# look (at most 4.4 s later), without waiting for the lease to run out.
	t0=$(now_ms)
	ctl_signal "$follower" TERM
	wait_for -t 20 ctl_log_has c "leader: became leader as $id_c"
	ctl_log_has "$follower" "leader: released lease $INSTALL_NS/$lease" ||
		{ echo "$follower did not log that it released the Lease"; false; }
	released=$(ctl_log_time_ms "$follower" "leader: released lease $INSTALL_NS/$lease")
	led=$(ctl_log_time_ms c "leader: became leader")
	echo "# SIGTERM to $follower: released after $((released - t0)) ms; c led after $((led - t0)) ms" >&3
	((released - t0 < 2000))
	((led - t0 < 5000))
	ctl_wait_exit "$follower" "$ctl_stop_grace"
	[ "$(ctl_rc "$follower")" = 0 ]
	ctl_log_has "$follower" "leader: released the leader Lease"
	[ "$(lease_holder "$lease")" = "$id_c" ]

	# The new leader does the work.
	make_pair after-failover
	wait_for -t 90 pair_running after-failover
	ctl_stop c
}

@test "under valgrind, a minute of TrainingJobs created, restarted, finished and deleted ends with no leak and no error" {
	# As cadre's ServiceAccount, with its Lease where that account may hold one.
	run env CADRE_VG_KUBECONFIG="$(controller_kubeconfig)" CADRE_VG_LEASE_NAMESPACE="$INSTALL_NS" \
		timeout 900 "$REPO_ROOT/scripts/valgrind-controller" "$CADRE_CONTROLLER"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"valgrind-controller: clean"* ]]
}
