# cadre entrypoint (controller/entrypoint.sh; docs/pods.md says why it is so).
# Runs as `/bin/sh -c <this text>`: POSIX sh, so bash and dash both run it.
# Every input comes from the environment the controller set on the container,
# never from this text, so the user's setup and run need no quoting here.
IFS=' 	
'
unset CDPATH
cadre_nl='
'
cadre_termlog=${CADRE_TERMINATION_LOG:-/dev/termination-log}

cadre_say() {
	printf 'cadre: %s\n' "$*" >&2
}

# Print the reason, keep it as the container's termination message (the
# kubelet mounts that file; elsewhere it is absent and skipped), exit.
cadre_fail() {
	cadre_code=$1
	shift
	cadre_say "$*"
	if [ -w "$cadre_termlog" ]; then
		printf 'cadre: %s\n' "$*" >"$cadre_termlog"
	fi
	exit "$cadre_code"
}

trap 'exit 143' TERM
trap 'exit 130' INT

[ -n "${CADRE_RUN:-}" ] || cadre_fail 121 "CADRE_RUN is empty: nothing to run"
cadre_timeout=${CADRE_GANG_TIMEOUT_SECONDS:-600}
case $cadre_timeout in
'' | *[!0-9]*)
	cadre_fail 121 "CADRE_GANG_TIMEOUT_SECONDS must be a whole number of seconds, not '$cadre_timeout'"
	;;
esac

# User code runs under bash when the image has it, as Slurm and SkyPilot
# scripts assume; under sh otherwise.
if command -v bash >/dev/null 2>&1; then
	cadre_shell=bash
else
	cadre_shell=sh
fi

# A missing workdir is the same on every node and known at once: fail before
# holding the gang for up to the whole timeout.
if [ -n "${CADRE_WORKDIR:-}" ]; then
	cd "$CADRE_WORKDIR" 2>/dev/null ||
		cadre_fail 122 "workdir $CADRE_WORKDIR does not exist in the image or its volumes"
fi

# Seconds since an arbitrary origin, without a process: /proc/uptime is
# monotonic. Where it cannot be read, count polls instead.
cadre_polls=0
cadre_now() {
	if read -r cadre_up cadre_idle 2>/dev/null </proc/uptime; then
		cadre_t=${cadre_up%%.*}
	else
		cadre_t=$cadre_polls
	fi
}

# Sets cadre_ip to the first IPv4 address of $1 (any address on an IPv6-only
# cluster), or to "" while the name does not resolve.
cadre_resolve() {
	cadre_out=$(getent ahostsv4 "$1" 2>/dev/null) ||
		cadre_out=$(getent hosts "$1" 2>/dev/null) || cadre_out=
	cadre_out=${cadre_out%%"$cadre_nl"*}
	cadre_ip=${cadre_out%%[ 	]*}
}

# Wait until every peer's DNS name resolves; a peer's record appears once its
# pod has an IP (the Service publishes not-ready addresses), so this is also
# the moment every pod of the gang exists. Resolved peers are not asked again.
if [ -n "${CADRE_PEERS:-}" ]; then
	command -v getent >/dev/null 2>&1 ||
		cadre_fail 121 "getent is not in the image; cadre needs it to resolve the peers"
	set -f
	cadre_npeers=0
	for cadre_peer in $CADRE_PEERS; do
		cadre_npeers=$((cadre_npeers + 1))
	done
	cadre_now
	cadre_start=$cadre_t
	cadre_next_report=$cadre_t
	while :; do
		cadre_i=0
		cadre_missing=
		cadre_nmissing=0
		for cadre_peer in $CADRE_PEERS; do
			cadre_i=$((cadre_i + 1))
			eval "cadre_ip=\${cadre_ip_$cadre_i:-}"
			if [ -z "$cadre_ip" ]; then
				cadre_resolve "$cadre_peer"
				eval "cadre_ip_$cadre_i=\$cadre_ip"
			fi
			if [ -z "$cadre_ip" ]; then
				cadre_missing="$cadre_missing $cadre_peer"
				cadre_nmissing=$((cadre_nmissing + 1))
			fi
		done
		[ "$cadre_nmissing" -eq 0 ] && break
		cadre_now
		cadre_elapsed=$((cadre_t - cadre_start))
		# Say so before giving up: on a slow node the first pass alone may
		# use the whole timeout, and a job must never fail without having
		# said what it waited for.
		if [ "$cadre_t" -ge "$cadre_next_report" ]; then
			cadre_say "waiting for $cadre_nmissing of $cadre_npeers peers to resolve (${cadre_elapsed}s of ${cadre_timeout}s):$cadre_missing"
			cadre_next_report=$((cadre_t + 10))
		fi
		if [ "$cadre_elapsed" -ge "$cadre_timeout" ]; then
			cadre_fail 124 "timed out after ${cadre_elapsed}s waiting for $cadre_nmissing of $cadre_npeers peers to resolve:$cadre_missing"
		fi
		sleep 1
		cadre_polls=$((cadre_polls + 1))
	done
	cadre_i=0
	SKYPILOT_NODE_IPS=
	for cadre_peer in $CADRE_PEERS; do
		cadre_i=$((cadre_i + 1))
		eval "cadre_ip=\$cadre_ip_$cadre_i"
		SKYPILOT_NODE_IPS=${SKYPILOT_NODE_IPS:+$SKYPILOT_NODE_IPS$cadre_nl}$cadre_ip
	done
	export SKYPILOT_NODE_IPS
	set +f
	cadre_say "all $cadre_npeers peers resolved"
fi

# The first TERM or INT goes on to the whole process group, so the user's
# processes (not just their shell) can shut down cleanly; this shell is
# usually PID 1, which would otherwise ignore it. Outside a group of our own
# only the child is told.
cadre_child=
cadre_signalled=0
cadre_stopping=0
cadre_forward() {
	trap '' TERM INT
	cadre_signalled=1
	cadre_stopping=1
	kill -TERM -$$ 2>/dev/null || kill -TERM "$cadre_child" 2>/dev/null
}

# Run $1 under the user shell and set cadre_rc to its exit status. A trapped
# signal makes wait return early, so wait again for the real status.
cadre_exec() {
	trap cadre_forward TERM INT
	"$cadre_shell" -c "$1" &
	cadre_child=$!
	cadre_rc=0
	wait "$cadre_child" || cadre_rc=$?
	while [ "$cadre_signalled" = 1 ]; do
		cadre_signalled=0
		cadre_rc=0
		wait "$cadre_child" || cadre_rc=$?
	done
}

if [ -n "${CADRE_SETUP:-}" ]; then
	cadre_exec "$CADRE_SETUP"
	if [ "$cadre_rc" -ne 0 ]; then
		cadre_fail "$cadre_rc" "setup failed with exit code $cadre_rc; run was not started"
	fi
	# Told to stop while setup ran, and setup still exited 0.
	[ "$cadre_stopping" = 0 ] || cadre_fail 143 "stopped during setup; run was not started"
fi
cadre_exec "$CADRE_RUN"
exit "$cadre_rc"
