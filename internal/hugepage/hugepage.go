// Package hugepage asks the kernel to back a large buffer with 2 MiB pages while it is in use.
//
// A fresh buffer costs a page fault for every 4 KiB page its first write touches: about 15 µs a
// fault on this project's VMs, so 0.25 s for the landmark model's 65 MB of leaves and most of
// the model broadcast's first touch of its 105 MB. Where transparent huge pages are given on
// request only (/sys/kernel/mm/transparent_hugepage/enabled "madvise": this machine's, and
// Ubuntu's default), MADV_HUGEPAGE on the buffer before its first write makes that one fault a
// 2 MiB page. Where they are "always" the kernel gives them without asking, and where "never"
// not at all: Advise then does nothing.
//
// The memory stays the Go heap's, and the heap reuses it for other objects once the buffer is
// garbage. Advised memory reused sparsely would be collapsed into huge pages by khugepaged (a
// few live bytes holding 2 MiB each), and its faults may stall in compaction: so a buffer that
// does not live as long as the process gives the advice back (the returned Release) when its
// owner is done with it. FACEFUSION_HUGE_PAGES=off turns the advice off.
package hugepage

import (
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Size is a huge page: the advice covers the whole 2 MiB pages inside a buffer.
const Size = 2 << 20

// Env turns the advice off when it is "off" (a site whose kernel or memory policy prefers
// small pages).
const Env = "FACEFUSION_HUGE_PAGES"

// modeFile is where the kernel says when it gives transparent huge pages.
const modeFile = "/sys/kernel/mm/transparent_hugepage/enabled"

// onRequest reports whether huge pages come only where asked for (the kernel's "madvise" mode)
// and the advice is not turned off: the only case where asking changes anything. (Read at each
// call: a buffer a stream or a load is one small read.)
func onRequest() bool {
	if os.Getenv(Env) == "off" {
		return false
	}
	b, err := os.ReadFile(modeFile)
	return err == nil && strings.Contains(string(b), "[madvise]")
}

// Release gives a buffer's advice back: its pages are the kernel's default size again (in the
// "madvise" mode, small), for whatever the heap puts there next. Calling it twice is harmless.
type Release func()

// Advise asks for huge pages under s's backing array (to its capacity), before it is first
// written, and returns what gives the advice back. A buffer smaller than a huge page, or a
// kernel that does not give them on request, is left as it is; the advice is only advice, so
// its error is ignored.
func Advise[T any](s []T) Release {
	if !onRequest() {
		return func() {}
	}
	return advise(s)
}

// advise is Advise whatever the kernel's mode.
func advise[T any](s []T) Release {
	span := whole(s)
	if span == nil {
		return func() {}
	}
	unix.Madvise(span, unix.MADV_HUGEPAGE)
	// In the "madvise" mode no advice and MADV_NOHUGEPAGE mean the same: small pages.
	return func() { unix.Madvise(span, unix.MADV_NOHUGEPAGE) }
}

// whole is the whole huge pages inside s's backing array, nil when there are none.
func whole[T any](s []T) []byte {
	n := uintptr(cap(s)) * unsafe.Sizeof(*new(T))
	if n < Size {
		return nil
	}
	at := unsafe.Pointer(unsafe.SliceData(s[:cap(s)]))
	skip := -uintptr(at) & (Size - 1) // to the first whole huge page
	if n < skip || (n-skip)&^(Size-1) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(at, skip)), (n-skip)&^(Size-1))
}
