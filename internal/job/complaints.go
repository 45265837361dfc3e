package job

import (
	"errors"
	"fmt"
	"strings"
)

// complaints collects what is wrong with a job for one error line: at most max of them (a
// default of 5), so that a file of a hundred thousand bad lines, or a list of as many bad
// values, gets one line that says how many more there are, not a line of megabytes.
type complaints struct {
	max  int
	msgs []string
	more int
}

func (c *complaints) add(msg string) {
	if max := c.max; len(c.msgs) < max || max == 0 && len(c.msgs) < 5 {
		c.msgs = append(c.msgs, msg)
		return
	}
	c.more++
}

// err is the complaints joined, nil when there is none.
func (c *complaints) err() error {
	if len(c.msgs) == 0 {
		return nil
	}
	s := strings.Join(c.msgs, "; ")
	if c.more > 0 {
		s += fmt.Sprintf("; and %d more", c.more)
	}
	return errors.New(s)
}
