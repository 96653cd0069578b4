#!/usr/bin/env bats
# A namespace labelled pod-security.kubernetes.io/enforce=restricted (issue 11, defect 10).
# The API server refuses a pod without the restricted settings, so no pod ever appears:
# the job must say so in status.message and its Running condition within seconds, and,
# once its gang timeout passes, fail as a failure of user input (CreateRefused, counted
# against maxRestarts), not sit in Starting forever. With podTemplate's securityContext
# and containerSecurityContext set as the profile asks, the same job runs. A ResourceQuota
# that refuses the pod reads the same way.

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
	kubectl label namespace "$NS" pod-security.kubernetes.io/enforce=restricted >/dev/null
	controller_mark
}

teardown() {
	test_cleanup
}

# make_job NAME [PODTEMPLATE_SPEC_YAML]: a one-node job in $NS with a 30 s gang timeout
# and no restarts. PODTEMPLATE_SPEC_YAML is indented by 6 spaces.
make_job() {
	local name=$1 template=${2:-}
	kubectl -n "$NS" create -f - <<EOF
apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: $name
spec:
  numNodes: 1
  resources:
    accelerators: "H100:1"
    cpus: "1"
    memory: 1Gi
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
  maxRestarts: 0
  gang:
    timeoutSeconds: 30
${template:+  podTemplate:
    spec:
$template}
EOF
}

# message_has JOB TEXT: status.message contains TEXT.
message_has() {
	local msg
	msg=$(jp "trainingjob/$1" '{.status.message}') || return 1
	[[ $msg == *"$2"* ]]
}

@test "a pod Pod Security refuses: within 20 s status.message and Running say why; at the gang timeout it fails as user input" {
	make_job bare >/dev/null
	wait_for -t 20 message_has bare 'violates PodSecurity'
	tj=$(kubectl -n "$NS" get tj bare -o json)
	json_has "$tj" '.status.message | startswith("cannot create pod bare-0: pods \"bare-0\" is forbidden: violates PodSecurity \"restricted:latest\"")'
	json_has "$tj" '.status.conditions[] | select(.type == "Running") |
		.status == "False" and .reason == "CreateRefused" and (.message | contains("violates PodSecurity"))'
	json_has "$tj" '.status.phase == "Starting"'
	# The create is retried, and refused, with backoff.
	job_pod_count_is bare 0

	wait_for -t 90 phase_is bare Failed
	tj=$(kubectl -n "$NS" get tj bare -o json)
	json_has "$tj" '.status.lastFailure.reason == "CreateRefused" and .status.lastFailure.pod == "bare-0"
		and (.status.lastFailure.message | contains("violates PodSecurity"))'
	json_has "$tj" '.status.restarts == 0 and .status.infraRestarts == 0'
	json_has "$tj" '.status.conditions[] | select(.type == "Failed") |
		.status == "True" and .reason == "MaxRestartsExceeded"'
	json_has "$tj" '.status.message | contains("violates PodSecurity") and contains("no restarts left")'
	job_pod_count_is bare 0
}

@test "the same namespace, the job with the restricted settings in podTemplate: it runs" {
	make_job locked '      securityContext:
        runAsUser: 1000
        runAsGroup: 1000
        runAsNonRoot: true
        fsGroup: 1000
        seccompProfile: {type: RuntimeDefault}
      containerSecurityContext:
        allowPrivilegeEscalation: false
        capabilities: {drop: [ALL]}
        readOnlyRootFilesystem: true' >/dev/null
	wait_for -t 120 phase_is locked Running
	pod=$(kubectl -n "$NS" get pod locked-0 -o json)
	json_has "$pod" '.spec.securityContext.runAsNonRoot == true and .spec.securityContext.seccompProfile.type == "RuntimeDefault"'
	json_has "$pod" '.spec.containers[0].securityContext.allowPrivilegeEscalation == false
		and .spec.containers[0].securityContext.capabilities.drop == ["ALL"]'
	tj=$(kubectl -n "$NS" get tj locked -o json)
	json_has "$tj" '.status.restarts == 0 and .status.lastFailure == null'
}

@test "a pod a ResourceQuota refuses says so the same way" {
	kubectl -n "$NS" create quota no-pods --hard=pods=0 >/dev/null
	make_job quota '      securityContext:
        runAsNonRoot: true
        seccompProfile: {type: RuntimeDefault}
      containerSecurityContext:
        allowPrivilegeEscalation: false
        capabilities: {drop: [ALL]}' >/dev/null
	wait_for -t 20 message_has quota 'exceeded quota: no-pods'
	tj=$(kubectl -n "$NS" get tj quota -o json)
	json_has "$tj" '.status.message | startswith("cannot create pod quota-0: ")'
	json_has "$tj" '.status.conditions[] | select(.type == "Running") | .reason == "CreateRefused"'
}

@test "what grants privilege is refused by the API server, naming the field" {
	run make_job escalate '      containerSecurityContext:
        allowPrivilegeEscalation: true'
	[ "$status" -ne 0 ]
	[[ $output == *spec.podTemplate.spec.containerSecurityContext.allowPrivilegeEscalation*"must be false"* ]] || { echo "$output"; false; }
	run make_job privileged '      containerSecurityContext:
        privileged: true'
	[ "$status" -ne 0 ]
	[[ $output == *'unknown field "spec.podTemplate.spec.containerSecurityContext.privileged"'* ]] || { echo "$output"; false; }
	run make_job addcaps '      containerSecurityContext:
        capabilities: {add: [SYS_ADMIN]}'
	[ "$status" -ne 0 ]
	[[ $output == *'unknown field "spec.podTemplate.spec.containerSecurityContext.capabilities.add"'* ]] || { echo "$output"; false; }
	run make_job unconfined '      securityContext:
        seccompProfile: {type: Unconfined}'
	[ "$status" -ne 0 ]
	[[ $output == *spec.podTemplate.spec.securityContext.seccompProfile.type*Unconfined* ]] || { echo "$output"; false; }
}
