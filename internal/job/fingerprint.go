package job

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// The job's share of the resume fingerprint, default-deny: every field of Config is in it,
// by its TOML key, unless the field is tagged `fingerprint:"operational"`. A hand-kept list of
// what matters had missed every key added after it; here a key added later is in the
// fingerprint until someone decides, on the field itself, that it cannot change a pixel.
//
// Operational means: how the job runs, not what it outputs (job_dir, fresh, threads, batch
// size, device ids), or a name whose target the driver fingerprints by content instead (the
// paths of the target, sources, models and runtime), or a check of its own (model_sha256).

// fingerprintTag is the struct tag that marks a field; operational is its one value.
const (
	fingerprintTag = "fingerprint"
	operational    = "operational"
)

// Settings is every fingerprinted setting of c by its TOML key (face_selector_order), each
// with a canonical string of its value. The driver fills resolved values into a copy of c
// before calling it (the real frame range, the providers in use), so they are compared as the
// job ran them.
func (c *Config) Settings() map[string]string {
	fp := map[string]string{}
	eachSetting(reflect.ValueOf(c).Elem(), "", false, func(key string, v reflect.Value, op bool) {
		if !op {
			fp[key] = canonical(v)
		}
	})
	return fp
}

// eachSetting calls fn with every exported field of the struct v, embedded and nested structs
// walked into (an embedded struct's keys sit at its parent's level, as TOML decodes them). A
// field without a TOML name (none, or "-") is named by its Go name: it is still in the
// fingerprint unless tagged. A tag that is not operational is a typo, and a typo must not
// leave a setting out silently: it panics, and the package's tests call every field.
func eachSetting(v reflect.Value, prefix string, op bool, fn func(key string, v reflect.Value, op bool)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fop := op // a tagged struct's fields are all operational
		switch tag, ok := f.Tag.Lookup(fingerprintTag); {
		case ok && tag == operational:
			fop = true
		case ok:
			panic(fmt.Sprintf("job: field %s has fingerprint tag %q; the only value is %q", f.Name, tag, operational))
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" {
			name = f.Name
		}
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			eachSetting(v.Field(i), prefix, fop, fn)
		case f.Type.Kind() == reflect.Struct && hasExported(f.Type):
			eachSetting(v.Field(i), prefix+name+".", fop, fn)
		default:
			fn(prefix+name, v.Field(i), fop)
		}
	}
}

// hasExported reports whether a struct is a table of keys rather than one value (time.Time).
func hasExported(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).IsExported() {
			return true
		}
	}
	return false
}

// canonical is the fingerprint's string of a setting's value: scalars as Go writes them
// (floats in their shortest exact form), lists space-separated (elements quoted only when a
// space or quote would make them ambiguous), maps as sorted key=value pairs. Equal values
// give equal strings, and the strings read well in a refusal.
func canonical(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Invalid:
		return ""
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32:
		return strconv.FormatFloat(v.Float()+0, 'g', -1, 32) // +0: -0 is 0's setting
	case reflect.Float64:
		return strconv.FormatFloat(v.Float()+0, 'g', -1, 64)
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = element(canonical(v.Index(i)))
		}
		return strings.Join(parts, " ")
	case reflect.Map:
		parts := make([]string, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			parts = append(parts, element(canonical(it.Key()))+"="+element(canonical(it.Value())))
		}
		sort.Strings(parts)
		return strings.Join(parts, " ")
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return canonical(v.Elem())
	}
	return fmt.Sprintf("%+v", v.Interface())
}

// element quotes a list element that would otherwise read as two, or as none.
func element(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"=") {
		return strconv.Quote(s)
	}
	return s
}
