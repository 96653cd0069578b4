package main

// The scale benchmark's loader: TrainingJobs with their pods, Services and entrypoint
// ConfigMaps, cloned from one job cadre started itself (so a fresh controller finds exactly
// what it would have built and has nothing to write), plus other tenants' pods, all bound to
// kwok nodes.
//
// The loader writes each pod's Running status itself, the status kwok's pod-ready Stage
// (e2e/kwok/stages.yaml) would write, so kwok leaves the pod as it is: kwok plays pods at
// about 25 a second on two cores, an hour for the design's 80,000, where the loader's own
// writes go as fast as the API server takes them.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Fields the API server sets; a clone must not carry them.
func strip(u *unstructured.Unstructured) {
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields",
		"generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
}

func writeJSON(path string, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		die("%v", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		die("%v", err)
	}
}

// template -job NAME -out DIR: tj.json (with its status), pods.json, services.json, uid.
func cmdTemplate(args []string) {
	fs := flag.NewFlagSet("template", flag.ExitOnError)
	ns := fs.String("ns", "bench", "namespace")
	job := fs.String("job", "", "a TrainingJob cadre has started")
	out := fs.String("out", "", "directory to write")
	_ = fs.Parse(args)
	c := connect()
	ctx := context.Background()
	tj, err := c.dyn.Resource(tjGVR).Namespace(*ns).Get(ctx, *job, metav1.GetOptions{})
	if err != nil {
		die("template: %v", err)
	}
	uid := string(tj.GetUID())
	strip(tj)
	sel := metav1.ListOptions{LabelSelector: "cadre.dev/job-name=" + *job}
	pods, err := c.dyn.Resource(podsGVR).Namespace(*ns).List(ctx, sel)
	if err != nil {
		die("template: %v", err)
	}
	svcs, err := c.dyn.Resource(svcGVR).Namespace(*ns).List(ctx, sel)
	if err != nil {
		die("template: %v", err)
	}
	cm, err := c.dyn.Resource(cmGVR).Namespace(*ns).Get(ctx, *job+"-entrypoint", metav1.GetOptions{})
	if err != nil {
		die("template: the entrypoint ConfigMap: %v", err)
	}
	strip(cm)
	var podObjs, svcObjs []map[string]any
	for i := range pods.Items {
		p := &pods.Items[i]
		strip(p)
		unstructured.RemoveNestedField(p.Object, "status")
		podObjs = append(podObjs, p.Object)
	}
	for i := range svcs.Items {
		s := &svcs.Items[i]
		strip(s)
		unstructured.RemoveNestedField(s.Object, "status")
		if ip, _, _ := unstructured.NestedString(s.Object, "spec", "clusterIP"); ip != "None" {
			unstructured.RemoveNestedField(s.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(s.Object, "spec", "clusterIPs")
		}
		svcObjs = append(svcObjs, s.Object)
	}
	if len(podObjs) == 0 {
		die("template: %s has no pods", *job)
	}
	_ = os.MkdirAll(*out, 0o755)
	writeJSON(filepath.Join(*out, "tj.json"), tj.Object)
	writeJSON(filepath.Join(*out, "pods.json"), podObjs)
	writeJSON(filepath.Join(*out, "services.json"), svcObjs)
	writeJSON(filepath.Join(*out, "configmaps.json"), []map[string]any{cm.Object})
	if err := os.WriteFile(filepath.Join(*out, "uid"), []byte(uid), 0o644); err != nil {
		die("%v", err)
	}
	if err := os.WriteFile(filepath.Join(*out, "name"), []byte(*job), 0o644); err != nil {
		die("%v", err)
	}
}

// nodes -prefix P -from A -count M: kwok nodes P-A .. P-(A+M-1), as e2e/cluster add-nodes
// makes them but created in parallel, and waits until they are Ready. Scale nodes (the
// default) are untainted, with 1000 CPUs and room for -pods pods; -gpus G makes GPU nodes
// like add-nodes' (G x H100, 96 CPUs, 1 TiB, 110 pods, the nvidia.com/gpu taint).
func cmdNodes(args []string) {
	fs := flag.NewFlagSet("nodes", flag.ExitOnError)
	prefix := fs.String("prefix", "scale-node", "node name prefix")
	from := fs.Int("from", 0, "first node index")
	count := fs.Int("count", 0, "nodes")
	pods := fs.Int("pods", 1000, "pods capacity of each (scale nodes)")
	gpus := fs.Int("gpus", 0, "GPUs of each: GPU nodes instead of scale nodes")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long they may take to be Ready")
	_ = fs.Parse(args)
	c := connect()
	ctx := context.Background()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1000"),
		corev1.ResourceMemory: resource.MustParse("4Ti"),
		corev1.ResourcePods:   *resource.NewQuantity(int64(*pods), resource.DecimalSI),
	}
	labels := map[string]string{"type": "kwok", "bench.cadre.dev/nodes": *prefix,
		"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
	var taints []corev1.Taint
	if *gpus > 0 {
		capacity = corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("96"),
			corev1.ResourceMemory: resource.MustParse("1024Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
			"nvidia.com/gpu":      *resource.NewQuantity(int64(*gpus), resource.DecimalSI),
		}
		labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3"
		labels["nvidia.com/gpu.count"] = fmt.Sprint(*gpus)
		taints = []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}
	}
	err := bounded(*count, 32, func(i int) error {
		name := fmt.Sprintf("%s-%d", *prefix, *from+i)
		l := map[string]string{"kubernetes.io/hostname": name}
		for k, v := range labels {
			l[k] = v
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l,
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Spec:   corev1.NodeSpec{Taints: taints},
			Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		}
		_, err := c.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		die("nodes: %v", err)
	}
	deadline := time.Now().Add(*timeout)
	for {
		list, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "bench.cadre.dev/nodes=" + *prefix})
		ready := 0
		if err == nil {
			for _, n := range list.Items {
				for _, cond := range n.Status.Conditions {
					if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
		}
		if ready >= *count {
			return
		}
		if time.Now().After(deadline) {
			die("nodes: %d of %d Ready after %v", ready, *count, *timeout)
		}
		time.Sleep(time.Second)
	}
}

type template struct {
	name, uid   string
	tj          []byte
	pods, svcs  [][]byte
	cms         [][]byte
	nodesPrefix string
	nodes       int
}

func readTemplate(dir string) *template {
	read := func(f string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			die("%v", err)
		}
		return data
	}
	t := &template{name: string(read("name")), uid: string(read("uid")), tj: read("tj.json")}
	for f, dst := range map[string]*[][]byte{"pods.json": &t.pods, "services.json": &t.svcs,
		"configmaps.json": &t.cms} {
		var list []json.RawMessage
		if err := json.Unmarshal(read(f), &list); err != nil {
			die("%s: %v", f, err)
		}
		for _, raw := range list {
			*dst = append(*dst, raw)
		}
	}
	return t
}

// clone: the template's JSON with the job's name and uid replaced.
func (t *template) clone(data []byte, name, uid string) *unstructured.Unstructured {
	s := strings.ReplaceAll(string(data), t.name, name)
	if uid != "" {
		s = strings.ReplaceAll(s, t.uid, uid)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(s)); err != nil {
		die("clone: %v", err)
	}
	return u
}

// loadJob creates job I as cadre would have left it once started: the TrainingJob and its
// status, then its Services and its pods, ungated and bound to scale nodes.
func (t *template) loadJob(ctx context.Context, c clients, ns string, i int) error {
	name := fmt.Sprintf("scale-%05d", i)
	tj := t.clone(t.tj, name, "")
	// The status is written by writeStatuses once the pods run: it names their nodes and IPs.
	delete(tj.Object, "status")
	created, err := c.dyn.Resource(tjGVR).Namespace(ns).Create(ctx, tj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil // an earlier, interrupted load: leave it as it is
	}
	if err != nil {
		return err
	}
	uid := string(created.GetUID())
	for _, s := range t.svcs {
		if _, err := c.dyn.Resource(svcGVR).Namespace(ns).Create(ctx, t.clone(s, name, uid), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for _, m := range t.cms {
		if _, err := c.dyn.Resource(cmGVR).Namespace(ns).Create(ctx, t.clone(m, name, uid), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for k, p := range t.pods {
		n := i*len(t.pods) + k
		var pod corev1.Pod
		if err := json.Unmarshal(mustJSON(t.clone(p, name, uid).Object), &pod); err != nil {
			return err
		}
		pod.Spec.NodeName = fmt.Sprintf("%s-%d", t.nodesPrefix, n%t.nodes)
		if err := createRunning(ctx, c, &pod, podIP(n)); err != nil {
			return err
		}
	}
	return nil
}

// podIP: the n-th pod's address, from 10.128.0.0/9 (kwok's own range is 10.244.0.0/16,
// too small for the design's 80,000 pods).
func podIP(n int) string {
	return fmt.Sprintf("10.%d.%d.%d", 128+(n>>16)&127, (n>>8)&255, n&255)
}

// createRunning creates pod (bound to its node) and writes the status kwok's pod-ready
// Stage would: Running, ready, every container started. An interrupted load's pod is left
// as it is.
func createRunning(ctx context.Context, c clients, pod *corev1.Pod, ip string) error {
	created, err := c.cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	now := metav1.Now()
	st := corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "127.0.0.1",
		HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}}, PodIP: ip,
		PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now, QOSClass: created.Status.QOSClass}
	for _, t := range []corev1.PodConditionType{corev1.PodInitialized, corev1.PodReady,
		corev1.ContainersReady} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t,
			Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	started := true
	for _, ctr := range created.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image, Ready: true, Started: &started,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	// A patch, not an update: kwok may get to a pod first, and either status is Running.
	patch := mustJSON(map[string]any{"status": st})
	_, err = c.cs.CoreV1().Pods(pod.Namespace).Patch(ctx, created.Name, types.MergePatchType,
		patch, metav1.PatchOptions{}, "status")
	return err
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		die("%v", err)
	}
	return data
}

func tenantPod(i int, ns, node string) *corev1.Pod {
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"),
		corev1.ResourceMemory: resource.MustParse("1Mi")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("tenant-%06d", i), Namespace: ns,
			Labels: map[string]string{"app": "tenant", "team": fmt.Sprintf("team-%d", i%10)}},
		Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/tenant:1",
				Resources: corev1.ResourceRequirements{Requests: small, Limits: small}}}},
	}
}

// load: jobs [from, to) cloned from the template and tenant pods [tfrom, tto), each pod
// Running as it is created; then waits until no pod in the cluster is in another phase.
func cmdLoad(args []string) {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	dir := fs.String("template", "", "directory written by template")
	ns := fs.String("ns", "bench", "namespace of the jobs")
	from := fs.Int("from", 0, "first job index")
	to := fs.Int("to", 0, "one past the last job index")
	tns := fs.String("tenant-ns", "tenant", "namespace of the other tenants' pods")
	tfrom := fs.Int("tenant-from", 0, "first tenant pod index")
	tto := fs.Int("tenant-to", 0, "one past the last tenant pod index")
	nodes := fs.Int("nodes", 0, "scale nodes to bind pods to")
	prefix := fs.String("nodes-prefix", "scale-node", "their name prefix")
	width := fs.Int("width", 48, "requests in flight")
	_ = fs.Parse(args)
	if *nodes <= 0 {
		die("load: -nodes is needed")
	}
	c := connect()
	ctx := context.Background()
	start := time.Now()
	if *to > *from {
		t := readTemplate(*dir)
		t.nodesPrefix, t.nodes = *prefix, *nodes
		// A job is several writes in order; jobs go in parallel.
		if err := bounded(*to-*from, *width/2+1, func(i int) error {
			return t.loadJob(ctx, c, *ns, *from+i)
		}); err != nil {
			die("load jobs: %v", err)
		}
	}
	if err := bounded(*tto-*tfrom, *width, func(i int) error {
		i += *tfrom
		p := tenantPod(i, *tns, fmt.Sprintf("%s-%d", *prefix, i%*nodes))
		// After every job's pods: 4 a job, up to the design's 10,000 jobs.
		return createRunning(ctx, c, p, podIP(40000+i))
	}); err != nil {
		die("load tenant pods: %v", err)
	}
	created := time.Since(start)
	waitAllRunning(ctx, c)
	if *to > *from {
		t := readTemplate(*dir)
		if err := t.writeStatuses(ctx, c, *ns, *from, *to, *width); err != nil {
			die("load statuses: %v", err)
		}
	}
	fmt.Printf("{\"created_s\":%.2f,\"running_s\":%.2f}\n", created.Seconds(), time.Since(start).Seconds())
}

// waitAllRunning: until no pod in the cluster is in another phase than Running.
func waitAllRunning(ctx context.Context, c clients) {
	deadline := time.Now().Add(15 * time.Minute)
	for time.Now().Before(deadline) {
		list, err := c.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{
			FieldSelector: "status.phase!=Running", Limit: 1})
		if err == nil && len(list.Items) == 0 {
			return
		}
		time.Sleep(2 * time.Second)
	}
	die("load: pods still not Running after 15 minutes")
}

// writeStatuses gives jobs [from, to) the status cadre would have written once their pods
// ran: the template's, with the job's own pods, nodes and IPs in status.nodes.
func (t *template) writeStatuses(ctx context.Context, c clients, ns string, from, to, width int) error {
	byJob := map[string][]corev1.Pod{}
	opts := metav1.ListOptions{LabelSelector: "cadre.dev/job-name", Limit: 5000}
	for {
		list, err := c.cs.CoreV1().Pods(ns).List(ctx, opts)
		if err != nil {
			return err
		}
		for _, p := range list.Items {
			byJob[p.Labels["cadre.dev/job-name"]] = append(byJob[p.Labels["cadre.dev/job-name"]], p)
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			break
		}
	}
	var tmpl map[string]any
	if err := json.Unmarshal(t.tj, &tmpl); err != nil {
		return err
	}
	statusJSON := mustJSON(tmpl["status"])
	return bounded(to-from, width, func(i int) error {
		name := fmt.Sprintf("scale-%05d", from+i)
		var status map[string]any
		if err := json.Unmarshal([]byte(strings.ReplaceAll(string(statusJSON), t.name, name)), &status); err != nil {
			return err
		}
		pods := byJob[name]
		nodes := make([]any, len(pods))
		for _, p := range pods {
			rank, err := strconv.Atoi(p.Labels["cadre.dev/node-rank"])
			if err != nil || rank < 0 || rank >= len(pods) {
				return fmt.Errorf("pod %s: rank %q", p.Name, p.Labels["cadre.dev/node-rank"])
			}
			nodes[rank] = map[string]any{"rank": int64(rank), "pod": p.Name, "node": p.Spec.NodeName,
				"ip": p.Status.PodIP, "phase": string(p.Status.Phase)}
		}
		status["nodes"] = nodes
		patch := mustJSON(map[string]any{"status": status})
		_, err := c.dyn.Resource(tjGVR).Namespace(ns).Patch(ctx, name, types.MergePatchType, patch,
			metav1.PatchOptions{}, "status")
		return err
	})
}
