package hugepage

import (
	"bufio"
	"fmt"
	"os"
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
// (MADV_HUGEPAGE) on the mapping that holds the buffer's first whole huge page, and a small
// buffer is not advised at all.
func TestAdviseMarksTheWholeHugePages(t *testing.T) {
	buf := make([]float32, 0, 5*Size/4) // 5 MiB: two whole huge pages at least
	Advise(buf)
	at := uintptr(unsafe.Pointer(unsafe.SliceData(buf[:1])))
	first := (at + Size - 1) &^ (Size - 1)
	if !contains(vmFlags(t, first), "hg") {
		t.Fatalf("the buffer's first whole huge page (%#x) is not advised: VmFlags %v", first, vmFlags(t, first))
	}
	if first != at && contains(vmFlags(t, at), "hg") {
		t.Errorf("the partial page before the first whole huge page (%#x) was advised too", at)
	}
	small := make([]byte, Size/2)
	Advise(small)
	if a := uintptr(unsafe.Pointer(&small[0])); contains(vmFlags(t, a), "hg") {
		t.Errorf("a buffer smaller than a huge page was advised")
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
