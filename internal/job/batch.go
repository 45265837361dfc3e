package job

import (
	"errors"
	"fmt"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// Batch holds facefusion batch-run's own keys: FaceFusion's [patterns] (which source and target
// files, and where each output goes) and where this program keeps the batch's state. run refuses
// them, and batch-run refuses run's per-target paths. They choose files and pace the batch;
// each target's job is fingerprinted by its resolved paths' contents, so they are operational.
type Batch struct {
	SourcePattern string `toml:"source_pattern"`
	TargetPattern string `toml:"target_pattern"`
	OutputPattern string `toml:"output_pattern"`
	BatchDir      string `toml:"batch_dir"`
	SettleTime    int    `toml:"settle_time"`
	MaxFailures   int    `toml:"max_failures"`
	// FailOnQuarantine fails the batch (exit 6) when a target of it is quarantined too.
	FailOnQuarantine bool `toml:"fail_on_quarantine"`
}

// Placeholders are the names output_pattern may hold in braces, FaceFusion's: the entry's
// position in the batch, the source's and the target's file names without extension, and the
// target's extension with its dot, in lower case.
var Placeholders = []string{"index", "source_name", "target_name", "target_extension"}

// The flag modes: run's per-target paths and batch-run's patterns share short names
// (-s, -t, -o), as in FaceFusion.
const (
	anyMode = iota
	runOnly
	batchOnly
)

// otherMode is the command whose flags a command refuses.
func otherMode(mode int) int { return runOnly + batchOnly - mode }

var batchOptions = []option{
	{long: "source-pattern", short: "s", mode: batchOnly, arg: "GLOB", help: "batch-run: source images, a shell pattern (e.g. 'faces/*.jpg'); every source is run against every target",
		set: str(func(c *Config) *string { return &c.SourcePattern })},
	{long: "target-pattern", short: "t", mode: batchOnly, arg: "GLOB", help: "batch-run: target videos or images, a shell pattern (e.g. 'inbox/*.mp4'), sorted by name",
		set: str(func(c *Config) *string { return &c.TargetPattern })},
	{long: "output-pattern", short: "o", mode: batchOnly, arg: "PATTERN", help: "batch-run: each output's path, with {source_name}, {target_name}, {target_extension} (with its dot) and {index} (e.g. 'outbox/{target_name}-{source_name}{target_extension}'); {index} shifts when the inbox grows",
		doc: "`batch-run`: each output's path, with `{source_name}`, `{target_name}`, `{target_extension}` (with its dot) and `{index}` (which shifts when the inbox grows)",
		set: str(func(c *Config) *string { return &c.OutputPattern })},
	{long: "batch-dir", mode: batchOnly, arg: "DIR", help: "batch-run: folder of the batch's state: frozen target lists, done and failure records, the summary report (default: .facefusion-batch in the output pattern's folder)",
		doc: "`batch-run`: the batch's state (frozen target lists, done and failure records, summary report); empty: `.facefusion-batch` in the output pattern's folder",
		set: str(func(c *Config) *string { return &c.BatchDir })},
	{long: "settle-time", mode: batchOnly, arg: "SECONDS", help: "batch-run: a target modified less than this long ago may still be being copied: a run from a terminal waits for it, a scheduled run leaves it for the next (default 60)",
		doc: "`batch-run`: a target modified more recently may still be being copied: a run started from a terminal waits until its size and time stay unchanged this long (at most ten times as long); a scheduled run (cron, scrontab, sbatch, an array task) leaves it for the next run",
		set: integer("settle-time", func(c *Config) *int { return &c.SettleTime })},
	{long: "max-failures", mode: batchOnly, arg: "N", help: "batch-run: failed runs of one target (by content) after which it is quarantined: listed, never moved, no longer retried (default 3); a bad-input failure (exit 3) quarantines it at once",
		doc: "`batch-run`: failed runs of one target's contents before it is quarantined (listed, never moved, not retried); a bad-input failure (exit 3: a corrupt or truncated file) quarantines it at its first",
		set: integer("max-failures", func(c *Config) *int { return &c.MaxFailures })},
	{long: "fail-on-quarantine", mode: batchOnly, help: "batch-run: exit 6 when a target is quarantined (now, or by an earlier run), as when one fails; without it a batch whose every target is done, skipped or quarantined exits 0",
		doc: "`batch-run`: a quarantined target (bad input at its first failure, or `max_failures` failures; now or by an earlier run) fails the batch (exit 6) as a failed one does; without it, done, skipped and quarantined targets all end a batch with exit 0",
		set: func(c *Config, _ []string) error { c.FailOnQuarantine = true; return nil }},
}

func init() { options = append(options, batchOptions...) }

// validateBatch checks the batch keys against the command: batch says whether it is batch-run.
func (c *Config) validateBatch(batch bool, bad func(string, ...any)) {
	if !batch {
		for _, k := range []struct{ key, v string }{{"source_pattern", c.SourcePattern}, {"target_pattern", c.TargetPattern}, {"output_pattern", c.OutputPattern}} {
			if k.v != "" {
				bad("%s is set (%s): it is a key of facefusion batch-run, which runs every target it matches; run that, or remove the key (from the job file, or facefusion.ini's [patterns])", k.key, safefs.Excerpt(k.v))
			}
		}
		return
	}
	if len(c.SourcePaths) > 0 || c.TargetPath != "" || c.OutputPath != "" {
		bad("source_paths, target_path and output_path are run's keys: batch-run takes source_pattern, target_pattern and output_pattern (-s, -t, -o)")
	}
	if c.TargetPattern == "" {
		bad("target_pattern: give the targets, a shell pattern such as 'inbox/*.mp4' (-t)")
	}
	if c.SourcePattern == "" && c.Swaps() {
		bad("source_pattern: give the source images, a shell pattern such as 'faces/*.jpg' (-s)")
	}
	if c.OutputPattern == "" {
		bad("output_pattern: give where each output goes, such as 'outbox/{target_name}{target_extension}' (-o)")
	} else if _, err := ExpandOutput(c.OutputPattern, map[string]string{}); err != nil {
		bad("output_pattern: %v", err)
	}
	if c.SettleTime < 0 {
		bad("settle_time: %d is negative (seconds; 0: take every target at once)", c.SettleTime)
	}
	if c.MaxFailures < 1 {
		bad("max_failures: %d: a target is tried at least once (default 3)", c.MaxFailures)
	}
}

// ExpandOutput fills pattern's placeholders from vals, as Python's str.format does FaceFusion's:
// {name} is replaced, {{ and }} are literal braces. A name not in Placeholders, or a brace left
// open, is an error; a known name missing from vals expands to "" (the check pass).
func ExpandOutput(pattern string, vals map[string]string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		ch := pattern[i]
		switch {
		case ch == '{' && strings.HasPrefix(pattern[i:], "{{"), ch == '}' && strings.HasPrefix(pattern[i:], "}}"):
			b.WriteByte(ch)
			i++
		case ch == '{':
			end := strings.IndexByte(pattern[i:], '}')
			if end < 0 {
				return "", errors.New("a { without its }: write {{ for a literal brace")
			}
			name := pattern[i+1 : i+end]
			known := false
			for _, p := range Placeholders {
				known = known || p == name
			}
			if !known {
				return "", fmt.Errorf("unknown placeholder {%s}: FaceFusion's are {%s}", safefs.Name(name, safefs.ExcerptLen), strings.Join(Placeholders, "}, {"))
			}
			b.WriteString(vals[name])
			i += end
		case ch == '}':
			return "", errors.New("a } without its {: write }} for a literal brace")
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), nil
}

// KindOf says which command a TOML job file is for: "batch-run" when it sets target_pattern,
// else "run". The batch script asks it, so one script runs both.
func KindOf(path string) (string, error) {
	c := Default()
	if err := LoadFile(path, &c); err != nil {
		return "", err
	}
	if c.TargetPattern != "" {
		return "batch-run", nil
	}
	return "run", nil
}
