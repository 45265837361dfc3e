package slurm

import (
	"path/filepath"
	"testing"
)

// showJob is `scontrol show job -o` of a batch job, as the test cluster (internal/slurmtest)
// printed it, with a job file whose path has a space.
const showJob = `JobId=7 JobName=facefusion.sbatch UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901759 Nice=0 Account=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:03 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-06T08:11:15 EligibleTime=2026-12-06T08:11:15 AccrueTime=Unknown StartTime=2026-12-06T08:11:15 EndTime=Unknown Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-06T08:11:15 Scheduler=Main Partition=debug AllocNode:Sid=vm:2505 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,mem=4000M,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=/home/u/sbatch/facefusion.sbatch jobs/my job.toml WorkDir=/home/u/work StdErr=/home/u/work/facefusion-7.out StdIn=/dev/null StdOut=/home/u/work/facefusion-7.out Power= 
`

func TestParseShowJob(t *testing.T) {
	j, err := ParseShowJob([]byte(showJob))
	if err != nil {
		t.Fatal(err)
	}
	want := Job{ID: "7", Name: "facefusion.sbatch", State: "RUNNING", Reason: "None", ExitCode: "0:0", WorkDir: "/home/u/work",
		StdOut: "/home/u/work/facefusion-7.out", Command: "/home/u/sbatch/facefusion.sbatch jobs/my job.toml", From: "scontrol"}
	if j != want {
		t.Errorf("ParseShowJob:\n got %+v\nwant %+v", j, want)
	}
	if !j.Running() {
		t.Errorf("a RUNNING job is not Running")
	}
	// The job file is the command's longest ending that names a file; with none there, its
	// last word.
	exists := func(p string) bool { return p == "/home/u/work/jobs/my job.toml" }
	if got := j.JobFile(exists); got != "/home/u/work/jobs/my job.toml" {
		t.Errorf("JobFile = %q", got)
	}
	if got := j.JobFile(func(string) bool { return false }); got != "/home/u/work/job.toml" {
		t.Errorf("JobFile with no file there = %q", got)
	}

	// An array task answers by ARRAYJOB_TASK; a cancelled one ends.
	j, err = ParseShowJob([]byte("JobId=12 ArrayJobId=10 ArrayTaskId=2 JobName=x JobState=CANCELLED Reason=None ExitCode=0:15 Command=/s.sbatch /abs/b.toml WorkDir=/w\n"))
	if err != nil || j.ID != "10_2" || j.State != "CANCELLED" || j.Running() || j.JobFile(func(string) bool { return false }) != "/abs/b.toml" {
		t.Errorf("array task: %+v, %v", j, err)
	}
	if _, err := ParseShowJob([]byte("slurm_load_jobs error: Invalid job id specified\n")); err == nil {
		t.Errorf("a line with no JobId parsed")
	}
}

func TestParseSacct(t *testing.T) {
	out := "41|facefusion|CANCELLED by 0|0:15|/w|sbatch -n 2 sbatch/facefusion.sbatch job.toml\n" +
		"42|facefusion|COMPLETED|0:0|/w|srun -n 2 bin/facefusion run -s a.jpg -t in.mp4 -o out/x.mp4 --chunk-frames 32\n"
	j, err := ParseSacct([]byte(out), "41")
	if err != nil || j.State != "CANCELLED" || j.Running() || j.JobFile(func(string) bool { return false }) != filepath.Join("/w", "job.toml") || j.Output() != "" {
		t.Errorf("41: %+v, %v", j, err)
	}
	j, err = ParseSacct([]byte(out), "42")
	if err != nil || j.ExitCode != "0:0" || j.JobFile(func(string) bool { return false }) != "" || j.Output() != "/w/out/x.mp4" {
		t.Errorf("42: %+v (job file %q, output %q), %v", j, j.JobFile(func(string) bool { return false }), j.Output(), err)
	}
	j, _ = ParseSacct([]byte("43|f|RUNNING|0:0|/w|srun bin/facefusion run --config=/etc/j.toml\n"), "43")
	if got := j.JobFile(func(string) bool { return false }); got != "/etc/j.toml" {
		t.Errorf("--config=: JobFile = %q", got)
	}
	if _, err := ParseSacct(nil, "44"); err == nil {
		t.Errorf("no lines: no error")
	}
}

func TestIsJobID(t *testing.T) {
	for s, want := range map[string]bool{"1": true, "4711": true, "10_2": true, "10_": false, "_2": false, "job.toml": false, "1.batch": false, "": false, "10_2_3": false} {
		if IsJobID(s) != want {
			t.Errorf("IsJobID(%q) = %v", s, !want)
		}
	}
}
