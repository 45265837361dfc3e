package slurm

import (
	"testing"
	"time"
)

// Strings as squeue -o %L prints them (Slurm's secs2time_str: leading zero fields left out,
// minutes and seconds always two digits after the first field).
func TestParseTimeLeft(t *testing.T) {
	for _, c := range []struct {
		in      string
		left    time.Duration
		limited bool
	}{
		{"0:58\n", 58 * time.Second, true},
		{"59:59", 59*time.Minute + 59*time.Second, true},
		{"1:00:00", time.Hour, true},
		{"1:59:02", time.Hour + 59*time.Minute + 2*time.Second, true},
		{"23:00:01", 23*time.Hour + time.Second, true},
		{"1-00:00:00", 24 * time.Hour, true},
		{"12-03:04:05", 12*24*time.Hour + 3*time.Hour + 4*time.Minute + 5*time.Second, true},
		{"UNLIMITED\n", 0, false},
		{"NOT_SET", 0, false},
	} {
		left, limited, err := ParseTimeLeft(c.in)
		if err != nil || left != c.left || limited != c.limited {
			t.Errorf("ParseTimeLeft(%q) = %v, %v, %v; want %v, %v", c.in, left, limited, err, c.left, c.limited)
		}
	}
}

func TestParseTimeLeftRefusesOtherText(t *testing.T) {
	for _, in := range []string{"", "INVALID", "58", "1-00:00", "1-2", "0:5", "1:60", "1:2:3", "-1:00", "a:00", "1:00:00:00", "slurm_load_jobs error: Invalid job id specified"} {
		if left, limited, err := ParseTimeLeft(in); err == nil {
			t.Errorf("ParseTimeLeft(%q) = %v, %v; want an error", in, left, limited)
		}
	}
}
