#!/usr/bin/env bats
# The command line on clusters reached as users reach them (issue 31): through an HTTP
# CONNECT proxy (tinyproxy) and a SOCKS5 proxy (microsocks) named by the kubeconfig's
# proxy-url, and HTTPS_PROXY; as a user who may only impersonate a lesser one; with a
# bearer token of more than 8 KiB; reading a 200 MiB log; and through a proxy that stops
# forwarding. All through the real API server, with kwok's logs and exec (docs/cli.md,
# "Under kwok").

load helpers
load controller
load kwok_logs

CADRE=$REPO_ROOT/build/cadre
PKI=$CADRE_E2E_STATE/pki

setup_file() {
	crds_install
	controller_start
	local dir=$BATS_FILE_TMPDIR/proxies port=${CADRE_E2E_APISERVER##*:}
	mkdir -p "$dir"
	# tinyproxy takes CONNECT to 443 and 563 only unless told: the API server's port too.
	TINYPROXY_PORT=$(free_ports 1)
	cat >"$dir/tinyproxy.conf" <<EOF
Port $TINYPROXY_PORT
Listen 127.0.0.1
Allow 127.0.0.1
ConnectPort $port
Timeout 600
MaxClients 200
LogLevel Connect
EOF
	tinyproxy -d -c "$dir/tinyproxy.conf" >"$dir/tinyproxy.log" 2>&1 &
	echo "$!" >"$dir/tinyproxy.pid"
	MICROSOCKS_PORT=$(free_ports 1)
	while [ "$MICROSOCKS_PORT" = "$TINYPROXY_PORT" ]; do MICROSOCKS_PORT=$(free_ports 1); done
	microsocks -i 127.0.0.1 -p "$MICROSOCKS_PORT" >"$dir/microsocks.log" 2>&1 &
	echo "$!" >"$dir/microsocks.pid"
	export TINYPROXY_PORT MICROSOCKS_PORT
	wait_for -t 10 bash -c "ss -Htln | grep -q ':$TINYPROXY_PORT '"
	wait_for -t 10 bash -c "ss -Htln | grep -q ':$MICROSOCKS_PORT '"
}

teardown_file() {
	local p
	for p in tinyproxy microsocks; do
		[ -f "$BATS_FILE_TMPDIR/proxies/$p.pid" ] && kill "$(<"$BATS_FILE_TMPDIR/proxies/$p.pid")" 2>/dev/null
	done
	controller_stop
}

setup() {
	e2e_namespace
	controller_mark
}

teardown() {
	test_cleanup
}

cli() {
	rc=0
	"$CADRE" "$@" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" </dev/null || rc=$?
	echo "cadre ${*:0:6} ... -> $rc"
	echo "stdout: $(head -c 2000 "$BATS_TEST_TMPDIR/out")"
	echo "stderr: $(head -c 2000 "$BATS_TEST_TMPDIR/err")"
}

pair_running() {
	kubectl -n "$NS" apply -f "$E2E_DIR/testdata/jobs/pair.yaml" >/dev/null
	wait_for -t 120 all_pods_running pair 2
	wait_for -t 60 phase_is pair Running
}

# kubeconfig FILE SERVER [CLUSTER_LINES] [USER_LINES]: a kubeconfig for the cluster's CA with
# the lines given added to its cluster and user entries (each indented by 4). The user is
# the admin (its certificate files) unless USER_LINES say otherwise.
kubeconfig() {
	local file=$1 server=$2 cluster=${3:-} user=${4:-"    client-certificate: $PKI/admin.crt
    client-key: $PKI/admin.key"}
	cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: $server
    certificate-authority: $PKI/ca.crt
$cluster
users:
- name: u
  user:
$user
contexts:
- name: c
  context: {cluster: e2e, user: u, namespace: $NS}
current-context: c
EOF
	chmod 600 "$file"
}

# tunnels PROXY: how many tunnels to the API server the proxy's log shows.
tunnels() {
	local port=${CADRE_E2E_APISERVER##*:}
	case $1 in
	tinyproxy) grep -c "Established connection to host \".*\" using file descriptor" \
		"$BATS_FILE_TMPDIR/proxies/tinyproxy.log" || true ;;
	microsocks) grep -c "connected to .*:$port" "$BATS_FILE_TMPDIR/proxies/microsocks.log" || true ;;
	esac
}

@test "logs, exec and the dashboard through an HTTP CONNECT proxy and a SOCKS5 proxy named by proxy-url" {
	local proxy url before kc dash_pid code cookie hp
	pair_running
	log_line "through a proxy in $NS"
	for proxy in tinyproxy microsocks; do
		case $proxy in
		tinyproxy) url=http://127.0.0.1:$TINYPROXY_PORT ;;
		microsocks) url=socks5://127.0.0.1:$MICROSOCKS_PORT ;;
		esac
		kc=$BATS_TEST_TMPDIR/$proxy.kubeconfig
		kubeconfig "$kc" "$CADRE_E2E_APISERVER" "    proxy-url: $url"
		before=$(tunnels "$proxy")
		cli --kubeconfig "$kc" logs pair
		[ "$rc" -eq 0 ]
		grep -qxF "0: through a proxy in $NS" "$BATS_TEST_TMPDIR/out"
		grep -qxF "1: through a proxy in $NS" "$BATS_TEST_TMPDIR/out"
		cli --kubeconfig "$kc" exec pair -- echo "exec through $proxy"
		[ "$rc" -eq 0 ]
		grep -qxF "0: exec through $proxy" "$BATS_TEST_TMPDIR/out"
		grep -qxF "1: exec through $proxy" "$BATS_TEST_TMPDIR/out"
		# the requests, the log streams and the exec connections all went through it
		[ "$(tunnels "$proxy")" -ge $((before + 4)) ]
	done
	# The dashboard's watches through the SOCKS5 proxy: the page's snapshot lists the job.
	before=$(tunnels microsocks)
	"$CADRE" --kubeconfig "$BATS_TEST_TMPDIR/microsocks.kubeconfig" dashboard \
		>"$BATS_TEST_TMPDIR/dash.out" 2>"$BATS_TEST_TMPDIR/dash.err" &
	dash_pid=$!
	track_pid "$dash_pid"
	wait_for grep -q 'code=' "$BATS_TEST_TMPDIR/dash.out"
	url=$(grep -o 'http://[^ ]*code=[0-9a-f]*' "$BATS_TEST_TMPDIR/dash.out" | head -n 1)
	hp=${url#http://}
	hp=${hp%%/*}
	curl -s -o /dev/null -c "$BATS_TEST_TMPDIR/jar" "$url"
	cookie=$(awk '$6 == "cadre_dashboard" { print $6 "=" $7 }' "$BATS_TEST_TMPDIR/jar")
	[ -n "$cookie" ]
	wait_for bash -c "python3 '$E2E_DIR/proxy/ws-first.py' '$hp' '$cookie' | grep -q '\"$NS/pair\"'"
	[ "$(tunnels microsocks)" -gt "$before" ]
	kill "$dash_pid"
}

@test "HTTPS_PROXY carries exec and logs, NO_PROXY and loopback go direct, as client-go has them" {
	local host before kc
	# Go never sends a loopback address through a proxy from the environment: the server is
	# named by this machine's host name, which resolves to loopback here.
	host=$(hostname)
	getent ahostsv4 "$host" | grep -q '^127\.' || skip "$host does not resolve to loopback here"
	pair_running
	log_line "env proxy in $NS"
	kc=$BATS_TEST_TMPDIR/env.kubeconfig
	kubeconfig "$kc" "https://$host:${CADRE_E2E_APISERVER##*:}" "    tls-server-name: localhost"
	before=$(tunnels tinyproxy)
	HTTPS_PROXY=http://127.0.0.1:$TINYPROXY_PORT NO_PROXY=other.example \
		cli --kubeconfig "$kc" exec pair -- echo "exec through HTTPS_PROXY"
	[ "$rc" -eq 0 ]
	grep -qxF "1: exec through HTTPS_PROXY" "$BATS_TEST_TMPDIR/out"
	HTTPS_PROXY=http://127.0.0.1:$TINYPROXY_PORT cli --kubeconfig "$kc" logs pair --rank 1
	grep -qxF "1: env proxy in $NS" "$BATS_TEST_TMPDIR/out"
	[ "$(tunnels tinyproxy)" -ge $((before + 3)) ]
	# NO_PROXY names the host: straight to the API server, the proxy sees nothing more.
	before=$(tunnels tinyproxy)
	HTTPS_PROXY=http://127.0.0.1:$TINYPROXY_PORT NO_PROXY=$host \
		cli --kubeconfig "$kc" exec pair -- echo direct
	[ "$rc" -eq 0 ]
	kubeconfig "$kc" "$CADRE_E2E_APISERVER"
	HTTPS_PROXY=http://127.0.0.1:$TINYPROXY_PORT cli --kubeconfig "$kc" exec pair -- echo loopback
	[ "$rc" -eq 0 ]
	[ "$(tunnels tinyproxy)" -eq "$before" ]
}

@test "a user who may only impersonate a lesser one gets the lesser one's 403 from squeue, logs and exec" {
	local kc=$BATS_TEST_TMPDIR/boss.kubeconfig
	pair_running
	# boss: a certificate of the cluster CA; may read the namespace's jobs, pods and logs,
	# exec into them, and impersonate the user "lesser", who may do nothing at all.
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$BATS_TEST_TMPDIR/boss.key" -out "$BATS_TEST_TMPDIR/boss.crt" -subj "/CN=boss" \
		-CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -days 1 -addext "extendedKeyUsage=clientAuth" \
		2>/dev/null
	kubectl -n "$NS" create role reader --verb=get,list,watch \
		--resource=trainingjobs.cadre.dev,pods,pods/log >/dev/null
	kubectl -n "$NS" create role execer --verb=create,get --resource=pods/exec >/dev/null
	kubectl -n "$NS" create rolebinding boss-reads --role=reader --user=boss >/dev/null
	kubectl -n "$NS" create rolebinding boss-execs --role=execer --user=boss >/dev/null
	kubectl create clusterrole "impersonate-lesser-$NS" --verb=impersonate --resource=users \
		--resource-name=lesser >/dev/null
	kubectl create clusterrolebinding "boss-impersonates-$NS" \
		--clusterrole="impersonate-lesser-$NS" --user=boss >/dev/null
	# As boss: allowed.
	kubeconfig "$kc" "$CADRE_E2E_APISERVER" "" "    client-certificate: $BATS_TEST_TMPDIR/boss.crt
    client-key: $BATS_TEST_TMPDIR/boss.key"
	wait_for "$CADRE" --kubeconfig "$kc" squeue
	cli --kubeconfig "$kc" exec pair --rank 0 -- echo as boss
	[ "$rc" -eq 0 ]
	# As boss acting as lesser: the lesser one's refusal comes back, naming it.
	kubeconfig "$kc" "$CADRE_E2E_APISERVER" "" "    client-certificate: $BATS_TEST_TMPDIR/boss.crt
    client-key: $BATS_TEST_TMPDIR/boss.key
    as: lesser"
	cli --kubeconfig "$kc" squeue
	[ "$rc" -eq 1 ]
	grep -q '403 Forbidden.*User "lesser" cannot list resource "trainingjobs"' "$BATS_TEST_TMPDIR/err"
	cli --kubeconfig "$kc" logs pair
	[ "$rc" -eq 1 ]
	grep -q 'User "lesser" cannot' "$BATS_TEST_TMPDIR/err"
	cli --kubeconfig "$kc" exec pair -- echo as lesser
	[ "$rc" -eq 1 ]
	grep -q 'User "lesser" cannot' "$BATS_TEST_TMPDIR/err"
	# Someone boss may not act as: the API server says boss cannot impersonate them.
	sed -i 's/as: lesser/as: admin/' "$kc"
	cli --kubeconfig "$kc" squeue
	[ "$rc" -eq 1 ]
	grep -q 'User "boss" cannot impersonate resource "users"' "$BATS_TEST_TMPDIR/err"
	kubectl delete clusterrolebinding "boss-impersonates-$NS" >/dev/null
	kubectl delete clusterrole "impersonate-lesser-$NS" >/dev/null
}

@test "exec with a bearer token of more than 8 KiB and a 16 KiB command line; no token in any process's arguments" {
	local token kc=$BATS_TEST_TMPDIR/long.kubeconfig word
	token=$(cut -d, -f1 "$PKI/tokens.csv")
	[ ${#token} -ge 8192 ]
	pair_running
	kubectl -n "$NS" create role execer --verb=get,list --resource=trainingjobs.cadre.dev,pods \
		>/dev/null
	kubectl -n "$NS" patch role execer --type=json -p \
		'[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["pods/exec","pods/log"],"verbs":["create","get"]}}]' \
		>/dev/null
	kubectl -n "$NS" create rolebinding long-token --role=execer --user=cadre-e2e-long-token >/dev/null
	kubeconfig "$kc" "$CADRE_E2E_APISERVER" "" "    token: $token"
	word=$(head -c 13000 /dev/urandom | base64 -w0 | tr -d '+/=' | head -c 16384)
	[ ${#word} -eq 16384 ]
	# A command line of 16 KiB, by a user the API server knows only by the long token.
	wait_for "$CADRE" --kubeconfig "$kc" squeue
	cli --kubeconfig "$kc" exec pair -- sh -c 'printf "%s\n" "${#1}"' sh "$word"
	[ "$rc" -eq 0 ]
	grep -qxF "0: 16384" "$BATS_TEST_TMPDIR/out"
	grep -qxF "1: 16384" "$BATS_TEST_TMPDIR/out"
	# While a command of that user runs, no process's arguments hold the token.
	"$CADRE" --kubeconfig "$kc" logs -f pair >/dev/null 2>&1 &
	track_pid $!
	sleep 2
	kill -0 "$!"
	! grep -lF "${token:0:64}" /proc/[0-9]*/cmdline 2>/dev/null
}

@test "cadre logs reads a 200 MiB log in bounded memory, and prints every line of it" {
	local log=$KWOK_DIR/containers.log size lines rss counts rc=0
	pair_running
	size=$(stat -c %s "$log")
	# 200 MiB of CRI lines (under kwok every container's log is this one file), put back after.
	python3 "$E2E_DIR/proxy/cri-log-lines.py" 200 >>"$log"
	lines=$(($(wc -l <"$log") - $(head -c "$size" "$log" | wc -l)))
	# One rank: the merge of several in bounded memory is unit test_cli_ranks's; here the size.
	/usr/bin/time -f '%M' -o "$BATS_TEST_TMPDIR/rss" "$CADRE" -n "$NS" logs pair --rank 0 \
		2>"$BATS_TEST_TMPDIR/err" | awk '/^0: x/ { z++ } /^1: x/ { o++ } END { print z + 0, o + 0 }' \
		>"$BATS_TEST_TMPDIR/counts" || rc=$?
	truncate -s "$size" "$log"
	cat "$BATS_TEST_TMPDIR/err"
	[ "$rc" -eq 0 ]
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
	rss=$(tail -n 1 "$BATS_TEST_TMPDIR/rss")
	echo "# cadre logs read 200 MiB ($lines lines) with a peak RSS of $((rss / 1024)) MiB ($rss KiB)" >&3
	counts=$(<"$BATS_TEST_TMPDIR/counts")
	[ "$counts" = "$lines 0" ]
	[ "$rss" -lt $((64 * 1024)) ]
}

@test "a proxy that stops forwarding: logs -f notices in seconds and goes on over a new connection" {
	local kc=$BATS_TEST_TMPDIR/stall.kubeconfig proxy_pid port t0
	pair_running
	python3 "$E2E_DIR/proxy/stalling-proxy.py" >"$BATS_TEST_TMPDIR/proxy.port" \
		2>"$BATS_TEST_TMPDIR/proxy.log" &
	proxy_pid=$!
	track_pid "$proxy_pid"
	wait_for test -s "$BATS_TEST_TMPDIR/proxy.port"
	port=$(<"$BATS_TEST_TMPDIR/proxy.port")
	kubeconfig "$kc" "$CADRE_E2E_APISERVER" "    proxy-url: http://127.0.0.1:$port"
	log_line "before the stall of $NS"
	"$CADRE" --kubeconfig "$kc" logs -f pair >"$BATS_TEST_TMPDIR/follow" 2>&1 </dev/null &
	local follower=$!
	track_pid "$follower"
	wait_for grep -qxF "0: before the stall of $NS" "$BATS_TEST_TMPDIR/follow"
	# Every tunnel open now goes silent, the one the job is read through included.
	kill -USR1 "$proxy_pid"
	t0=$SECONDS
	kubectl -n "$NS" annotate pod pair-0 e2e.cadre.dev/exit-code=0 >/dev/null
	kubectl -n "$NS" annotate pod pair-1 e2e.cadre.dev/exit-code=0 >/dev/null
	wait_for -t 60 phase_is pair Succeeded
	# The job's end is seen over a new tunnel, well before a request's 30 s timeout.
	local rc=0
	wait_for -t 40 not kill -0 "$follower"
	wait "$follower" || rc=$?
	echo "logs -f ended after $((SECONDS - t0)) s with $rc"
	cat "$BATS_TEST_TMPDIR/follow" | grep -v "^[01]: " || true
	[ "$rc" -eq 0 ]
	[ $((SECONDS - t0)) -lt 25 ]
	grep -q "stopped answering" "$BATS_TEST_TMPDIR/follow"
}
