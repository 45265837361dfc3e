package job

import (
	"math"
	"reflect"
	"strings"
)

// finiteFloats names every float setting of v (a struct) that is NaN or ±Inf. NaN passes
// every range check, since each comparison with it is false, and no setting means anything at
// infinity. It walks the struct by reflection, embedded and nested structs included, so a
// float key added later is covered without anyone adding a line here. prefix is the TOML
// table of a nested struct ("" at the top).
func finiteFloats(v reflect.Value, prefix string, bad func(string, ...any)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f, fv := t.Field(i), v.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		key := prefix + name
		switch fv.Kind() {
		case reflect.Struct:
			if f.Anonymous { // an embedded struct's keys sit at the same level (job.Models)
				finiteFloats(fv, prefix, bad)
			} else {
				finiteFloats(fv, key+".", bad)
			}
		case reflect.Float32, reflect.Float64:
			if x := fv.Float(); !finite(x) {
				bad("%s: %g is not a finite number", keyAndFlag(key), x)
			}
		case reflect.Slice, reflect.Array:
			if k := fv.Type().Elem().Kind(); k != reflect.Float32 && k != reflect.Float64 {
				continue
			}
			for j := 0; j < fv.Len(); j++ {
				if x := fv.Index(j).Float(); !finite(x) {
					bad("%s: value %d is %g, not a finite number", keyAndFlag(key), j+1, x)
				}
			}
		}
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// keyAndFlag is "key (--key)" when the key has a flag, so the user finds it whichever way the
// value was given.
func keyAndFlag(key string) string {
	flag := "--" + strings.ReplaceAll(key, "_", "-")
	if lookup(flag) == nil {
		return key
	}
	return key + " (" + flag + ")"
}
