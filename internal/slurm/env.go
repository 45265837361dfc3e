package slurm

import (
	"fmt"
	"os"
	"strconv"
)

// Env is what Slurm tells a job's processes about the job in their environment; every field is
// "" outside Slurm (and the array fields outside a job array).
type Env struct {
	JobID        string `json:"job_id,omitempty"`        // SLURM_JOB_ID
	ArrayJobID   string `json:"array_job_id,omitempty"`  // SLURM_ARRAY_JOB_ID: the array's, shared by its tasks
	ArrayTaskID  string `json:"array_task_id,omitempty"` // SLURM_ARRAY_TASK_ID
	RestartCount string `json:"restart_count,omitempty"` // SLURM_RESTART_COUNT: requeues so far
}

// FromEnv reads the job's Env.
func FromEnv() Env {
	return Env{JobID: os.Getenv("SLURM_JOB_ID"), ArrayJobID: os.Getenv("SLURM_ARRAY_JOB_ID"),
		ArrayTaskID: os.Getenv("SLURM_ARRAY_TASK_ID"), RestartCount: os.Getenv("SLURM_RESTART_COUNT")}
}

// Query is the id that names this job alone to squeue and scontrol: an array task's own
// ARRAY_TASK form, since the task that holds the array's job id would name every task of the
// array by it.
func (e Env) Query() string {
	if e.ArrayJobID != "" && e.ArrayTaskID != "" {
		return e.ArrayJobID + "_" + e.ArrayTaskID
	}
	return e.JobID
}

// ArrayPosition is this task's place in its job array, 0-based, and the array's task count,
// from SLURM_ARRAY_TASK_ID, _MIN, _MAX, _STEP and _COUNT (--array=0-9 and --array=1-19:2 both
// give 0..count-1). ok is false outside an array, or where Slurm did not set them. An array
// that is not one range with one step (--array=0,2,3) has no such places: an error, since
// tasks could take one share twice and leave another.
func ArrayPosition() (pos, count int, ok bool, err error) {
	num := func(name string) (int, bool) {
		n, err := strconv.Atoi(os.Getenv(name))
		return n, err == nil
	}
	id, ok1 := num("SLURM_ARRAY_TASK_ID")
	min, ok2 := num("SLURM_ARRAY_TASK_MIN")
	count, ok3 := num("SLURM_ARRAY_TASK_COUNT")
	step, ok4 := num("SLURM_ARRAY_TASK_STEP")
	if !ok4 || step < 1 {
		step = 1
	}
	if !ok1 || !ok2 || !ok3 || count < 1 {
		return 0, 0, false, nil
	}
	if max, ok := num("SLURM_ARRAY_TASK_MAX"); ok && ((max-min)%step != 0 || (max-min)/step+1 != count) ||
		(id-min)%step != 0 || (id-min)/step >= count {
		return 0, 0, false, fmt.Errorf("job array %s is not one range of task ids with one step (tasks %s..%s, %d of them): give sbatch --array=A-B or A-B:S (a %%N limit is fine)",
			os.Getenv("SLURM_ARRAY_JOB_ID"), os.Getenv("SLURM_ARRAY_TASK_MIN"), os.Getenv("SLURM_ARRAY_TASK_MAX"), count)
	}
	return (id - min) / step, count, true, nil
}
