# Helpers for 40-install.bats: cadre installed the way manifests/ installs it, and run
# with nothing but the credentials of its own ServiceAccount. Load after helpers and
# controller:
#
#   load helpers
#   load controller
#   load install
#
# Two ways in, as a pod would have them:
#   sa_credentials DIR SA   DIR/token, DIR/ca.crt, DIR/namespace: what the kubelet mounts
#                           at /var/run/secrets/kubernetes.io/serviceaccount
#   sa_kubeconfig DIR FILE  a kubeconfig holding only that token and CA
# (both in controller.bash, with install_rbac and INSTALL_NS, INSTALL_SA, INSTALL_USER).
# The file's controller runs from the kubeconfig, as in every file (controller.bash);
# incluster_start runs another in in-cluster mode (CADRE_SA_DIR, KUBERNETES_SERVICE_HOST/
# PORT), with no KUBECONFIG in its environment at all.

RBAC_EXPECTED=$REPO_ROOT/e2e/testdata/rbac-expected.txt
# shellcheck disable=SC2034 # read by 40-install.bats
CHECK_METRICS=$REPO_ROOT/scripts/check-metrics

# An untainted fake node for the controller Deployment's pods: the GPU nodes carry the
# nvidia.com/gpu taint, which cadre's own pods rightly do not tolerate. It has no `type:
# kwok` label and no GPUs, so the helpers that count GPU nodes never see it.
SYSTEM_NODE=system-node-0

# uninstall: everything 40-install.bats installed, but the CRDs (other files share them).
# Namespace deletion is waited for, so the pods on the system node are gone before it is.
uninstall() {
	kubectl delete namespace "$INSTALL_NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
	kubectl delete clusterrole,clusterrolebinding -l app.kubernetes.io/name=cadre \
		--ignore-not-found >/dev/null 2>&1 || true
	kubectl delete clusterrolebinding -l e2e.cadre.dev/test=true --ignore-not-found >/dev/null 2>&1 || true
	wait_for -t 120 not kubectl get namespace "$INSTALL_NS" || true
	system_node_delete
}

# controller_log_clean: the file's controller has not been refused anything since it
# started: no "forbidden" in its whole log (a missing RBAC verb shows up as one).
controller_log_clean() {
	local log
	log=$(_controller_dir)/log
	if grep -i -- forbidden "$log"; then
		echo "the controller, running as $INSTALL_USER, was refused (lines above)" >&2
		return 1
	fi
}

# http_code URL: the HTTP status of a GET (000 when nothing answers).
http_code() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$1" || true
}

# http_code_is URL CODE
http_code_is() {
	[[ $(http_code "$1") == "$2" ]]
}

# has_event KIND/NAME REASON: $NS has a core Event with REASON about that object.
has_event() {
	kubectl -n "$NS" get events -o json | jq -e --arg k "${1%%/*}" --arg n "${1#*/}" --arg r "$2" \
		'any(.items[]; (.involvedObject.kind | ascii_downcase) == ($k | ascii_downcase)
			and .involvedObject.name == $n and .reason == $r)' >/dev/null
}

# ---------------------------------------------------------------------------------------
# RBAC

# rbac_list NAMESPACE: what `kubectl auth can-i --list` grants cadre's ServiceAccount in
# NAMESPACE, one permission a line, sorted, each prefixed with NAMESPACE:
#   <namespace> <resource or non-resource URL> [names=<resourceNames>] <verb,verb,...>
# Verbs are sorted and duplicate rows dropped, so only a change of permission is a change.
rbac_list() {
	kubectl auth can-i --list --as="$INSTALL_USER" -n "$1" | awk -v scope="$1" '
		NR == 1 { next }
		{
			line = $0
			resource = ""
			if (line !~ /^[ \t]/) { resource = $1; line = substr(line, length($1) + 1) }
			n = 0
			while (match(line, /\[[^]]*\]/)) {
				group[++n] = substr(line, RSTART + 1, RLENGTH - 2)
				line = substr(line, RSTART + RLENGTH)
			}
			if (n != 3) { print "unparsed: " $0; next }
			what = resource != "" ? resource : group[1]
			names = group[2]
			gsub(/ /, ",", names)
			if (names != "") names = " names=" names
			k = split(group[3], verbs, " ")
			for (i = 2; i <= k; i++) {
				v = verbs[i]
				for (j = i - 1; j >= 1 && verbs[j] > v; j--) verbs[j + 1] = verbs[j]
				verbs[j + 1] = v
			}
			out = ""
			for (i = 1; i <= k; i++) out = out (i > 1 ? "," : "") verbs[i]
			print scope " " what names " " out
		}' | LC_ALL=C sort -u
}

# rbac_actual: rbac_list in the default namespace (as any namespace other than cadre's
# own) and in cadre-system, in the form of e2e/testdata/rbac-expected.txt.
rbac_actual() {
	rbac_list default
	rbac_list "$INSTALL_NS"
}

# rbac_compare: the permissions are exactly those of e2e/testdata/rbac-expected.txt;
# otherwise prints the difference (- expected, + granted) and fails.
rbac_compare() {
	local expected actual
	expected=$(grep -v -e '^#' -e '^[[:space:]]*$' "$RBAC_EXPECTED")
	actual=$(rbac_actual)
	if [[ $expected != "$actual" ]]; then
		echo "permissions of $INSTALL_USER differ from $RBAC_EXPECTED (- expected, + granted):" >&2
		diff <(echo "$expected") <(echo "$actual") | sed -n 's/^< /-/p; s/^> /+/p' >&2
		return 1
	fi
}

# rbac_rules: every rule of every Role and ClusterRole bound to cadre's ServiceAccount,
# directly or through the groups a ServiceAccount is in (system:serviceaccounts,
# system:serviceaccounts:cadre-system), as a JSON array of {role, rule}.
rbac_rules() {
	# Two documents on one stream: the bindings, then the roles (too big for an argument).
	{
		kubectl get clusterrolebindings,rolebindings -A -o json
		kubectl get clusterroles,roles -A -o json
	} | jq -s --arg ns "$INSTALL_NS" --arg sa "$INSTALL_SA" '
		[.[0].items[] | select(any(.subjects[]?;
			(.kind == "ServiceAccount" and .name == $sa and .namespace == $ns)
			or (.kind == "Group" and (.name == "system:serviceaccounts"
				or .name == "system:serviceaccounts:\($ns)"))))
		| {kind: .roleRef.kind, name: .roleRef.name, ns: .metadata.namespace}] as $refs
		| [$refs[] as $ref | .[1].items[]
			| select(.kind == $ref.kind and .metadata.name == $ref.name
				and (.kind == "ClusterRole" or .metadata.namespace == $ref.ns))
			| .metadata.name as $role | .rules[]? | {role: $role, rule: .}]'
}

# ---------------------------------------------------------------------------------------
# The controller Deployment

# system_node_add: the untainted node the Deployment's pods land on (idempotent).
system_node_add() {
	kubectl get node "$SYSTEM_NODE" >/dev/null 2>&1 || kubectl create -f - >/dev/null <<NODE
apiVersion: v1
kind: Node
metadata:
  name: $SYSTEM_NODE
  annotations: {kwok.x-k8s.io/node: fake}
  labels:
    kubernetes.io/hostname: $SYSTEM_NODE
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    e2e.cadre.dev/test: "true"
spec: {}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
NODE
	kube_wait 60 --for=condition=Ready "node/$SYSTEM_NODE"
}

system_node_delete() {
	kubectl delete node "$SYSTEM_NODE" --ignore-not-found >/dev/null 2>&1 || true
}

# deployment_variant NAME JQ: manifests/deployment.yaml as JSON, renamed to NAME, with its
# own selector label (so it never adopts the real Deployment's pods), then edited by JQ.
deployment_variant() {
	kubectl create --dry-run=client -o json -f "$MANIFESTS/deployment.yaml" | jq --arg name "$1" "
		.metadata.name = \$name
		| .spec.selector.matchLabels[\"app.kubernetes.io/instance\"] = \$name
		| .spec.template.metadata.labels[\"app.kubernetes.io/instance\"] = \$name
		| $2"
}

# replicaset_of DEPLOYMENT: the name of the ReplicaSet the deployment controller made.
replicaset_of() {
	kubectl -n "$INSTALL_NS" get replicasets -o json | jq -r --arg d "$1" '.items[]
		| select(any(.metadata.ownerReferences[]?; .kind == "Deployment" and .name == $d))
		| .metadata.name' | head -n 1 | grep .
}

# failed_create_says RS TEXT: a FailedCreate event of ReplicaSet RS contains TEXT.
failed_create_says() {
	events_of ReplicaSet "$1" FailedCreate | grep -qF -- "$2"
}

# rs_pod_count_is RS N: N pods of ReplicaSet RS (by its pod-template-hash) exist, in
# PHASE when a third argument names one.
rs_pod_count_is() {
	local selector=()
	(($# > 2)) && selector=(--field-selector="status.phase=$3")
	[[ $(kubectl -n "$INSTALL_NS" get pods -l "pod-template-hash=${1##*-}" "${selector[@]}" -o name | wc -l) -eq $2 ]]
}

# events_of KIND NAME REASON: the messages of core Events about KIND/NAME in cadre-system
# with that reason, one a line.
events_of() {
	kubectl -n "$INSTALL_NS" get events -o json | jq -r --arg k "$1" --arg n "$2" --arg r "$3" \
		'.items[] | select(.involvedObject.kind == $k and .involvedObject.name == $n
			and .reason == $r) | .message'
}

# ---------------------------------------------------------------------------------------
# A controller in in-cluster mode: no kubeconfig anywhere, only the service-account
# directory and the two variables the kubelet sets.

_incluster_dir() {
	echo "$BATS_TEST_TMPDIR/incluster/$1"
}

# incluster_start NAME SA_DIR [ARGS...]: starts cadre-controller as instance NAME, reading
# its credentials from SA_DIR, and returns at once (it is not expected to be ready).
# Its health server is at $(incluster_health NAME), its log at $(incluster_log NAME).
incluster_start() {
	local name=$1 sa_dir=$2 dir port
	shift 2
	dir=$(_incluster_dir "$name")
	mkdir -p "$dir"
	port=$(free_ports 1)
	echo "127.0.0.1:$port" >"$dir/health"
	# As in controller.bash: the wrapper records the exit status, fd 3 is closed so bats
	# does not wait for it, and bats' errexit must not end the wrapper.
	(
		set +eE
		trap - ERR
		env -u KUBECONFIG -u CADRE_KUBECONFIG \
			KUBERNETES_SERVICE_HOST=127.0.0.1 \
			KUBERNETES_SERVICE_PORT="${CADRE_E2E_APISERVER##*:}" \
			CADRE_SA_DIR="$sa_dir" \
			"$CADRE_CONTROLLER" --metrics-addr 0 --health-addr "127.0.0.1:$port" "$@" \
			>>"$dir/log" 2>&1 </dev/null &
		echo $! >"$dir/pid.tmp"
		mv "$dir/pid.tmp" "$dir/pid"
		wait $!
		echo "$?" >"$dir/rc.tmp"
		mv "$dir/rc.tmp" "$dir/rc"
	) </dev/null >/dev/null 2>&1 3>&- &
	wait_for -t 10 test -f "$dir/pid"
}

incluster_health() {
	cat "$(_incluster_dir "$1")/health"
}

incluster_log() {
	echo "$(_incluster_dir "$1")/log"
}

# incluster_running NAME: the instance has not exited.
incluster_running() {
	local dir
	dir=$(_incluster_dir "$1")
	[[ -f $dir/pid && ! -f $dir/rc ]] && kill -0 "$(<"$dir/pid")" 2>/dev/null
}

# incluster_stop NAME: SIGTERM; it must exit 0 within 30 s (else SIGKILL, and fail).
incluster_stop() {
	local dir pid
	dir=$(_incluster_dir "$1")
	[[ -f $dir/pid ]] || return 0
	pid=$(<"$dir/pid")
	[[ -f $dir/rc ]] || kill -TERM "$pid" 2>/dev/null || true
	if ! wait_for -t 30 test -f "$dir/rc"; then
		kill -KILL "$pid" 2>/dev/null || true
		rm -f "$dir/pid"
		return 1
	fi
	rm -f "$dir/pid"
	[[ $(<"$dir/rc") == 0 ]] || { echo "instance $1 exited with status $(<"$dir/rc")" >&2; return 1; }
}

# incluster_stop_all: teardown; stops every instance of the test, whatever its state.
incluster_stop_all() {
	local d rc=0
	[[ -d $BATS_TEST_TMPDIR/incluster ]] || return 0
	for d in "$BATS_TEST_TMPDIR"/incluster/*/; do
		incluster_stop "$(basename "$d")" || rc=1
	done
	return $rc
}

# ---------------------------------------------------------------------------------------
# kubectl describe

# describe_events: the Events section of the `kubectl describe` output on standard input,
# one event a line as TYPE|REASON|AGE|MESSAGE, in the order describe prints them. AGE is
# the column as printed: "12s", or "5s (x2 over 40s)" for an event that happened again.
describe_events() {
	awk '
		/^Events:/ { on = 1; next }
		on && /^[^ ]/ { on = 0 }
		on && /^  ----/ { rows = 1; next }
		on && rows && /^  [A-Za-z]/ {
			line = substr($0, 3)
			type = $1; reason = $2
			# The age ends where the From column starts: the reporting controller.
			i = index(line, "cadre.dev/controller")
			if (i == 0) { print type "|" reason "|?|" line; next }
			age = substr(line, length(type) + 1, i - length(type) - 1)
			sub("^ +" reason " +", "", age)
			sub(/ +$/, "", age)
			msg = substr(line, i + length("cadre.dev/controller"))
			sub(/^ +/, "", msg)
			print type "|" reason "|" age "|" msg
		}'
}

# age_seconds AGE: seconds in a kubectl age ("45s", "2m10s", "3m", "1h5m"); for
# "5s (x2 over 40s)" the first, the time since the event was last seen.
age_seconds() {
	local age=${1%% *} total=0 n unit
	while [[ $age =~ ^([0-9]+)([dhms])(.*)$ ]]; do
		n=${BASH_REMATCH[1]}
		unit=${BASH_REMATCH[2]}
		age=${BASH_REMATCH[3]}
		case $unit in
		d) total=$((total + n * 86400)) ;;
		h) total=$((total + n * 3600)) ;;
		m) total=$((total + n * 60)) ;;
		s) total=$((total + n)) ;;
		esac
	done
	[[ -z $age ]] || { echo "age_seconds: cannot read '$1'" >&2; return 1; }
	echo "$total"
}

# event_count AGE: how many times describe says the event happened ("(x3 over ...)": 3).
event_count() {
	if [[ $1 =~ \(x([0-9]+)\ over ]]; then
		echo "${BASH_REMATCH[1]}"
	else
		echo 1
	fi
}
