package common

import (
	"fmt"
	"reflect"
	"sort"
)

// The case's "features" are the names of structured.Features' bool fields,
// which differ between releases; these helpers reach them by reflection so
// that the same code serves every release.

// FeatureNames lists, sorted, the bool fields of the struct features (a
// structured.Features value).
func FeatureNames(features any) []string {
	t := reflect.TypeOf(features)
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && f.Type.Kind() == reflect.Bool {
			names = append(names, f.Name)
		}
	}
	sort.Strings(names)
	return names
}

// SetFeatures sets to true, in the struct *ptr (a *structured.Features), the
// bool field of each name. A name that is no such field is returned as the
// error (nothing is guaranteed about *ptr then).
func SetFeatures(ptr any, names []string) error {
	v := reflect.ValueOf(ptr).Elem()
	for _, n := range names {
		f := v.FieldByName(n)
		sf, ok := v.Type().FieldByName(n)
		if !ok || !sf.IsExported() || f.Kind() != reflect.Bool {
			return fmt.Errorf("%q", n)
		}
		f.SetBool(true)
	}
	return nil
}

// EnabledFeatures lists, sorted, the names of the bool fields set in
// features (a structured.Features value).
func EnabledFeatures(features any) []string {
	v := reflect.ValueOf(features)
	var on []string
	for _, n := range FeatureNames(features) {
		if v.FieldByName(n).Bool() {
			on = append(on, n)
		}
	}
	return on
}

// CopyEnableFlags sets each bool field EnableX of the struct *dst (a
// *cel.Features) to the bool field X of src (a structured.Features), as the
// scheduler does when it builds its CEL cache (EnableConsumableCapacity from
// ConsumableCapacity, EnableListTypeAttributes from ListTypeAttributes). A
// field with no counterpart stays false.
func CopyEnableFlags(dst any, src any) {
	d := reflect.ValueOf(dst).Elem()
	s := reflect.ValueOf(src)
	for i := 0; i < d.NumField(); i++ {
		f := d.Type().Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.Bool || len(f.Name) <= len("Enable") || f.Name[:6] != "Enable" {
			continue
		}
		if sf := s.FieldByName(f.Name[6:]); sf.IsValid() && sf.Kind() == reflect.Bool {
			d.Field(i).SetBool(sf.Bool())
		}
	}
}
