package common

// The node and hints operations of the adapter: a case is a list of
// node-protocol steps run on a fresh node probe; each probe answer is turned
// into numaspec's node-protocol answer (spec/protocols/node-protocol.md), errors
// carrying numaspec's kinds (reference/errors.py).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"numaspec.invalid/adapter/protocol"
)

// Errored is a result a Release returns when the case cannot be answered
// (the loop sends {"errored": true}).
type Errored = protocol.Errored

// NodeErrorKind is numaspec's kind for a probe error. Errors the probe raises
// itself carry their kind (NodeError.Numaspec); kubelet's start-up errors are
// classified by the step that failed (Stage) and, for the Topology Manager and
// the config checks, kubelet's text:
//
//	topologymanager.NewManager        ClassifyTopologyManagerError, else node-startup
//	feature-gates, decode-config-panic invalid-field (an unknown or locked gate)
//	validate-config                   ClassifyConfigError, else node-startup
//	topology-manager-policy-options   policy-option-not-enabled (server.go's check)
//	any other start-up step           node-startup
//	unsupported / unknown-pod / invalid  unsupported-version / unknown-pod / invalid-field
func NodeErrorKind(e *NodeError) string {
	if e.Numaspec != "" {
		return e.Numaspec
	}
	switch e.Kind {
	case "startup":
		switch e.Stage {
		case "topologymanager.NewManager":
			if k := ClassifyTopologyManagerError(e.Message); k != "" {
				return k
			}
		case "feature-gates", "decode-config-panic":
			return "invalid-field"
		case "validate-config":
			if k := ClassifyConfigError(e.Message); k != "" {
				return k
			}
		case "topology-manager-policy-options":
			return "policy-option-not-enabled"
		}
		return "node-startup"
	case "unsupported":
		return "unsupported-version"
	case "unknown-pod":
		return "unknown-pod"
	case "invalid":
		return "invalid-field"
	}
	return "internal-error"
}

type sessionCase struct {
	Steps []json.RawMessage `json:"steps"`
}

type stepPeek struct {
	Op   string `json:"op"`
	Node *struct {
		KubeletVersion json.RawMessage `json:"kubeletVersion"`
		Machine        struct {
			NUMANodes []struct {
				Hugepages map[string]json.RawMessage `json:"hugepages"`
			} `json:"numaNodes"`
			Devices map[string]json.RawMessage `json:"devices"`
		} `json:"machine"`
	} `json:"node"`
	Pod *struct {
		InitContainers []ContainerSpec `json:"initContainers"`
		Containers     []ContainerSpec `json:"containers"`
		Resources      *ResourcesSpec  `json:"resources"`
	} `json:"pod"`
}

// needsMore says why a step needs kubelet parts the probe does not run: a
// pod asking for a resource no part of the probe serves (neither a manager
// nor one of the machine's device plugins: kubelet's node resource-fit admit
// handler, which refuses such pods, is not modelled). "" when the step is
// fine. served holds the hugepage sizes and device resources of the node.
func needsMore(step json.RawMessage, buildMinor string, served map[string]bool) (string, map[string]bool) {
	hugepageSizes := served
	var peek stepPeek
	if json.Unmarshal(step, &peek) != nil {
		return "", hugepageSizes // the probe reports the malformed step itself
	}
	if peek.Op == "create" && peek.Node != nil {
		var v string
		if json.Unmarshal(peek.Node.KubeletVersion, &v) == nil && Modelled(MinorOf(v)) && MinorOf(v) != buildMinor {
			return fmt.Sprintf("the node is a kubelet %s; this adapter runs kubelet %s only", MinorOf(v), buildMinor), hugepageSizes
		}
		sizes := map[string]bool{}
		for r := range peek.Node.Machine.Devices {
			sizes[r] = true
		}
		for _, n := range peek.Node.Machine.NUMANodes {
			for s := range n.Hugepages {
				sizes[s] = true
			}
		}
		return "", sizes
	}
	if (peek.Op == "admit" || peek.Op == "hints") && peek.Pod != nil {
		cs := append(append([]ContainerSpec{}, peek.Pod.InitContainers...), peek.Pod.Containers...)
		if peek.Pod.Resources != nil { // the pod-level resources, checked as a container's
			cs = append(cs, ContainerSpec{Resources: *peek.Pod.Resources})
		}
		for _, c := range cs {
			for _, rl := range []map[string]string{c.Resources.Requests, c.Resources.Limits} {
				for name := range rl {
					switch {
					case name == "cpu", name == "memory", name == "ephemeral-storage":
					case hugepageSizes[name]: // a hugepage size or a device resource of the node
					default:
						return fmt.Sprintf("the pod asks for %q, which no modelled manager or device plugin serves "+
							"(kubelet's resource-fit admit handler is not run)", name), hugepageSizes
					}
				}
			}
		}
	}
	return "", hugepageSizes
}

// Modelled says whether numaspec models kubelet minor release "1.N" (VER-3:
// 1.18 to 1.38, 1.38 as its pre-release 1.38.0-beta.0). A node of a modelled
// release other than the adapter's own is another binary's case (skipped);
// anything else is unsupported-version.
func Modelled(minor string) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(minor, "1."))
	return err == nil && strings.HasPrefix(minor, "1.") && n >= 18 && n <= 38
}

// RunSession runs a node or hints case ({"steps": [...]}) on a fresh probe and
// answers {"answers": [...]}.
func RunSession(probe NodeProbe, raw json.RawMessage) (any, *Skip) {
	var c sessionCase
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return &Errored{Message: "the case is not {\"steps\": [...]}: " + err.Error()}, nil
	}
	var sizes map[string]bool
	for i, step := range c.Steps {
		var why string
		if why, sizes = needsMore(step, MinorOf(probe.Version()), sizes); why != "" {
			return nil, Skipf("step %d: %s", i+1, why)
		}
	}
	answers := make([]any, 0, len(c.Steps))
	for i, step := range c.Steps {
		resp := HandleNode(probe, step)
		switch {
		case resp.Error != nil && resp.Error.Kind == "panic":
			return &Errored{Message: fmt.Sprintf("step %d: kubelet code panicked: %s", i+1, resp.Error.Message),
				Traceback: resp.Error.Trace}, nil
		case resp.Error != nil && resp.Error.Numaspec == "skip":
			return nil, Skipf("step %d: %s", i+1, resp.Error.Message)
		case resp.Error != nil && resp.Error.Kind == "probe":
			return &Errored{Message: fmt.Sprintf("step %d: %s", i+1, resp.Error.Message)}, nil
		case resp.Error != nil:
			e := map[string]any{"kind": NodeErrorKind(resp.Error), "message": resp.Error.Message}
			if resp.Error.Kind == "startup" {
				e["kubelet_message"] = resp.Error.Message
				e["message"] = resp.Error.Stage + ": " + resp.Error.Message
			}
			answers = append(answers, map[string]any{"error": e})
		case resp.OK != nil:
			answers = append(answers, map[string]any{"ok": true})
		case resp.Decision != nil:
			answers = append(answers, map[string]any{"decision": resp.Decision})
		case resp.Hints != nil:
			answers = append(answers, map[string]any{"hints": NumaspecHints(*resp.Hints)})
		case resp.State != nil:
			answers = append(answers, map[string]any{"state": resp.Numaspec})
		case resp.Resize != nil:
			answers = append(answers, map[string]any{"resize": resp.Resize})
		default:
			return &Errored{Message: fmt.Sprintf("step %d: the probe gave an empty answer", i+1)}, nil
		}
	}
	return map[string]any{"answers": answers}, nil
}

// NumaspecState is the NODE-8 state snapshot from the probe's state: the
// admitted pods (sorted uids), the CPU Manager's state (null under the none
// policy, as numaspec keeps no CPU state then) with its reserved CPUs, the
// Memory Manager's (null under the None policy) and an empty Device Manager
// (the probe puts kubelet's in: probe/devices.go).
func NumaspecState(st *NodeState, pods []string, cpuStatic bool, reserved []int, memStatic bool) map[string]any {
	out := map[string]any{
		"pods":    append([]string{}, pods...),
		"cpu":     nil,
		"memory":  nil,
		"devices": map[string]any{"allocated": map[string]any{}, "healthy": map[string]any{}, "assignments": map[string]any{}},
	}
	if cpuStatic {
		out["cpu"] = map[string]any{"defaultCpuSet": st.CPU.DefaultCPUSet, "reservedCpuSet": SortedInts(reserved),
			"assignments": st.CPU.Assignments}
	}
	if memStatic {
		out["memory"] = map[string]any{"machineState": st.Memory.MachineState, "assignments": st.Memory.Assignments}
	}
	return out
}
