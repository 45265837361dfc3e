package slurm

import "testing"

// A task's position in its array is 0..count-1 whatever the array's first id and step; outside
// an array, or with a variable missing, there is none.
func TestArrayPosition(t *testing.T) {
	for _, c := range []struct {
		id, min, step, count string
		pos, n               int
		ok                   bool
	}{
		{"0", "0", "1", "3", 0, 3, true},    // --array=0-2
		{"2", "0", "1", "3", 2, 3, true},    //
		{"7", "1", "2", "10", 3, 10, true},  // --array=1-19:2: ids 1, 3, ..., 19
		{"19", "1", "2", "10", 9, 10, true}, //
		{"12", "10", "", "4", 2, 4, true},   // no step variable: 1
		{"", "0", "1", "3", 0, 0, false},    // not an array task
		{"1", "", "1", "3", 0, 0, false},    // a variable missing
		{"1", "0", "1", "", 0, 0, false},    //
		{"1", "0", "1", "0", 0, 0, false},   // a count of 0
		{"x", "0", "1", "3", 0, 0, false},   // not a number
	} {
		t.Setenv("SLURM_ARRAY_TASK_ID", c.id)
		t.Setenv("SLURM_ARRAY_TASK_MIN", c.min)
		t.Setenv("SLURM_ARRAY_TASK_STEP", c.step)
		t.Setenv("SLURM_ARRAY_TASK_COUNT", c.count)
		pos, n, ok := ArrayPosition()
		if pos != c.pos || n != c.n || ok != c.ok {
			t.Errorf("id %q min %q step %q count %q: %d of %d (%v), want %d of %d (%v)", c.id, c.min, c.step, c.count, pos, n, ok, c.pos, c.n, c.ok)
		}
	}
}

// FromEnv reads the job's ids as Slurm sets them.
func TestFromEnv(t *testing.T) {
	t.Setenv("SLURM_JOB_ID", "41")
	t.Setenv("SLURM_ARRAY_JOB_ID", "40")
	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	t.Setenv("SLURM_RESTART_COUNT", "2")
	if got, want := FromEnv(), (Env{JobID: "41", ArrayJobID: "40", ArrayTaskID: "1", RestartCount: "2"}); got != want {
		t.Errorf("FromEnv: %+v, want %+v", got, want)
	}
}
