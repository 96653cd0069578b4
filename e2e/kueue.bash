# e2e/kueue.bash: Kueue (sigs.k8s.io/kueue, pinned in e2e/controlplane/kueue/go.mod) in
# the local control plane, sourced by e2e/cluster. Kueue runs as one more plain process
# beside the others, supervised like them:
#   - its CRDs are the ones of its module (config/components/crd/bases), server-side applied;
#   - its webhooks are served on 127.0.0.1 with a certificate signed by the cluster's CA,
#     and the webhook configurations (config/components/webhook/manifests.yaml) point at
#     them by URL; Kueue's internal certificate management is off;
#   - the pod integration alone is on, and only in namespaces labelled kueue-managed=true:
#     both Kueue's managedJobsNamespaceSelector and the pod webhooks' namespaceSelector say
#     so, so a pod anywhere else never waits for Kueue, up or down;
#   - health, metrics and the visibility server listen on loopback ports of $state/ports.
# Kueue reads its metrics and visibility certificates from fixed paths
# (/etc/kueue/metrics/certs, /visibility); it runs in a mount namespace of its own where
# the harness's certificate is bound there, so two clusters never share them and nothing
# is written outside the state dir but the two empty mount points.
# On while $state/kueue/enabled exists: `up --kueue` or `kueue on`.
# shellcheck shell=bash disable=SC2154

kueue_dir() { echo "$state/kueue"; }

kueue_enabled() { [[ -f $state/kueue/enabled ]]; }

# The mount points Kueue's fixed certificate paths need; created empty, once per machine.
kueue_mount_points=(/etc/kueue/metrics/certs /visibility)

# Sets CMD (command_of) for Kueue.
kueue_command() {
	local kbin dir=$state/kueue m binds=""
	kbin=$(<"$dir/bin")
	for m in "${kueue_mount_points[@]}"; do
		binds+="mount --bind '$pki/kueue' '$m' && "
	done
	# unshare and sh exec Kueue in the same process: the pid the supervisor records is
	# Kueue's, and its command line names the binary and the state dir.
	CMD=(unshare --mount --propagation private sh -c "$binds exec \"\$0\" \"\$@\""
		"$kbin/kueue"
		--config="$dir/config.yaml"
		--kubeconfig="$state/kueue.kubeconfig"
		--zap-log-level=2)
}

kueue_config() {
	cat >"$state/kueue/config.yaml" <<EOF
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:$kueue_health_port
metrics:
  bindAddress: 127.0.0.1:$kueue_metrics_port
webhook:
  host: 127.0.0.1
  port: $kueue_webhook_port
  certDir: $pki/kueue
# One instance, which tests stop and start on purpose.
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
visibilityServer:
  bindAddress: 127.0.0.1
  bindPort: $kueue_visibility_port
managedJobsNamespaceSelector:
  matchLabels:
    kueue-managed: "true"
clientConnection:
  qps: 100
  burst: 200
integrations:
  frameworks:
  - pod
EOF
}

kueue_pki() {
	[[ -f $pki/kueue/tls.crt ]] && return 0
	mkdir -p "$pki/kueue"
	queue new_cert kueue/tls kueue-webhook "" serverAuth ca "IP:127.0.0.1,DNS:localhost"
	# In system:masters, like the other components (make_pki says why).
	queue new_cert kueue-client kueue system:masters clientAuth ca
	in_parallel || die "making Kueue's certificates failed"
	chmod 600 "$pki/kueue/tls.key" "$pki/kueue-client.key"
}

# The webhook configurations of Kueue's module, for the resources Kueue serves here
# (Kueue's own and pods), pointing at the loopback server by URL.
kueue_webhooks() {
	local kbin ca
	kbin=$(<"$state/kueue/bin")
	ca=$(b64 "$pki/ca.crt")
	yq -y --arg url "https://127.0.0.1:$kueue_webhook_port" --arg ca "$ca" '
	  select(.kind == "MutatingWebhookConfiguration" or .kind == "ValidatingWebhookConfiguration")
	  | .metadata = {name: ("kueue-" + .metadata.name), labels: {"cadre.dev/e2e": "kueue"}}
	  | .webhooks |= map(select(.clientConfig.service.path | test("kueue-x-k8s-io|--v1-pod$"))
	      | .clientConfig = {url: ($url + .clientConfig.service.path), caBundle: $ca}
	      | if (.rules[0].resources | index("pods"))
	        then .namespaceSelector = {matchLabels: {"kueue-managed": "true"}} else . end)
	' "$kbin/config/webhooks.yaml"
}

kueue_on() {
	load_ports
	running apiserver || die "the cluster is not up"
	[[ -n ${kueue_webhook_port:-} ]] || die "no Kueue ports in $state/ports (a cluster from before Kueue: e2e/cluster down, then up)"
	if running kueue; then
		log "Kueue is already on"
		return 0
	fi
	[[ $(id -u) == 0 ]] || die "Kueue's fixed certificate paths are bound in a mount namespace, which needs root"
	command -v yq >/dev/null || die "yq (the jq wrapper for YAML) is needed to make Kueue's webhook configurations"
	local t=$SECONDS kbin m
	kbin=$("$e2e_dir/controlplane/build" kueue)
	mkdir -p "$state/kueue"
	echo "$kbin" >"$state/kueue/bin"
	for m in "${kueue_mount_points[@]}"; do mkdir -p "$m"; done
	kueue_pki
	write_kubeconfig "$state/kueue.kubeconfig" kueue-client
	kueue_config
	kubectl apply --server-side --force-conflicts -f "$kbin/config/crd" >/dev/null
	kube_wait "$ready_timeout" --for=condition=Established -f "$kbin/config/crd"
	kubectl create namespace kueue-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
	touch "$state/kueue/enabled"
	start_one kueue
	# The webhooks last: with them, Kueue's objects and pods in managed namespaces need it up.
	kueue_webhooks | kubectl apply -f - >/dev/null
	# A Kueue object accepted now went through the webhooks: they are served.
	until kubectl create --dry-run=server -f - >/dev/null 2>&1 <<EOF
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: cadre-e2e-probe
EOF
	do
		((SECONDS - t > ready_timeout)) && die "Kueue's webhooks not answering after ${ready_timeout}s (see $logs/kueue.log)"
		sleep 0.5
	done
	log "Kueue $(head -1 "$kbin/VERSIONS" | cut -d' ' -f2) on in $((SECONDS - t))s: webhooks https://127.0.0.1:$kueue_webhook_port, visibility https://127.0.0.1:$kueue_visibility_port, pods in namespaces labelled kueue-managed=true"
}

# Kueue's objects first, while Kueue runs to release their finalizers (a ResourceFlavor or
# ClusterQueue in use keeps kueue.x-k8s.io/resource-in-use); then the webhooks, so nothing
# waits for a Kueue that is gone; then Kueue; then the CRDs. Finalizers Kueue did not
# release in time are removed, so `off` always leaves a cluster without Kueue.
kueue_off() {
	load_ports
	local kinds=workloads.kueue.x-k8s.io,localqueues.kueue.x-k8s.io,clusterqueues.kueue.x-k8s.io
	kinds+=,cohorts.kueue.x-k8s.io,resourceflavors.kueue.x-k8s.io,workloadpriorityclasses.kueue.x-k8s.io
	if running kueue; then
		kubectl delete "$kinds" --all -A --ignore-not-found --wait=true --timeout=30s >/dev/null 2>&1 || true
	fi
	kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration -l cadre.dev/e2e=kueue \
		--ignore-not-found >/dev/null
	{ running kueue || supervisor_of kueue >/dev/null; } && stop_one kueue
	rm -f "$state/kueue/enabled"
	local obj
	while read -r obj; do
		[[ -n $obj ]] || continue
		# shellcheck disable=SC2086 # "-n NS kind/name" or "kind/name"
		kubectl patch $obj --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
	done < <(kubectl get "$kinds" -A -o json 2>/dev/null | jq -r '.items[]
		| select((.metadata.finalizers // []) | length > 0)
		| (if .metadata.namespace then "-n " + .metadata.namespace + " " else "" end)
		  + (.kind | ascii_downcase) + ".kueue.x-k8s.io/" + .metadata.name')
	# Pods Kueue managed keep its finalizer until it lets them go: a pod still being
	# deleted now would hold its GPUs for the files that run next.
	while read -r obj; do
		[[ -n $obj ]] || continue
		# shellcheck disable=SC2086
		kubectl patch $obj --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1 || true
	done < <(kubectl get pods -A -l kueue.x-k8s.io/managed=true -o json 2>/dev/null | jq -r '.items[]
		| select(any((.metadata.finalizers // [])[]; . == "kueue.x-k8s.io/managed"))
		| "-n " + .metadata.namespace + " pod/" + .metadata.name')
	if [[ -f $state/kueue/bin ]]; then
		kubectl delete --ignore-not-found --wait=true --timeout="${ready_timeout}s" \
			-f "$(<"$state/kueue/bin")/config/crd" >/dev/null
	fi
	kubectl delete namespace kueue-system --ignore-not-found --wait=false >/dev/null
	log "Kueue off"
}

cmd_kueue() {
	(($# == 1)) && [[ $1 == on || $1 == off ]] || die "usage: e2e/cluster kueue on|off"
	if [[ $1 == on ]]; then kueue_on; else kueue_off; fi
}

# One status line for Kueue while it is enabled; fails when it is enabled and not healthy.
kueue_status() {
	local pid restarts
	kueue_enabled || return 0
	if pid=$(pid_of kueue); then
		restarts=$(grep -c " kueue exited" "$logs/restarts.log" 2>/dev/null || true)
		if healthy kueue; then
			printf '%-19s pid %-8s %-10s %s (webhooks https://127.0.0.1:%s, visibility https://127.0.0.1:%s)%s\n' \
				kueue "$pid" healthy "$(health_url kueue)" "$kueue_webhook_port" "$kueue_visibility_port" \
				"$( ((restarts)) && echo " (exited on its own and was restarted: $restarts)")"
			return 0
		fi
		printf '%-19s pid %-8s %-10s %s\n' kueue "$pid" unhealthy "$(health_url kueue)"
		return 1
	fi
	printf '%-19s %-12s %-10s %s\n' kueue "-" stopped "$(health_url kueue)"
	return 1
}
