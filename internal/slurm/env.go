package slurm

import (
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

// ArrayPosition is this task's place in its job array, 0-based, and the array's task count,
// from SLURM_ARRAY_TASK_ID, _MIN, _STEP and _COUNT (--array=0-9 and --array=1-19:2 both give
// 0..count-1). ok is false outside an array, or where Slurm did not set them all.
func ArrayPosition() (pos, count int, ok bool) {
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
		return 0, 0, false
	}
	return ((id - min) / step) % count, count, true
}
