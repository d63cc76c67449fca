// scheduler-plugins-adapter-<version>: the numaspec adapter protocol, operation
// predict only, over the Filter of the scheduler-plugins plugin
// NodeResourceTopologyMatch (sigs.k8s.io/scheduler-plugins,
// pkg/noderesourcetopology), a Go module dependency pinned by the go.mod of
// each per-tag directory (v0.33.5/, ...); none of its code is here. This one
// file serves every tag: each per-tag directory's main.go is a symbolic link
// to it, and the pinned version is read from the binary's build information.
//
// One case is one node: the case's NodeResourceTopology (NRT) object, the
// node's allocatable resources and a pod. Each evaluation builds the plugin
// with New, as a scheduler would (default arguments, CacheResyncPeriodSeconds
// 0: the passthrough cache, a plain GET of the NRT named after the node), over
// a framework handle whose kubeconfig talks to an in-process stand-in for the
// API server serving that NRT; then calls Filter once with the pod and a
// NodeInfo of the node. The Filter gives a verdict, never a placement.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"

	topologyapi "github.com/k8stopologyawareschedwg/noderesourcetopology-api/pkg/apis/topology"
	topologyv1alpha2 "github.com/k8stopologyawareschedwg/noderesourcetopology-api/pkg/apis/topology/v1alpha2"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
	v1qos "k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	kjson "sigs.k8s.io/json"
	apiconfig "sigs.k8s.io/scheduler-plugins/apis/config"
	apiconfigv1 "sigs.k8s.io/scheduler-plugins/apis/config/v1"
	"sigs.k8s.io/scheduler-plugins/pkg/noderesourcetopology"

	"numaspec.invalid/kubelet-oracle/common"
)

// pluginModule is the module every per-tag go.mod pins.
const pluginModule = "sigs.k8s.io/scheduler-plugins"

// The kubelet releases whose node (and so whose NRT, as the
// resource-topology-exporter derives it) a predict case may describe.
const firstNodeMinor, lastNodeMinor = 29, 37

// defaultRepeat is how many times each case is evaluated; answers that
// differ are reported as nondeterministic.
const defaultRepeat = 2

func main() {
	common.SilenceKlog()
	// controller-runtime's own logger goes where klog goes (nowhere unless
	// ORACLE_KLOG is set); left unset, it warns on stderr after 30 s.
	ctrllog.SetLogger(klog.Background())
	fs := flag.NewFlagSet("scheduler-plugins-adapter", flag.ExitOnError)
	repeat := fs.Int("repeat", defaultRepeat, "evaluations of every case; answers that differ are reported as nondeterministic")
	showVersion := fs.Bool("version", false, "print the pinned scheduler-plugins version and exit")
	_ = fs.Parse(os.Args[1:])
	version := pinnedVersion()
	if *showVersion {
		fmt.Println(strings.TrimPrefix(version, "v"))
		return
	}
	if *repeat < 1 {
		fmt.Fprintln(os.Stderr, "scheduler-plugins-adapter: --repeat must be at least 1")
		os.Exit(2)
	}
	common.AdapterMain(&adapter{version: version, repeat: *repeat})
}

// pinnedVersion is the version of sigs.k8s.io/scheduler-plugins this binary
// was built with ("v0.33.5"), from its build information.
func pinnedVersion() string {
	if v := common.ModuleVersion(pluginModule); v != "" {
		return v
	}
	return "unknown"
}

type adapter struct {
	version string // "v0.33.5"
	repeat  int
}

// predictClaims is claims.predict (PROTO-7), a struct to keep its fields in order.
type predictClaims struct {
	Policies         []string `json:"policies"`
	Scopes           []string `json:"scopes"`
	Managers         []string `json:"managers"`
	PolicyOptions    []string `json:"policy_options"`
	CPUPolicyOptions []string `json:"cpu_policy_options"`
	FeatureGates     bool     `json:"feature_gates"`
	NodeFit          bool     `json:"node_fit"`
}

func (a *adapter) Implementation() common.Implementation {
	var nodeVersions []string
	for m := firstNodeMinor; m <= lastNodeMinor; m++ {
		nodeVersions = append(nodeVersions, "1."+strconv.Itoa(m))
	}
	return common.Implementation{
		Name:                "scheduler-plugins",
		Version:             strings.TrimPrefix(a.version, "v"),
		Language:            "go",
		Homepage:            "https://github.com/kubernetes-sigs/scheduler-plugins",
		Issues:              "https://github.com/kubernetes-sigs/scheduler-plugins/issues",
		Source:              pluginModule + "@" + a.version + " (pkg/noderesourcetopology, TopologyMatch.Filter)",
		KubeletVersions:     []string{}, // no merge: it answers predict only
		NodeKubeletVersions: nodeVersions,
		Operations:          []string{"predict"},
		Claims: map[string]any{
			"format": false,
			"predict": predictClaims{
				// The Filter checks only single-numa-node nodes; it admits
				// every pod on a node of another policy.
				Policies:         []string{"single-numa-node"},
				Scopes:           []string{"container", "pod"},
				Managers:         []string{"cpu", "memory", "device"},
				PolicyOptions:    []string{},
				CPUPolicyOptions: []string{},
				FeatureGates:     false,
				// Node-level fit is another plugin's (NodeResourcesFit).
				NodeFit: false,
			},
		},
		Metadata: map[string]any{
			"cache":   "passthrough (CacheResyncPeriodSeconds 0)",
			"scoring": "not run: Filter only",
		},
	}
}

// SkipUndeclared answers an operation other than predict "skipped".
func (a *adapter) SkipUndeclared(op string) *common.Skip {
	return common.Skipf("scheduler-plugins' NodeResourceTopologyMatch Filter answers predict only, not %q", op)
}

func (a *adapter) Run(op string, raw json.RawMessage) (any, *common.Skip) {
	if op != "predict" {
		return nil, a.SkipUndeclared(op)
	}
	var head struct {
		KubeletVersion json.RawMessage `json:"kubelet_version"`
	}
	_ = json.Unmarshal(raw, &head)
	if skip := checkVersion(head.KubeletVersion); skip != nil {
		return nil, skip
	}
	return a.repeated(raw), nil
}

// checkVersion: the case's kubelet release (absent: the newest, VER-1) must
// be one of node_kubelet_versions.
func checkVersion(raw json.RawMessage) *common.Skip {
	minor := common.NewestModelled
	if t := string(bytes.TrimSpace(raw)); t != "" && t != "null" {
		var s string
		if json.Unmarshal(raw, &s) != nil || common.MinorOf(s) == "" {
			return common.Skipf("kubelet_version %s is not a version: scheduler-plugins follows no kubelet release and refuses no version", raw)
		}
		minor = common.MinorOf(s)
	}
	m, _ := strconv.Atoi(strings.TrimPrefix(minor, "1."))
	if m < firstNodeMinor || m > lastNodeMinor {
		return common.Skipf("kubelet %s is not declared by this adapter (node_kubelet_versions 1.%d-1.%d)", minor, firstNodeMinor, lastNodeMinor)
	}
	return nil
}

// ---- repeated evaluation ----

type outcome struct {
	key    string // the answer as JSON, or "errored: ..."
	result any    // a predictResult or a *common.Errored
}

// repeated evaluates the case a.repeat times, each from the raw JSON.
func (a *adapter) repeated(raw json.RawMessage) any {
	first := a.once(raw)
	seen := map[string]int{first.key: 1}
	for i := 1; i < a.repeat; i++ {
		seen[a.once(raw).key]++
	}
	if len(seen) == 1 {
		return first.result
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d of %d)", k, seen[k], a.repeat)
	}
	return &common.Errored{Message: fmt.Sprintf("nondeterministic: scheduler-plugins gave %d different answers in %d evaluations of the same case: %s",
		len(keys), a.repeat, strings.Join(parts, "; "))}
}

// once decodes the case and runs the Filter on it; a panic is an errored
// answer carrying the Go stack.
func (a *adapter) once(raw json.RawMessage) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprintf("panic in scheduler-plugins' NodeResourceTopologyMatch: %v", p)
			o = outcome{key: "errored: " + msg, result: &common.Errored{Message: msg, Traceback: string(debug.Stack())}}
		}
	}()
	var result any
	c, err := decodeCase(raw)
	if err == nil {
		result, err = predict(c)
	}
	if err != nil {
		e := &common.Errored{Message: err.Error()}
		return outcome{key: "errored: " + e.Message, result: e}
	}
	j, err := json.Marshal(result)
	if err != nil {
		e := &common.Errored{Message: "could not encode the answer: " + err.Error()}
		return outcome{key: "errored: " + e.Message, result: e}
	}
	return outcome{key: string(j), result: result}
}

// ---- the case ----

type caseIn struct {
	KubeletVersion json.RawMessage `json:"kubelet_version"`
	NRT            json.RawMessage `json:"nrt"`
	Node           *nodeIn         `json:"node"`
	Pod            *common.PodSpec `json:"pod"`
}

type nodeIn struct {
	Name        string            `json:"name"`
	Allocatable map[string]string `json:"allocatable"`
}

type predictCase struct {
	nrtName string // the NRT object's name: served to a GET of that name only
	nrtJSON []byte // the NRT as the stand-in API server returns it
	node    *v1.Node
	pod     *v1.Pod
}

type predictResult struct {
	Fits    bool   `json:"fits"`
	Message string `json:"message,omitempty"`
}

func decodeCase(raw json.RawMessage) (*predictCase, error) {
	var in caseIn
	if err := common.DecodeStrict(raw, &in); err != nil {
		return nil, fmt.Errorf("predict case: %v", err)
	}
	if t := string(bytes.TrimSpace(in.NRT)); t == "" || t == "null" || in.Node == nil || in.Pod == nil {
		return nil, fmt.Errorf("predict case: nrt, node and pod are required")
	}
	// The NRT is read with the API's own types and Kubernetes' JSON rules
	// (case-sensitive field names; unknown or repeated fields refused).
	var nrt topologyv1alpha2.NodeResourceTopology
	strict, err := kjson.UnmarshalStrict(in.NRT, &nrt)
	if err == nil && len(strict) > 0 {
		err = strict[0]
	}
	if err != nil {
		return nil, fmt.Errorf("nrt is not a %s NodeResourceTopology: %v", topologyv1alpha2.SchemeGroupVersion, err)
	}
	gvk := topologyv1alpha2.SchemeGroupVersion.WithKind("NodeResourceTopology")
	if (nrt.APIVersion != "" && nrt.APIVersion != gvk.GroupVersion().String()) || (nrt.Kind != "" && nrt.Kind != gvk.Kind) {
		return nil, fmt.Errorf("nrt: apiVersion %q, kind %q: want %q, %q", nrt.APIVersion, nrt.Kind, gvk.GroupVersion().String(), gvk.Kind)
	}
	if nrt.Name == "" {
		// The API server stores no object without a name.
		return nil, fmt.Errorf("nrt.metadata.name is required")
	}
	nrt.APIVersion, nrt.Kind = gvk.GroupVersion().String(), gvk.Kind
	nrtJSON, err := json.Marshal(&nrt)
	if err != nil {
		return nil, fmt.Errorf("nrt: %v", err)
	}
	if in.Node.Name == "" {
		return nil, fmt.Errorf("node.name is required")
	}
	alloc, err := resourceList(in.Node.Allocatable, "node.allocatable")
	if err != nil {
		return nil, err
	}
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: in.Node.Name},
		Status:     v1.NodeStatus{Capacity: alloc.DeepCopy(), Allocatable: alloc},
	}
	pod, err := buildPod(in.Pod)
	if err != nil {
		return nil, err
	}
	return &predictCase{nrtName: nrt.Name, nrtJSON: nrtJSON, node: node, pod: pod}, nil
}

func resourceList(in map[string]string, where string) (v1.ResourceList, error) {
	if in == nil {
		return nil, nil
	}
	out := make(v1.ResourceList, len(in))
	for name, s := range in {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, fmt.Errorf("%s[%q] = %q: %v", where, name, s, err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("%s[%q] = %q: must be greater than or equal to 0 (API server validation)", where, name, s)
		}
		out[v1.ResourceName(name)] = q
	}
	return out, nil
}

// buildPod makes the pod as the API server would store it and the scheduler
// would see it: defaulted (a limit without a request requests the limit),
// status.qosClass set, a restartPolicy Always init container a sidecar.
func buildPod(spec *common.PodSpec) (*v1.Pod, error) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(spec.UID), Name: spec.Name, Namespace: spec.Namespace,
		Labels: spec.Labels, Annotations: spec.Annotations}}
	seen := map[string]bool{}
	conv := func(cs []common.ContainerSpec, kind string) ([]v1.Container, error) {
		var out []v1.Container
		for i, c := range cs {
			if c.Name == "" || seen[c.Name] {
				return nil, fmt.Errorf("pod.%s[%d]: container name %q is empty or repeated", kind, i, c.Name)
			}
			seen[c.Name] = true
			req, err := resourceList(c.Resources.Requests, fmt.Sprintf("pod.%s[%d].resources.requests", kind, i))
			if err != nil {
				return nil, err
			}
			lim, err := resourceList(c.Resources.Limits, fmt.Sprintf("pod.%s[%d].resources.limits", kind, i))
			if err != nil {
				return nil, err
			}
			vc := v1.Container{Name: c.Name, Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}
			if c.RestartPolicy != nil {
				// API server validation: only an init container may have
				// one, and only Always (a sidecar).
				if kind != "initContainers" || *c.RestartPolicy != string(v1.ContainerRestartPolicyAlways) {
					return nil, fmt.Errorf("pod.%s[%d].restartPolicy %q: only an init container may have one, and only \"Always\"", kind, i, *c.RestartPolicy)
				}
				rp := v1.ContainerRestartPolicyAlways
				vc.RestartPolicy = &rp
			}
			out = append(out, vc)
		}
		return out, nil
	}
	var err error
	if pod.Spec.InitContainers, err = conv(spec.InitContainers, "initContainers"); err != nil {
		return nil, err
	}
	if pod.Spec.Containers, err = conv(spec.Containers, "containers"); err != nil {
		return nil, err
	}
	if len(pod.Spec.Containers) == 0 {
		return nil, fmt.Errorf("pod.containers: a pod needs at least one container")
	}
	corev1defaults.SetObjectDefaults_Pod(pod)
	pod.Status.QOSClass = v1qos.ComputePodQOS(pod)
	return pod, nil
}

// ---- the plugin ----

// handle is the scheduler framework handle given to New: New reads only
// its KubeConfig (the passthrough cache needs nothing else); any other
// method would panic on the nil interface, and the panic is answered.
type handle struct {
	framework.Handle
	config *rest.Config
}

func (h handle) KubeConfig() *rest.Config { return h.config }

// pluginArgs are the plugin's arguments as a scheduler configuration
// without any would give them (the v1 defaults: scoring LeastAllocated),
// with CacheResyncPeriodSeconds 0 (the passthrough cache).
func pluginArgs() (*apiconfig.NodeResourceTopologyMatchArgs, error) {
	zero := int64(0)
	external := &apiconfigv1.NodeResourceTopologyMatchArgs{CacheResyncPeriodSeconds: &zero}
	apiconfigv1.SetObjectDefaults_NodeResourceTopologyMatchArgs(external)
	args := &apiconfig.NodeResourceTopologyMatchArgs{}
	if err := apiconfigv1.Convert_v1_NodeResourceTopologyMatchArgs_To_config_NodeResourceTopologyMatchArgs(external, args, nil); err != nil {
		return nil, err
	}
	return args, nil
}

func predict(c *predictCase) (any, error) {
	ctx := context.Background()
	api := &apiServer{nrtName: c.nrtName, nrtJSON: c.nrtJSON}
	config := &rest.Config{Host: "http://numaspec.invalid", Transport: api, QPS: -1}
	args, err := pluginArgs()
	if err != nil {
		return nil, fmt.Errorf("plugin arguments: %v", err)
	}
	plugin, err := noderesourcetopology.New(ctx, args, handle{config: config})
	if err != nil {
		return nil, fmt.Errorf("NodeResourceTopologyMatch New: %v", err)
	}
	filter, ok := plugin.(framework.FilterPlugin)
	if !ok {
		return nil, fmt.Errorf("NodeResourceTopologyMatch New gave a %T, not a Filter plugin", plugin)
	}
	nodeInfo := framework.NewNodeInfo()
	nodeInfo.SetNode(c.node)
	status := filter.Filter(ctx, framework.NewCycleState(), c.pod, nodeInfo)
	if bad := api.unexpectedRequests(); len(bad) > 0 {
		// The passthrough cache takes a failed GET for "no NRT" (the
		// node passes): a request this stand-in does not serve would
		// turn into a verdict, so it is an error of this adapter's.
		return nil, fmt.Errorf("the plugin's client asked for what the adapter's API server stand-in does not serve: %s",
			strings.Join(bad, "; "))
	}
	switch {
	case status.IsSuccess():
		return predictResult{Fits: true}, nil
	case status.Code() == framework.Unschedulable || status.Code() == framework.UnschedulableAndUnresolvable:
		return predictResult{Fits: false, Message: status.Message()}, nil
	default:
		return nil, fmt.Errorf("Filter status %s: %s", status.Code(), status.Message())
	}
}

// ---- the API server stand-in ----

// apiServer is the http.RoundTripper of the kubeconfig given to New: it
// answers the discovery requests controller-runtime's client makes (the
// core and group lists, the topology group's resources) and a GET of the
// case's NRT by its name; a GET of any other NRT is 404 Not Found, as from
// a cluster without it. Anything else is recorded and answered 404.
type apiServer struct {
	nrtName string
	nrtJSON []byte

	mu         sync.Mutex
	unexpected []string
}

const nrtResource = "noderesourcetopologies"

func (s *apiServer) unexpectedRequests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unexpected...)
}

func (s *apiServer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	common.Debugf("scheduler-plugins: the plugin's client asks %s %s", req.Method, req.URL.RequestURI())
	gv := topologyv1alpha2.SchemeGroupVersion
	groupPath := "/apis/" + gv.String()
	path := strings.TrimSuffix(req.URL.Path, "/")
	if req.Method == http.MethodGet {
		switch {
		case path == "/api":
			return reply(req, http.StatusOK, &metav1.APIVersions{
				TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
				Versions: []string{"v1"},
			})
		case path == "/apis":
			version := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
			return reply(req, http.StatusOK, &metav1.APIGroupList{
				TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
				Groups: []metav1.APIGroup{{
					Name:             topologyapi.GroupName,
					Versions:         []metav1.GroupVersionForDiscovery{version},
					PreferredVersion: version,
				}},
			})
		case path == groupPath:
			return reply(req, http.StatusOK, &metav1.APIResourceList{
				TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
				GroupVersion: gv.String(),
				APIResources: []metav1.APIResource{{
					Name:         nrtResource,
					SingularName: "noderesourcetopology",
					Namespaced:   false,
					Kind:         "NodeResourceTopology",
					Verbs:        metav1.Verbs{"get", "list", "watch"},
					ShortNames:   []string{"node-res-topo"},
				}},
			})
		case strings.HasPrefix(path, groupPath+"/"+nrtResource+"/"):
			name := strings.TrimPrefix(path, groupPath+"/"+nrtResource+"/")
			if !strings.Contains(name, "/") {
				if name == s.nrtName {
					return replyJSON(req, http.StatusOK, s.nrtJSON), nil
				}
				notFound := apierrors.NewNotFound(gv.WithResource(nrtResource).GroupResource(), name).ErrStatus
				notFound.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
				return reply(req, http.StatusNotFound, &notFound)
			}
		}
	}
	s.mu.Lock()
	s.unexpected = append(s.unexpected, req.Method+" "+req.URL.RequestURI())
	s.mu.Unlock()
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound,
		Message: "numaspec's stand-in API server does not serve " + req.URL.Path,
	}
	return reply(req, http.StatusNotFound, &st)
}

func reply(req *http.Request, code int, v any) (*http.Response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return replyJSON(req, code, body), nil
}

func replyJSON(req *http.Request, code int, body []byte) *http.Response {
	return &http.Response{
		Status:        strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
