#!/usr/bin/env bats
# cadre installed as docs/install.md installs it (docs/design.md 5 and 6):
#   - run with nothing but the token of its own ServiceAccount, the controller takes the
#     llama-pretrain sample to Running and is refused nothing;
#   - that ServiceAccount may do exactly what e2e/testdata/rbac-expected.txt lists, and no
#     rule bound to it has a wildcard, Secrets, pods/exec, escalate, bind or impersonate;
#   - `kubectl apply -k manifests/` is accepted into a namespace that enforces the
#     restricted Pod Security Standard, whose Deployment's pods are created and admitted,
#     while a copy that drops runAsNonRoot gets none;
#   - it gives users cadre-edit and cadre-view through admin, edit and view: a user
#     holding edit in one namespace creates, patches and deletes TrainingJobs and Volumes
#     there, nowhere else, and never writes status; one holding view reads, and no more;
#   - a job naming a ServiceAccount other than default is refused to a submitter without
#     the verb use on it (crd/serviceaccount-policy.yaml), admitted once granted; the
#     controller still creates an array's elements, which copy it;
#   - cadre-cluster-view, meant for every user, lists no pods anywhere; sinfo works with it
#     (up nodes unk), and with cadre-cluster-usage shows alloc and idle;
#   - /metrics counts what happened and is valid exposition text (scripts/check-metrics);
#     /readyz is 503 until the caches sync and 200 after;
#   - `kubectl describe tj` of a job that waited, ran, failed and restarted tells that
#     story in its Events.
#
# One controller runs for the whole file, as cadre-controller in cadre-system, with a
# kubeconfig holding only that ServiceAccount's token (controller.bash, as in every file);
# its log must never say "forbidden". teardown_file removes what was installed but the CRDs.

load helpers
load controller
load install

setup_file() {
	crds_install
	# install_rbac and the token's kubeconfig, which controller_start runs the controller
	# with, as --kubeconfig and as its only KUBECONFIG (controller.bash).
	SA_KUBECONFIG=$(controller_kubeconfig)
	export SA_KUBECONFIG
	METRICS_ADDR=127.0.0.1:$(free_ports 1)
	export METRICS_ADDR
	wait_for -t 120 no_namespace_terminating
	controller_start --leader-elect --leader-election-namespace "$INSTALL_NS" \
		--metrics-addr "$METRICS_ADDR"
}

teardown_file() {
	local rc=0
	controller_stop || rc=1
	uninstall
	return $rc
}

# Only the tests that run TrainingJobs make a namespace of their own (e2e_namespace): on
# two busy cores every kubectl call counts.
setup() {
	controller_mark
}

teardown() {
	local rc=0
	incluster_stop_all || rc=1
	# What a test made outside its namespace carries the label e2e.cadre.dev/test=true.
	if [[ -f $BATS_TEST_TMPDIR/made-rbac ]]; then
		kubectl delete clusterrolebindings,partitions.cadre.dev -l e2e.cadre.dev/test=true \
			--ignore-not-found >/dev/null 2>&1 || true
		kubectl -n default delete roles,rolebindings -l e2e.cadre.dev/test=true --ignore-not-found >/dev/null 2>&1 || true
		kubectl -n "$INSTALL_NS" delete deployments,serviceaccounts,rolebindings -l e2e.cadre.dev/test=true \
			--ignore-not-found >/dev/null 2>&1 || true
	fi
	if [[ -f $BATS_TEST_TMPDIR/namespaces ]]; then
		xargs -r kubectl delete namespace --wait=false --ignore-not-found <"$BATS_TEST_TMPDIR/namespaces" \
			>/dev/null 2>&1 || true
	fi
	if [[ -n ${NS:-} ]]; then
		test_cleanup || rc=1
	else
		controller_check || rc=1
	fi
	return $rc
}

# made_outside: this test makes labelled objects outside a namespace of its own, which
# teardown deletes.
made_outside() {
	touch "$BATS_TEST_TMPDIR/made-rbac"
}

# other_namespace: a namespace besides $NS for this test, printed; teardown deletes it.
other_namespace() {
	local name=${NS}-b
	kubectl create namespace "$name" >/dev/null
	kubectl label namespace "$name" e2e.cadre.dev/test=true >/dev/null
	echo "$name" >>"$BATS_TEST_TMPDIR/namespaces"
	echo "$name"
}

# user_kubeconfig ROLE NAME: a user of $NS holding only the built-in ClusterRole ROLE
# there, as a namespace is shared out: ServiceAccount NAME in $NS and a RoleBinding of ROLE
# to it. Prints the path of a kubeconfig holding only its token.
user_kubeconfig() {
	local role=$1 name=$2 dir=$BATS_TEST_TMPDIR/user-$2
	kubectl -n "$NS" create serviceaccount "$name" >/dev/null
	kubectl -n "$NS" create rolebinding "$name" --clusterrole="$role" \
		--serviceaccount="$NS:$name" >/dev/null
	sa_credentials "$dir" "$name" "$NS" >/dev/null
	sa_kubeconfig "$dir" "$dir/kubeconfig"
	echo "$dir/kubeconfig"
}

# admin_writes_trainingjobs: the built-in ClusterRole admin has aggregated cadre-edit.
admin_writes_trainingjobs() {
	kubectl get clusterrole admin -o json | jq -e 'any(.rules[]; (.apiGroups | index("cadre.dev"))
		and (.resources | index("trainingjobs")) and (.verbs | index("create"))
		and (.verbs | index("delete")))' >/dev/null
}

# as USER_KUBECONFIG KUBECTL_ARGS...: kubectl with nothing but that user's token.
as() {
	local kc=$1
	shift
	kubectl --kubeconfig "$kc" "$@" </dev/null
}

# refused USER_KUBECONFIG KUBECTL_ARGS...: the API server refuses the request to that user
# (403 Forbidden, as RBAC answers), and says so.
refused() {
	local out
	if out=$(as "$@" 2>&1); then
		echo "allowed, and should not be: kubectl ${*:2}: $out"
		return 1
	fi
	[[ $out == *"(Forbidden)"*"cannot"* ]] || { echo "failed, but not refused: kubectl ${*:2}: $out"; return 1; }
}

# llama_up: the sample llama-pretrain and its shared-checkpoints Volume, bound to a
# pre-created RWX PersistentVolume with storageClassName "", applied as a user would,
# then Running.
llama_up() {
	make_pv "$(pv_name ckpt)" 500Gi ReadWriteMany "$NS" shared-checkpoints
	kubectl -n "$NS" apply -f "$SAMPLES/shared-checkpoints.yaml" -f "$SAMPLES/llama-pretrain.yaml" >/dev/null
	wait_for -t 60 field_is volume.cadre.dev/shared-checkpoints '{.status.phase}' Bound
	wait_for -t 120 phase_is llama-pretrain Running
}

# metric_sum FILE SELECTOR: the sum of the samples in FILE whose name and labels match
# the extended regex SELECTOR (anchored at the start of the line); empty when none does.
metric_sum() {
	awk -v re="^$2" '!/^#/ && $0 ~ re { sum += $NF; n++ } END { if (n) print sum }' "$1"
}

# attempt_running JOB N ATTEMPT: N pods of the job, all Running and labelled ATTEMPT.
attempt_running() {
	all_pods_running "$1" "$2" &&
		[[ $(kubectl -n "$NS" get pods -l "cadre.dev/job-name=$1,cadre.dev/restart-attempt=$3" -o name | wc -l) -eq $2 ]]
}

# event_seen_times JOB REASON N: describe shows REASON about the job at least N times,
# counting both repeated rows and a row's "(xN over ...)".
event_seen_times() {
	local total=0 type reason age message
	while IFS='|' read -r type reason age message; do
		[[ $reason == "$2" ]] && total=$((total + $(event_count "$age")))
	done < <(kubectl -n "$NS" describe "tj/$1" | describe_events)
	((total >= $3))
}

# running_gauge_positive: /metrics counts at least one TrainingJob Running.
running_gauge_positive() {
	curl -fsS --max-time 5 "http://$METRICS_ADDR/metrics" |
		grep -qE '^cadre_trainingjobs\{phase="Running"\} [1-9]'
}

# deployment_available NAME N: the Deployment in cadre-system has N available replicas.
deployment_available() {
	[[ $(kubectl -n "$INSTALL_NS" get deployment "$1" -o jsonpath='{.status.availableReplicas}') == "$2" ]]
}

# positive VALUE: VALUE is a number above zero.
positive() {
	[[ -n $1 ]] && awk -v v="$1" 'BEGIN { exit !(v > 0) }'
}

# ---------------------------------------------------------------------------------------

@test "check-metrics accepts a valid exposition and refuses each malformation, naming its line" {
	good=$BATS_TEST_TMPDIR/good.txt
	cat >"$good" <<'EOF'
# HELP cadre_reconcile_total Reconciles by kind and result, with a \\ and a \n escaped.
# TYPE cadre_reconcile_total counter
cadre_reconcile_total{kind="TrainingJob",result="success"} 11
cadre_reconcile_total{kind="Volume",result="error",note="a \"quoted\" \\ value\n"} 0 1700000000000
# TYPE cadre_reconcile_duration_seconds histogram
cadre_reconcile_duration_seconds_bucket{kind="TrainingJob",le="0.01"} 1
cadre_reconcile_duration_seconds_bucket{kind="TrainingJob",le="0.1"} 3
cadre_reconcile_duration_seconds_bucket{kind="TrainingJob",le="+Inf"} 4
cadre_reconcile_duration_seconds_sum{kind="TrainingJob"} 1.5e-1
cadre_reconcile_duration_seconds_count{kind="TrainingJob"} 4
# TYPE cadre_trainingjobs gauge
cadre_trainingjobs{phase="Running"} 2
cadre_trainingjobs{phase="Queued"} -0.5
# TYPE rpc_seconds summary
rpc_seconds{quantile="0.5"} 0.2
rpc_seconds{quantile="0.99"} NaN
rpc_seconds_sum 7
rpc_seconds_count 30
untyped_thing +Inf
EOF
	run "$CHECK_METRICS" "$good"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# From standard input too.
	run bash -c "\"$CHECK_METRICS\" <\"$good\""
	[ "$status" -eq 0 ] || { echo "$output"; false; }

	# Each case: the input, then the text the complaint must contain.
	cases=(
		'a{b="c} 1'                                   'unterminated value'
		'a{b="c\q"} 1'                                'invalid escape \q'
		'a{1b="c"} 1'                                 'bad label name'
		'a{b="c",b="d"} 1'                            'label b appears twice'
		'a{__b="c"} 1'                                'reserved'
		'a{b=c} 1'                                    'not quoted'
		'a{b="c"}1'                                   'no blank before the value'
		'a 1x'                                        'bad value 1x'
		'a Inf'                                       'bad value Inf'
		'a'                                           'sample without a value'
		'a 1 2.5'                                     'bad timestamp'
		'a 1 2 3'                                     'text after the timestamp'
		'1a 1'                                        'bad metric name'
		'# TYPE a widget'                             'unknown type widget'
		$'# TYPE a counter\n# TYPE a gauge'           'second TYPE for a'
		$'# HELP a x\n# HELP a y'                     'second HELP for a'
		'# HELP a bad \t escape'                      'invalid escape \t'
		$'a 1\n# TYPE a counter'                      'TYPE for a after its samples'
		$'# TYPE a counter\na -1'                     'negative'
		$'a 1\nb 1\na{x="y"} 2'                       'family a continues after other families'
		$'a{x="1",y="2"} 1\na{y="2",x="1"} 1'         'repeats'
		$'# TYPE h histogram\nh 1'                    'plain sample'
		$'# TYPE h histogram\nh_bucket 1'             'bucket without le'
		$'# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1'                         'no le="+Inf" bucket'
		$'# TYPE h histogram\nh_bucket{le="+Inf"} 1\nh_count 1'                               'has no h_sum'
		$'# TYPE h histogram\nh_bucket{le="+Inf"} 1\nh_sum 1'                                 'has no h_count'
		$'# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3'                      'differs from h_count 3'
		$'# TYPE h histogram\nh_bucket{le="2"} 1\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 1' 'not above the previous'
		$'# TYPE h histogram\nh_bucket{le="1"} 3\nh_bucket{le="+Inf"} 2'                     'cumulative'
		$'# TYPE h histogram\nh_bucket{le="x"} 1'                                             'is not a number'
		$'# TYPE h histogram\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\nb 1\nh_sum 2'       'family h continues'
		$'# TYPE s summary\ns{quantile="0.9"} 1\ns{quantile="0.5"} 1\ns_sum 1\ns_count 2'     'not above the previous one'
		$'a 1\r'                                      'carriage return'
	)
	for ((i = 0; i < ${#cases[@]}; i += 2)); do
		printf '%s\n' "${cases[i]}" >"$BATS_TEST_TMPDIR/bad.txt"
		run "$CHECK_METRICS" "$BATS_TEST_TMPDIR/bad.txt"
		if [[ $status -ne 1 || $output != *"${cases[i + 1]}"* || $output != *"line "[0-9]* ]]; then
			echo "input: ${cases[i]}"
			echo "wanted exit 1 and '${cases[i + 1]}'; got exit $status: $output"
			false
		fi
	done
	# The offending line is quoted.
	printf '%s\n' 'ok 1' 'broken{x="1"} one' >"$BATS_TEST_TMPDIR/bad.txt"
	run "$CHECK_METRICS" "$BATS_TEST_TMPDIR/bad.txt"
	[ "$status" -eq 1 ]
	[[ $output == *'line 2: bad value one: broken{x="1"} one'* ]] || { echo "$output"; false; }
	# The last line must end with a newline.
	printf 'a 1' >"$BATS_TEST_TMPDIR/bad.txt"
	run "$CHECK_METRICS" "$BATS_TEST_TMPDIR/bad.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"does not end with a newline"* ]] || { echo "$output"; false; }
}

@test "the ServiceAccount may do exactly what e2e/testdata/rbac-expected.txt lists, in any namespace and in cadre-system" {
	made_outside
	rbac_compare
	# One permission more, from anywhere, is a difference the comparison sees.
	kubectl -n default apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: e2e-extra, labels: {e2e.cadre.dev/test: "true"}}
rules: [{apiGroups: [""], resources: [limitranges], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: e2e-extra, labels: {e2e.cadre.dev/test: "true"}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: e2e-extra}
subjects: [{kind: ServiceAccount, name: $INSTALL_SA, namespace: $INSTALL_NS}]
EOF
	wait_for not rbac_compare
	run rbac_compare
	[ "$status" -ne 0 ]
	[[ $output == *"+default limitranges get"* ]] || { echo "$output"; false; }
	kubectl -n default delete role,rolebinding e2e-extra >/dev/null
	wait_for rbac_compare
}

@test "no rule bound to the ServiceAccount has a wildcard, Secrets, pods/exec, escalate, bind or impersonate" {
	rules=$(rbac_rules)
	# cadre's two roles, and the issuer-discovery role every ServiceAccount has.
	json_has "$rules" '[.[].role] | unique == ["cadre-controller", "cadre-leader-election",
		"system:service-account-issuer-discovery"]'
	json_has "$rules" 'all(.[].rule; [(.apiGroups // [])[], (.resources // [])[], .verbs[],
		(.resourceNames // [])[], (.nonResourceURLs // [])[]] | all(contains("*") | not))'
	json_has "$rules" 'all(.[].rule; (.resources // []) | all(. != "secrets" and . != "pods/exec"))'
	json_has "$rules" 'all(.[].rule; .verbs | all(. != "escalate" and . != "bind" and . != "impersonate"))'
	# The resource permissions the API server reports carry no wildcard either (the
	# non-resource URLs /api/* and /apis/* are discovery, which every user has).
	actual=$(rbac_actual)
	wild=$(grep -v '^[^ ]* /' <<<"$actual" | grep -F '*' || true)
	[ -z "$wild" ] || { echo "wildcards: $wild"; false; }
	# And the authorizer agrees, asked one thing at a time ("pods/exec" would ask about a
	# pod named exec: subresources go in --subresource).
	# A namespace of "-" asks cluster-wide (-A), as a cluster-scoped resource must be.
	while read -r verb resource sub ns; do
		args=("$verb" "$resource")
		[[ $sub == - ]] || args+=(--subresource "$sub")
		if [[ $ns == - ]]; then args+=(-A); else args+=(-n "$ns"); fi
		run kubectl auth can-i "${args[@]}" --as="$INSTALL_USER" </dev/null
		[ "$output" = no ] || { echo "can-i ${args[*]}: $output"; false; }
	done <<EOF
get secrets - $INSTALL_NS
list secrets - default
watch secrets - default
create pods exec default
get pods exec $INSTALL_NS
create pods attach default
create serviceaccounts token $INSTALL_NS
impersonate users - -
impersonate serviceaccounts - default
escalate clusterroles - -
bind clusterroles - -
create clusterrolebindings - -
delete nodes - -
patch persistentvolumes - -
list secrets - -
update trainingjobs.cadre.dev - default
patch trainingjobs.cadre.dev - default
delete leases.coordination.k8s.io - $INSTALL_NS
get leases.coordination.k8s.io - default
patch pods status default
update pods - default
EOF
	# The same question about a permission it has is answered yes: the probe is real.
	run kubectl auth can-i create pods --as="$INSTALL_USER" -n default
	[ "$output" = yes ]
	# restartStrategy InPlace tells a pod its attempt through its label (docs/failures.md).
	run kubectl auth can-i patch pods --as="$INSTALL_USER" -n default
	[ "$output" = yes ]
	run kubectl auth can-i list nodes -A --as="$INSTALL_USER"
	[ "$output" = yes ]
	run kubectl auth can-i update trainingjobs.cadre.dev --subresource status --as="$INSTALL_USER" -n default
	[ "$output" = yes ]
	# An array job's elements are TrainingJobs the controller creates and owns (docs/design.md
	# 12); it still never updates or patches a spec.
	run kubectl auth can-i create trainingjobs.cadre.dev --as="$INSTALL_USER" -n default
	[ "$output" = yes ]
}

@test "as its own ServiceAccount, the controller takes llama-pretrain with its shared Volume to Running, READY 2, and is refused nothing" {
	e2e_namespace
	pid=$(controller_pid)
	# Its only credential is the ServiceAccount's token: every --kubeconfig it was given
	# and its KUBECONFIG are the kubeconfig made from that token.
	mapfile -t args < <(tr '\0' '\n' <"/proc/$pid/cmdline")
	for ((i = 0; i < ${#args[@]}; i++)); do
		if [[ ${args[i]} == --kubeconfig ]]; then
			[ "${args[i + 1]}" = "$SA_KUBECONFIG" ] || { echo "--kubeconfig ${args[i + 1]}"; false; }
		fi
	done
	env_kubeconfig=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^KUBECONFIG=//p')
	[ "$env_kubeconfig" = "$SA_KUBECONFIG" ] || { echo "KUBECONFIG=$env_kubeconfig"; false; }
	run grep -E 'client-(certificate|key)' "$SA_KUBECONFIG"
	[ "$status" -ne 0 ]

	llama_up
	row=$(kubectl -n "$NS" get tj llama-pretrain --no-headers | tr -s ' ')
	[[ $row == "llama-pretrain Running 2 2 H100:8 0 "* ]] || { echo "row: $row"; false; }
	all_pods_running llama-pretrain 2
	[ "$(jp tj/llama-pretrain '{.status.readyNodes}')" = 2 ]
	condition_is llama-pretrain Running True
	[ "$(jp volume.cadre.dev/shared-checkpoints '{.status.claimName}')" = shared-checkpoints ]

	# The Role in cadre-system let it take the leader Lease.
	holder=$(kubectl -n "$INSTALL_NS" get lease cadre-controller -o jsonpath='{.spec.holderIdentity}')
	[ -n "$holder" ]
	grep -q "leader: became leader as $holder" "$(_controller_dir)/log" ||
		{ echo "the Lease is held by '$holder', not by the controller"; false; }
	# Its events were accepted.
	wait_for -t 30 has_event TrainingJob/llama-pretrain Admitted

	# Refused nothing, ever: not in its log, not in its own count of API answers.
	controller_log_clean
	curl -fsS --max-time 5 -o "$BATS_TEST_TMPDIR/metrics" "http://$METRICS_ADDR/metrics"
	run grep -E '^cadre_api_requests_total\{.*code="(401|403)"' "$BATS_TEST_TMPDIR/metrics"
	[ "$status" -ne 0 ] || { echo "refused requests: $output"; false; }
}

@test "/metrics after llama-pretrain runs: non-zero cadre_reconcile_total, cadre_api_requests_total and cadre_trainingjobs{phase=\"Running\"}, and valid exposition text" {
	e2e_namespace
	llama_up
	file=$BATS_TEST_TMPDIR/metrics
	content_type=$(curl -fsS --max-time 5 -o "$file" -w '%{content_type}' "http://$METRICS_ADDR/metrics")
	[[ $content_type == "text/plain; version=0.0.4"* ]] || { echo "Content-Type: $content_type"; false; }
	run "$CHECK_METRICS" "$file"
	[ "$status" -eq 0 ] || { echo "$output"; false; }

	problems=()
	reconciles=$(metric_sum "$file" 'cadre_reconcile_total\{[^}]*kind="TrainingJob"[^}]*result="success"')
	positive "$reconciles" || problems+=("cadre_reconcile_total{kind=\"TrainingJob\",result=\"success\"} is '${reconciles:-missing}'")
	requests=$(metric_sum "$file" 'cadre_api_requests_total\{[^}]*code="2[0-9][0-9]"')
	positive "$requests" || problems+=("cadre_api_requests_total with a 2xx code is '${requests:-missing}'")
	# The gauge is current: give the controller a moment after the phase it wrote.
	if ! wait_for -t 15 running_gauge_positive; then
		running=$(metric_sum "$file" 'cadre_trainingjobs\{phase="Running"\}')
		problems+=("cadre_trainingjobs{phase=\"Running\"} is '${running:-missing}' with llama-pretrain Running: $(grep -A3 '^# TYPE cadre_trainingjobs ' "$file" | tr '\n' '|')")
	fi
	if ((${#problems[@]})); then
		printf '%s\n' "${problems[@]}"
		false
	fi
}

@test "/readyz is 503 while the caches cannot sync and 200 once they have; /healthz is 200 throughout (in-cluster config)" {
	made_outside
	# A ServiceAccount with no permission yet: its lists are refused, so the caches cannot
	# sync, whatever the API server's health.
	kubectl -n "$INSTALL_NS" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: e2e-readyz, labels: {e2e.cadre.dev/test: "true"}}
EOF
	sa_dir=$BATS_TEST_TMPDIR/sa-readyz
	sa_credentials "$sa_dir" e2e-readyz
	incluster_start readyz "$sa_dir" --leader-elect --leader-election-namespace "$INSTALL_NS"
	health=$(incluster_health readyz)
	wait_for -t 30 http_code_is "http://$health/healthz" 200
	log=$(incluster_log readyz)
	wait_for grep -q 'list failed: forbidden' "$log"
	same_for 3 http_code_is "http://$health/readyz" 503
	[ "$(curl -s --max-time 5 "http://$health/readyz")" = "caches not synced" ]
	[ "$(http_code "http://$health/healthz")" = 200 ]
	run grep -F 'all caches synced' "$log"
	[ "$status" -ne 0 ]
	incluster_running readyz

	# The permissions of cadre-controller arrive; the lists succeed, the caches sync.
	kubectl apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-readyz, labels: {e2e.cadre.dev/test: "true"}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cadre-controller}
subjects: [{kind: ServiceAccount, name: e2e-readyz, namespace: $INSTALL_NS}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: e2e-readyz, namespace: $INSTALL_NS, labels: {e2e.cadre.dev/test: "true"}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cadre-leader-election}
subjects: [{kind: ServiceAccount, name: e2e-readyz, namespace: $INSTALL_NS}]
EOF
	wait_for -t 90 http_code_is "http://$health/readyz" 200
	grep -q 'manager: all caches synced' "$log"
	[ "$(http_code "http://$health/healthz")" = 200 ]
	# Ready, but standing by: the file's controller holds the Lease.
	grep -q 'leader: standing for election' "$log"
	incluster_stop readyz
}

@test "kubectl apply -k manifests/ installs cadre where restricted Pod Security is enforced; the Deployment's 2 pods are created, admitted and Running" {
	system_node_add
	run kubectl apply -k "$MANIFESTS"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# A Pod Security warning (the namespace also warns on restricted) would show here.
	[[ $output != *Warning* ]] || { echo "$output"; false; }
	[[ $output == *"deployment.apps/cadre-controller"* ]] || { echo "$output"; false; }
	[[ $output == *"customresourcedefinition.apiextensions.k8s.io/trainingjobs.cadre.dev"* ]]
	labels=$(kubectl get namespace "$INSTALL_NS" -o json | jq -c .metadata.labels)
	json_has "$labels" '.["pod-security.kubernetes.io/enforce"] == "restricted"'

	wait_for -t 60 replicaset_of cadre-controller
	rs=$(replicaset_of cadre-controller)
	wait_for -t 120 rs_pod_count_is "$rs" 2 Running
	wait_for -t 60 deployment_available cadre-controller 2
	[ -z "$(events_of ReplicaSet "$rs" FailedCreate)" ] || { events_of ReplicaSet "$rs" FailedCreate; false; }
	[ "$(events_of ReplicaSet "$rs" SuccessfulCreate | wc -l)" -eq 2 ]
	deploy=$(kubectl -n "$INSTALL_NS" get deployment cadre-controller -o json)
	json_has "$deploy" 'all(.status.conditions[]; .type != "ReplicaFailure")'

	pods=$(kubectl -n "$INSTALL_NS" get pods -l "pod-template-hash=${rs##*-}" -o json)
	json_has "$pods" '(.items | length) == 2'
	json_has "$pods" 'all(.items[]; .spec.serviceAccountName == "cadre-controller"
		and .spec.securityContext.runAsNonRoot == true
		and .spec.securityContext.seccompProfile.type == "RuntimeDefault"
		and all(.spec.containers[]; .securityContext.readOnlyRootFilesystem == true
			and .securityContext.allowPrivilegeEscalation == false
			and .securityContext.capabilities.drop == ["ALL"]))'

	# Applying it again changes nothing, as a GitOps tool would see it.
	run kubectl apply -k "$MANIFESTS"
	[ "$status" -eq 0 ]
	changed=$(grep -v ' unchanged$' <<<"$output" || true)
	[ -z "$changed" ] || { echo "not unchanged on a second apply: $changed"; false; }
}

@test "the namespace enforces restricted: a copy of the Deployment without runAsNonRoot is refused its pods, and such a pod is refused" {
	made_outside
	variant=$(deployment_variant cadre-root '.metadata.labels["e2e.cadre.dev/test"] = "true"
		| del(.spec.template.spec.securityContext.runAsNonRoot)')
	run kubectl create -f - <<<"$variant"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ $output == *'would violate PodSecurity "restricted:latest"'*runAsNonRoot* ]] || { echo "$output"; false; }

	wait_for -t 60 replicaset_of cadre-root
	rs=$(replicaset_of cadre-root)
	wait_for -t 60 failed_create_says "$rs" 'violates PodSecurity "restricted:latest": runAsNonRoot != true'
	same_for 3 rs_pod_count_is "$rs" 0
	deploy=$(kubectl -n "$INSTALL_NS" get deployment cadre-root -o json)
	json_has "$deploy" 'any(.status.conditions[]; .type == "ReplicaFailure" and .reason == "FailedCreate")'
	json_has "$deploy" '(.status.availableReplicas // 0) == 0'

	# The same pod, created directly, is refused with the reason; with runAsNonRoot it is
	# accepted, so the refusal is about that field and nothing else.
	pod=$(jq '{apiVersion: "v1", kind: "Pod", metadata: {name: "cadre-root", namespace: .metadata.namespace},
		spec: .spec.template.spec}' <<<"$variant")
	run kubectl create --dry-run=server -f - <<<"$pod"
	[ "$status" -ne 0 ]
	[[ $output == *'forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true'* ]] || { echo "$output"; false; }
	run kubectl create --dry-run=server -f - <<<"$(jq '.spec.securityContext.runAsNonRoot = true' <<<"$pod")"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ $output != *Warning* ]] || { echo "$output"; false; }
}

@test "after kubectl apply -k manifests/, a user holding edit in a namespace creates, patches and deletes TrainingJobs and Volumes there but not elsewhere, and writes no status; one holding view reads them and cannot create" {
	e2e_namespace
	run kubectl apply -k "$MANIFESTS"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	other=$(other_namespace)
	editor=$(user_kubeconfig edit editor)
	viewer=$(user_kubeconfig view viewer)
	job=$BATS_TEST_TMPDIR/job.yaml
	cat >"$job" <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: users-job}
spec:
  numNodes: 1
  suspend: true
  resources: {accelerators: "H100:1", cpus: "1", memory: 1Gi}
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
EOF
	volume=$BATS_TEST_TMPDIR/volume.yaml
	cat >"$volume" <<EOF
apiVersion: cadre.dev/v1alpha1
kind: Volume
metadata: {name: users-volume}
spec: {type: k8s-pvc, size: 1Gi, accessMode: ReadWriteOnce}
EOF

	# Aggregation into edit and view is the controller manager's, a moment after the apply.
	wait_for -t 60 as "$editor" -n "$NS" create --dry-run=server -f "$job"
	wait_for -t 60 as "$viewer" -n "$NS" get volumes.cadre.dev
	# And into admin, for namespace owners.
	wait_for -t 60 admin_writes_trainingjobs

	# edit, in its namespace: create, read, patch.
	as "$editor" -n "$NS" create -f "$job" -f "$volume"
	[ "$(as "$editor" -n "$NS" get tj -o name)" = trainingjob.cadre.dev/users-job ]
	[ "$(as "$editor" -n "$NS" get volumes.cadre.dev -o name)" = volume.cadre.dev/users-volume ]
	as "$editor" -n "$NS" patch tj users-job --type=merge -p '{"metadata":{"labels":{"team":"a"}}}'
	as "$editor" -n "$NS" patch volume.cadre.dev users-volume --type=merge -p '{"metadata":{"labels":{"team":"a"}}}'
	[ "$(jp tj/users-job '{.metadata.labels.team}')" = a ]
	[ "$(jp volume.cadre.dev/users-volume '{.metadata.labels.team}')" = a ]
	# ... but not its status, which is cadre's.
	refused "$editor" -n "$NS" patch tj users-job --subresource=status --type=merge \
		-p '{"status":{"phase":"Succeeded"}}'
	refused "$editor" -n "$NS" patch volume.cadre.dev users-volume --subresource=status --type=merge \
		-p '{"status":{"phase":"Bound"}}'
	# Nothing at all in a namespace where it holds no role.
	refused "$editor" -n "$other" create -f "$job"
	refused "$editor" -n "$other" create -f "$volume"
	refused "$editor" -n "$other" get tj
	refused "$editor" -n "$other" get volumes.cadre.dev

	# view, in its namespace: read, status too; no write of any kind.
	[ "$(as "$viewer" -n "$NS" get tj -o name)" = trainingjob.cadre.dev/users-job ]
	[ "$(as "$viewer" -n "$NS" get volume.cadre.dev users-volume -o jsonpath='{.metadata.name}')" = users-volume ]
	as "$viewer" -n "$NS" get tj users-job --subresource=status -o name
	refused "$viewer" -n "$NS" create -f "$job"
	refused "$viewer" -n "$NS" create -f "$volume"
	refused "$viewer" -n "$NS" patch tj users-job --type=merge -p '{"metadata":{"labels":{"team":"b"}}}'
	refused "$viewer" -n "$NS" delete volume.cadre.dev users-volume
	refused "$viewer" -n "$other" get tj

	# edit deletes what it made.
	as "$editor" -n "$NS" delete tj users-job --wait=false
	as "$editor" -n "$NS" delete volume.cadre.dev users-volume --wait=false
	wait_for -t 60 not kubectl -n "$NS" get tj users-job
	wait_for -t 60 not kubectl -n "$NS" get volume.cadre.dev users-volume
}

# sa_job FILE NAME SERVICEACCOUNT [EXTRA_SPEC_LINE]: a one-rank job naming SERVICEACCOUNT
# ("" for none) in spec.podTemplate.spec.serviceAccountName, written to FILE.
sa_job() {
	local sa_line=""
	[[ -n $3 ]] && sa_line="  podTemplate: {spec: {serviceAccountName: $3}}"
	cat >"$1" <<EOF2
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: $2}
spec:
  numNodes: 1
  resources: {accelerators: "H100:1", cpus: "1", memory: 1Gi}
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
$sa_line
${4:-}
EOF2
}

# sa_policy_refuses USER_KUBECONFIG FILE: the ServiceAccount policy refuses FILE's job to
# that user (the API server configures a new policy a moment after it is applied).
sa_policy_refuses() {
	local out
	! out=$(as "$1" -n "$NS" create --dry-run=server -f "$2" 2>&1) &&
		[[ $out == *trainingjob-serviceaccount.cadre.dev* ]]
}

@test "a job naming a ServiceAccount other than default needs use on it: cadre-edit alone is refused naming serviceAccountName, admitted once granted use; default always; the controller still makes an array's elements with the array's ServiceAccount" {
	e2e_namespace
	# The roles of manifests/ (cadre-edit); the policy came with crd/ (crds_install).
	run kubectl apply -k "$MANIFESTS"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	kubectl -n "$NS" create serviceaccount trainer >/dev/null
	submitter=$(user_kubeconfig cadre-edit submitter)
	sa_job "$BATS_TEST_TMPDIR/trainer.yaml" as-trainer trainer '  suspend: true'
	sa_job "$BATS_TEST_TMPDIR/default.yaml" as-default default '  suspend: true'
	sa_job "$BATS_TEST_TMPDIR/none.yaml" as-none "" '  suspend: true'
	sa_job "$BATS_TEST_TMPDIR/array.yaml" trainer-array trainer '  array: "0-1"'

	# cadre-edit alone: refused, in words that name the field and the verb wanted.
	wait_for -t 60 sa_policy_refuses "$submitter" "$BATS_TEST_TMPDIR/trainer.yaml"
	run as "$submitter" -n "$NS" create -f "$BATS_TEST_TMPDIR/trainer.yaml"
	[ "$status" -ne 0 ]
	[[ $output == *"(Forbidden)"*'spec.podTemplate.spec.serviceAccountName: "trainer"'* ]] || { echo "$output"; false; }
	[[ $output == *"use on serviceaccounts/trainer"* ]] || { echo "$output"; false; }
	refute kubectl -n "$NS" get tj as-trainer 2>/dev/null
	# The namespace's default, named or not, needs nothing more.
	as "$submitter" -n "$NS" create -f "$BATS_TEST_TMPDIR/default.yaml" -f "$BATS_TEST_TMPDIR/none.yaml"

	# An admin grants use on that one ServiceAccount, with the Role of docs/install.md
	# (`kubectl create role` refuses the verb, which discovery does not list): admitted.
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: use-trainer}
rules:
- apiGroups: [""]
  resources: [serviceaccounts]
  resourceNames: [trainer]
  verbs: [use]
EOF
	kubectl -n "$NS" create rolebinding submitter-use-trainer --role=use-trainer \
		--serviceaccount="$NS:submitter" >/dev/null
	wait_for -t 30 as "$submitter" -n "$NS" create --dry-run=server -f "$BATS_TEST_TMPDIR/trainer.yaml"
	as "$submitter" -n "$NS" create -f "$BATS_TEST_TMPDIR/trainer.yaml"
	[ "$(jp tj/as-trainer '{.spec.podTemplate.spec.serviceAccountName}')" = trainer ]

	# An array: the controller, as its own ServiceAccount, creates the elements, which copy
	# the array's serviceAccountName; the policy lets them through and their pods run as it.
	as "$submitter" -n "$NS" create -f "$BATS_TEST_TMPDIR/array.yaml"
	wait_for -t 60 kubectl -n "$NS" get tj trainer-array-0 trainer-array-1
	for i in 0 1; do
		[ "$(jp "tj/trainer-array-$i" '{.spec.podTemplate.spec.serviceAccountName}')" = trainer ]
	done
	wait_for -t 60 kubectl -n "$NS" get pod trainer-array-0-0
	[ "$(jp pod/trainer-array-0-0 '{.spec.serviceAccountName}')" = trainer ]
	refute has_event TrainingJob/trainer-array FailedCreate
	controller_log_clean
}

# sinfo_as USER_KUBECONFIG: cadre sinfo with nothing but that user's token; $rc, and its
# output in $BATS_TEST_TMPDIR/out and err.
sinfo_as() {
	rc=0
	KUBECONFIG=$1 "$REPO_ROOT/build/cadre" sinfo >"$BATS_TEST_TMPDIR/out" \
		2>"$BATS_TEST_TMPDIR/err" </dev/null || rc=$?
	echo "cadre sinfo -> $rc"
	echo "stdout: $(<"$BATS_TEST_TMPDIR/out")"
	echo "stderr: $(<"$BATS_TEST_TMPDIR/err")"
}

# can_i USER_KUBECONFIG ARGS...: what `kubectl auth can-i ARGS` answers that user.
can_i() {
	as "$1" auth can-i "${@:2}" 2>/dev/null || true
}

@test "cadre-cluster-view, which docs/install.md binds to every user, grants Partitions and Nodes but no pods in any namespace; sinfo works with it alone, up nodes unk, and shows alloc and idle with cadre-cluster-usage" {
	e2e_namespace
	run kubectl apply -k "$MANIFESTS"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	made_outside
	user=$(user_kubeconfig cadre-view sinfo-user)
	kubectl create clusterrolebinding "$NS-cluster-view" --clusterrole=cadre-cluster-view \
		--serviceaccount="$NS:sinfo-user" >/dev/null
	kubectl label clusterrolebinding "$NS-cluster-view" e2e.cadre.dev/test=true >/dev/null
	wait_for -t 30 test "$(can_i "$user" list nodes)" = yes
	[ "$(can_i "$user" list partitions.cadre.dev)" = yes ]
	# No pod of any namespace, its own included: a pod list carries every pod's env.
	[ "$(can_i "$user" list pods --all-namespaces)" = no ]
	[ "$(can_i "$user" list pods -n kube-system)" = no ]
	[ "$(can_i "$user" get pods -n "$NS")" = no ]

	# A partition of the GPU nodes, and a job holding one of them whole, so sinfo has rows
	# and usage something to show.
	kubectl apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: Partition
metadata:
  name: $NS
  labels: {e2e.cadre.dev/test: "true"}
spec:
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  maxTime: "1:00:00"
EOF
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: busy}
spec:
  numNodes: 1
  resources: {accelerators: "H100:8", cpus: "1", memory: 1Gi}
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
EOF
	wait_for -t 60 phase_is busy Running

	# sinfo works for that user: every node listed, up ones unk, and a line saying why.
	sinfo_as "$user"
	[ "$rc" -eq 0 ]
	grep -q ' unk ' "$BATS_TEST_TMPDIR/out"
	refute grep -qE ' (idle|alloc|mix) ' "$BATS_TEST_TMPDIR/out"
	grep -q 'gpu-node-' "$BATS_TEST_TMPDIR/out"
	grep -q 'cadre-cluster-usage' "$BATS_TEST_TMPDIR/err"

	# An operator also holding cadre-cluster-usage sees what each node holds.
	kubectl create clusterrolebinding "$NS-cluster-usage" --clusterrole=cadre-cluster-usage \
		--serviceaccount="$NS:sinfo-user" >/dev/null
	kubectl label clusterrolebinding "$NS-cluster-usage" e2e.cadre.dev/test=true >/dev/null
	wait_for -t 30 test "$(can_i "$user" list pods --all-namespaces)" = yes
	sinfo_as "$user"
	[ "$rc" -eq 0 ]
	grep -q ' alloc ' "$BATS_TEST_TMPDIR/out"
	grep -q ' idle ' "$BATS_TEST_TMPDIR/out"
	refute grep -q ' unk ' "$BATS_TEST_TMPDIR/out"
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
}

@test "kubectl describe tj of a job that waited, ran, failed once and restarted tells that story in its Events" {
	e2e_namespace
	wait_gpus_free
	nodes=$(gpu_nodes)
	# A blocker holds every GPU, so the job waits Queued for capacity.
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: blocker}
spec:
  numNodes: $nodes
  resources: {accelerators: "H100:8", cpus: "1", memory: 1Gi}
  image: registry.invalid/cadre/e2e:latest
  run: sleep infinity
EOF
	wait_for -t 120 phase_is blocker Running
	kubectl -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: finetune}
spec:
  numNodes: 2
  resources: {accelerators: "H100:4", cpus: "1", memory: 1Gi}
  image: registry.invalid/cadre/e2e:latest
  run: python finetune.py
  maxRestarts: 1
EOF
	wait_for -t 60 condition_is finetune Admitted False InsufficientCapacity
	same_for 3 phase_is finetune Queued
	job_pod_count_is finetune 0

	# Capacity frees up: admitted, created, released, Running.
	kubectl -n "$NS" delete tj blocker --wait=false >/dev/null
	wait_for -t 120 phase_is finetune Running
	# Rank 1 fails; the gang restarts once and runs again as attempt 1.
	kubectl -n "$NS" annotate pod finetune-1 e2e.cadre.dev/exit-code=3 >/dev/null
	wait_for -t 60 field_is tj/finetune '{.status.restarts}' 1
	wait_for -t 150 attempt_running finetune 2 1
	wait_for -t 30 phase_is finetune Running
	# Events are sent in the background: wait for the last of them.
	wait_for -t 30 event_seen_times finetune Running 2

	describe=$(kubectl -n "$NS" describe tj/finetune)
	events=$(describe_events <<<"$describe")
	echo "$describe" | sed -n '/^Events:/,$p'
	reasons=()
	ages=()
	counts=()
	messages=()
	types=()
	while IFS='|' read -r type reason age message; do
		types+=("$type")
		reasons+=("$reason")
		ages+=("$(age_seconds "$age")")
		counts+=("$(event_count "$age")")
		messages+=("$message")
	done <<<"$events"
	# first REASON: the row of its first appearance, or -1.
	first() {
		local i
		for ((i = 0; i < ${#reasons[@]}; i++)); do
			[[ ${reasons[i]} == "$1" ]] && { echo "$i"; return; }
		done
		echo -1
	}

	problems=()
	for reason in Admitted CreatedPods Running PodFailed; do
		(($(first "$reason") >= 0)) || problems+=("no $reason event")
	done
	failed=$(first PodFailed)
	if ((failed >= 0)); then
		[[ ${types[failed]} == Warning ]] || problems+=("PodFailed is ${types[failed]}, not Warning")
		[[ ${messages[failed]} == *"finetune-1"*"exit code 3"* ]] ||
			problems+=("PodFailed does not name the pod and its exit code: ${messages[failed]}")
		# The first run, in order, before the failure.
		prev=-1
		for reason in Admitted CreatedPods Running; do
			at=$(first "$reason")
			((at >= 0)) || continue
			((at > prev)) || problems+=("$reason (row $at) is listed before ${reasons[prev]} (row $prev): the first run reads out of order")
			((at < failed)) || problems+=("$reason is first listed after PodFailed")
			prev=$at
		done
		# Between the failure and the new gang: the old one gone, the job queued again.
		requeued=$(first Requeued)
		if ((requeued < 0)); then
			problems+=("no Requeued event: Restarting -> Queued is silent")
		elif ((requeued < failed || ages[requeued] > ages[failed])); then
			problems+=("Requeued (row $requeued) is not after PodFailed (row $failed)")
		fi
		# The restart: admitted, created and Running again after the failure,
		# as a row of its own after PodFailed, or as a repeat ("x2") last seen after it.
		for reason in Admitted CreatedPods Running; do
			again=0
			for ((i = 0; i < ${#reasons[@]}; i++)); do
				[[ ${reasons[i]} == "$reason" ]] || continue
				if ((i > failed && ages[i] <= ages[failed])) || ((counts[i] >= 2 && ages[i] < ages[failed])); then
					again=1
				fi
			done
			((again)) || problems+=("no $reason after PodFailed: the restarted gang's $reason is missing")
		done
		attempt1=0
		for ((i = 0; i < ${#reasons[@]}; i++)); do
			[[ ${reasons[i]} == CreatedPods && ${messages[i]} == *"attempt 1"* ]] && attempt1=1
		done
		((attempt1)) || problems+=("no CreatedPods event names attempt 1")
	fi
	# The wait: the job sat Queued for capacity before it was admitted; the events say so.
	admitted=$(first Admitted)
	waited=-1
	for ((i = 0; i < ${#reasons[@]}; i++)); do
		if [[ ${reasons[i]} == InsufficientCapacity || ${reasons[i]} == QueuedBehind ]]; then
			waited=$i
			break
		fi
	done
	if ((waited < 0)); then
		problems+=("no event says the job waited for capacity (InsufficientCapacity or QueuedBehind) before it was Admitted")
	elif ((admitted >= 0 && waited > admitted)); then
		problems+=("the wait for capacity is listed after Admitted")
	fi
	# And the status agrees with the story.
	tj=$(kubectl -n "$NS" get tj finetune -o json)
	json_has "$tj" '.status.restarts == 1 and .status.lastFailure.exitCode == 3 and .status.lastFailure.rank == 1'
	if ((${#problems[@]})); then
		printf 'story problem: %s\n' "${problems[@]}"
		false
	fi
	controller_log_clean
}
