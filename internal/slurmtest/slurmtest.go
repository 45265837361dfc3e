// Package slurmtest starts a real single-node Slurm cluster (slurmctld and slurmd from the
// Debian packages) for a test, so launch scripts and MPI runs are tested under srun and
// sbatch rather than imitated.
//
// Each cluster lives in the test's temporary folder with its own ports, but clusters of tests
// in several packages (which go test runs at once) take turns: both number their jobs from 1,
// and two steps of job 1 on one node collide in PMIx's and OpenMPI's per-job state (an MPI
// broadcast crashed). A lock file in the system's temp folder, held from Start to the test's
// end, makes them wait for each other. It uses auth/none (no munged to start, no key to own);
// that is fine for a loopback-only test cluster and never for a real one.
package slurmtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// Cluster is a running slurmctld + slurmd pair.
type Cluster struct {
	// Dir holds slurm.conf, the state and spool folders and the daemons' logs.
	Dir string
	// Node is the one node's name (the short host name, as slurmd requires).
	Node string
	conf string
	t    testing.TB
}

// Options shape the cluster; the zero value is one node with 8 CPUs.
type Options struct {
	// CPUs declared for the node (more than the machine has is fine: config_overrides).
	CPUs int
}

// Start brings up a cluster and waits until its node is IDLE. The daemons are stopped, and
// waited for, when the test ends. A missing Slurm binary fails the test; under go test -short
// the test is skipped (the full tier).
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	testenv.Full(t, "starts a Slurm cluster")
	if o.CPUs == 0 {
		o.CPUs = 8
	}
	ctld := daemon(t, "slurmctld")
	slurmd := daemon(t, "slurmd")
	lockMachine(t)
	for _, tool := range []string{"srun", "sbatch", "scontrol", "scancel", "squeue"} {
		testenv.Tool(t, tool)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatalf("slurmtest: host name: %v", err)
	}
	host, _, _ = strings.Cut(host, ".")
	u, err := user.Current()
	if err != nil {
		t.Fatalf("slurmtest: current user: %v", err)
	}
	dir := t.TempDir()
	for _, d := range []string{"ctld", "d"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := &Cluster{Dir: dir, Node: host, conf: filepath.Join(dir, "slurm.conf"), t: t}
	var conf bytes.Buffer
	err = confTemplate.Execute(&conf, map[string]any{
		"Dir": dir, "Node": host, "User": u.Username, "CPUs": o.CPUs,
		"CtldPort": freePort(t), "DPort": freePort(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.conf, conf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// PMIx keeps a folder per job step, named by user, job id and step only, under /tmp by
	// default; one that a killed step left there makes the same job id of a later test
	// cluster fail to launch ("File exists"). mpi.conf sits beside slurm.conf.
	pmix := filepath.Join(dir, "pmix")
	if err := os.Mkdir(pmix, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mpi.conf"), []byte("PMIxCliTmpDirBase="+pmix+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Foreground daemons (-D) are this test's children: their PIDs are known without pid
	// files, and Pdeathsig takes them down if the test binary itself dies.
	ctldCmd := c.start(ctld, "-D", "-i", "-f", c.conf)
	slurmdCmd := c.start(slurmd, "-D", "-f", c.conf)
	t.Cleanup(func() {
		// slurmd first, so slurmctld does not mark the node down while we stop.
		c.stop(slurmdCmd, "slurmd")
		c.stop(ctldCmd, "slurmctld")
	})
	c.waitIdle()
	return c
}

func daemon(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("test dependency %s is missing: run `make deps` (apt-get install slurmctld slurmd slurm-client)", name)
	}
	return p
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("slurmtest: no free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (c *Cluster) start(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = c.Env()
	cmd.Dir = c.Dir
	log, err := os.Create(filepath.Join(c.Dir, filepath.Base(bin)+".out"))
	if err != nil {
		c.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("slurmtest: start %s: %v", bin, err)
	}
	return cmd
}

func (c *Cluster) stop(cmd *exec.Cmd, name string) {
	if cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		c.t.Errorf("slurmtest: %s (pid %d) ignored SIGTERM for 30 s and was killed; see %s", name, cmd.Process.Pid, c.Dir)
	}
}

func (c *Cluster) waitIdle() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var last []byte
	for ctx.Err() == nil {
		out, _ := c.Command(ctx, "scontrol", "show", "node", "-o").CombinedOutput()
		if bytes.Contains(out, []byte("State=IDLE ")) {
			return
		}
		last = out
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("slurmtest: node %s never became IDLE; last `scontrol show node`: %s\n%s", c.Node, bytes.TrimSpace(last), c.Logs())
}

// Env is the environment for Slurm client commands: the caller's, minus any SLURM_*
// variables inherited from an enclosing job, plus SLURM_CONF naming this cluster.
func (c *Cluster) Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_") {
			env = append(env, kv)
		}
	}
	return append(env, "SLURM_CONF="+c.conf)
}

// Conf is the path of the cluster's slurm.conf.
func (c *Cluster) Conf() string { return c.conf }

// Command is a client command (srun, sbatch, scontrol, …) aimed at this cluster, run in Dir.
func (c *Cluster) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.Env()
	cmd.Dir = c.Dir
	// A killed srun must not leave its output pipe held open by a child.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// WaitJob watches job id until it leaves the pending and running states and returns its final
// state and exit code (COMPLETED and 0:0 for a success): every 250 ms, where sbatch --wait backs
// off to 8 s and more (its polling grows with MinJobAge, kept long so that the tests can still
// ask about finished jobs). ctx ends the wait with its error.
func (c *Cluster) WaitJob(ctx context.Context, id string) (state, exit string, err error) {
	re := regexp.MustCompile(`\bJobState=(\S+).*\bExitCode=(\S+)`)
	for {
		show, _ := c.Command(ctx, "scontrol", "show", "job", "-o", id).Output()
		if m := re.FindSubmatch(show); m != nil {
			state, exit = string(m[1]), string(m[2])
		}
		switch state { // the states a job ends in; any other (requeued, suspended…) goes on
		case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY":
			return state, exit, nil
		}
		if ctx.Err() != nil {
			return state, exit, fmt.Errorf("job %s still %q: %w", id, state, ctx.Err())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Logs is the tail of both daemons' logs, for failure messages.
func (c *Cluster) Logs() string {
	var b strings.Builder
	for _, f := range []string{"slurmctld.log", "slurmd.log"} {
		data, _ := os.ReadFile(filepath.Join(c.Dir, f))
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		fmt.Fprintf(&b, "--- %s (last lines)\n%s\n", f, strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
	return b.String()
}

var confTemplate = template.Must(template.New("slurm.conf").Parse(`# written by internal/slurmtest
ClusterName=ci
SlurmctldHost={{.Node}}
SlurmctldPort={{.CtldPort}}
SlurmdPort={{.DPort}}
SlurmUser={{.User}}
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,sched_interval=2,bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
EnforcePartLimits=ALL
KillWait=5
MinJobAge=300
StateSaveLocation={{.Dir}}/ctld
SlurmdSpoolDir={{.Dir}}/d
SlurmctldPidFile={{.Dir}}/slurmctld.pid
SlurmdPidFile={{.Dir}}/slurmd.pid
SlurmctldLogFile={{.Dir}}/slurmctld.log
SlurmdLogFile={{.Dir}}/slurmd.log
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
NodeName={{.Node}} CPUs={{.CPUs}} RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=REQUEUE GraceTime=10
PartitionName=high  Nodes=ALL Default=NO  MaxTime=INFINITE State=UP PriorityTier=2 PreemptMode=OFF
`))

// lockMachine waits until no other test's cluster runs on this machine, and holds the machine
// until t ends (cleanups run last-in first-out: the cluster stops before the lock goes).
func lockMachine(t testing.TB) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "facefusion-slurmtest.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("slurmtest: lock file: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("slurmtest: waiting for another test's cluster: %v", err)
	}
	t.Cleanup(func() { f.Close() })
}
