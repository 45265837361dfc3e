package infer

import "sync"

// ResetPinNote lets the external tests see the once-per-process "buffers not pinned" line again.
func ResetPinNote() { pinNote = sync.Once{} }

// SpendPinNote keeps the pinning line out of a test's log.
func SpendPinNote() { pinNote.Do(func() {}) }

// LeaseParts are the sizes of a lease's runs of items in consecutive batches.
func LeaseParts(l *Lease) []int {
	out := make([]int, l.c.nparts)
	for i, p := range l.c.parts[:l.c.nparts] {
		out[i] = p.n
	}
	return out
}

// SetRunHook sets the function every run calls as it enters ONNX Runtime (nil: none).
func SetRunHook(f func(*Session)) { testHookRun = f }

// InFlight is the number of runs inside ONNX Runtime on s now.
func InFlight(s *Session) int32 { return s.inFlight.Load() }

// FreeBatches is the number of e's batch buffers free now.
func FreeBatches(e *Engine) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.free)
}

// SetMappedHook sets the function called once a model file is mapped, before it is read.
func SetMappedHook(f func(path string)) { testHookMapped = f }

// ParseValueInfo decodes one ValueInfoProto.
var ParseValueInfo = parseValueInfo
