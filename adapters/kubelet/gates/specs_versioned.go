//go:build versioned

package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// collect reads a versioned gate (1.31 on): GetAll gives each gate's spec in effect at the
// gate's emulation version (the binary's own version, which kubelet never changes); a gate
// that GetAllVersioned knows but GetAll leaves out is pre-alpha at that version (known, but
// SetFromMap refuses it). Dependencies where the release records them.
func collect() report {
	fg := utilfeature.DefaultMutableFeatureGate
	inEffect := fg.GetAll()
	gates := map[string]gate{}
	for name := range fg.GetAllVersioned() {
		spec, ok := inEffect[name]
		if !ok {
			gates[string(name)] = gate{Default: false, PreRelease: "pre-alpha"}
			continue
		}
		gates[string(name)] = gate{Default: spec.Default, PreRelease: stage(fmt.Sprint(spec.PreRelease)),
			LockToDefault: spec.LockToDefault}
	}
	if d, ok := interface{}(fg).(interface {
		Dependencies() map[featuregate.Feature][]featuregate.Feature
	}); ok {
		for name, deps := range d.Dependencies() {
			g := gates[string(name)]
			for _, dep := range deps {
				g.Dependencies = append(g.Dependencies, string(dep))
			}
			gates[string(name)] = g
		}
	}
	r := report{Gates: gates, EmulationVersion: fg.EmulationVersion().String(), Method: "GetAll"}
	if m, ok := interface{}(fg).(interface{ MinCompatibilityVersion() *version.Version }); ok {
		r.MinCompatibilityVersion = m.MinCompatibilityVersion().String()
	}
	return r
}
