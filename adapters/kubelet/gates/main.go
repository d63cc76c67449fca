// Command gates prints, as JSON, every feature gate a kubelet release knows at start-up: the
// gates registered into utilfeature.DefaultMutableFeatureGate by the packages kubelet's
// command imports (pkg/features and, per release, the extra registrations listed in the
// generated extras.go), each with its default, pre-release stage and lock, as that release's
// own feature gate reports them. Run by gen.sh, never by CI.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	_ "k8s.io/kubernetes/pkg/features"
)

type gate struct {
	Default       bool     `json:"default"`
	PreRelease    string   `json:"preRelease"`
	LockToDefault bool     `json:"lockToDefault"`
	Dependencies  []string `json:"dependencies,omitempty"`
}

type report struct {
	Gates                   map[string]gate `json:"gates"`
	EmulationVersion        string          `json:"emulationVersion,omitempty"`
	MinCompatibilityVersion string          `json:"minCompatibilityVersion,omitempty"`
	Method                  string          `json:"method"`
}

// stage names a pre-release stage as numaspec's data does (featuregate's constants are
// "ALPHA", "BETA", "" for GA, "DEPRECATED" and, from 1.31, "PRE-ALPHA").
func stage(p string) string {
	switch p {
	case "ALPHA":
		return "alpha"
	case "BETA":
		return "beta"
	case "":
		return "GA"
	case "DEPRECATED":
		return "deprecated"
	case "PRE-ALPHA":
		return "pre-alpha"
	}
	return p
}

func main() {
	registerExtras()
	r := collect()
	for name, g := range r.Gates {
		sort.Strings(g.Dependencies)
		r.Gates[name] = g
	}
	out, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(out))
	_ = utilfeature.DefaultMutableFeatureGate
}
