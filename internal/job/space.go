package job

import "strings"

// FaceFusion's face_detector_margin and face_mask_padding are both read by its
// normalize_space, with the same range (choices.py: create_int_range(0, 100, 1)).
const maxSpace = 100

// spaceSides names each value of a list of n (1 to 4), as normalize_space spreads it.
var spaceSides = [][]string{{"all sides"}, {"top and bottom", "right and left"}, {"top", "right and left", "bottom"}, {"top", "right", "bottom", "left"}}

// spread4 is FaceFusion's normalize_space: 1 to 4 values as CSS writes a padding (one for all
// sides; top/bottom and right/left; top, right/left, bottom; top, right, bottom, left), as top,
// right, bottom, left. Another count gives zeros; checkSpace refuses it.
func spread4(v []int) [4]int {
	switch len(v) {
	case 1:
		return [4]int{v[0], v[0], v[0], v[0]}
	case 2:
		return [4]int{v[0], v[1], v[0], v[1]}
	case 3:
		return [4]int{v[0], v[1], v[2], v[1]}
	case 4:
		return [4]int{v[0], v[1], v[2], v[3]}
	}
	return [4]int{}
}

// checkSpace adds the complaint about a key normalize_space reads: 1 to 4 percentages (its
// flag is nargs='+'; normalize_space gives None for more, on which FaceFusion fails), each
// 0..100 (FaceFusion's sanitize_int_range turns a value outside into 0 without a word; here
// it is refused).
func checkSpace(bad func(string, ...any), key string, v []int) {
	flag := strings.ReplaceAll(key, "_", "-")
	n := len(v)
	if n < 1 || n > 4 {
		bad("%s (--%s): give 1 to 4 percentages (all; top/bottom right/left; top right/left bottom; top right bottom left, as CSS), got %d", key, flag, n)
		return
	}
	for i, p := range v {
		if p < 0 || p > maxSpace {
			bad("%s (--%s): value %d (%s) is %d, outside 0..%d percent", key, flag, i+1, spaceSides[n-1][i], p, maxSpace)
			return
		}
	}
}
