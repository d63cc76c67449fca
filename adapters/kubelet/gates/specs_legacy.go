//go:build !versioned

package main

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"unsafe"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// collect reads the gate before versioned specs (up to 1.30): GetAll where the release has it,
// else (1.18-1.21, which lack GetAll) the gate's own map of known features.
func collect() report {
	fg := utilfeature.DefaultMutableFeatureGate
	var known map[featuregate.Feature]featuregate.FeatureSpec
	method := "GetAll"
	if all, ok := interface{}(fg).(interface {
		GetAll() map[featuregate.Feature]featuregate.FeatureSpec
	}); ok {
		known = all.GetAll()
	} else {
		method = "known"
		// The field is a pointer to an atomic.Value in 1.18-1.21 (an atomic.Value later).
		field := reflect.ValueOf(fg).Elem().FieldByName("known")
		value := (*atomic.Value)(unsafe.Pointer(field.UnsafeAddr()))
		if field.Kind() == reflect.Ptr {
			value = *(**atomic.Value)(unsafe.Pointer(field.UnsafeAddr()))
		}
		known = value.Load().(map[featuregate.Feature]featuregate.FeatureSpec)
	}
	gates := map[string]gate{}
	for name, spec := range known {
		gates[string(name)] = gate{Default: spec.Default, PreRelease: stage(fmt.Sprint(spec.PreRelease)),
			LockToDefault: spec.LockToDefault}
	}
	return report{Gates: gates, Method: method}
}
