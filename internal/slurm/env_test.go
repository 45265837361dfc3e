package slurm

import "testing"

// A task's position in its array is 0..count-1 whatever the array's first id and step; outside
// an array, or with a variable missing, there is none; an array that is not one range with one
// step is an error (two tasks could take one share).
func TestArrayPosition(t *testing.T) {
	for _, c := range []struct {
		id, min, max, step, count string
		pos, n                    int
		ok, bad                   bool
	}{
		{"0", "0", "2", "1", "3", 0, 3, true, false},     // --array=0-2
		{"2", "0", "2", "1", "3", 2, 3, true, false},     //
		{"7", "1", "19", "2", "10", 3, 10, true, false},  // --array=1-19:2: ids 1, 3, ..., 19
		{"19", "1", "19", "2", "10", 9, 10, true, false}, //
		{"12", "10", "13", "", "4", 2, 4, true, false},   // no step variable: 1
		{"12", "10", "", "", "4", 2, 4, true, false},     // no max variable
		{"2", "0", "3", "1", "3", 0, 0, false, true},     // --array=0,2,3
		{"3", "0", "3", "1", "3", 0, 0, false, true},     //
		{"6", "0", "", "2", "3", 0, 0, false, true},      // beyond the count
		{"3", "0", "", "2", "3", 0, 0, false, true},      // off the step
		{"", "0", "2", "1", "3", 0, 0, false, false},     // not an array task
		{"1", "", "2", "1", "3", 0, 0, false, false},     // a variable missing
		{"1", "0", "2", "1", "", 0, 0, false, false},     //
		{"1", "0", "2", "1", "0", 0, 0, false, false},    // a count of 0
		{"x", "0", "2", "1", "3", 0, 0, false, false},    // not a number
	} {
		t.Setenv("SLURM_ARRAY_TASK_ID", c.id)
		t.Setenv("SLURM_ARRAY_TASK_MIN", c.min)
		t.Setenv("SLURM_ARRAY_TASK_MAX", c.max)
		t.Setenv("SLURM_ARRAY_TASK_STEP", c.step)
		t.Setenv("SLURM_ARRAY_TASK_COUNT", c.count)
		pos, n, ok, err := ArrayPosition()
		if pos != c.pos || n != c.n || ok != c.ok || (err != nil) != c.bad {
			t.Errorf("id %q min %q max %q step %q count %q: %d of %d (%v, %v), want %d of %d (%v, error %v)", c.id, c.min, c.max, c.step, c.count, pos, n, ok, err, c.pos, c.n, c.ok, c.bad)
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

// An array task is named in its own task form: squeue -j with the array's job id lists every
// task, and the task holding that id would read them all as its own time left.
func TestEnvQuery(t *testing.T) {
	for _, c := range []struct {
		env  Env
		want string
	}{
		{Env{JobID: "42"}, "42"},
		{Env{JobID: "7", ArrayJobID: "7", ArrayTaskID: "2"}, "7_2"},
		{Env{JobID: "9", ArrayJobID: "7", ArrayTaskID: "0"}, "7_0"},
		{Env{}, ""},
	} {
		if got := c.env.Query(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.env, got, c.want)
		}
	}
}
