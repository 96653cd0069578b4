#!/usr/bin/env bats
# A TrainingJob as a user meets it: the sample llama-pretrain becomes a headless Service,
# an entrypoint ConfigMap and a gang of pods that carry exactly the names, labels,
# resources, mounts and
# environment of docs/design.md section 2; deleting the job takes its children with it; and
# the controller never writes what the user applied, so `kubectl diff` stays empty.
#
# One cadre-controller runs for the whole file (controller.bash); every test has its own
# namespace and gives the GPUs back in teardown.

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
}

teardown() {
	test_cleanup
}

# llama_up: the sample llama-pretrain and its shared-checkpoints Volume, bound to a
# pre-created RWX PersistentVolume, applied as a user would, then Running.
llama_up() {
	make_pv "$(pv_name ckpt)" 500Gi ReadWriteMany "$NS" shared-checkpoints
	kubectl -n "$NS" apply -f "$SAMPLES/shared-checkpoints.yaml" -f "$SAMPLES/llama-pretrain.yaml"
	wait_for -t 60 field_is volume.cadre.dev/shared-checkpoints '{.status.phase}' Bound
	wait_for -t 120 phase_is llama-pretrain Running
}

# owner_ref_of JOB: the ownerReferences every child of JOB must carry, as JSON.
owner_ref_of() {
	jq -n --arg name "$1" --arg uid "$(jp "trainingjob/$1" '{.metadata.uid}')" \
		'[{apiVersion: "cadre.dev/v1alpha1", kind: "TrainingJob", name: $name, uid: $uid,
		   controller: true, blockOwnerDeletion: true}]'
}

@test "llama-pretrain: a headless Service named after the job, owned by it" {
	llama_up
	owner=$(owner_ref_of llama-pretrain)
	svc=$(kubectl -n "$NS" get service llama-pretrain -o json)
	json_has "$svc" '.spec.clusterIP == "None"'
	json_has "$svc" '.spec.publishNotReadyAddresses == true'
	json_has "$svc" '.spec.selector == {"cadre.dev/job-name": "llama-pretrain"}'
	json_has "$svc" '(.spec.ports | length) == 1 and .spec.ports[0].port == 29500'
	json_has "$svc" '.spec.ports[0].protocol == "TCP"'
	json_has "$svc" ".metadata.ownerReferences == $owner"
}

@test "llama-pretrain: 2 pods <job>-<rank>, ungated, Running on 2 different nodes, with the job's labels" {
	llama_up
	[ "$(job_pods llama-pretrain | tr '\n' ' ')" = "llama-pretrain-0 llama-pretrain-1 " ]
	owner=$(owner_ref_of llama-pretrain)
	nodes=()
	for rank in 0 1; do
		pod=$(kubectl -n "$NS" get pod "llama-pretrain-$rank" -o json)
		json_has "$pod" '.status.phase == "Running"'
		json_has "$pod" '((.spec.schedulingGates // []) | length) == 0'
		json_has "$pod" ".metadata.labels[\"cadre.dev/job-name\"] == \"llama-pretrain\""
		json_has "$pod" ".metadata.labels[\"cadre.dev/node-rank\"] == \"$rank\""
		json_has "$pod" '.metadata.labels["cadre.dev/restart-attempt"] == "0"'
		json_has "$pod" ".spec.hostname == \"llama-pretrain-$rank\""
		json_has "$pod" '.spec.subdomain == "llama-pretrain"'
		json_has "$pod" '.spec.restartPolicy == "Never"'
		json_has "$pod" '[.spec.containers[].name] == ["main"]'
		json_has "$pod" '.spec.containers[0].image == "nvcr.io/nvidia/pytorch:24.05-py3"'
		json_has "$pod" ".metadata.ownerReferences == $owner"
		json_has "$pod" '.spec.nodeName | startswith("gpu-node-")'
		nodes+=("$(jq -r .spec.nodeName <<<"$pod")")
	done
	[ "${nodes[0]}" != "${nodes[1]}" ] || { echo "both ranks on ${nodes[0]}"; false; }
	# The Service selects exactly these pods.
	[ "$(kubectl -n "$NS" get pods -l cadre.dev/job-name=llama-pretrain -o name | wc -l)" -eq 2 ]
}

@test "llama-pretrain: requests and limits, the GPU toleration, H100 node affinity, /dev/shm and the checkpoint claim" {
	llama_up
	for rank in 0 1; do
		pod=$(kubectl -n "$NS" get pod "llama-pretrain-$rank" -o json)
		main='(.spec.containers[] | select(.name == "main"))'
		json_has "$pod" "$main.resources.requests == {\"cpu\": \"32\", \"memory\": \"256Gi\", \"nvidia.com/gpu\": \"8\"}"
		json_has "$pod" "$main.resources.limits == {\"memory\": \"256Gi\", \"nvidia.com/gpu\": \"8\"}"
		json_has "$pod" 'any(.spec.tolerations[]; .key == "nvidia.com/gpu" and .operator == "Exists" and .effect == "NoSchedule")'
		json_has "$pod" '.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
			| length > 0 and all(.[]; any(.matchExpressions[]; .key == "nvidia.com/gpu.product"
				and .operator == "In" and (.values | index("NVIDIA-H100-80GB-HBM3") != null)))'
		# /dev/shm is a memory-backed emptyDir.
		json_has "$pod" "($main.volumeMounts[] | select(.mountPath == \"/dev/shm\") | .name) as \$v
			| any(.spec.volumes[]; .name == \$v and .emptyDir.medium == \"Memory\")"
		# The Volume's claim, mounted where spec.volumes says.
		json_has "$pod" "($main.volumeMounts[] | select(.mountPath == \"/mnt/checkpoints\") | .name) as \$v
			| any(.spec.volumes[]; .name == \$v and .persistentVolumeClaim.claimName == \"shared-checkpoints\")"
		# Nothing else, but the service account token the API server adds.
		json_has "$pod" "[$main.volumeMounts[].mountPath | select(startswith(\"/var/run/secrets/\") | not)]
			| sort == [\"/cadre/bin\", \"/cadre/entrypoint\", \"/dev/shm\", \"/mnt/checkpoints\"]"
	done
}

@test "llama-pretrain: the entrypoint is a ConfigMap owned by the job holding exactly the script and the shared variables; each pod mounts it, takes them and runs one short line" {
	llama_up
	owner=$(owner_ref_of llama-pretrain)
	cm=$(kubectl -n "$NS" get configmap llama-pretrain-entrypoint -o json)
	json_has "$cm" ".metadata.ownerReferences == $owner"
	json_has "$cm" '.metadata.labels["cadre.dev/job-name"] == "llama-pretrain"'
	json_has "$cm" '.binaryData | keys == ["entrypoint.sh"]'
	# Byte for byte the script the controller embeds (a unit test keeps that equal to the file).
	diff <(jq -j '.binaryData["entrypoint.sh"]' <<<"$cm" | base64 -d) "$REPO_ROOT/controller/build/entrypoint.sh"
	# The variables every rank shares, and none that is a rank's own.
	json_has "$cm" '.data.SLURM_JOB_NODELIST == "llama-pretrain-[0-1]" and .data.NNODES == "2"
		and .data.NODE_RANK == null and .data.CADRE_RESTART_ATTEMPT == null'
	for rank in 0 1; do
		pod=$(kubectl -n "$NS" get pod "llama-pretrain-$rank" -o json)
		json_has "$pod" '.spec.containers[0].command == ["/bin/sh", "-c", ". /cadre/entrypoint/entrypoint.sh"]'
		json_has "$pod" '.spec.containers[0].envFrom == [{configMapRef: {name: "llama-pretrain-entrypoint"}}]'
		json_has "$pod" '(.spec.containers[0].volumeMounts[] | select(.mountPath == "/cadre/entrypoint")) as $m
			| $m.readOnly == true and any(.spec.volumes[]; .name == $m.name
				and .configMap == {name: "llama-pretrain-entrypoint", defaultMode: 292,
					items: [{key: "entrypoint.sh", path: "entrypoint.sh"}]})'
		# The pod is small now: the script is not in it (it was 26.7 KB of 36.5).
		size=$(jq -c . <<<"$pod" | wc -c)
		((size < 16384)) || { echo "pod llama-pretrain-$rank is $size bytes"; false; }
	done
}

# pair_says_configmap_clash: pair's status.message names the ConfigMap it leaves alone.
pair_says_configmap_clash() {
	[[ $(jp tj/pair '{.status.message}') == *"cannot create ConfigMap pair-entrypoint"*"not this TrainingJob"* ]]
}

@test "a ConfigMap named <job>-entrypoint that is not the job's is left alone, and the job makes no pod and says why" {
	kubectl -n "$NS" create configmap pair-entrypoint --from-literal=entrypoint.sh='echo not cadre'
	kubectl -n "$NS" apply -f "$JOBS/pair.yaml"
	wait_for -t 60 pair_says_configmap_clash
	json_has "$(kubectl -n "$NS" get tj pair -o json)" '.status.conditions[]
		| select(.type == "Running") | .status == "False" and .reason == "CreateRefused"'
	wait_for -t 30 event_recorded TrainingJob pair FailedCreate
	events=$(events_about TrainingJob pair)
	json_has "$events" 'any(.[]; .reason == "FailedCreate" and .type == "Warning"
		and (.note | contains("ConfigMap pair-entrypoint")))'
	no_job_pods
	cm=$(kubectl -n "$NS" get configmap pair-entrypoint -o json)
	json_has "$cm" '.data == {"entrypoint.sh": "echo not cadre"}'
	json_has "$cm" '(.metadata.ownerReferences // []) == []'
}

@test "llama-pretrain: every injected variable of docs/design.md 2.3, exactly, on each rank" {
	llama_up
	job_id=$(jp tj/llama-pretrain '{.status.jobId}')
	task_id=$(jp tj/llama-pretrain '{.status.taskId}')
	[[ $job_id =~ ^[0-9]+$ ]] || { echo "status.jobId '$job_id'"; false; }
	[ -n "$task_id" ]
	for rank in 0 1; do
		env=$(pod_env "llama-pretrain-$rank")
		want=$(jq -n --arg rank "$rank" --arg ns "$NS" --arg job_id "$job_id" --arg task_id "$task_id" '{
			SKYPILOT_NUM_NODES: "2", NNODES: "2", SLURM_NNODES: "2", SLURM_JOB_NUM_NODES: "2",
			SKYPILOT_NODE_RANK: $rank, NODE_RANK: $rank, SLURM_NODEID: $rank, SLURM_PROCID: $rank,
			SKYPILOT_NUM_GPUS_PER_NODE: "8", SLURM_GPUS_PER_NODE: "8",
			SLURM_JOB_NODELIST: "llama-pretrain-[0-1]",
			SKYPILOT_TASK_ID: $task_id, CADRE_TASK_ID: $task_id,
			SLURM_JOB_ID: $job_id, CADRE_JOB_ID: $job_id,
			SLURM_JOB_NAME: "llama-pretrain", CADRE_JOB_NAME: "llama-pretrain",
			MASTER_ADDR: "llama-pretrain-0.llama-pretrain.\($ns).svc.cluster.local", MASTER_PORT: "29500",
			CADRE_RESTART_ATTEMPT: "0"}')
		json_has "$env" "with_entries(select(.key as \$k | $want | has(\$k))) == $want"
		# Each name once: a duplicate would leave the value to the kubelet's choice, and a
		# name both in the pod and its ConfigMap would hide the ConfigMap's.
		names=$(kubectl -n "$NS" get pod "llama-pretrain-$rank" -o json | jq -c '[.spec.containers[0].env[].name]')
		json_has "$names" 'length == (unique | length)'
		shared=$(kubectl -n "$NS" get configmap llama-pretrain-entrypoint -o json | jq -c '.data | keys')
		json_has "$names" "(. - (. - $shared)) == []"
	done
}

@test "llama-pretrain: Slurm's batch environment, the DNS search for short host names and the /cadre/bin emptyDir (docs/design.md 2.4)" {
	llama_up
	job_id=$(jp tj/llama-pretrain '{.status.jobId}')
	for rank in 0 1; do
		env=$(pod_env "llama-pretrain-$rank")
		want=$(jq -n --arg job_id "$job_id" '{
			SLURM_JOB_NODELIST: "llama-pretrain-[0-1]", SLURM_NODELIST: "llama-pretrain-[0-1]",
			SLURM_JOBID: $job_id, SLURM_NTASKS: "2", SLURM_NPROCS: "2",
			SLURM_NTASKS_PER_NODE: "1", SLURM_TASKS_PER_NODE: "1(x2)",
			SLURM_CPUS_PER_TASK: "32", SLURM_CPUS_ON_NODE: "32", SLURM_GPUS_ON_NODE: "8",
			SLURM_LOCALID: "0", SLURM_RESTART_COUNT: "0", SLURM_CLUSTER_NAME: "cadre",
			CADRE_BIN_DIR: "/cadre/bin"}')
		json_has "$env" "with_entries(select(.key as \$k | $want | has(\$k))) == $want"
		pod=$(kubectl -n "$NS" get pod "llama-pretrain-$rank" -o json)
		json_has "$pod" ".spec.dnsConfig.searches == [\"llama-pretrain.$NS.svc.cluster.local\"]"
		json_has "$pod" '(.spec.containers[0].volumeMounts[] | select(.mountPath == "/cadre/bin") | .name) as $v
			| any(.spec.volumes[]; .name == $v and .emptyDir == {})'
	done
}

@test "llama-pretrain: status says Running with both nodes, the Admitted and VolumesReady conditions, and kubectl shows READY 2" {
	llama_up
	run kubectl -n "$NS" wait --for=condition=Running --timeout=60s tj/llama-pretrain
	[ "$status" -eq 0 ] || { echo "$output"; false; }

	tj=$(kubectl -n "$NS" get tj llama-pretrain -o json)
	json_has "$tj" '.status.phase == "Running"'
	json_has "$tj" '.status.readyNodes == 2'
	json_has "$tj" '.status.restarts == 0 and .status.infraRestarts == 0'
	json_has "$tj" '.status.observedGeneration == .metadata.generation'
	json_has "$tj" '.status.admittedTime != null and .status.startTime != null'
	json_has "$tj" '.status.completionTime == null'
	for type in Admitted VolumesReady Running; do
		json_has "$tj" "any(.status.conditions[]; .type == \"$type\" and .status == \"True\")"
	done
	json_has "$tj" '(.metadata.generation) as $g | all(.status.conditions[]; .observedGeneration == $g)'
	json_has "$tj" 'any(.status.conditions[]; .type == "Admitted" and .reason == "Admitted")'
	json_has "$tj" 'all(.status.conditions[]; (.reason | test("^[A-Z][A-Za-z0-9]*$")) and (.message | length > 0))'
	# status.nodes: one entry per rank, naming the pod, its node and IP as the pods say.
	for rank in 0 1; do
		pod=$(kubectl -n "$NS" get pod "llama-pretrain-$rank" -o json)
		node=$(jq -r .spec.nodeName <<<"$pod")
		ip=$(jq -r .status.podIP <<<"$pod")
		json_has "$tj" ".status.nodes | map(select(.rank == $rank)) == [{rank: $rank,
			pod: \"llama-pretrain-$rank\", node: \"$node\", ip: \"$ip\", phase: \"Running\"}]"
	done
	json_has "$tj" '.status.nodes | length == 2'

	row=$(kubectl -n "$NS" get tj llama-pretrain --no-headers | tr -s ' ')
	[[ $row == "llama-pretrain Running 2 2 H100:8 0 "* ]] || { echo "row: $row"; false; }
	row=$(kubectl -n "$NS" get tj llama-pretrain -o wide --no-headers | tr -s ' ')
	[[ $row == *" $(jp tj/llama-pretrain '{.status.jobId}') "* ]] || { echo "row: $row"; false; }
}

@test "envs, then secretEnvs as secretKeyRef, follow the injected variables; no accelerator means 0 GPUs and no GPU resources" {
	kubectl -n "$NS" apply -f "$JOBS/envs.yaml"
	wait_for -t 120 phase_is envs Running
	job_id=$(jp tj/envs '{.status.jobId}')
	for rank in 0 1; do
		pod=$(kubectl -n "$NS" get pod "envs-$rank" -o json)
		env=$(pod_env "envs-$rank")
		json_has "$env" '.SKYPILOT_NUM_GPUS_PER_NODE == "0" and .SLURM_GPUS_PER_NODE == "0"'
		json_has "$env" ".SKYPILOT_NODE_RANK == \"$rank\" and .SLURM_PROCID == \"$rank\""
		json_has "$env" '.NNODES == "2" and .SLURM_JOB_NODELIST == "envs-[0-1]"'
		json_has "$env" ".MASTER_ADDR == \"envs-0.envs.$NS.svc.cluster.local\" and .MASTER_PORT == \"23456\""
		json_has "$env" ".SLURM_JOB_ID == \"$job_id\" and .CADRE_RESTART_ATTEMPT == \"0\""
		json_has "$env" '.BATCH_SIZE == "32" and .LEARNING_RATE == "3e-4"'
		json_has "$env" '.WANDB_API_KEY == "secret:hf/wandb" and .HF_TOKEN == "secret:hf/token"'
		# No Secret value is ever copied into the pod or its ConfigMap.
		json_has "$pod" '[.. | strings | select(test("hf_not_a_real_token|not-a-real-key"))] | length == 0'
		json_has "$(kubectl -n "$NS" get configmap envs-entrypoint -o json)" \
			'[.. | strings | select(test("hf_not_a_real_token|not-a-real-key"))] | length == 0'
		# Order: the shared names by envFrom, then the pod's own: the rank's and the
		# attempt's, then envs, then secretEnvs in their list order.
		names=$(jq -c '[.spec.containers[0].env[].name]' <<<"$pod")
		json_has "$names" '. == ["SKYPILOT_NODE_RANK", "NODE_RANK", "SLURM_NODEID", "SLURM_PROCID",
			"CADRE_RESTART_ATTEMPT", "SLURM_RESTART_COUNT",
			"BATCH_SIZE", "LEARNING_RATE", "WANDB_API_KEY", "HF_TOKEN"]'
		json_has "$pod" '.spec.containers[0].envFrom == [{configMapRef: {name: "envs-entrypoint"}}]'
		# No accelerator: no GPU resources, and no toleration of cadre's own; the
		# podTemplate's toleration, labels and annotations pass through.
		json_has "$pod" '[.spec.containers[0].resources | .requests, .limits | objects | keys[]]
			| index("nvidia.com/gpu") == null'
		json_has "$pod" '.spec.containers[0].resources.requests == {"cpu": "2", "memory": "4Gi"}'
		json_has "$pod" '[.spec.tolerations[] | select(.key == "nvidia.com/gpu")]
			== [{key: "nvidia.com/gpu", operator: "Equal", value: "present", effect: "NoSchedule"}]'
		json_has "$pod" '.metadata.labels.team == "research" and .metadata.annotations["example.com/owner"] == "alice"'
		json_has "$pod" ".metadata.labels[\"cadre.dev/node-rank\"] == \"$rank\""
		# No accelerator requirement: the one required term pins the pod to its rank's
		# admitted node, nothing else.
		json_has "$pod" '.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
			.nodeSelectorTerms == [{matchFields: [{key: "metadata.name", operator: "In",
			values: [.spec.nodeName]}]}]'
	done
	# The setup and run texts reach the pods verbatim, in the job's ConfigMap: envFrom
	# passes a value as it is (in env the kubelet would expand $(NAME) and $$).
	jq -e --argjson spec "$(kubectl -n "$NS" get tj envs -o json | jq .spec)" \
		'.data.CADRE_RUN == $spec.run and .data.CADRE_SETUP == $spec.setup' \
		<<<"$(kubectl -n "$NS" get configmap envs-entrypoint -o json)" >/dev/null ||
		{ echo "spec.run or spec.setup is not in ConfigMap envs-entrypoint verbatim"; false; }
	svc=$(kubectl -n "$NS" get service envs -o json)
	json_has "$svc" '.spec.ports[0].port == 23456'
}

@test "a plain env named like a credential earns one PlainTextCredential Warning naming it, and the job still runs" {
	kubectl -n "$NS" apply -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata: {name: plain}
spec:
  numNodes: 1
  resources: {cpus: "1", memory: 1Gi}
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
  envs: {HF_TOKEN: hf_pasted_in_plain_text, BATCH_SIZE: "8"}
  podTemplate:
    spec:
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
EOF
	wait_for -t 120 phase_is plain Running
	wait_for -t 30 event_recorded TrainingJob plain PlainTextCredential
	events=$(events_about TrainingJob plain)
	json_has "$events" '[.[] | select(.reason == "PlainTextCredential")] | length == 1
		and .[0].type == "Warning" and .[0].count == 1
		and (.[0].note | contains("spec.envs.HF_TOKEN") and contains("secretEnvs"))'
	# Only the name is told: the value stays out of the event.
	json_has "$events" '[.[] | .note | select(contains("hf_pasted_in_plain_text") or contains("BATCH_SIZE"))]
		| length == 0'
}

@test "deleting a TrainingJob deletes its pods, its Service and its entrypoint ConfigMap (owner references, garbage collector)" {
	kubectl -n "$NS" apply -f "$JOBS/pair.yaml"
	wait_for -t 120 phase_is pair Running
	[ "$(job_pods pair | wc -l)" -eq 2 ]
	jp service/pair '{.metadata.name}'
	jp configmap/pair-entrypoint '{.metadata.name}'
	kubectl -n "$NS" delete tj pair --wait=false
	wait_for -t 90 no_job_pods
	wait_for -t 60 not kubectl -n "$NS" get service pair
	wait_for -t 60 not kubectl -n "$NS" get configmap pair-entrypoint
	run kubectl -n "$NS" get tj pair
	[ "$status" -ne 0 ]
	[[ $output == *NotFound* ]]
	# Nothing came back: the controller does not recreate children of a deleted job.
	sleep 3
	no_job_pods
	run kubectl -n "$NS" get service pair
	[ "$status" -ne 0 ]
	run kubectl -n "$NS" get configmap pair-entrypoint
	[ "$status" -ne 0 ]
}

@test "after Running, kubectl diff on the manifests prints nothing and server-side apply of them succeeds" {
	llama_up
	gen=$(jp tj/llama-pretrain '{.metadata.generation}')
	run kubectl -n "$NS" diff -f "$SAMPLES/llama-pretrain.yaml" -f "$SAMPLES/shared-checkpoints.yaml"
	[ "$status" -eq 0 ] || { echo "kubectl diff exited $status:"; echo "$output"; false; }
	[ -z "$output" ] || { echo "kubectl diff printed:"; echo "$output"; false; }

	run kubectl -n "$NS" apply --server-side -f "$SAMPLES/llama-pretrain.yaml" -f "$SAMPLES/shared-checkpoints.yaml"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ $output != *[Cc]onflict* ]] || { echo "$output"; false; }
	[ "$(jp tj/llama-pretrain '{.metadata.generation}')" = "$gen" ]
	[ "$(jp tj/llama-pretrain '{.status.phase}')" = Running ]

	# Only users' managers own spec: the controller writes status, and the finalizer of
	# the Volume, nothing else (docs/design.md 1.1).
	for obj in tj/llama-pretrain volume.cadre.dev/shared-checkpoints; do
		fields=$(kubectl -n "$NS" get "$obj" --show-managed-fields -o json | jq '.metadata.managedFields')
		json_has "$fields" 'all(.[] | select(.manager | startswith("kubectl") | not);
			.subresource == "status" or (.fieldsV1 | has("f:spec") | not))'
		json_has "$fields" 'all(.[] | select(.manager | startswith("kubectl") | not);
			.subresource == "status" or ((.fieldsV1["f:metadata"] // {}) | keys - ["f:finalizers"] | length == 0))'
	done
}
