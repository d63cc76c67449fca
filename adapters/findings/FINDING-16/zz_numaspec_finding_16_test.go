// numaspec FINDING-16 (spec/conformance/findings.md, rules VER-2, VER-4): from 1.32 a
// KubeletConfiguration whose featureGates the release refuses crashes kubelet in defaulting.
//
// SetDefaults_KubeletConfiguration sets the configuration's featureGates on a copy of the
// process's gates and panics when SetFromMap fails ("failed to merge global and in-flight
// KubeletConfiguration while setting defaults, error: ..."). Defaulting runs while the config
// file is decoded (loadConfigFile), before kubelet's own SetFromMap and validation, which report
// the same refusal as an error. So a gate the release no longer knows (kept in a config file
// across an upgrade), or one set against its lock, turns "command failed: unrecognized feature
// gate" into a Go panic with a stack trace. Defaulting should not panic: it should default, and
// leave the gates as given for kubelet to refuse.
//
// Written by numaspec (https://github.com/numaspec/numaspec); run it with
//   go test -run '^TestNumaspecFINDING16$' ./pkg/kubelet/apis/config/v1beta1/

package v1beta1

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func TestNumaspecFINDING16(t *testing.T) {
	tests := []struct {
		name  string
		gates map[string]bool
	}{
		{
			name:  "a gate no release registers",
			gates: map[string]bool{"NumaspecNoSuchGate": true},
		},
		{
			name:  "a removed gate (TopologyManager, gone after 1.28)",
			gates: map[string]bool{"TopologyManager": true},
		},
		{
			name:  "a GA gate set against its lock (CPUManagerPolicyOptions=false)",
			gates: map[string]bool{"CPUManagerPolicyOptions": false},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			config := &v1beta1.KubeletConfiguration{FeatureGates: map[string]bool{}}
			for name, value := range tc.gates {
				config.FeatureGates[name] = value
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("SetDefaults_KubeletConfiguration panicked on featureGates %v instead of leaving them to kubelet's validation: %v", tc.gates, r)
					}
				}()
				SetDefaults_KubeletConfiguration(config)
			}()
			if diff := cmp.Diff(tc.gates, config.FeatureGates); diff != "" {
				t.Errorf("defaulting changed the configured featureGates (-given +got):\n%s", diff)
			}
			if !ptr.Deref(config.EnableServer, false) {
				t.Errorf("the configuration was not defaulted: enableServer is %v", config.EnableServer)
			}
		})
	}
}
