# e2e/realnode.bash: a real node beside kwok's, sourced by e2e/cluster. One node,
# real-node-0, where pods run for real: containerd, runc and the CNI bridge plugin from
# Debian; the kubelet and CoreDNS built from the Go module proxy (e2e/realnode/build); images
# built locally with no registry (localhost/cadre-e2e-small:<tag>, the sandbox's pause and
# busybox; localhost/cadre-e2e-torch:<tag>, Debian's python3-torch and the test data's
# train.py). docs/e2e.md ("The real node") says what it is and what it changes.
#
#   e2e/cluster up --real-node      a cluster with the real node
#   e2e/cluster real-node on|off    start it on a running cluster, or stop it
#   e2e/cluster real-node env       exports for tests: images, node name, volume directory
#   e2e/cluster real-node volume NAMESPACE CLAIM
#                                   a ReadWriteMany PV on the node, bound to that claim
#   e2e/cluster real-node import DIR
#                                   an image directory of e2e/realnode/build (controller, ...)
#                                   into the node's containerd, unless it has it already
#
# The node is labelled cadre.dev/real-node=true and tainted cadre.dev/real-node=true:
# NoSchedule, so only pods that tolerate it land there. It advertises nvidia.com/gpu: 16 as
# an extended resource, as Kubernetes documents for node-level resources, with no device
# behind it (kwok's nodes have none either), and the product label of kwok's nodes: the
# seed's scripts ask for 2 nodes of 8 GPUs and run here unchanged, on the CPU, with gloo.
#
# Everything is the state dir's: containerd's root, state, sockets and runc root; the
# kubelet's root dir, pod logs and cgroup root (/cadre-e2e-<n> in each v1 hierarchy); a
# bridge cadre-e2e-<n> with 10.88.<n>.0/24, made here and used by the bridge plugin without
# a gateway of its own (so no IP forwarding). There is no kube-proxy: the one Service address
# that works is the `kubernetes` Service's (10.96.0.1:443), which a DNAT rule of this node's
# bridge (chain CADRE-E2E-SVC-<n>) sends to the API server, as kube-proxy would, so a pod
# reaches the API server as pods do, in-cluster. What cannot be moved is recorded and put back
# by `off` (and `down`): the sysctls the kubelet sets (vm.overcommit_memory, kernel.panic,
# kernel.panic_on_oops, ...), the host directories the kubelet and containerd insist on
# (/var/lib/kubelet/device-plugins, /var/log/containers, /run/containerd/s, /var/lib/cni),
# mounts, cgroups and the bridge. Two clusters on one machine each get a node of their
# own (another <n>); the machine-wide settings go back when the last one stops
# (/run/cadre-e2e-real-node holds who runs).
# shellcheck shell=bash disable=SC2154

real_dir=$state/real-node
real_node_name=real-node-0
real_registry=/run/cadre-e2e-real-node
# The sysctls kubelet 1.36 sets unless protectKernelDefaults (container_manager_linux.go,
# setupKernelTunables).
real_sysctls=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
	kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
# Host paths the kubelet, runc's shims and the CNI cache use whatever the config says.
real_host_dirs=(/var/lib/kubelet/device-plugins /var/lib/kubelet /var/log/containers
	/run/containerd/s /run/containerd /var/lib/cni/results /var/lib/cni /var/run/netns)
real_gpus=16
real_gpu_product=NVIDIA-H100-80GB-HBM3

real_enabled() { [[ -f $real_dir/enabled ]]; }

# log, and the same line in $logs/real-node.log: what a test's setup_file said, after it.
rlog() {
	log "$@"
	printf '%s %s\n' "$(date -u +%FT%TZ)" "$*" >>"$logs/real-node.log" 2>/dev/null || true
}

# The network index <n> of this cluster's node (bridge cadre-e2e-<n>, 10.88.<n>.0/24).
real_index() { cat "$real_dir/index" 2>/dev/null; }

real_node_ip() {
	local dev
	dev=$(ip -4 route show default 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "dev") {print $(i + 1); exit}}')
	[[ -n $dev ]] || return 1
	ip -4 -o addr show dev "$dev" scope global | awk '{split($4, a, "/"); print a[1]; exit}'
}

# Sets CMD (command_of) for containerd, kubelet and coredns.
real_command() {
	local n kbin
	n=$(real_index)
	case $1 in
	containerd) CMD=(/usr/bin/containerd --config "$real_dir/containerd/config.toml") ;;
	kubelet)
		kbin=$(<"$real_dir/kubelet.bin")
		CMD=("$kbin/kubelet"
			--config="$real_dir/kubelet/config.yaml"
			--kubeconfig="$real_dir/kubelet/kubeconfig"
			--root-dir="$real_dir/kubelet/root"
			--hostname-override="$real_node_name"
			--node-ip="$(<"$real_dir/node-ip")"
			--node-labels="cadre.dev/real-node=true,nvidia.com/gpu.product=$real_gpu_product,nvidia.com/gpu.count=$real_gpus"
			--register-with-taints=cadre.dev/real-node=true:NoSchedule
			--v=2)
		;;
	coredns) CMD=("$(<"$real_dir/coredns.bin")/coredns" -conf "$real_dir/coredns/Corefile") ;;
	esac
}

real_health_url() {
	case $1 in
	containerd) echo "unix://$real_dir/run/containerd.sock" ;;
	kubelet) echo "http://127.0.0.1:$real_kubelet_healthz_port/healthz" ;;
	coredns) echo "http://127.0.0.1:$coredns_ready_port/ready" ;;
	esac
}

real_healthy() {
	case $1 in
	containerd) ctr --address "$real_dir/run/containerd.sock" version >/dev/null 2>&1 ;;
	*) curl -fsS --max-time 5 "$(real_health_url "$1")" >/dev/null 2>&1 ;;
	esac
}

# ---------------------------------------------------------------------------------------
# The machine's shared state: who runs, what to put back.

real_registry_lock() {
	mkdir -p "$real_registry"
	exec 8>"$real_registry/lock"
	flock 8
}
real_registry_unlock() { exec 8>&-; }

# Other clusters' nodes that still run or are starting: registered, and their API
# server's, containerd's or kubelet's pid file is live. (A node registers before its
# containerd starts, seconds later; two shards turning theirs on at once must not take it
# for a crashed one's registration and claim the same network.)
real_others() {
	local f other_state p
	for f in "$real_registry"/node.*; do
		[[ -f $f ]] || continue
		other_state=$(<"$f")
		[[ $other_state == "$state" ]] && continue
		for p in apiserver containerd kubelet; do
			if [[ -f $other_state/run/$p.pid ]] && kill -0 "$(<"$other_state/run/$p.pid")" 2>/dev/null; then
				echo "$other_state"
				break
			fi
		done
	done
}

# Claims a network index and, for the first node on the machine, records the sysctls and
# which host directories exist, so the last node to stop puts them back.
real_register() {
	real_registry_lock
	local s d
	if [[ -z $(real_others) ]]; then
		rm -f "$real_registry"/node.*
		# The first node on the machine records what to put back, unless a node that
		# crashed left the record (its values are the machine's own; the present ones may
		# be the kubelet's).
		if [[ ! -f $real_registry/sysctls ]]; then
			for s in "${real_sysctls[@]}"; do
				printf '%s=%s\n' "$s" "$(sysctl -n "$s")"
			done >"$real_registry/sysctls.tmp"
			for d in "${real_host_dirs[@]}"; do
				[[ -e $d ]] || echo "$d"
			done >"$real_registry/created"
			mv "$real_registry/sysctls.tmp" "$real_registry/sysctls"
		fi
	fi
	local n
	for ((n = 0; n < 200; n++)); do
		[[ -e $real_registry/node.$n ]] && continue
		ip link show "cadre-e2e-$n" >/dev/null 2>&1 && continue
		ip -4 route show 2>/dev/null | grep -q "^10\.88\.$n\.0/24 " && continue
		echo "$state" >"$real_registry/node.$n"
		echo "$n" >"$real_dir/index"
		real_registry_unlock
		return 0
	done
	real_registry_unlock
	die "no free network for the real node (10.88.0-199.0/24 all in use)"
}

# Gives the index back; the last node puts the sysctls and host directories back.
real_unregister() {
	local n s d
	n=$(real_index) || return 0
	[[ -n $n ]] || return 0
	real_registry_lock
	rm -f "$real_registry/node.$n"
	if [[ -z $(real_others) ]]; then
		while IFS='=' read -r s d; do
			[[ -n $s ]] && sysctl -q -w "$s=$d" >/dev/null 2>&1 || true
		done <"$real_registry/sysctls" 2>/dev/null
		# Deepest first (the list is in that order), and only when empty: another
		# program may have put something there meanwhile.
		while read -r d; do
			[[ -n $d ]] || continue
			rm -f "$d/kubelet.sock" 2>/dev/null
			rmdir "$d" 2>/dev/null || true
		done <"$real_registry/created" 2>/dev/null
		rm -f "$real_registry/sysctls" "$real_registry/created"
	fi
	real_registry_unlock
	rm -f "$real_dir/index"
}

# ---------------------------------------------------------------------------------------
# Configuration

real_cgroup_controllers() {
	local c
	for c in /sys/fs/cgroup/*/; do
		c=${c%/}
		c=${c##*/}
		[[ $c == unified ]] && continue
		mountpoint -q "/sys/fs/cgroup/$c" && echo "$c"
	done
}

# The kubelet's cgroup root, /cadre-e2e-<n>, in every v1 hierarchy: it must exist before
# the kubelet starts (it checks), and cpuset's needs its parent's CPUs and memory nodes.
real_cgroups() {
	local n c d
	n=$(real_index)
	for c in $(real_cgroup_controllers); do
		d=/sys/fs/cgroup/$c/cadre-e2e-$n
		mkdir -p "$d"
		if [[ $c == cpuset ]]; then
			cat /sys/fs/cgroup/cpuset/cpuset.cpus >"$d/cpuset.cpus"
			cat /sys/fs/cgroup/cpuset/cpuset.mems >"$d/cpuset.mems"
		fi
	done
}

real_network() {
	local n
	n=$(real_index)
	if ! ip link show "cadre-e2e-$n" >/dev/null 2>&1; then
		ip link add "cadre-e2e-$n" type bridge
		ip addr add "10.88.$n.1/24" dev "cadre-e2e-$n"
	fi
	ip link set "cadre-e2e-$n" up
}

# The `kubernetes` Service for this node's pods, as kube-proxy would make it: its ClusterIP
# and port ($service_ip:443, what the kubelet puts in every pod's KUBERNETES_SERVICE_HOST and
# _PORT) DNATed to where the API server listens. The API server binds 127.0.0.1 only (its
# serving certificate names $service_ip too), so this bridge alone accepts loopback
# destinations (route_localnet, which goes with the bridge); the chain is this node's, and
# only packets from its bridge enter it. The Service's endpoints are not kept here (the API
# server's --endpoint-reconciler-type=none: it advertises loopback), so the rule names the
# address itself, as the endpoints would.
real_service_nat() {
	local n chain
	n=$(real_index)
	chain=CADRE-E2E-SVC-$n
	sysctl -q -w "net.ipv4.conf.cadre-e2e-$n.route_localnet=1" >/dev/null
	iptables -w -t nat -N "$chain" 2>/dev/null || iptables -w -t nat -F "$chain"
	iptables -w -t nat -A "$chain" -d "$service_ip/32" -p tcp --dport 443 \
		-j DNAT --to-destination "127.0.0.1:$apiserver_port"
	iptables -w -t nat -C PREROUTING -i "cadre-e2e-$n" -j "$chain" 2>/dev/null ||
		iptables -w -t nat -A PREROUTING -i "cadre-e2e-$n" -j "$chain"
}

real_service_nat_off() {
	local n=$1 chain=CADRE-E2E-SVC-$1
	while iptables -w -t nat -D PREROUTING -i "cadre-e2e-$n" -j "$chain" 2>/dev/null; do :; done
	iptables -w -t nat -F "$chain" 2>/dev/null || true
	iptables -w -t nat -X "$chain" 2>/dev/null || true
}

real_config() {
	local n d=$real_dir small_ref node_ip
	n=$(real_index)
	small_ref=$(<"$real_dir/small.ref")
	node_ip=$(<"$real_dir/node-ip")
	mkdir -p "$d"/{containerd,run,cni,cni-ipam,kubelet/root,kubelet/pods-logs,coredns,volumes,runc}
	cat >"$d/containerd/config.toml" <<EOF
# containerd for $real_node_name (e2e/realnode.bash): everything under the state dir.
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$d/run/containerd.sock"
[ttrpc]
  address = "$d/run/containerd.sock.ttrpc"
[debug]
  address = "$d/run/containerd-debug.sock"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$small_ref"
  enable_selinux = false
  disable_apparmor = true
  # Needed here: this machine withholds CAP_SYS_RESOURCE even from root, and runc fails to
  # lower the sandbox's oom_score_adj to -998 ("can't get final child's PID from pipe").
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "/usr/sbin/runc"
        Root = "$d/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni"
    max_conf_num = 1
EOF
	# The bridge exists already, with its address: the plugin only plugs pods into it.
	# isGateway false, so it does not turn on IP forwarding; pods reach each other and
	# CoreDNS (on the bridge's address) on the link. The one route is to the Service range,
	# through the bridge's address, where real_service_nat answers for the `kubernetes`
	# Service (a cluster's pods have a default route to their node, where kube-proxy does).
	cat >"$d/cni/10-cadre-e2e.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "cadre-e2e-$n", "plugins": [{
  "type": "bridge", "bridge": "cadre-e2e-$n", "isGateway": false, "ipMasq": false,
  "hairpinMode": true,
  "ipam": {"type": "host-local", "dataDir": "$d/cni-ipam",
           "ranges": [[{"subnet": "10.88.$n.0/24", "rangeStart": "10.88.$n.10", "gateway": "10.88.$n.1"}]],
           "routes": [{"dst": "$service_cidr"}]}}]}
EOF
	cat >"$d/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The node IP: the kubelet refuses a loopback one.
address: $node_ip
port: $real_kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $real_kubelet_healthz_port
cgroupDriver: cgroupfs
cgroupRoot: /cadre-e2e-$n
# Needed here: kubelet 1.36 refuses a cgroup v1 host by default.
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$d/run/containerd.sock
imageServiceEndpoint: unix://$d/run/containerd.sock
tlsCertFile: $pki/real-node-serving.crt
tlsPrivateKeyFile: $pki/real-node-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
clusterDNS: ["10.88.$n.1"]
# Pods resolve through CoreDNS alone, with no search domains of this machine's.
resolvConf: ""
podCIDR: 10.88.$n.0/24
podLogsDir: $d/kubelet/pods-logs
maxPods: 50
# No evictions, no image garbage collection: a test node, with images no registry can
# give back.
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
enforceNodeAllocatable: []
# No KUBE-FIREWALL or canary chains in this machine's iptables.
makeIPTablesUtilChains: false
serializeImagePulls: false
EOF
	write_kubeconfig "$d/kubelet/kubeconfig" real-node-client
	cat >"$d/coredns/Corefile" <<EOF
cluster.local:53 {
    bind 10.88.$n.1
    errors
    log
    health 127.0.0.1:$coredns_health_port
    ready 127.0.0.1:$coredns_ready_port
    kubernetes cluster.local {
        kubeconfig $state/kubeconfig cadre-e2e
    }
}
EOF
}

real_pki() {
	local node_ip
	node_ip=$(<"$real_dir/node-ip")
	[[ -f $pki/real-node-client.crt && -f $pki/real-node-serving.crt ]] && return 0
	queue new_cert real-node-client "system:node:$real_node_name" system:nodes clientAuth ca
	queue new_cert real-node-serving "system:node:$real_node_name" system:nodes serverAuth ca \
		"IP:127.0.0.1,IP:$node_ip,DNS:$real_node_name"
	in_parallel || die "making the real node's certificates failed"
	chmod 600 "$pki"/real-node-*.key
}

# ---------------------------------------------------------------------------------------
# on and off

# containerd's root, from the seed (e2e/realnode/build seed): the images' blobs and
# unpacked layers as hard links, which nothing writes; the bolt databases, which
# containerd writes, as copies of their own. A root that exists already is kept.
real_seed_root() {
	local seed=$1/root root=$real_dir/containerd/root f
	[[ -e $root ]] && return 0
	mkdir -p "$real_dir/containerd"
	cp -al "$seed" "$root.tmp"
	while IFS= read -r -d '' f; do
		cp -p --remove-destination "$f" "$root.tmp/${f#"$seed"/}"
	done < <(find "$seed" -type f -name '*.db' -print0)
	mv "$root.tmp" "$root"
}

# Imports an image directory unless containerd has its name already.
real_import() {
	local dir=$1 ref t=$SECONDS
	ref=$(<"$dir/REF")
	if ctr --address "$real_dir/run/containerd.sock" -n k8s.io images ls -q 2>/dev/null | grep -qxF "$ref"; then
		return 0
	fi
	"$e2e_dir/realnode/build" import "$dir" "$real_dir/run/containerd.sock" ||
		die "importing $ref into containerd failed"
	rlog "imported $ref in $((SECONDS - t))s"
}

real_node_on() {
	load_ports
	running apiserver || die "the cluster is not up"
	[[ $(id -u) == 0 ]] || die "the real node needs root (containerd, runc, mounts, cgroups, a bridge); the kwok nodes do not"
	[[ -n ${real_kubelet_port:-} ]] || die "no real-node ports in $state/ports (a cluster from before the real node: e2e/cluster down, then up)"
	if real_enabled && running kubelet; then
		log "the real node is already on"
		return 0
	fi
	local p missing=()
	for p in containerd runc ctr ip iptables; do command -v "$p" >/dev/null || missing+=("$p"); done
	[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local ]] || missing+=(containernetworking-plugins)
	((${#missing[@]} == 0)) ||
		die "missing ${missing[*]} (apt-get install -y containerd runc containernetworking-plugins busybox-static debootstrap)"
	[[ -d /sys/fs/cgroup/memory ]] || die "the real node expects cgroup v1 hierarchies under /sys/fs/cgroup (this machine's kind)"

	local t0=$SECONDS t kbin dbin small torch seed
	# Build or find everything first: nothing on the machine changes before this works.
	t=$SECONDS
	kbin=$("$e2e_dir/realnode/build" kubelet)
	dbin=$("$e2e_dir/realnode/build" coredns)
	small=$("$e2e_dir/realnode/build" small)
	torch=$("$e2e_dir/realnode/build" torch)
	seed=$("$e2e_dir/realnode/build" seed "$small" "$torch")
	rlog "real node: programs and images ready in $((SECONDS - t))s"

	mkdir -p "$real_dir"
	echo "$kbin" >"$real_dir/kubelet.bin"
	echo "$dbin" >"$real_dir/coredns.bin"
	echo "$small" >"$real_dir/small.dir"
	echo "$torch" >"$real_dir/torch.dir"
	cp "$small/REF" "$real_dir/small.ref"
	cp "$torch/REF" "$real_dir/torch.ref"
	real_node_ip >"$real_dir/node-ip" || die "no IPv4 address on the default route's interface (the kubelet needs a node IP that is not loopback)"
	[[ -s $real_dir/node-ip ]] || die "no IPv4 address on the default route's interface"
	touch "$real_dir/enabled"
	real_register
	real_pki
	real_config
	real_cgroups
	real_network
	real_service_nat

	t=$SECONDS
	real_seed_root "$seed"
	start_one containerd
	real_import "$small"
	real_import "$torch"
	rlog "real node: containerd and its images in $((SECONDS - t))s"
	t=$SECONDS
	start_one kubelet
	local deadline=$((SECONDS + ready_timeout))
	until kubectl get node "$real_node_name" >/dev/null 2>&1; do
		((SECONDS < deadline)) || die "$real_node_name did not register in ${ready_timeout}s (see $logs/kubelet.log)"
		sleep 0.5
	done
	# The GPUs the seed's scripts ask for, as an extended resource of the node's status
	# (the kubelet carries it into allocatable).
	kubectl patch node "$real_node_name" --subresource=status --type=merge \
		-p "{\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"$real_gpus\"}}}" >/dev/null
	kube_wait "$ready_timeout" --for=condition=Ready "node/$real_node_name" ||
		die "$real_node_name is not Ready (see $logs/kubelet.log)"
	until [[ $(kubectl get node "$real_node_name" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}') == "$real_gpus" ]]; do
		((SECONDS < deadline)) || die "$real_node_name does not show nvidia.com/gpu: $real_gpus allocatable"
		sleep 0.5
	done
	rlog "real node: $real_node_name Ready in $((SECONDS - t))s"
	t=$SECONDS
	start_one coredns
	rlog "real node on in $((SECONDS - t0))s: $real_node_name at $(<"$real_dir/node-ip"):$real_kubelet_port, pods on 10.88.$(real_index).0/24, DNS cluster.local at 10.88.$(real_index).1, images $(<"$real_dir/small.ref") $(<"$real_dir/torch.ref")"
}

# Unmounts everything under DIR, deepest first.
real_umount_under() {
	local m
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done < <(awk -v d="$1/" 'index($2, d) == 1 || $2 == substr(d, 1, length(d) - 1) {print $2}' /proc/self/mounts |
		awk '{print length($0) " " $0}' | sort -rn | cut -d' ' -f2-)
}

# The pods first, through the kubelet, which stops their containers and sandboxes (so the
# CNI plugin releases their network namespaces); then CoreDNS, the kubelet and containerd;
# then whatever a crash left: shims, containers, mounts, cgroups, the bridge, PVs.
real_node_off() {
	[[ -d $real_dir ]] || { log "the real node is off"; return 0; }
	load_ports 2>/dev/null || true
	local t0=$SECONDS c
	if running apiserver && running kubelet; then
		kubectl delete pods -A --field-selector "spec.nodeName=$real_node_name" --grace-period=1 \
			--wait=true --timeout=60s >/dev/null 2>&1 || true
		rlog "real node: its pods deleted in $((SECONDS - t0))s"
	fi
	for c in coredns kubelet; do
		{ running "$c" || supervisor_of "$c" >/dev/null; } && stop_one "$c"
	done
	local sock=$real_dir/run/containerd.sock id ns netns=()
	if running containerd; then
		# What the kubelet did not stop (it was gone, or too slow): the tasks, then the
		# containers and their snapshots.
		for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
			ctr --address "$sock" -n k8s.io tasks kill -s KILL "$id" >/dev/null 2>&1 || true
			ctr --address "$sock" -n k8s.io tasks rm -f "$id" >/dev/null 2>&1 || true
		done
		for id in $(ctr --address "$sock" -n k8s.io containers ls -q 2>/dev/null); do
			ns=$(ctr --address "$sock" -n k8s.io containers info "$id" 2>/dev/null |
				grep -o '/var/run/netns/cni-[0-9a-f-]*' | head -n1) && [[ -n $ns ]] && netns+=("$ns")
			ctr --address "$sock" -n k8s.io containers rm "$id" >/dev/null 2>&1 || true
		done
	fi
	{ running containerd || supervisor_of containerd >/dev/null; } && stop_one containerd
	local pids
	mapfile -t pids < <(real_strays)
	((${#pids[@]} == 0)) || { rlog "real node: stopping leftover processes: ${pids[*]}"; terminate "${pids[@]}"; }
	# Network namespaces of sandboxes nobody stopped (the kubelet stops a sandbox's, so
	# this is after a crash only).
	for ns in "${netns[@]}"; do
		umount "$ns" 2>/dev/null || true
		rm -f "$ns"
	done
	real_umount_under "$real_dir"
	# The kubelet's links to its containers' logs (a path it does not let one move) that
	# its container garbage collection had not removed yet.
	local l
	for l in /var/log/containers/*.log; do
		[[ -L $l && $(readlink "$l") == "$real_dir/"* ]] && rm -f "$l"
	done
	local n d
	n=$(real_index 2>/dev/null || true)
	if [[ -n $n ]]; then
		for c in $(real_cgroup_controllers); do
			d=/sys/fs/cgroup/$c/cadre-e2e-$n
			[[ -d $d ]] || continue
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
		done
		real_service_nat_off "$n"
		ip link del "cadre-e2e-$n" 2>/dev/null || true
	fi
	if running apiserver; then
		kubectl delete node "$real_node_name" --ignore-not-found --wait=false >/dev/null 2>&1 || true
		kubectl delete pv -l e2e.cadre.dev/real-node-volume --ignore-not-found --wait=false >/dev/null 2>&1 || true
	fi
	real_unregister
	rm -f "$real_dir/enabled"
	# The state dir keeps the images' references and logs only; mounts are gone, so rm is safe.
	rm -rf "$real_dir/containerd" "$real_dir/kubelet" "$real_dir/volumes" "$real_dir/runc" \
		"$real_dir/run" "$real_dir/cni-ipam"
	rlog "real node off in $((SECONDS - t0))s"
}

# containerd, its shims, the kubelet and CoreDNS of this state dir, found by command line.
real_strays() {
	local p b
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		cmdline "$p" || continue
		for b in containerd containerd-shim-runc-v2 kubelet coredns; do
			if ours "$b"; then
				echo "$p"
				break
			fi
		done
	done
}

# real-node volume NAMESPACE CLAIM: a PersistentVolume for that claim, ReadWriteMany,
# 1 TiB, on a directory of the real node (a local volume: the scheduler keeps its pods
# there), pre-bound with claimRef so no other claim takes it. Prints the directory.
real_volume() {
	(($# == 2)) || die "usage: e2e/cluster real-node volume NAMESPACE CLAIM"
	real_enabled || die "the real node is off"
	local ns=$1 claim=$2 dir
	dir=$real_dir/volumes/$ns-$claim
	mkdir -p "$dir"
	# Any uid a pod runs as may write (the restricted profile's non-root users too).
	chmod 1777 "$dir"
	kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata:
  name: real-$ns-$claim
  labels:
    e2e.cadre.dev/real-node-volume: "true"
spec:
  capacity:
    storage: 1Ti
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef:
    namespace: $ns
    name: $claim
  local:
    path: $dir
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [$real_node_name]}
EOF
	echo "$dir"
}

real_env() {
	real_enabled || die "the real node is off"
	printf 'export CADRE_E2E_REAL_NODE=%q\n' "$real_node_name"
	printf 'export CADRE_E2E_SMALL_IMAGE=%q\n' "$(<"$real_dir/small.ref")"
	printf 'export CADRE_E2E_TORCH_IMAGE=%q\n' "$(<"$real_dir/torch.ref")"
	printf 'export CADRE_E2E_REAL_DNS=%q\n' "10.88.$(real_index).1"
}

cmd_real_node() {
	case ${1:-} in
	on)
		# A start that fails half-way leaves nothing running or changed.
		trap '[[ -f $real_dir/enabled ]] && { log "real-node on failed; stopping what it started"; CADRE_E2E_KEEP=1 real_node_off; }' EXIT
		real_node_on
		trap - EXIT
		;;
	off) real_node_off ;;
	env) real_env ;;
	volume) shift; real_volume "$@" ;;
	import)
		(($# == 2)) && [[ -f $2/REF ]] || die "usage: e2e/cluster real-node import DIR (an image directory of e2e/realnode/build)"
		real_enabled && running containerd || die "the real node is off"
		real_import "$2"
		;;
	*) die "usage: e2e/cluster real-node on|off|env|volume NAMESPACE CLAIM|import DIR" ;;
	esac
}

# One status line per real-node component while it is on; fails when one is not healthy.
real_status() {
	local c pid rc=0
	real_enabled || return 0
	for c in containerd kubelet coredns; do
		if pid=$(pid_of "$c"); then
			if real_healthy "$c"; then
				printf '%-19s pid %-8s %-10s %s\n' "$c" "$pid" healthy "$(real_health_url "$c")"
			else
				printf '%-19s pid %-8s %-10s %s\n' "$c" "$pid" unhealthy "$(real_health_url "$c")"
				rc=1
			fi
		else
			printf '%-19s %-12s %-10s %s\n' "$c" "-" stopped "$(real_health_url "$c")"
			rc=1
		fi
	done
	return $rc
}
