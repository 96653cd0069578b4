# kube_wait SECONDS ARGS...: `kubectl wait ARGS` until it succeeds, for at most SECONDS.
# Sourced; it calls whatever `kubectl` means where it runs (a function that adds the
# cluster's --kubeconfig, or the binary).
#
# `kubectl wait --for=condition=X` gives up at once, instead of waiting, on an object that
# has no .status.conditions yet: a CRD just applied, a node just created (".status.conditions
# accessor error: <nil> is of the type <nil>, expected []interface{}"). This asks again,
# each time with what is left of SECONDS, and returns kubectl's last status with its error.
kube_wait() {
	local deadline=$((SECONDS + $1)) left err rc
	shift
	while true; do
		left=$((deadline - SECONDS))
		((left > 0)) || left=1
		err=$(kubectl wait --timeout="${left}s" "$@" 2>&1 >/dev/null) && return 0
		rc=$?
		if ((SECONDS >= deadline)); then
			printf '%s\n' "$err" >&2
			return "$rc"
		fi
		sleep 0.5
	done
}
