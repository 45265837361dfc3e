package processors

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// fake is a processor that notes what was done to it.
type fake struct {
	changes bool
	log     *[]string
	name    string
}

func (f *fake) ChangesFaces() bool { return f.changes }
func (f *fake) Close() error       { *f.log = append(*f.log, "close "+f.name); return nil }

type faceFake struct{ *fake }

func (f faceFake) ProcessFaces(*Batch) error { *f.log = append(*f.log, "faces "+f.name); return nil }

type frameFake struct{ *fake }

func (f frameFake) ProcessFrames(*Batch) error { *f.log = append(*f.log, "frames "+f.name); return nil }

var testLog []string

func init() {
	open := func(name string, changes, frames bool) Opener {
		return func(*Context) (Processor, error) {
			testLog = append(testLog, "open "+name)
			f := &fake{changes: changes, log: &testLog, name: name}
			if frames {
				return frameFake{f}, nil
			}
			return faceFake{f}, nil
		}
	}
	Register("test_swapper", open("test_swapper", true, false))
	Register("test_debugger", open("test_debugger", false, false))
	Register("test_frames", open("test_frames", true, true))
	Register("test_broken", func(*Context) (Processor, error) { return nil, errors.New("broken") })
}

func TestChain(t *testing.T) {
	testLog = nil
	ch, err := Open(&Context{}, []string{"test_swapper", "none", "test_frames", "test_debugger", "test_swapper"})
	if err != nil {
		t.Fatal(err)
	}
	steps := ch.Steps()
	if len(steps) != 5 || steps[1] != nil || steps[0] != steps[4] {
		t.Fatalf("steps %v: want one per name, none nil, a name twice the same processor", steps)
	}
	if got := ch.Measured(); got != 5 {
		t.Errorf("Measured %d, want 5: after the last step that changes faces", got)
	}
	for _, p := range steps {
		if err := Run(p, &Batch{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"open test_swapper", "open test_frames", "open test_debugger",
		"faces test_swapper", "frames test_frames", "faces test_debugger", "faces test_swapper",
		"close test_swapper", "close test_frames", "close test_debugger"}
	if !slices.Equal(testLog, want) {
		t.Errorf("log\n%q\nwant\n%q", testLog, want)
	}
}

func TestChainMeasuredBeforeTheDebugger(t *testing.T) {
	testLog = nil
	ch, err := Open(&Context{}, []string{"test_swapper", "test_debugger"})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if got := ch.Measured(); got != 1 {
		t.Errorf("Measured %d, want 1", got)
	}
	ch2, err := Open(&Context{}, []string{"test_debugger"})
	if err != nil {
		t.Fatal(err)
	}
	defer ch2.Close()
	if got := ch2.Measured(); got != 0 {
		t.Errorf("Measured %d with no processor that changes faces, want 0", got)
	}
}

func TestChainClosesWhatItOpenedOnAnError(t *testing.T) {
	testLog = nil
	if _, err := Open(&Context{}, []string{"test_swapper", "test_broken", "test_debugger"}); err == nil {
		t.Fatal("no error from a processor that fails to open")
	}
	want := []string{"open test_swapper", "close test_swapper"}
	if !slices.Equal(testLog, want) {
		t.Errorf("log %q, want %q", testLog, want)
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a second Register of one name did not panic")
		}
	}()
	Register("test_swapper", nil)
}

// A name no processor registered is refused, naming it and the names there are, and the
// processors opened before it are closed; none is a step that does nothing, never refused.
func TestChainRefusesUnknownNames(t *testing.T) {
	testLog = nil
	_, err := Open(&Context{}, []string{"test_swapper", "none", "face_swaper"})
	if err == nil {
		t.Fatal("an unknown processor name opened")
	}
	for _, want := range []string{`"face_swaper"`, "test_swapper", "test_debugger", "none"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if want := []string{"open test_swapper", "close test_swapper"}; !slices.Equal(testLog, want) {
		t.Errorf("log %q, want %q", testLog, want)
	}
	ch, err := Open(&Context{}, []string{"none"})
	if err != nil {
		t.Fatal(err)
	}
	if steps := ch.Steps(); len(steps) != 1 || steps[0] != nil || ch.Measured() != 0 {
		t.Errorf("none: steps %v, measured %d: want one step that does nothing", steps, ch.Measured())
	}
}

// Measured follows the last processor that changes faces, wherever the others stand: a frame
// processor that changes them counts, a debugger after it does not.
func TestChainMeasuredAfterTheLastChange(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  int
	}{
		{[]string{"test_debugger", "test_swapper"}, 2},
		{[]string{"test_swapper", "test_debugger", "none"}, 1},
		{[]string{"test_debugger", "test_frames", "test_debugger"}, 2},
		{[]string{"none", "test_swapper", "test_swapper", "test_debugger"}, 3},
	} {
		ch, err := Open(&Context{}, tc.names)
		if err != nil {
			t.Fatal(err)
		}
		if got := ch.Measured(); got != tc.want {
			t.Errorf("%v: Measured %d, want %d", tc.names, got, tc.want)
		}
		ch.Close()
	}
}
