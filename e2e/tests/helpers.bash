# Shared helpers for the e2e bats files. Load with `load helpers` at the top of a file.
#
# The cluster is the one `e2e/cluster up` started (e2e/run does that); its environment
# (KUBECONFIG, CADRE_E2E_STATE, ...) is loaded here, so a file can also be run by hand:
#   e2e/cluster up && bats e2e/tests/00-cluster.bats
#
# Tests talk to the cluster with kubectl, as users do.

E2E_DIR=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
REPO_ROOT=$(cd "$E2E_DIR/.." && pwd)
export E2E_DIR REPO_ROOT
# shellcheck source=scripts/kube-wait.bash
source "$REPO_ROOT/scripts/kube-wait.bash"

# free_ports N: N distinct TCP ports on 127.0.0.1 that nothing listens on, one per line, in
# this shard's range and none of its control plane's (scripts/free-ports).
free_ports() {
	"$REPO_ROOT/scripts/free-ports" "$1"
}

if ! _e2e_env=$("$E2E_DIR/cluster" env); then
	echo "no e2e cluster is up (run e2e/cluster up, or use e2e/run)" >&2
	exit 1
fi
eval "$_e2e_env"
unset _e2e_env

# Seconds wait_for waits when not told otherwise. A wait that succeeds returns at once, so
# this is generous: on a busy 2-core machine one kubectl call can take seconds.
E2E_TIMEOUT=${E2E_TIMEOUT:-60}

# wait_for [-t SECONDS] COMMAND...
# Runs COMMAND every 0.2 s until it succeeds; fails after SECONDS (default $E2E_TIMEOUT),
# showing the command and its last output, so a failed wait explains itself.
wait_for() {
	local timeout=$E2E_TIMEOUT
	if [[ $1 == -t ]]; then
		timeout=$2
		shift 2
	fi
	local deadline=$((SECONDS + timeout)) out
	while true; do
		if out=$("$@" 2>&1); then
			return 0
		fi
		if ((SECONDS >= deadline)); then
			echo "wait_for: gave up after ${timeout}s on: $*" >&2
			echo "last output: $out" >&2
			return 1
		fi
		sleep 0.2
	done
}

# not COMMAND...: succeeds when COMMAND fails (for wait_for).
not() {
	! "$@"
}

# refute COMMAND...: fails, and so fails the test, when COMMAND succeeds. A bare
# `! COMMAND` checks nothing in the middle of a test: set -e ignores a negated command.
refute() {
	if "$@"; then
		echo "refute: expected to fail: $*" >&2
		return 1
	fi
}

# jp KIND/NAME JSONPATH: one field of an object in $NS, e.g. jp pod/a '{.status.phase}'.
jp() {
	kubectl -n "$NS" get "$1" -o "jsonpath=$2"
}

# field_is KIND/NAME JSONPATH VALUE: succeeds when the field has that value (for wait_for).
field_is() {
	local got
	got=$(jp "$1" "$2") || return 1
	[[ $got == "$3" ]]
}

# pod_phase_is NAME PHASE
pod_phase_is() {
	[[ $(jp "pod/$1" '{.status.phase}') == "$2" ]]
}

# e2e_namespace: creates a namespace of its own for the current test, exported as NS, and
# waits for its default ServiceAccount (pods cannot be created before it exists).
# Call it from setup(); e2e_namespace_delete from teardown().
e2e_namespace() {
	local base
	base=$(basename "$BATS_TEST_FILENAME" .bats)
	base=$(printf '%s-%s' "$base" "$BATS_TEST_NUMBER" | tr -c 'a-z0-9\n-' '-' | tr -s '-')
	NS="e2e-${base:0:40}-$(printf '%04x' $((RANDOM)))"
	export NS
	kubectl create -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $NS
  labels:
    e2e.cadre.dev/test: "true"
EOF
	wait_for kubectl -n "$NS" get serviceaccount default
}

# Deleting a namespace is asynchronous (the namespace controller empties it); tests do not
# wait for it.
# no_namespace_terminating: no namespace is being deleted (for wait_for). Until it is gone,
# a namespace an earlier test or file deleted answers every create in it with 403
# (NamespaceTerminating), which a file that counts the controller's 403s would see.
no_namespace_terminating() {
	[[ -z $(kubectl get namespaces -o jsonpath='{.items[?(@.status.phase=="Terminating")].metadata.name}') ]]
}

e2e_namespace_delete() {
	[[ -n ${NS:-} ]] || return 0
	kubectl delete namespace "$NS" --wait=false --ignore-not-found >/dev/null 2>&1 || true
}

# The toleration every pod needs to land on the fake GPU nodes (they carry the taint
# nvidia.com/gpu=present:NoSchedule, as GPU nodes on real clouds do).
GPU_TOLERATION='  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule'

# make_pod NAME [ANNOTATIONS_YAML] [EXTRA_SPEC_YAML]: creates a pod in $NS that tolerates
# the GPU taint. ANNOTATIONS_YAML is a block indented by 4 spaces; EXTRA_SPEC_YAML by 2.
make_pod() {
	local name=$1 annotations=${2:-} extra=${3:-}
	kubectl -n "$NS" create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $name
  annotations:
    e2e.cadre.dev/purpose: test
$annotations
spec:
  restartPolicy: Never
$GPU_TOLERATION
$extra
  containers:
  - name: main
    image: registry.invalid/cadre/e2e:latest
EOF
}

# cli ARGS...: runs $CADRE (the file sets it: the cadre binary) with ARGS and no stdin; $rc is
# its exit status, $BATS_TEST_TMPDIR/{out,err} its output, all three echoed for a failure's log.
cli() {
	rc=0
	"$CADRE" "$@" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" </dev/null || rc=$?
	echo "cadre $* -> $rc"
	echo "stdout: $(<"$BATS_TEST_TMPDIR/out")"
	echo "stderr: $(<"$BATS_TEST_TMPDIR/err")"
}
