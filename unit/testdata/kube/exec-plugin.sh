#!/bin/sh
# A stand-in for a cloud exec credential plugin (aws eks get-token, ...),
# used by unit/test_exec.c. Shell builtins only, so that it runs clean
# under valgrind --trace-children.
#   $1: what to print: token | cert | fail | garbage | slow (a token after
#       PLUGIN_SLEEP seconds) | ask (a token ending in the line read from stdin)
# Environment (from the kubeconfig's exec.env, or inherited from the test):
#   PLUGIN_TOKEN        token prefix: run n prints "<prefix>-<n>"
#   PLUGIN_EXPIRY       status.expirationTimestamp, when set
#   PLUGIN_API_VERSION  apiVersion to claim (default client.authentication.k8s.io/v1)
#   PLUGIN_STATE_DIR    when set: the number of runs is kept in runs, and the
#                       last run's KUBERNETES_EXEC_INFO and arguments in info, args
set -eu
mode=${1:-token}
dir=${0%/*}
n=1
if [ -n "${PLUGIN_STATE_DIR:-}" ]; then
	if [ -f "$PLUGIN_STATE_DIR/runs" ]; then
		read -r n <"$PLUGIN_STATE_DIR/runs"
		n=$((n + 1))
	fi
	printf '%s\n' "$n" >"$PLUGIN_STATE_DIR/runs"
	printf '%s\n' "${KUBERNETES_EXEC_INFO:-}" >"$PLUGIN_STATE_DIR/info"
	printf '%s\n' "$@" >"$PLUGIN_STATE_DIR/args"
	if [ -t 0 ]; then echo yes; else echo no; fi >"$PLUGIN_STATE_DIR/stdin-is-a-terminal"
fi
api=${PLUGIN_API_VERSION:-client.authentication.k8s.io/v1}
expiry=""
if [ -n "${PLUGIN_EXPIRY:-}" ]; then
	expiry=",\"expirationTimestamp\":\"$PLUGIN_EXPIRY\""
fi
# A PEM file as the inside of a JSON string: newlines become \n.
pem() {
	out=""
	while IFS= read -r line; do
		out="$out$line\\n"
	done <"$1"
	printf '%s' "$out"
}
case $mode in
token)
	printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"%s-%s"%s}}\n' \
		"$api" "${PLUGIN_TOKEN:-tok}" "$n" "$expiry"
	;;
cert)
	printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"clientCertificateData":"%s","clientKeyData":"%s"%s}}\n' \
		"$api" "$(pem "$dir/client.crt")" "$(pem "$dir/client.key")" "$expiry"
	;;
fail)
	echo "exec-plugin: not logged in" >&2
	exit 3
	;;
garbage)
	echo "this is not JSON"
	;;
slow)
	sleep "${PLUGIN_SLEEP:-1}"
	printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"slow-%s"}}\n' "$api" "$n"
	;;
ask)
	echo "exec-plugin: open https://login.example/device and enter the code; then type it here" >&2
	read -r answer
	printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"asked-%s"}}\n' \
		"$api" "$answer"
	;;
esac
