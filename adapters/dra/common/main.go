package common

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"

	"numaspec.invalid/adapter/protocol"
)

// DRAModule is the upstream module every release dir pins.
const DRAModule = "k8s.io/dynamic-resource-allocation"

// pinnedVersion is the k8s.io/dynamic-resource-allocation version a binary
// is built for, as ../releases.json names it: ../build.sh stamps it with
// -ldflags "-X numaspec.invalid/dra-adapter/common.pinnedVersion=v0.37.2".
var pinnedVersion string

// Variants a binary may be asked to use.
var Variants = []string{"stable", "incubating", "experimental"}

// VariantAuto lets the module pick the allocator (NewAllocator's own choice).
const VariantAuto = "auto"

// Implementation is the "implementation" object of the start answer.
type Implementation struct {
	Name             string         `json:"name"`
	Version          string         `json:"version"`
	Language         string         `json:"language"`
	Homepage         string         `json:"homepage"`
	Issues           string         `json:"issues"`
	KubeletVersions  []string       `json:"kubelet_versions"`
	Operations       []string       `json:"operations"`
	AllocateVersions []string       `json:"allocate_versions"`
	AllocateFeatures []string       `json:"allocate_features"`
	Metadata         map[string]any `json:"metadata"`
}

// ModuleVersion is the version of the module path in this binary's build
// information, its replacement's when replaced ("" when it has none).
func ModuleVersion(path string) string { return protocol.ModuleVersion(path) }

// PinnedVersion is the stamped version, or (built without ../build.sh) the
// linked k8s.io/dynamic-resource-allocation's.
func PinnedVersion() string {
	if pinnedVersion != "" {
		return pinnedVersion
	}
	return ModuleVersion(DRAModule)
}

var moduleVersionRE = regexp.MustCompile(`^v0\.(0|[1-9][0-9]*)\.`)

// KubernetesMinor turns the module version "v0.37.2" into the Kubernetes
// minor "1.37" ("" when it is not such a version).
func KubernetesMinor(moduleVersion string) string {
	m := moduleVersionRE.FindStringSubmatch(moduleVersion)
	if m == nil {
		return ""
	}
	return "1." + m[1]
}

// Main is the main of every release's binary: flags
//
//	-variant stable|incubating|experimental|auto  (default auto)
//	-version                                      print the pinned module version
//
// then the adapter protocol on stdin/stdout until stop or EOF (exit 0).
// A binary stamped with another version than the module it links exits 2.
func Main(d Driver) {
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	variant := fs.String("variant", VariantAuto, "allocator variant: stable, incubating, experimental or auto (the module's own choice)")
	version := fs.Bool("version", false, "print the pinned "+DRAModule+" version and exit")
	_ = fs.Parse(os.Args[1:])
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments %q\n", fs.Args())
		os.Exit(2)
	}
	linked := d.ModuleVersion()
	if pinnedVersion != "" && linked != "" && pinnedVersion != linked {
		fmt.Fprintf(os.Stderr, "dra-allocator built as %s (releases.json) but linking %s %s (go.mod)\n", pinnedVersion, DRAModule, linked)
		os.Exit(2)
	}
	if *version {
		fmt.Println(PinnedVersion())
		return
	}
	ok := *variant == VariantAuto
	for _, v := range Variants {
		ok = ok || *variant == v
	}
	if !ok {
		fmt.Fprintf(os.Stderr, "-variant %q: want stable, incubating, experimental or auto\n", *variant)
		os.Exit(2)
	}
	if err := d.Setup(*variant); err != nil {
		fmt.Fprintf(os.Stderr, "dra-allocator: %v\n", err)
		os.Exit(2)
	}
	ver := PinnedVersion()
	features := d.VariantFeatures()
	if features == nil {
		features = []string{}
	}
	sort.Strings(features)
	s := &server{driver: d, impl: Implementation{
		Name:             "dra-allocator",
		Version:          ver,
		Language:         "go",
		Homepage:         "https://github.com/kubernetes/dynamic-resource-allocation",
		Issues:           "https://github.com/kubernetes/kubernetes/issues",
		KubeletVersions:  []string{},
		Operations:       []string{OpAllocate},
		AllocateVersions: []string{KubernetesMinor(ver)},
		AllocateFeatures: features,
		Metadata:         map[string]any{"variant": *variant},
	}}
	if err := protocol.ServeAdapter(s, os.Stdin, os.Stdout); err != nil {
		Debugf("%v", err)
		os.Exit(2)
	}
	os.Exit(0)
}
