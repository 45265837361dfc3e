package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags is the VmFlags line of the mapping of /proc/self/smaps that holds addr.
func vmFlags(t *testing.T, addr uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 { // a mapping's first line
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.Fields(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	t.Fatalf("no mapping in /proc/self/smaps holds %#x", addr)
	return nil
}

// The advice marks the buffer's whole huge pages, and only them: the kernel's VmFlags show "hg"
// (MADV_HUGEPAGE) on the mapping that holds the buffer's first whole huge page, and not on the
// partial page before it; a buffer smaller than a huge page is not advised at all. Its release
// leaves them "nh" (small pages, which is what no advice means in the "madvise" mode). (advise
// is Advise whatever this machine's mode.)
func TestAdviseMarksTheWholeHugePages(t *testing.T) {
	buf := make([]float32, 0, 5*Size/4) // 5 MiB of float32s: two whole huge pages at least
	release := advise(buf)
	at := uintptr(unsafe.Pointer(unsafe.SliceData(buf[:1])))
	first := (at + Size - 1) &^ (Size - 1)
	if !slices.Contains(vmFlags(t, first), "hg") {
		t.Fatalf("the buffer's first whole huge page (%#x) is not advised: VmFlags %v", first, vmFlags(t, first))
	}
	if first != at && slices.Contains(vmFlags(t, at), "hg") {
		t.Errorf("the partial page before the first whole huge page (%#x) was advised too", at)
	}
	release()
	if fl := vmFlags(t, first); slices.Contains(fl, "hg") || !slices.Contains(fl, "nh") {
		t.Errorf("released, the buffer's first whole huge page has VmFlags %v, want nh and no hg", fl)
	}
	runtime.KeepAlive(buf) // not freed (and its memory reused) before the checks
	small := make([]byte, Size/2)
	advise(small)
	if fl := vmFlags(t, uintptr(unsafe.Pointer(&small[0]))); slices.Contains(fl, "hg") {
		t.Errorf("a buffer smaller than a huge page was advised: VmFlags %v", fl)
	}
	runtime.KeepAlive(small)
}

// FACEFUSION_HUGE_PAGES=off turns the advice off whatever the kernel's mode.
func TestAdviseOff(t *testing.T) {
	t.Setenv(Env, "off")
	buf := make([]byte, 3*Size)
	Advise(buf)
	first := (uintptr(unsafe.Pointer(&buf[0])) + Size - 1) &^ (Size - 1)
	if fl := vmFlags(t, first); slices.Contains(fl, "hg") {
		t.Errorf("%s=off: the buffer was advised (VmFlags %v)", Env, fl)
	}
	runtime.KeepAlive(buf)
}
