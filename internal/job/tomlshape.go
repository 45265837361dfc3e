package job

import "fmt"

// The longest key path a job file may hold: a table header's parts, the dotted parts of each key
// on the way, and every inline table and list level, added up. The TOML decoder's time and memory
// grow with the square of a path's length (every key's whole path is kept), so a file within the
// size limit could still take minutes and gigabytes; a job file needs a few levels.
const maxTOMLDepth = 16

// checkShape refuses TOML with a key path longer than maxTOMLDepth, before the decoder sees it:
// one pass over the bytes, minding strings and comments. line is where it stopped, for the error.
func checkShape(data []byte) (line int, err error) {
	type level struct {
		kind  byte // '{' an inline table, '[' a list
		depth int  // the path's length at which the level's keys or values start
	}
	var stack []level
	base := 0     // the path's length at which top-level keys start: the last header's parts
	valDepth := 0 // the path's length of the value being read: its key's
	keyCtx, header := true, false
	parts := 1
	line = 1
	at := func() int { // the path's length at which keys start here
		if len(stack) == 0 {
			return base
		}
		return stack[len(stack)-1].depth
	}
	tooLong := func() error {
		return fmt.Errorf("a key path (tables, lists and dotted keys) more than %d deep", maxTOMLDepth)
	}
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
			if keyCtx {
				if valDepth = at() + parts; valDepth > maxTOMLDepth {
					return line, tooLong()
				}
			}
			keyCtx = false
		case '.':
			if keyCtx || header {
				if parts++; at()+parts > maxTOMLDepth {
					return line, tooLong()
				}
			}
		case ',':
			if len(stack) > 0 && stack[len(stack)-1].kind == '{' {
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
			d := valDepth // a value's level: as deep as its key
			if len(stack) > 0 && stack[len(stack)-1].kind == '[' {
				d = stack[len(stack)-1].depth + 1 // an element of a list: a level more
			}
			if d > maxTOMLDepth {
				return line, tooLong()
			}
			stack = append(stack, level{c, d})
			keyCtx, parts = c == '{', 1
		case '}', ']':
			if header && len(stack) == 0 {
				header, keyCtx, base = false, false, parts
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
