// cadre-bench: the measuring side of bench/run (docs/benchmarks.md), on client-go.
//
// One program times every contender, so cadre, the Indexed Job controller and the ceiling
// are measured by one clock and one watch:
//
//	cadre-bench gang -mode cadre|job|ceiling -n N -f OBJECT.json ...
//	    POSTs the TrainingJob or the Job (or, for the ceiling, sends the writes cadre sends
//	    for a gang start itself: N creates, each pinned to the node cadre's pod of that
//	    rank had) and watches the pods:
//	    apply -> all N created, -> all N schedulable (no schedulingGates), -> all N Running.
//	    Prints one JSON object; deletes the pods and waits until they are gone.
//	cadre-bench recover -n N -f TRAININGJOB.json [-rank R]
//	    starts the TrainingJob, waits until its N pods run, deletes rank R's pod (a lost
//	    pod, what kwok can show of a failure) and times that delete -> every rank's pod
//	    Running the next attempt (label cadre.dev/restart-attempt 1) with the job Running;
//	    prints one JSON object (the pod writes and creates it took too), deletes the job.
//	cadre-bench template -job NAME -out DIR     a started job's objects, as cadre built them
//	cadre-bench nodes -prefix P -count M -pods K  kwok nodes with room for many small pods
//	cadre-bench load -template DIR -from A -to B ...  jobs and pods cloned from the template
//
// Every client here runs without a rate limit (QPS -1) over HTTP/2, as the API server's
// own Go clients do.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	podsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	svcGVR   = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	cmGVR    = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	jobsGVR  = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	tjGVR    = schema.GroupVersionResource{Group: "cadre.dev", Version: "v1alpha1", Resource: "trainingjobs"}
)

type clients struct {
	cs  *kubernetes.Clientset
	dyn *dynamic.DynamicClient
}

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "cadre-bench: "+format+"\n", args...)
	os.Exit(1)
}

func connect() clients {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		die("kubeconfig: %v", err)
	}
	cfg.QPS = -1 // no client-side rate limit
	cfg.Burst = 0
	cfg.UserAgent = "cadre-bench"
	cfg.Timeout = 120 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		die("client: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		die("dynamic client: %v", err)
	}
	return clients{cs, dyn}
}

func readObject(path string) *unstructured.Unstructured {
	data, err := os.ReadFile(path)
	if err != nil {
		die("%v", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		die("%s: %v", path, err)
	}
	return u
}

func main() {
	if len(os.Args) < 2 {
		die("usage: cadre-bench gang|template|nodes|load [flags]")
	}
	sub, args := os.Args[1], os.Args[2:]
	switch sub {
	case "gang":
		cmdGang(args)
	case "recover":
		cmdRecover(args)
	case "template":
		cmdTemplate(args)
	case "nodes":
		cmdNodes(args)
	case "load":
		cmdLoad(args)
	default:
		die("unknown subcommand %q", sub)
	}
}

// ---------------------------------------------------------------------------------------
// The API server's request counter: server-side, so every client is counted the same way.

type requestCounts map[string]float64 // "verb resource subresource" -> requests

func scrapeRequests(ctx context.Context, c clients) (requestCounts, error) {
	body, err := c.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := requestCounts{}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			continue
		}
		labels := parseLabels(line[len("apiserver_request_total{"):end])
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		// Refused or failed requests (a 429, a timeout) are counted apart: a retry is a
		// second request for the same write.
		ok := "ok"
		if !strings.HasPrefix(labels["code"], "2") {
			ok = "failed"
		}
		out[ok+" "+labels["verb"]+" "+labels["resource"]+" "+labels["subresource"]] += v
	}
	return out, nil
}

func parseLabels(s string) map[string]string {
	m := map[string]string{}
	for len(s) > 0 {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			break
		}
		key := strings.TrimLeft(s[:eq], ",")
		rest := s[eq+2:]
		end := strings.IndexByte(rest, '"')
		if end < 0 {
			break
		}
		m[key] = rest[:end]
		s = rest[end+1:]
	}
	return m
}

// writes: the write requests (POST, PUT, PATCH) on resource/subresource between two
// scrapes that succeeded (outcome "ok") or did not ("failed").
func writes(before, after requestCounts, outcome, resource, subresource string) int {
	n := 0.0
	for _, verb := range []string{"POST", "PUT", "PATCH"} {
		k := outcome + " " + verb + " " + resource + " " + subresource
		n += after[k] - before[k]
	}
	return int(n + 0.5)
}

// cpuSeconds: user+system CPU time of a process, from /proc/PID/stat (USER_HZ is 100 on Linux).
func cpuSeconds(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

// ---------------------------------------------------------------------------------------
// gang

// podMarks: from a watch, the first time each pod was seen created, without gates, bound to
// a node, Running.
type podMarks struct {
	mu                                   sync.Mutex
	t0                                   time.Time
	created, ungated, bound, running     map[string]time.Duration
	n                                    int
	allCreated, allFree, allBound, allUp chan struct{}
	present                              map[string]bool
	gone                                 chan struct{}
	armed                                bool
}

func newMarks(n int) *podMarks {
	return &podMarks{n: n, created: map[string]time.Duration{}, ungated: map[string]time.Duration{},
		bound: map[string]time.Duration{}, running: map[string]time.Duration{}, present: map[string]bool{},
		allCreated: make(chan struct{}), allFree: make(chan struct{}), allBound: make(chan struct{}),
		allUp: make(chan struct{}), gone: make(chan struct{})}
}

func (m *podMarks) see(p *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.present[p.Name] = true
	if !m.armed || p.DeletionTimestamp != nil {
		return
	}
	now := time.Since(m.t0)
	mark := func(set map[string]time.Duration, done chan struct{}) {
		if _, ok := set[p.Name]; ok {
			return
		}
		set[p.Name] = now
		if len(set) == m.n {
			close(done)
		}
	}
	mark(m.created, m.allCreated)
	if len(p.Spec.SchedulingGates) == 0 {
		mark(m.ungated, m.allFree)
	}
	if p.Spec.NodeName != "" {
		mark(m.bound, m.allBound)
	}
	if p.Status.Phase == corev1.PodRunning {
		mark(m.running, m.allUp)
	}
}

func (m *podMarks) forget(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.present, name)
	if m.armed && len(m.present) == 0 && len(m.running) == m.n {
		select {
		case <-m.gone:
		default:
			close(m.gone)
		}
	}
}

// first: the earliest mark in set, in seconds (0 for none).
func first(set map[string]time.Duration) float64 {
	var early time.Duration
	seen := false
	for _, d := range set {
		if !seen || d < early {
			early, seen = d, true
		}
	}
	return early.Seconds()
}

func last(set map[string]time.Duration) float64 {
	var max time.Duration
	for _, d := range set {
		if d > max {
			max = d
		}
	}
	return max.Seconds()
}

func watchPods(ctx context.Context, c clients, ns, selector string, m *podMarks) cache.SharedIndexInformer {
	f := informers.NewSharedInformerFactoryWithOptions(c.cs, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	inf := f.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { m.see(o.(*corev1.Pod)) },
		UpdateFunc: func(_, o any) { m.see(o.(*corev1.Pod)) },
		DeleteFunc: func(o any) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			if p, ok := o.(*corev1.Pod); ok {
				m.forget(p.Name)
			}
		},
	})
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		die("the pod watch never synced")
	}
	return inf
}

type gangResult struct {
	Mode         string  `json:"mode"`
	Nodes        int     `json:"nodes"`
	FirstCreated float64 `json:"first_created_s"` // the first pod seen: what was decided before any pod
	Created      float64 `json:"created_s"`
	Schedulable  float64 `json:"schedulable_s"`
	Bound        float64 `json:"bound_s"`
	Running      float64 `json:"running_s"`
	PodWrites    int     `json:"pod_writes"`
	FailedWrites int     `json:"failed_pod_writes"` // answered with an error (then retried)
	StatusWrites int     `json:"status_writes"`
	WritesPerPod float64 `json:"writes_per_pod"`
	CPUSeconds   float64 `json:"cpu_s"`
	Returned     float64 `json:"returned_s"` // the contender's own requests had all returned
	Deleted      float64 `json:"deleted_s"`
}

func cmdGang(args []string) {
	fs := flag.NewFlagSet("gang", flag.ExitOnError)
	mode := fs.String("mode", "", "cadre, job or ceiling")
	n := fs.Int("n", 0, "pods in the gang")
	ns := fs.String("ns", "bench", "namespace")
	file := fs.String("f", "", "cadre: the TrainingJob, job: the Job, ceiling: one pod as cadre built it (JSON)")
	selector := fs.String("l", "", "label selector of the pods to watch")
	cpuPid := fs.Int("cpu-pid", 0, "process whose CPU seconds the start costs (the controller)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this")
	savePod := fs.String("save-pod", "", "cadre: write one of its pods here, as the ceiling's template")
	pinned := fs.Bool("pin", true, "ceiling: pin pod i to the node cadre's rank i had (false: leave the scheduler to choose)")
	_ = fs.Parse(args)
	if *n <= 0 || *file == "" || *selector == "" {
		die("gang: -n, -f and -l are needed")
	}
	c := connect()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	m := newMarks(*n)
	inf := watchPods(ctx, c, *ns, *selector, m)
	m.mu.Lock()
	left := len(m.present)
	m.mu.Unlock()
	if left > 0 {
		die("gang: %d pods matching %s exist before the start", left, *selector)
	}
	obj := readObject(*file)
	statusRes := map[string]string{"cadre": "trainingjobs", "job": "jobs"}[*mode]
	before, err := scrapeRequests(ctx, c)
	if err != nil {
		die("scraping the API server's metrics: %v", err)
	}
	cpu0 := cpuSeconds(*cpuPid)

	m.mu.Lock()
	m.t0 = time.Now()
	m.armed = true
	m.mu.Unlock()
	switch *mode {
	case "cadre":
		_, err = c.dyn.Resource(tjGVR).Namespace(*ns).Create(ctx, obj, metav1.CreateOptions{})
	case "job":
		_, err = c.dyn.Resource(jobsGVR).Namespace(*ns).Create(ctx, obj, metav1.CreateOptions{})
	case "ceiling":
		err = ceiling(ctx, c, *ns, obj, *n, *pinned)
	default:
		die("gang: unknown mode %q", *mode)
	}
	if err != nil {
		die("gang %s: %v", *mode, err)
	}
	returned := time.Since(m.t0).Seconds()
	for _, ch := range []chan struct{}{m.allCreated, m.allFree, m.allBound, m.allUp} {
		select {
		case <-ch:
		case <-ctx.Done():
			m.mu.Lock()
			die("gang %s: timed out: %d created, %d schedulable, %d bound, %d running of %d", *mode,
				len(m.created), len(m.ungated), len(m.bound), len(m.running), *n)
		}
	}
	if *mode == "cadre" {
		waitPhase(ctx, c, *ns, obj.GetName(), "Running")
	}
	if *savePod != "" {
		saveCeilingPod(inf, *savePod)
	}
	// The controller's status writes land after the pods run; give them a moment.
	time.Sleep(time.Second)
	after, err := scrapeRequests(ctx, c)
	if err != nil {
		die("scraping the API server's metrics: %v", err)
	}
	m.mu.Lock()
	r := gangResult{Mode: *mode, Nodes: *n, FirstCreated: first(m.created), Created: last(m.created), Schedulable: last(m.ungated),
		Bound: last(m.bound), Running: last(m.running), PodWrites: writes(before, after, "ok", "pods", ""),
		FailedWrites: writes(before, after, "failed", "pods", ""),
		CPUSeconds:   cpuSeconds(*cpuPid) - cpu0, Returned: returned}
	m.mu.Unlock()
	if statusRes != "" {
		r.StatusWrites = writes(before, after, "ok", statusRes, "status")
	}
	r.WritesPerPod = float64(r.PodWrites) / float64(*n)

	// Clean up and wait until the pods are gone, so the next repetition starts from nothing.
	t := time.Now()
	bg := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &bg}
	switch *mode {
	case "cadre":
		err = c.dyn.Resource(tjGVR).Namespace(*ns).Delete(ctx, obj.GetName(), del)
	case "job":
		err = c.dyn.Resource(jobsGVR).Namespace(*ns).Delete(ctx, obj.GetName(), del)
	case "ceiling":
		err = c.dyn.Resource(podsGVR).Namespace(*ns).DeleteCollection(ctx, del,
			metav1.ListOptions{LabelSelector: *selector})
	}
	if err != nil {
		die("deleting: %v", err)
	}
	select {
	case <-m.gone:
	case <-ctx.Done():
		die("gang %s: the pods were not deleted in time", *mode)
	}
	r.Deleted = time.Since(t).Seconds()
	_ = json.NewEncoder(os.Stdout).Encode(r)
}

func waitPhase(ctx context.Context, c clients, ns, name, phase string) {
	for ctx.Err() == nil {
		u, err := c.dyn.Resource(tjGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if p, _, _ := unstructured.NestedString(u.Object, "status", "phase"); p == phase {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	die("TrainingJob %s never reached %s", name, phase)
}

// ceiling sends what cadre sends for a gang start, with nothing between the requests: N
// creates at once, pod i pinned (required node affinity, metadata.name) to the node cadre's
// rank i was admitted on, as saveCeilingPod recorded them.
func ceiling(ctx context.Context, c clients, ns string, tmpl *unstructured.Unstructured, n int,
	pinned bool) error {
	pods := c.dyn.Resource(podsGVR).Namespace(ns)
	nodes := strings.Split(tmpl.GetAnnotations()[ceilingNodes], ",")
	if len(nodes) != n {
		return fmt.Errorf("the template names %d nodes for %d pods", len(nodes), n)
	}
	objs := make([]*unstructured.Unstructured, n)
	for i := range objs {
		o := tmpl.DeepCopy()
		o.SetName(fmt.Sprintf("%s-%d", tmpl.GetName(), i))
		o.SetResourceVersion("")
		ann := o.GetAnnotations()
		delete(ann, ceilingNodes)
		o.SetAnnotations(ann)
		if !pinned {
			unstructured.RemoveNestedField(o.Object, "spec", "affinity")
		} else if err := pin(o, nodes[i]); err != nil {
			return err
		}
		objs[i] = o
	}
	return all(n, func(i int) error {
		_, err := pods.Create(ctx, objs[i], metav1.CreateOptions{})
		return err
	})
}

// ceilingNodes: the template's annotation listing the node of each rank, comma-separated.
const ceilingNodes = "bench.cadre.dev/nodes"

// pin sets the metadata.name matchFields of every required node selector term to node.
func pin(o *unstructured.Unstructured, node string) error {
	terms, _, err := unstructured.NestedSlice(o.Object, "spec", "affinity", "nodeAffinity",
		"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	if err != nil || len(terms) == 0 {
		return fmt.Errorf("the template pod is not pinned to a node")
	}
	for _, t := range terms {
		term := t.(map[string]any)
		term["matchFields"] = []any{map[string]any{"key": "metadata.name", "operator": "In",
			"values": []any{node}}}
	}
	return unstructured.SetNestedSlice(o.Object, terms, "spec", "affinity", "nodeAffinity",
		"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
}

// all runs f(0..n-1) concurrently and returns the first error.
func all(n int, f func(int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := f(i); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// bounded runs f(0..n-1) with at most width at a time and returns the first error.
func bounded(n, width int, f func(int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Pointer[error]
	for w := 0; w < width; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || first.Load() != nil {
					return
				}
				if err := f(i); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if e := first.Load(); e != nil {
		return *e
	}
	return nil
}

// saveCeilingPod writes one of cadre's pods as it created it (pinned, unbound, no status),
// its cadre.dev/ labels and annotations renamed bench.cadre.dev/ and without owner, so the
// ceiling's pods are the same size and shape while cadre takes them for another tenant's;
// and, in the annotation ceilingNodes, the node each rank was pinned to.
func saveCeilingPod(inf cache.SharedIndexInformer, path string) {
	objs := inf.GetStore().List()
	if len(objs) == 0 {
		die("save-pod: no pod")
	}
	nodes := make([]string, len(objs))
	for _, o := range objs {
		p := o.(*corev1.Pod)
		rank, err := strconv.Atoi(p.Labels["cadre.dev/node-rank"])
		if err != nil || rank < 0 || rank >= len(nodes) {
			die("save-pod: pod %s has rank %q", p.Name, p.Labels["cadre.dev/node-rank"])
		}
		nodes[rank] = p.Spec.NodeName
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(objs[0])
	if err != nil {
		die("save-pod: %v", err)
	}
	u := &unstructured.Unstructured{Object: raw}
	strip(u)
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "spec", "nodeName")
	unstructured.RemoveNestedField(u.Object, "metadata", "ownerReferences")
	rename := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if strings.HasPrefix(k, "cadre.dev/") {
				k = "bench." + k
			}
			out[k] = v
		}
		return out
	}
	u.SetLabels(rename(u.GetLabels()))
	ann := rename(u.GetAnnotations())
	ann[ceilingNodes] = strings.Join(nodes, ",")
	u.SetAnnotations(ann)
	u.SetName("ceiling")
	u.SetKind("Pod")
	u.SetAPIVersion("v1")
	writeJSON(path, u.Object)
}

// ---------------------------------------------------------------------------------------
// recover

type recoverResult struct {
	Nodes      int     `json:"nodes"`
	Strategy   string  `json:"strategy"`
	Recovered  float64 `json:"recovered_s"` // delete -> every rank Running attempt 1, job Running
	PodWrites  int     `json:"pod_writes"` // the controller's creates, patches and deletes of pods
	PodCreates int     `json:"pod_creates"`
	CPUSeconds float64 `json:"cpu_s"`
}

// attemptRunning counts the pods of the watch that run attempt: labelled with it, Running,
// not being deleted.
func attemptRunning(inf cache.SharedIndexInformer, attempt string) int {
	n := 0
	for _, o := range inf.GetStore().List() {
		p := o.(*corev1.Pod)
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning &&
			p.Labels["cadre.dev/restart-attempt"] == attempt {
			n++
		}
	}
	return n
}

func cmdRecover(args []string) {
	fs := flag.NewFlagSet("recover", flag.ExitOnError)
	n := fs.Int("n", 0, "pods in the gang")
	ns := fs.String("ns", "bench", "namespace")
	file := fs.String("f", "", "the TrainingJob (JSON)")
	rank := fs.Int("rank", -1, "the rank whose pod is lost (default: the last)")
	cpuPid := fs.Int("cpu-pid", 0, "process whose CPU seconds the recovery costs (the controller)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this")
	_ = fs.Parse(args)
	if *n <= 0 || *file == "" {
		die("recover: -n and -f are needed")
	}
	if *rank < 0 {
		*rank = *n - 1
	}
	c := connect()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	obj := readObject(*file)
	name := obj.GetName()
	m := newMarks(*n)
	inf := watchPods(ctx, c, *ns, "cadre.dev/job-name="+name, m)
	if _, err := c.dyn.Resource(tjGVR).Namespace(*ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		die("recover: %v", err)
	}
	waitPhase(ctx, c, *ns, name, "Running")
	for attemptRunning(inf, "0") < *n {
		if ctx.Err() != nil {
			die("recover: the gang never ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
	strategy, _, _ := unstructured.NestedString(obj.Object, "spec", "restartStrategy")
	if strategy == "" {
		strategy = "Recreate"
	}
	before, err := scrapeRequests(ctx, c)
	if err != nil {
		die("scraping the API server's metrics: %v", err)
	}
	cpu0 := cpuSeconds(*cpuPid)
	t0 := time.Now()
	pod := fmt.Sprintf("%s-%d", name, *rank)
	if err := c.cs.CoreV1().Pods(*ns).Delete(ctx, pod, metav1.DeleteOptions{}); err != nil {
		die("recover: deleting %s: %v", pod, err)
	}
	for {
		if attemptRunning(inf, "1") == *n {
			u, err := c.dyn.Resource(tjGVR).Namespace(*ns).Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				if p, _, _ := unstructured.NestedString(u.Object, "status", "phase"); p == "Running" {
					break
				}
			}
		}
		if ctx.Err() != nil {
			die("recover: %d of %d pods run attempt 1 after %v", attemptRunning(inf, "1"), *n, *timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := recoverResult{Nodes: *n, Strategy: strategy, Recovered: time.Since(t0).Seconds(),
		CPUSeconds: cpuSeconds(*cpuPid) - cpu0}
	time.Sleep(time.Second)
	after, err := scrapeRequests(ctx, c)
	if err != nil {
		die("scraping the API server's metrics: %v", err)
	}
	// Creates, patches and deletes of pods, less the one delete that lost the pod.
	r.PodWrites = writes(before, after, "ok", "pods", "") +
		int(after["ok DELETE pods "]-before["ok DELETE pods "]) - 1
	r.PodCreates = int(after["ok POST pods "] - before["ok POST pods "])
	bg := metav1.DeletePropagationBackground
	if err := c.dyn.Resource(tjGVR).Namespace(*ns).Delete(ctx, name,
		metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		die("recover: deleting the job: %v", err)
	}
	for ctx.Err() == nil && len(inf.GetStore().List()) > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	_ = json.NewEncoder(os.Stdout).Encode(r)
}
