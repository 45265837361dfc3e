package job

import "fmt"

// The deepest nesting and the longest dotted key a job file may hold. The TOML decoder's time
// and memory grow with the square of either (every key's whole path is kept), so a file within
// the size limit could still take minutes and gigabytes; a job file needs a few levels.
const (
	maxTOMLDepth    = 16
	maxTOMLKeyParts = 16
)

// checkShape refuses TOML whose tables, arrays or dotted keys nest deeper than the limits,
// before the decoder sees it: one pass over the bytes, minding strings and comments. line is
// where it stopped, for the error.
func checkShape(data []byte) (line int, err error) {
	var stack []byte // '{' an inline table, '[' an array, innermost last
	keyCtx, header := true, false
	parts := 1
	line = 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
			if len(stack) == 0 {
				keyCtx, parts = true, 1
			}
		case '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			end, n := skipString(data, i)
			line += n
			i = end
		case '=':
			keyCtx = false
		case '.':
			if keyCtx || header {
				if parts++; parts > maxTOMLKeyParts {
					return line, fmt.Errorf("a dotted key of more than %d parts", maxTOMLKeyParts)
				}
			}
		case ',':
			if len(stack) > 0 && stack[len(stack)-1] == '{' {
				keyCtx, parts = true, 1
			}
		case '{', '[':
			if c == '[' && len(stack) == 0 && keyCtx {
				header, parts = true, 1 // [table] or [[array of tables]]
				if i+1 < len(data) && data[i+1] == '[' {
					i++
				}
				continue
			}
			if stack = append(stack, c); len(stack) > maxTOMLDepth {
				return line, fmt.Errorf("tables or lists nested more than %d deep", maxTOMLDepth)
			}
			keyCtx, parts = c == '{', 1
		case '}', ']':
			if header && len(stack) == 0 {
				header, keyCtx = false, false
				continue
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			keyCtx = false
		}
	}
	return line, nil
}

// skipString is the index of the last byte of the string starting at data[i] (basic or
// literal, one line or three quotes), and the line breaks inside it.
func skipString(data []byte, i int) (end, lines int) {
	q := data[i]
	triple := i+2 < len(data) && data[i+1] == q && data[i+2] == q
	j := i + 1
	if triple {
		j = i + 3
	}
	for ; j < len(data); j++ {
		switch {
		case data[j] == '\\' && q == '"':
			if j++; j < len(data) && data[j] == '\n' {
				lines++
			}
		case data[j] == '\n':
			lines++
			if !triple {
				return j - 1, lines - 1 // unterminated: the decoder says so
			}
		case data[j] == q && (!triple || j+2 < len(data) && data[j+1] == q && data[j+2] == q):
			if triple {
				return j + 2, lines
			}
			return j, lines
		}
	}
	return len(data) - 1, lines
}
