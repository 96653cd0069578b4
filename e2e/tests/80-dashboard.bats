#!/usr/bin/env bats
# `cadre dashboard` (docs/design.md 10) in a real browser: Debian's headless chromium, driven by
# puppeteer-core (e2e/browser/dashboard.js), against the dashboard reading this cluster
# with the user's kubeconfig. The page lists the cluster's jobs; a job applied with
# kubectl appears and goes Queued -> Starting -> Running without a reload; its page shows
# both ranks and their log lines; its cancel button, after
# the confirmation, deletes it. Without a session a request is 401, and the printed URL's
# one-time code opens one browser; a WebSocket from another site's page is refused; a
# cancel that RBAC forbids shows the API server's 403 on the page; with --allow-remote on
# 0.0.0.0 the page answers on the machine's own address, and --open gives xdg-open no
# secret. Screenshots of each page go to $SHOTS, checked non-blank.

load helpers
load controller
load runtime

CADRE=$REPO_ROOT/build/cadre
SHOTS=${CADRE_E2E_SCREENSHOTS:-$REPO_ROOT/build/e2e-screenshots/80-dashboard}

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
	apiserver_ensure_up
	kubectl label nodes -l type=kwok topology.kubernetes.io/zone- >/dev/null 2>&1 || true
	test_cleanup
}

# dashboard_start [FLAGS...]: runs cadre dashboard for $NS; sets URL (with its one-time
# code) and HP (host:port).
dashboard_start() {
	"$CADRE" -n "$NS" dashboard "$@" >"$BATS_TEST_TMPDIR/dash.out" 2>"$BATS_TEST_TMPDIR/dash.err" &
	track_pid $!
	wait_for -t 30 grep -q 'code=' "$BATS_TEST_TMPDIR/dash.out"
	URL=$(grep -o 'http://[^ ]*code=[0-9a-f]*' "$BATS_TEST_TMPDIR/dash.out" | head -n 1)
	HP=${URL#http://}
	HP=${HP%%/*}
}

# ws_upgrade ORIGIN [CURL ARGS...]: the HTTP status of a WebSocket upgrade to /ws ("000"
# when the server closed the connection without an answer).
ws_upgrade() {
	local origin=$1
	shift
	curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$@" \
		-H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' \
		-H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' -H 'Sec-WebSocket-Protocol: cadre-dash' \
		-H "Origin: $origin" "http://$HP/ws" || true
}

@test "without a session every request is 401, the URL opens one browser, and a foreign Host or Origin is refused" {
	local code next
	dashboard_start
	code=${URL##*code=}
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$HP/")" = 401 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$HP/app.js")" = 401 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$HP/?code=0000")" = 401 ]
	# The printed URL's code becomes a session cookie of its own and leaves the address.
	curl -s -D "$BATS_TEST_TMPDIR/h" -o /dev/null -c "$BATS_TEST_TMPDIR/jar" "$URL"
	grep -qi '^set-cookie: cadre_dashboard=.*HttpOnly; SameSite=Strict' "$BATS_TEST_TMPDIR/h"
	refute grep -qi "cadre_dashboard=$code" "$BATS_TEST_TMPDIR/h"
	[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$BATS_TEST_TMPDIR/jar" "http://$HP/")" = 200 ]
	# Used: it opens nothing now, and the dashboard printed another for the next browser.
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL")" = 401 ]
	wait_for grep -q 'that URL is used up' "$BATS_TEST_TMPDIR/dash.out"
	next=$(grep -o 'http://[^ ]*code=[0-9a-f]*' "$BATS_TEST_TMPDIR/dash.out" | tail -n 1)
	[ "$next" != "$URL" ]
	curl -s -o /dev/null -c "$BATS_TEST_TMPDIR/jar2" "$next"
	[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$BATS_TEST_TMPDIR/jar2" "http://$HP/")" = 200 ]
	# DNS rebinding: the right cookie, another name.
	[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$BATS_TEST_TMPDIR/jar" \
		-H 'Host: evil.example' "http://$HP/")" = 403 ]
	# CSRF: an action posted by another site's page.
	[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$BATS_TEST_TMPDIR/jar" -X POST \
		-H 'Origin: http://evil.example' "http://$HP/api/jobs/$NS/x/cancel")" = 403 ]
	[ "$(ws_upgrade "http://$HP" -b "$BATS_TEST_TMPDIR/jar")" = 101 ]
	[ "$(ws_upgrade 'http://evil.example' -b "$BATS_TEST_TMPDIR/jar")" != 101 ]
	[ "$(ws_upgrade "http://$HP")" != 101 ]
	# Still serving after the refusals.
	[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$BATS_TEST_TMPDIR/jar" "http://$HP/")" = 200 ]
}

@test "--allow-remote on 0.0.0.0 answers on the machine's own address; --open gives xdg-open a file, never the code" {
	local ip code port opened dash_pid
	ip=$(ip -4 -o addr show scope global | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
	[ -n "$ip" ] || skip "this machine has no address but loopback"
	# A stand-in for xdg-open that keeps its arguments and the file it was given.
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"%s/xdg-open.args"\ncat "$1" >"%s/opened.html"\n' \
		"$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR" >"$BATS_TEST_TMPDIR/bin/xdg-open"
	chmod +x "$BATS_TEST_TMPDIR/bin/xdg-open"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH dashboard_start --allow-remote --address 0.0.0.0 --open
	dash_pid=$!
	port=${HP##*:}
	# The startup line says which names and addresses it answers to.
	grep -q "listening on 0.0.0.0 port $port, reachable from other machines as .*$ip" \
		"$BATS_TEST_TMPDIR/dash.err"
	wait_for test -s "$BATS_TEST_TMPDIR/opened.html"
	# xdg-open (whose arguments every local user can read) got a path, and no code.
	[ "$(wc -l <"$BATS_TEST_TMPDIR/xdg-open.args")" -eq 1 ]
	refute grep -q 'code=' "$BATS_TEST_TMPDIR/xdg-open.args"
	code=$(grep -o 'code=[0-9a-f]*' "$BATS_TEST_TMPDIR/opened.html" | head -n 1)
	code=${code#code=}
	[ ${#code} -eq 64 ]
	# No process's arguments hold it.
	refute grep -l "$code" /proc/[0-9]*/cmdline 2>/dev/null
	# Reached at the machine's own address, as from another machine.
	[ "$(curl -s -o /dev/null -w '%{http_code}' -c "$BATS_TEST_TMPDIR/jar" \
		"http://$ip:$port/?code=$code")" = 303 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$BATS_TEST_TMPDIR/jar" "http://$ip:$port/")" = 200 ]
	HP=$ip:$port
	[ "$(ws_upgrade "http://$HP" -b "$BATS_TEST_TMPDIR/jar")" = 101 ]
	# The wildcard is no name a browser goes to; a stranger's name is refused as before.
	[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$BATS_TEST_TMPDIR/jar" \
		-H "Host: 0.0.0.0:$port" "http://$HP/")" = 403 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$BATS_TEST_TMPDIR/jar" \
		-H 'Host: evil.example' "http://$HP/")" = 403 ]
	# The file that led the browser there goes with the dashboard.
	opened=$(<"$BATS_TEST_TMPDIR/xdg-open.args")
	[ -f "$opened" ]
	kill -INT "$dash_pid"
	wait_for not test -e "$opened"
}

@test "in chromium: jobs listed, a new job goes Queued -> Starting -> Running live, its ranks, cancel" {
	local nodes node_path logs=0 pod
	command -v chromium >/dev/null || skip "chromium is not installed (scripts/deps installs it)"
	node_path=$("$REPO_ROOT/scripts/browser-deps")
	wait_gpus_free
	nodes=$(gpu_nodes)
	# A running job on all GPU nodes but one: the new 2-node job must wait for it.
	kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: blocker
spec:
  numNodes: $((nodes - 1))
  resources: {accelerators: "H100:8", cpus: "8", memory: 64Gi}
  image: registry.invalid/cadre/e2e:latest
  run: python hold.py
EOF
	wait_for -t 120 phase_is blocker Running
	pod=$(job_pods blocker | head -1)
	# kwok serves every container's log from one file (docs/cli.md, "Under kwok"); the line
	# written there must reach the job page's tail with each rank's prefix.
	printf '%s stdout F %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)" "dashboard tail line" \
		>>"$CADRE_E2E_STATE/kwok/containers.log"
	kubectl -n "$NS" logs "$pod" -c main --tail=1 | grep -qx "dashboard tail line"
	logs=1
	# Two zones, a level of ClusterTopology default: the cluster page shows them.
	mapfile -t gpu_names < <(kubectl get nodes -l type=kwok -o name)
	for i in "${!gpu_names[@]}"; do
		kubectl label "${gpu_names[i]}" --overwrite "topology.kubernetes.io/zone=zone-$([[ $((i % 2)) -eq 0 ]] && echo a || echo b)" >/dev/null
	done
	dashboard_start
	mkdir -p "$SHOTS"
	rm -f "$SHOTS"/*.png
	DASH_URL=$URL NS=$NS BLOCKER=blocker OUT=$SHOTS LOGS=$logs ZONES=1 NODE_PATH=$node_path \
		node "$REPO_ROOT/e2e/browser/dashboard.js"
	kubectl label nodes -l type=kwok topology.kubernetes.io/zone- >/dev/null
	for page in jobs job cluster; do
		[ -s "$SHOTS/$page.png" ]
	done
	not kubectl -n "$NS" get tj dash-train
}

@test "in chromium: a cancel that RBAC forbids shows the API server's 403 on the page" {
	local node_path
	command -v chromium >/dev/null || skip "chromium is not installed (scripts/deps installs it)"
	node_path=$("$REPO_ROOT/scripts/browser-deps")
	# A reader: it may watch the namespace's jobs, pods and events, and delete nothing.
	kubectl -n "$NS" create serviceaccount viewer >/dev/null
	kubectl -n "$NS" create role viewer --verb=get,list,watch \
		--resource=trainingjobs.cadre.dev,pods,events >/dev/null
	kubectl -n "$NS" create rolebinding viewer --role=viewer \
		--serviceaccount="$NS:viewer" >/dev/null
	sa_credentials "$BATS_TEST_TMPDIR/sa" viewer "$NS"
	sa_kubeconfig "$BATS_TEST_TMPDIR/sa" "$BATS_TEST_TMPDIR/viewer.kubeconfig"
	kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: keep
spec:
  numNodes: 1
  image: registry.invalid/cadre/e2e:latest
  run: python eval.py
EOF
	dashboard_start --kubeconfig "$BATS_TEST_TMPDIR/viewer.kubeconfig"
	mkdir -p "$SHOTS"
	MODE=forbidden DASH_URL=$URL NS=$NS JOB_NAME=keep OUT=$SHOTS NODE_PATH=$node_path \
		node "$REPO_ROOT/e2e/browser/dashboard.js"
	kubectl -n "$NS" get tj keep
}

@test "in chromium: 500 jobs page, the filter finds one, suspend and resume act; the API server goes and the page recovers" {
	local node_path n=500 i
	command -v chromium >/dev/null || skip "chromium is not installed (scripts/deps installs it)"
	node_path=$("$REPO_ROOT/scripts/browser-deps")
	# Suspended jobs make no pods: the page has the 500 rows to show and the cluster stays idle.
	for ((i = 0; i < n; i++)); do
		printf -- '---\napiVersion: cadre.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: scale-%d}\n' "$i"
		printf 'spec: {numNodes: 1, suspend: true, image: registry.invalid/cadre/e2e:latest, run: python eval.py}\n'
	done >"$BATS_TEST_TMPDIR/jobs.yaml"
	kubectl -n "$NS" create -f "$BATS_TEST_TMPDIR/jobs.yaml" >/dev/null
	[ "$(kubectl -n "$NS" get tj -o name | wc -l)" -eq "$n" ]
	dashboard_start
	mkdir -p "$SHOTS"
	MODE=scale COUNT=$n DASH_URL=$URL NS=$NS OUT=$SHOTS NODE_PATH=$node_path \
		node "$REPO_ROOT/e2e/browser/dashboard.js" >"$BATS_TEST_TMPDIR/browser.out" 2>&1 &
	track_pid $!
	local browser=$!
	wait_for -t 180 grep -qx 'browser: live' "$BATS_TEST_TMPDIR/browser.out"
	apiserver_stop
	wait_for -t 120 grep -q 'page says disconnected' "$BATS_TEST_TMPDIR/browser.out"
	apiserver_start
	local rc=0
	wait "$browser" || rc=$?
	cat "$BATS_TEST_TMPDIR/browser.out"
	[ "$rc" -eq 0 ]
	grep -q 'page is live again, with every job' "$BATS_TEST_TMPDIR/browser.out"
	[ -s "$SHOTS/disconnected.png" ]
}
