package job

import (
	"maps"
	"math"
	"reflect"
	"strings"
	"testing"
)

// field finds the field of c named key the way Settings names it.
func field(t *testing.T, c *Config, key string) (v reflect.Value, op bool) {
	t.Helper()
	found := false
	eachSetting(reflect.ValueOf(c).Elem(), "", false, func(k string, fv reflect.Value, o bool) {
		if k == key {
			v, op, found = fv, o, true
		}
	})
	if !found {
		t.Fatalf("no field %s", key)
	}
	return v, op
}

// change sets v to another value of its type; a kind it does not know fails the test, so a
// field of a new kind gets a case here rather than going untested.
func change(t *testing.T, key string, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "-changed")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 0.25)
	case reflect.Slice:
		e := reflect.New(v.Type().Elem()).Elem()
		change(t, key, e)
		v.Set(reflect.Append(v, e))
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		change(t, key, k)
		change(t, key, e)
		v.SetMapIndex(k, e)
	default:
		t.Fatalf("%s: no way to change a %s: add one to change", key, v.Kind())
	}
}

// Every fingerprinted field, found by reflection, changes the fingerprint under its own key
// and no other; every operational field leaves it as it was.
func TestSettingsFollowEveryField(t *testing.T) {
	base := Default()
	before := base.Settings()
	var keys []string
	ops := 0
	eachSetting(reflect.ValueOf(&base).Elem(), "", false, func(k string, _ reflect.Value, op bool) {
		keys = append(keys, k)
		if op {
			ops++
		}
	})
	if len(keys) < 30 || ops == 0 || len(before) != len(keys)-ops {
		t.Fatalf("%d keys, %d operational, %d fingerprinted: the walk missed fields", len(keys), ops, len(before))
	}
	for _, key := range keys {
		c := Default()
		v, op := field(t, &c, key)
		change(t, key, v)
		after := c.Settings()
		if op {
			if !maps.Equal(before, after) {
				t.Errorf("%s is operational but changed the fingerprint", key)
			}
			continue
		}
		if after[key] == before[key] {
			t.Errorf("%s: changed, but its fingerprint entry stayed %q", key, before[key])
		}
		for k := range before {
			if k != key && after[k] != before[k] {
				t.Errorf("changing %s changed %s's entry too", key, k)
			}
		}
	}
	for _, want := range []string{"face_selector_order", "face_mask_types", "face_mask_blur", "face_mask_padding",
		"face_swapper_model", "face_swapper_pixel_boost", "face_enhancer_model", "face_enhancer_blend",
		"reference_face_distance", "execution_providers", "tensorrt_fp16", "trim_frame_end"} {
		if _, ok := before[want]; !ok {
			t.Errorf("%s is not in the fingerprint", want)
		}
	}
}

// leaves counts a struct type's settings (embedded structs walked into) and the operational
// ones, from the tags alone: an independent count to hold the walk to.
func leaves(t reflect.Type, op bool) (all, operational int) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		o := op || f.Tag.Get("fingerprint") == "operational"
		if f.Type.Kind() == reflect.Struct {
			a, b := leaves(f.Type, o)
			all, operational = all+a, operational+b
			continue
		}
		all++
		if o {
			operational++
		}
	}
	return all, operational
}

// Default-deny: the fingerprinted and the operational fields are all the fields, so a field
// added without the tag is fingerprinted.
func TestSettingsAreEveryFieldButTheOperational(t *testing.T) {
	c := Default()
	all, op := leaves(reflect.TypeOf(c), false)
	if n := len(c.Settings()); n+op != all {
		t.Fatalf("%d fingerprinted + %d operational fields, Config has %d", n, op, all)
	}
}

// A struct with fields this package has not seen yet: untagged ones, nested tables included,
// are in the fingerprint; tagged ones are not.
func TestNewFieldsAreFingerprintedUnlessTagged(t *testing.T) {
	type later struct {
		Config
		MaxFaces   int `toml:"max_faces"`
		StopMargin int `toml:"stop_margin" fingerprint:"operational"`
		Tuning     struct {
			Gamma float64 `toml:"gamma"`
		} `toml:"tuning"`
		Untagged bool
	}
	in := map[string]bool{}
	eachSetting(reflect.ValueOf(&later{}).Elem(), "", false, func(k string, _ reflect.Value, op bool) { in[k] = !op })
	for k, want := range map[string]bool{"max_faces": true, "tuning.gamma": true, "Untagged": true,
		"face_selector_order": true, "stop_margin": false, "job_dir": false, "Device": false} {
		if got, ok := in[k]; !ok || got != want {
			t.Errorf("%s: fingerprinted %v (seen %v), want %v", k, got, ok, want)
		}
	}
}

// A misspelt tag must not leave a setting out silently.
func TestMisspeltTagPanics(t *testing.T) {
	type typo struct {
		X int `toml:"x" fingerprint:"operatonal"`
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "operatonal") {
			t.Errorf("recovered %v, want a panic naming the tag", r)
		}
	}()
	eachSetting(reflect.ValueOf(&typo{}).Elem(), "", false, func(string, reflect.Value, bool) {})
}

// Different values give different strings, equal values equal ones.
func TestCanonical(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{"large-small", "large-small"},
		{0.1, "0.1"},
		{float32(0.3), "0.3"},
		{math.Copysign(0, -1), "0"}, // --face-editor-head-roll -0 is the default's job
		{float32(math.Copysign(0, -1)), "0"},
		{[]string{"face_swapper", "face_enhancer"}, "face_swapper face_enhancer"},
		{[]string{"a b", "c"}, `"a b" c`},
		{[]string{"a", "b c"}, `a "b c"`},
		{[]string{""}, `""`},
		{[]string(nil), ""},
		{[]int{0, 10, 0, 5}, "0 10 0 5"},
		{map[string]string{"b": "2", "a": "1"}, "a=1 b=2"},
		{true, "true"},
	}
	for _, c := range cases {
		if got := canonical(reflect.ValueOf(c.v)); got != c.want {
			t.Errorf("%#v: %q, want %q", c.v, got, c.want)
		}
	}
}

// The audio is muxed at the join with the joining attempt's settings, and image settings have
// no job folder to resume: none of them may make a resumed video job "another job".
func TestAudioAndImageSettingsAreNotTheJob(t *testing.T) {
	c := Default()
	before := c.Settings()
	c.OutputAudioEncoder, c.OutputAudioQuality, c.OutputAudioVolume = "libopus", 10, 50
	c.OutputImageQuality, c.OutputImageScale = 20, 2
	if after := c.Settings(); !reflect.DeepEqual(before, after) {
		t.Errorf("audio or image settings changed the fingerprint:\n%v\n%v", before, after)
	}
	c.OutputVideoScale = 0.5 // while the video's own settings do
	if after := c.Settings(); reflect.DeepEqual(before, after) {
		t.Error("output_video_scale did not change the fingerprint")
	}
}
