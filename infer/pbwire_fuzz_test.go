package infer

import (
	"bytes"
	"os"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// FuzzPBWire holds the ONNX reader's hand-written protobuf wire decoder (pbEach) to protowire,
// the protobuf module's own: over any bytes they see the same fields, with the same values, and
// fail at the same field. Where protowire stops first for a reason the reader need not share (a
// field number of 0 or past 2^31, a group, which ONNX never writes), only the fields before it
// are compared. The seeds are the first kilobytes of FaceFusion's scrfd_2.5g and its graph.
func FuzzPBWire(f *testing.F) {
	b, err := os.ReadFile(testenv.SharedModel(f, "scrfd_2.5g.onnx"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[:4096])
	if err := pbEach(b, func(x pbField) error {
		if x.num == 7 && x.wire == 2 {
			f.Add(x.b[:min(len(x.b), 4096)])
		}
		return nil
	}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var ours []pbField
		ourErr := pbEach(b, func(x pbField) error { ours = append(ours, x); return nil })
		theirs, stop, why := wireFields(b)
		for i := 0; i < len(theirs) && i < len(ours); i++ {
			o, p := ours[i], theirs[i]
			if o.num != p.num || o.wire != p.wire || o.v != p.v || !bytes.Equal(o.b, p.b) {
				t.Fatalf("field %d: ours %d/%d %d %q, protowire's %d/%d %d %q", i, o.num, o.wire, o.v, o.b, p.num, p.wire, p.v, p.b)
			}
		}
		switch {
		case stop && len(ours) < len(theirs):
			t.Fatalf("ours stopped at field %d (%v), protowire read %d", len(ours), ourErr, len(theirs))
		case !stop && (ourErr == nil) != (why == nil):
			t.Fatalf("ours: %d fields, %v; protowire: %d fields, %v", len(ours), ourErr, len(theirs), why)
		case !stop && len(ours) != len(theirs):
			t.Fatalf("ours read %d fields, protowire %d", len(ours), len(theirs))
		}
	})
}

// wireFields is msg's fields as protowire reads them, up to its first error (why); stop is true
// where that error is one the ONNX reader need not share.
func wireFields(msg []byte) (fields []pbField, stop bool, why error) {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			_, m := protowire.ConsumeVarint(msg)
			return fields, m > 0, protowire.ParseError(n) // a whole varint: the field number is out of range
		}
		x := pbField{num: int(num), wire: int(typ)}
		var m int
		switch typ {
		case protowire.VarintType:
			x.v, m = protowire.ConsumeVarint(msg[n:])
		case protowire.Fixed64Type:
			x.v, m = protowire.ConsumeFixed64(msg[n:])
		case protowire.Fixed32Type:
			var v uint32
			v, m = protowire.ConsumeFixed32(msg[n:])
			x.v = uint64(v)
		case protowire.BytesType:
			x.b, m = protowire.ConsumeBytes(msg[n:])
		default:
			return fields, true, nil // a group, or no wire type protobuf has
		}
		if m < 0 {
			return fields, false, protowire.ParseError(m)
		}
		fields = append(fields, x)
		msg = msg[n+m:]
	}
	return fields, false, nil
}
