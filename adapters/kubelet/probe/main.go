package probe

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"

	"numaspec.invalid/kubelet-oracle/common"
)

// Main is the main of a release's binary (v1_XX/main.go): Setup, then the
// mode common.ReleaseMain picks from the arguments (the adapter protocol,
// "node" or "merge"). The state directories of live nodes are removed on
// SIGINT, SIGTERM and SIGHUP too.
func Main(k Kubelet) {
	Setup()
	removeStateDirsOnSignal()
	common.ReleaseMain(Adapter{K: k}, Oracle{K: k}, func() common.NodeProbe { return NewProbe(k) })
}

// Adapter is a release's numaspec adapter (spec/protocols/adapter-protocol.md): merge,
// node and hints.
type Adapter struct{ K Kubelet }

func (a Adapter) Implementation() common.Implementation {
	return common.KubeletImplementation(a.K.Version(), []string{"merge", "node", "hints"}, true)
}

func (a Adapter) Run(op string, raw json.RawMessage) (any, *common.Skip) {
	switch op {
	case "merge":
		var head struct {
			KubeletVersion json.RawMessage `json:"kubelet_version"`
		}
		_ = json.Unmarshal(raw, &head)
		if e := common.CaseVersion(head.KubeletVersion, a.K.Version()); e != nil {
			return common.MergeResult{Error: e}, nil
		}
		c, skip := common.DecodeMergeCaseScored(raw, a.K.HintScores())
		if skip != nil {
			return nil, skip
		}
		return Merge(a.K, c), nil
	default: // node, hints: a fresh node per case
		p := NewProbe(a.K)
		defer p.Close()
		return common.RunSession(p, raw)
	}
}

// ---- process set-up and feature gates ----

var setupOnce sync.Once

// pristineGates is the process-wide feature gate as Setup left it; each node
// and case starts from a copy of it. Its static type is the release's type of
// utilfeature.DefaultMutableFeatureGate (a MutableVersionedFeatureGate since
// 1.31), so that the copies can be installed there.
var pristineGates = zeroOf(utilfeature.DefaultMutableFeatureGate)

func zeroOf[T any](T) (zero T) { return }

// Setup does, once per process, what kubelet's init does before any
// configuration is read: silence klog (see common.SilenceKlog), add the
// logging feature gates (cmd/kubelet/app/server.go init), and keep a copy of
// the feature gate as it then is (pristineGates) for every node and case.
func Setup() {
	setupOnce.Do(func() {
		common.SilenceKlog()
		if err := logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate); err != nil {
			panic(fmt.Sprintf("adding logging feature gates: %v", err))
		}
		pristineGates = utilfeature.DefaultMutableFeatureGate.DeepCopy()
	})
}

// freshGates installs a copy of pristineGates as the process-wide feature
// gate, as a freshly started kubelet has it, and returns it.
func freshGates() featuregate.MutableFeatureGate {
	gates := pristineGates.DeepCopy()
	utilfeature.DefaultMutableFeatureGate = gates
	utilfeature.DefaultFeatureGate = gates
	return gates
}

// ---- state directories ----

// A node's managers keep their checkpoint files in a fresh directory under
// the system temp dir ($TMPDIR), removed when the node is replaced, when its
// probe is closed (end of input, stop, end of an adapter case) and on
// SIGINT/SIGTERM/SIGHUP. SIGKILL cannot be caught: numaspec's Python side
// runs the process with a TMPDIR of its own and removes that after the
// process is gone (conformance/connection.py LineProcess).
var (
	stateDirsMu sync.Mutex
	stateDirs   = map[string]bool{}
)

func makeStateDir() (string, error) {
	stateDirsMu.Lock()
	defer stateDirsMu.Unlock()
	dir, err := os.MkdirTemp("", "kubelet-node-probe-")
	if err == nil {
		stateDirs[dir] = true
	}
	return dir, err
}

func removeStateDir(dir string) {
	stateDirsMu.Lock()
	defer stateDirsMu.Unlock()
	_ = os.RemoveAll(dir)
	delete(stateDirs, dir)
}

func removeStateDirsOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-ch
		stateDirsMu.Lock() // held until exit: no new directory from here on
		for dir := range stateDirs {
			_ = os.RemoveAll(dir)
		}
		code := 1
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		os.Exit(code)
	}()
}
