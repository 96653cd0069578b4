#!/usr/bin/env bats
# Built-in gang admission (docs/design.md 3.1) on the fake GPU nodes: a gang that does not fit
# waits in Queued and says why, with no pod at all; waiting jobs are
# admitted by priority, then age, when capacity frees; adding a node admits a gang that
# needed it.
#
# The jobs' sizes follow the cluster's: other files may have added nodes. The last test
# adds a node itself, so it comes last.

load helpers
load controller

setup_file() {
	crds_install
	controller_start
}

teardown_file() {
	controller_stop
}

setup() {
	e2e_namespace
	controller_mark
	# Sizes below assume every GPU is free; earlier namespaces are deleted asynchronously.
	wait_gpus_free
}

teardown() {
	# The pool label of the affinity test, whether it passed or not.
	[[ -z ${POOL_NODES:-} ]] || kubectl label node $POOL_NODES e2e.cadre.dev/pool- >/dev/null || true
	test_cleanup
}

# gpu_job NAME NODES PRIORITY: a gang of NODES x H100:8 (a whole node per pod).
gpu_job() {
	kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  numNodes: $2
  priority: $3
  resources:
    accelerators: "H100:8"
    cpus: "8"
    memory: 64Gi
  image: registry.invalid/cadre/e2e:latest
  run: torchrun --nnodes=\$SKYPILOT_NUM_NODES train.py
EOF
}

# queued_waiting JOB: Queued, Admitted False with a waiting reason, and a message.
queued_waiting() {
	local tj
	tj=$(kubectl -n "$NS" get tj "$1" -o json) || return 1
	json_has "$tj" '.status.phase == "Queued"' &&
		json_has "$tj" 'any(.status.conditions[]; .type == "Admitted" and .status == "False"
			and (.reason == "InsufficientCapacity" or .reason == "QueuedBehind"))' &&
		json_has "$tj" '.status.message | length > 0'
}

# no_free_pods JOB: JOB has no pod at all: a waiting gang has none (docs/design.md 3.1).
no_free_pods() {
	job_pod_count_is "$1" 0
}

# waits_without_pods JOB: queued_waiting and no_free_pods together.
waits_without_pods() {
	queued_waiting "$1" && no_free_pods "$1"
}

# admitted_before A B: A has an admittedTime, earlier than B's if B has one.
admitted_before() {
	local a b
	a=$(jp "trainingjob/$1" '{.status.admittedTime}')
	b=$(jp "trainingjob/$2" '{.status.admittedTime}')
	[[ -n $a ]] && [[ -z $b || $a < $b ]]
}

# Sizes for two jobs of which only one fits: each needs more than half of the nodes.
half_plus_one() {
	echo $(($(gpu_nodes) / 2 + 1))
}

@test "a waiting gang is admitted by priority: higher spec.priority first even when created later" {
	nodes=$(gpu_nodes)
	size=$(half_plus_one)
	gpu_job blocker "$nodes" 0
	wait_for -t 120 phase_is blocker Running

	gpu_job low "$size" 0
	# Created later, so by age alone low would go first.
	sleep 2
	gpu_job high "$size" 10
	wait_for -t 60 queued_waiting low
	wait_for -t 60 queued_waiting high
	json_has "$(kubectl -n "$NS" get tj high -o json)" \
		'any(.status.conditions[]; .type == "Admitted" and .reason == "InsufficientCapacity")'
	same_for 3 no_free_pods low
	no_free_pods high
	phase_watch_start low

	# The blocker goes: room for one of the two, and high is first in the queue.
	kubectl -n "$NS" delete tj blocker --wait=false
	wait_for -t 180 phase_is high Running
	[ "$(job_pods high | wc -l)" -eq "$size" ]
	# low waits, visibly, with none of its pods free to run.
	wait_for -t 30 queued_waiting low
	same_for 5 waits_without_pods low
	not phase_seen low Starting
	not phase_seen low Running

	# high goes: low is admitted.
	kubectl -n "$NS" delete tj high --wait=false
	wait_for -t 180 phase_is low Running
	[ "$(job_pods low | wc -l)" -eq "$size" ]
	json_has "$(kubectl -n "$NS" get tj low -o json)" \
		'any(.status.conditions[]; .type == "Admitted" and .status == "True")'
}

@test "at equal priority the older waiting gang is admitted first; the newer waits until it is gone" {
	nodes=$(gpu_nodes)
	size=$(half_plus_one)
	gpu_job blocker "$nodes" 5
	wait_for -t 120 phase_is blocker Running

	gpu_job older "$size" 5
	# creationTimestamp has a resolution of one second.
	sleep 2
	gpu_job newer "$size" 5
	wait_for -t 60 queued_waiting older
	wait_for -t 60 queued_waiting newer
	[[ $(jp tj/older '{.metadata.creationTimestamp}') < $(jp tj/newer '{.metadata.creationTimestamp}') ]]
	phase_watch_start newer

	kubectl -n "$NS" delete tj blocker --wait=false
	wait_for -t 180 phase_is older Running
	wait_for -t 30 queued_waiting newer
	same_for 5 waits_without_pods newer
	not phase_seen newer Starting
	not phase_seen newer Running
	admitted_before older newer

	kubectl -n "$NS" delete tj older --wait=false
	wait_for -t 180 phase_is newer Running
	[ "$(job_pods newer | wc -l)" -eq "$size" ]
}

@test "a small job is not held behind a big one that does not fit" {
	nodes=$(gpu_nodes)
	gpu_job big $((nodes + 1)) 10
	wait_for -t 60 queued_waiting big
	gpu_job small 1 0
	wait_for -t 120 phase_is small Running
	queued_waiting big
	no_free_pods big
}

# small_ranks NAME N GPUS: a gang of N ranks of GPUS H100s each, smaller than a node.
small_ranks() {
	kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $1
spec:
  numNodes: $2
  resources:
    accelerators: "H100:$3"
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
EOF
}

# kube-scheduler on its own spreads pods over the emptiest nodes; admission packs ranks
# smaller than a node. The pods go where admission put them (a required node affinity to
# the node of each rank), so the gang admitted next into the room left is not cut short.
@test "sub-node ranks run where admission packed them, and the next gang fits in the room left" {
	nodes=$(gpu_nodes)
	small_ranks packed 4 2
	wait_for -t 120 phase_is packed Running
	on_stored_nodes packed
	[ "$(kubectl -n "$NS" get pods -l cadre.dev/job-name=packed -o json | jq '[.items[].spec.nodeName] | unique | length')" -eq 1 ]
	json_has "$(kubectl -n "$NS" get tj packed -o json)" '[.status.nodes[].node] | unique | length == 1'
	# Every other node, whole: it fits only if packed took a single node.
	gpu_job rest $((nodes - 1)) 0
	wait_for -t 120 phase_is rest Running
	all_pods_running rest $((nodes - 1))
	on_stored_nodes rest
	decisions_hold
}

# Every rank is pinned to the node admission chose, so admission must model what
# kube-scheduler checks (docs/gang-admission.md): a required node affinity to a pool of two
# nodes, and anti-affinity between the gang's own ranks per host. First fit alone would pin
# both 2-GPU ranks on one node outside the pool, and the scheduler would refuse them there
# until the gang timed out.
@test "a gang with a required node affinity and one rank per host is pinned where the scheduler takes it" {
	POOL_NODES=$(kubectl get nodes -l type=kwok -o json | jq -r '[.items[]
		| select(.status.allocatable["nvidia.com/gpu"] != null) | .metadata.name]
		| sort | .[-2:] | join(" ")')
	kubectl label node $POOL_NODES e2e.cadre.dev/pool=affinity --overwrite >/dev/null
	kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: spread
spec:
  numNodes: 2
  resources:
    accelerators: "H100:2"
  gang:
    timeoutSeconds: 60
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
  podTemplate:
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: e2e.cadre.dev/pool, operator: In, values: [affinity]}
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels: {cadre.dev/job-name: spread}
            topologyKey: kubernetes.io/hostname
EOF
	wait_for -t 90 phase_is spread Running
	all_pods_running spread 2
	on_stored_nodes spread
	placed=$(kubectl -n "$NS" get pods -l cadre.dev/job-name=spread -o json |
		jq -r '[.items[].spec.nodeName] | sort | join(" ")')
	[ "$placed" = "$POOL_NODES" ] || { echo "placed on $placed, pool $POOL_NODES"; false; }
	json_has "$(kubectl -n "$NS" get tj spread -o json)" '.status.infraRestarts == 0'
}

# What built-in mode cannot model (affinity to other pods) it refuses, naming the field,
# rather than pin the ranks where the scheduler would refuse them.
@test "built-in mode refuses a required pod affinity, naming the field" {
	kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: near-db
spec:
  numNodes: 1
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
  podTemplate:
    spec:
      affinity:
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels: {app: db}
            topologyKey: kubernetes.io/hostname
EOF
	wait_for -t 30 condition_is near-db Failed True InvalidSpec
	message=$(jp tj/near-db '{.status.message}')
	[[ $message == *spec.podTemplate.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution* ]] ||
		{ echo "status.message: $message"; false; }
	no_free_pods near-db
}

# Last: it adds a node to the cluster.
@test "a gang larger than the cluster stays Queued, says what is missing, has no free pod, and runs once a node is added" {
	nodes=$(gpu_nodes)
	want=$((nodes + 1))
	gpu_job huge "$want" 0
	wait_for -t 60 queued_waiting huge
	tj=$(kubectl -n "$NS" get tj huge -o json)
	json_has "$tj" 'any(.status.conditions[]; .type == "Admitted" and .status == "False"
		and .reason == "InsufficientCapacity" and (.message | length > 0))'
	# The message names the shortfall: how many nodes, of which resource and type.
	message=$(jq -r .status.message <<<"$tj")
	[[ $message == *"$want"* ]] || { echo "status.message: $message"; false; }
	[[ $message == *nvidia.com/gpu* ]] || { echo "status.message: $message"; false; }
	[[ $message == *H100* ]] || { echo "status.message: $message"; false; }
	row=$(kubectl -n "$NS" get tj huge -o wide --no-headers | tr -s ' ')
	[[ $row == "huge Queued $want 0 H100:8 0 "* ]] || { echo "row: $row"; false; }
	# Waiting, it holds nothing: no pod of it can be scheduled, now or a few seconds on.
	same_for 5 waits_without_pods huge
	json_has "$(kubectl -n "$NS" get tj huge -o json)" '.status.admittedTime == null and .status.readyNodes == 0'

	"$E2E_DIR/cluster" add-nodes 1
	[ "$(gpu_nodes)" -eq "$want" ]
	wait_for -t 180 phase_is huge Running
	[ "$(job_pods huge | wc -l)" -eq "$want" ]
	all_pods_running huge "$want"
	distinct=$(kubectl -n "$NS" get pods -l cadre.dev/job-name=huge -o json | jq '[.items[].spec.nodeName] | unique | length')
	[ "$distinct" -eq "$want" ]
	json_has "$(kubectl -n "$NS" get tj huge -o json)" \
		'any(.status.conditions[]; .type == "Admitted" and .status == "True" and .reason == "Admitted")'
}

# This cluster runs no Kueue: the pods of a job with a queue are never gated by it, so
# nothing admits the job, and its status must not say that Kueue did.
@test "a job with spec.queue on a cluster without Kueue is never shown as admitted" {
	kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: queued
spec:
  numNodes: 1
  queue: team-a
  resources:
    accelerators: "H100:8"
  image: registry.invalid/cadre/e2e:latest
  run: torchrun train.py
EOF
	wait_for -t 60 condition_is queued Admitted False NotManagedByKueue
	same_for 5 not condition_is queued Admitted True
	phase_is queued Queued
	tj=$(kubectl -n "$NS" get tj queued -o json)
	json_has "$tj" '.status.admittedTime == null'
	json_has "$tj" '.status.message | contains("not managed by Kueue")'
	# The pods say where they were meant to go: Kueue's queue label is on them.
	[ "$(jp pod/queued-0 '{.metadata.labels.kueue\.x-k8s\.io/queue-name}')" = team-a ]
}

# The controller is restarted with --namespace here, so this test comes last.
@test "with --namespace, cadre's pods in namespaces it does not watch still take capacity" {
	controller_stop
	controller_start --namespace "$NS"
	other="$NS-other"
	kubectl create namespace "$other" >/dev/null
	kubectl label namespace "$other" e2e.cadre.dev/test=true >/dev/null
	wait_for kubectl -n "$other" get serviceaccount default
	nodes=$(gpu_nodes)
	# Another cadre install's gang, one pod of 8 GPUs on every node.
	for ((i = 0; i < nodes; i++)); do
		kubectl -n "$other" create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: other-$i
  labels: {cadre.dev/job-name: other, cadre.dev/node-rank: "$i", cadre.dev/restart-attempt: "0"}
spec:
  restartPolicy: Never
$GPU_TOLERATION
  containers:
  - name: main
    image: registry.invalid/cadre/e2e:latest
    resources:
      requests: {nvidia.com/gpu: "8"}
      limits: {nvidia.com/gpu: "8"}
EOF
	done
	wait_for -t 120 bash -c "[[ \$(kubectl -n $other get pods -o json | jq '[.items[] | select(.status.phase == \"Running\")] | length') == $nodes ]]"

	gpu_job one 1 0
	wait_for -t 60 queued_waiting one
	condition_is one Admitted False InsufficientCapacity
	same_for 5 waits_without_pods one

	kubectl delete namespace "$other" --wait=false >/dev/null
	wait_for -t 180 phase_is one Running
	all_pods_running one 1
	controller_stop
	controller_start
}
