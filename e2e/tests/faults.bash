# Helpers for 90-faults.bats: a proxy that breaks the wire between the controller (and the
# CLI) and the API server (e2e/faultproxy), and the measures the suite prints. Load after
# helpers, controller and runtime.
#
#   faultproxy_start   build the proxy once (cached by the hash of its source and the Go
#                      toolchain), give it a certificate of the cluster's CA for 127.0.0.1,
#                      start it in front of the API server, and write $FAULT_KUBECONFIG:
#                      cadre's ServiceAccount token, with the proxy as the server
#   fault KIND [k=v...]  set a fault on the proxy's control address (e2e/faultproxy/main.go
#                      lists them); prints the proxy's answer
#   faultproxy_stop    stop it

_faultproxy_dir() {
	echo "$BATS_FILE_TMPDIR/faultproxy"
}

# faultproxy_bin: the proxy's binary, built the first time this source and this Go
# toolchain meet.
faultproxy_bin() {
	local src=$E2E_DIR/faultproxy key dir
	command -v go >/dev/null || { echo "faultproxy: no go toolchain on PATH" >&2; return 1; }
	key=$({ cat "$src/main.go" "$src/go.mod"; go version; } | sha256sum | cut -c1-16)
	dir=${CADRE_CACHE:-$HOME/.cache/cadre}/faultproxy/$key
	if [[ ! -x $dir/faultproxy ]]; then
		mkdir -p "$dir"
		(cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o "$dir/faultproxy.tmp" .) >&2 ||
			{ echo "faultproxy: go build failed" >&2; return 1; }
		mv "$dir/faultproxy.tmp" "$dir/faultproxy"
	fi
	echo "$dir/faultproxy"
}

faultproxy_start() {
	local dir bin pki=$CADRE_E2E_STATE/pki listen control t0 sa
	dir=$(_faultproxy_dir)
	mkdir -p "$dir"
	bin=$(faultproxy_bin) || return 1
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$dir/tls.key" -out "$dir/tls.crt" -subj "/CN=cadre-e2e-faultproxy" \
		-CA "$pki/ca.crt" -CAkey "$pki/ca.key" -days 1 -sha256 \
		-addext "basicConstraints=critical,CA:FALSE" \
		-addext "keyUsage=critical,digitalSignature,keyEncipherment" \
		-addext "extendedKeyUsage=serverAuth" -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null ||
		{ echo "faultproxy: cannot make its certificate" >&2; return 1; }
	rm -f "$dir/ready"
	"$bin" -upstream "$CADRE_E2E_APISERVER" -ca "$pki/ca.crt" -cert "$dir/tls.crt" \
		-key "$dir/tls.key" -ready "$dir/ready" >>"$dir/log" 2>&1 </dev/null 3>&- &
	echo $! >"$dir/pid"
	t0=$SECONDS
	while [[ ! -s $dir/ready ]]; do
		((SECONDS - t0 > 10)) && { echo "faultproxy: not listening after 10 s" >&2; cat "$dir/log" >&2; return 1; }
		sleep 0.1
	done
	read -r listen control <"$dir/ready"
	echo "$control" >"$dir/control"
	FAULT_CONTROL=$control
	# The controller's kubeconfig, pointing at the proxy: cadre's ServiceAccount token and
	# the cluster CA, which also signed the proxy's certificate.
	sa=$dir/sa
	install_rbac
	sa_credentials "$sa" "$INSTALL_SA"
	CADRE_E2E_APISERVER=https://$listen sa_kubeconfig "$sa" "$dir/kubeconfig"
	FAULT_KUBECONFIG=$dir/kubeconfig
	export FAULT_CONTROL FAULT_KUBECONFIG
}

faultproxy_stop() {
	local dir
	dir=$(_faultproxy_dir)
	[[ -f $dir/pid ]] || return 0
	kill "$(<"$dir/pid")" 2>/dev/null || true
	rm -f "$dir/pid"
}

# fault KIND [KEY=VALUE...]: e.g. `fault blackhole for=30s`, `fault status code=429 for=10s`.
fault() {
	local kind=$1 q
	shift
	q="kind=$kind"
	for kv in "$@"; do q+="&$kv"; done
	curl -fsS --max-time 5 "http://$FAULT_CONTROL/fault?$q"
}

# fault_stats: the proxy's counters as JSON (requests, answered, injected, cut).
fault_stats() {
	curl -fsS --max-time 5 "http://$FAULT_CONTROL/stats"
}
