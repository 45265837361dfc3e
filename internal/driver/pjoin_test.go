package driver

import (
	"slices"
	"testing"
)

// The segments are split into contiguous runs balanced by bytes, rank 0 with at least one.
func TestSplitBytes(t *testing.T) {
	for _, c := range []struct {
		sizes []int64
		ranks int
		want  []int
	}{
		{[]int64{10, 10, 10, 10}, 2, []int{0, 2, 4}},
		{[]int64{10, 10, 10, 10}, 1, []int{0, 4}},
		{[]int64{30, 10, 10, 10}, 2, []int{0, 1, 4}},
		{[]int64{1, 1, 1, 100}, 2, []int{0, 3, 4}},
		{[]int64{5}, 3, []int{0, 1, 1, 1}}, // more ranks than segments: the others idle
		{[]int64{0, 0}, 2, []int{0, 1, 2}}, // empty segments still go to rank 0 first
		{[]int64{10, 10, 10}, 3, []int{0, 1, 2, 3}},
	} {
		if got := splitBytes(c.sizes, c.ranks); !slices.Equal(got, c.want) {
			t.Errorf("splitBytes(%v, %d) = %v, want %v", c.sizes, c.ranks, got, c.want)
		}
	}
}
