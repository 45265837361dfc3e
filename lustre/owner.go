package lustre

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// Ownership. The program deletes only what it can prove it created: a job folder is its own when
// it holds the marker file written right after the folder was made, and inside such a folder only
// the entries of the layout below are ever removed. A folder the user named that the program did
// not create is never removed: the job uses a subfolder of its own inside it.

// MarkerName is the file that proves the program created the job folder it is in.
const MarkerName = ".facefusion-job"

// layout lists every name the program writes in a job folder (Segment, SegmentTemp, Manifest,
// Journal, Progress, Attempt, Stop, Failed, Claim, Joining, JoinTemp, Side, Voice and the temp files of
// WriteAtomic beside each): one home for the folder's layout, so that removing the folder can
// remove exactly these and nothing a user put there. Paths are relative to the folder.
var layout = []*regexp.Regexp{
	// Segments: SegmentExts', and .mkv in folders of the earlier layout.
	regexp.MustCompile(`^seg-[0-9]{6}(` + segmentExts + `)$`),
	regexp.MustCompile(`^\.seg-[0-9]{6}\.rank[0-9]+\.a[0-9]+\.part(` + segmentExts + `)$`),
	regexp.MustCompile(`^\.joined\.a[0-9]+\.mkv$`),
	regexp.MustCompile(`^\.side\.a[0-9]+\.(mp4|mov)$`),
	regexp.MustCompile(`^done/rank-[0-9]+\.json$`),
	// One progress file per rank: written by releases before the control rounds; a folder one
	// of them left is still cleaned.
	regexp.MustCompile(`^progress/rank-[0-9]+$`),
	regexp.MustCompile(`^(manifest\.json|progress\.json|voice\.bin|ATTEMPT|STOP|FAILED|CLAIM|JOINING)$`),
	// WriteAtomic's temp files and a claim being written or taken over.
	regexp.MustCompile(`^(done/|progress/)?\.[^/]+\.tmp-[0-9]+$`),
	regexp.MustCompile(`^\.CLAIM\.(new|stale|beat)-[0-9a-f]+$`),
}

// segmentExts matches the extension of a segment: this layout's (SegmentExts) and the
// earlier one's.
var segmentExts = func() string {
	exts := []string{`\.mkv`}
	for _, e := range SegmentExts {
		exts = append(exts, regexp.QuoteMeta(e))
	}
	return strings.Join(exts, "|")
}()

// subfolders of the layout, removed when empty.
var subfolders = []string{"done", "progress"}

// ours reports whether rel (a path inside a job folder) is one the program writes.
func ours(rel string) bool {
	for _, re := range layout {
		if re.MatchString(rel) {
			return true
		}
	}
	return false
}

// Marker is the path of the ownership marker.
func (j *JobDir) Marker() string { return filepath.Join(j.Path, MarkerName) }

// Owned reports whether the program created this folder: it holds the marker, a regular file
// (not a link) of the running user's.
func (j *JobDir) Owned() bool {
	st, err := os.Lstat(j.Marker())
	return err == nil && st.Mode().IsRegular() && safefs.Mine(st)
}

// folderFix is what to do about a job folder the program refuses (CheckFolder).
const folderFix = "choose another --job-dir, a folder of your own that only you can write into"

// CheckFolder refuses an existing job folder that another user owns or can write into (group
// members only where safefs.GroupEnv allows it): its segments, manifest and records are trusted
// and joined into the output, and what its records name is removed, so no one else may put
// files there. Sites whose scratch is shared set a umask of 022 or 077 (the folder is made with
// what it leaves of rwxr-xr-x), or FACEFUSION_GROUP_WRITABLE=1 where a group shares its job
// folders on purpose.
func CheckFolder(path string) error {
	return safefs.CheckFolder(path, "job folder", folderFix)
}

// parentFix is what to do about a folder the job folder would be made in (CheckParent).
const parentFix = "choose another --job-dir, in a folder only you (or root) can write into"

// CheckParent refuses a folder the job folder is made in, or that the job goes inside, when
// someone the user has not chosen to trust can write into it (safefs.CheckParent): they could
// rename the job folder away and put a copy of theirs, other segments and all, in its place.
func CheckParent(path string) error {
	err := safefs.CheckParent(path, "folder", parentFix)
	var fe *safefs.FolderError
	if err != nil && !errors.As(err, &fe) { // a link to nothing on the way, say
		return fmt.Errorf("folder %s: %w: %s", path, unwrap(err), parentFix)
	}
	return err
}

// Resolve chooses the job folder for a requested path (--job-dir, or OUTPUT.job by default):
// the path itself when it does not exist yet or is a job folder the program created; inside a
// folder it did not create, a subfolder named after the output, so that nothing of the user's is
// ever at risk. note says which, for the log ("" when the path is used as it is). One rule for
// every folder the job folder is made in or the job goes inside (CheckParent), whichever way it
// was named; and one for the job folder itself, whose contents are trusted (CheckFolder: the
// running user's).
func Resolve(requested, output string) (path, note string, err error) {
	if requested == "" {
		requested = DefaultPath(output)
	}
	st, err := os.Stat(requested) // a link to a folder (a /scratch link) is that folder
	switch {
	case errors.Is(err, os.ErrNotExist):
		// Made by Create, with every missing parent (the user's own): the folder it is made
		// in is the nearest one that exists.
		if err := CheckParent(existing(filepath.Dir(requested))); err != nil {
			return "", "", err
		}
		return requested, "", nil
	case err != nil:
		return "", "", fmt.Errorf("job folder %s: %w: choose another --job-dir", requested, unwrap(err))
	case !st.IsDir():
		return "", "", fmt.Errorf("job folder %s exists and is not a folder: choose another --job-dir", requested)
	}
	if (&JobDir{Path: requested}).Owned() {
		// The folder the job would use must be the user's alone: another user who can write
		// there can swap a segment for theirs.
		if err := CheckFolder(requested); err != nil {
			return "", "", err
		}
		if real, err := filepath.EvalSymlinks(requested); err == nil {
			requested = real // a link's target is the folder: removing it must not remove the link
		}
		if err := CheckParent(filepath.Dir(requested)); err != nil {
			return "", "", err
		}
		return requested, "", nil
	}
	if _, err := os.Lstat((&JobDir{Path: requested}).Marker()); err == nil {
		// Another user's job folder (a colleague's, in a shared project tree): its records are
		// theirs, and a job is resumed only by the user who started it.
		if err := CheckFolder(requested); err != nil {
			return "", "", err
		}
		return "", "", fmt.Errorf("job folder %s holds a %s that is not yours (a link, or another user's): facefusion resumes only the jobs you started: choose another --job-dir", requested, MarkerName)
	}
	// A folder the program did not make: the job goes inside it, which must then not let
	// anyone untrusted swap the job's subfolder for another.
	if err := CheckParent(requested); err != nil {
		return "", "", err
	}
	if real, err := filepath.EvalSymlinks(requested); err == nil {
		requested = real
	}
	inside := filepath.Join(requested, filepath.Base(DefaultPath(output)))
	if _, err := os.Lstat(inside); err == nil {
		if err := CheckFolder(inside); err != nil {
			return "", "", err
		}
	}
	return inside, fmt.Sprintf("%s was not created by facefusion: the job uses %s inside it and leaves everything else there alone", requested, inside), nil
}

// existing is dir, or its nearest parent that exists.
func existing(dir string) string {
	for {
		if _, err := os.Lstat(dir); err == nil || filepath.Dir(dir) == dir {
			return dir
		}
		dir = filepath.Dir(dir)
	}
}

// Outside refuses files (the output, the inputs) that are the job folder or inside it: the
// folder's entries are the job's to remove, and an output named like one of them would go with
// them. Paths are compared after making them absolute and resolving the links of what exists.
func Outside(jobDir string, files ...string) error {
	dir := realPath(jobDir)
	for _, f := range files {
		p := realPath(f)
		if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return fmt.Errorf("%s is the job folder %s or inside it, and the job removes that folder's files when it ends: keep inputs and the output outside it, or choose another --job-dir", f, jobDir)
		}
	}
	return nil
}

// realPath is path made absolute with the links of its longest existing prefix resolved.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(p) == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// FolderID is a folder's identity: its device and inode, the same whatever name reaches it.
type FolderID struct{ Dev, Ino uint64 }

// folderID is the identity of the folder at path (following a link: a /scratch link is its
// folder).
func folderID(path string) (FolderID, error) {
	st, err := os.Stat(path)
	if err != nil {
		return FolderID{}, err
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok || !st.IsDir() {
		return FolderID{}, fmt.Errorf("%s is %s, not a folder", path, safefs.KindOf(st.Mode()))
	}
	return FolderID{Dev: uint64(s.Dev), Ino: s.Ino}, nil
}

// ReplacedError is a job folder that is no longer the one the job made or found: someone who
// can write into its parent renamed it away, and perhaps put another in its place.
type ReplacedError struct {
	Path string
	// Own: the folder is gone, or another job folder of the running user's is in its place:
	// another run of this job (--fresh, or one that found it dead) or the user's own hand, not
	// another user's.
	Own bool
}

func (e *ReplacedError) Error() string {
	if e.Own {
		return fmt.Sprintf("job folder %s was removed or replaced while the job ran (by another run of this job, by hand, or by a user who can write into %s): this attempt stops without joining, committing or removing anything; rerun the same command once no other run of the job is going",
			e.Path, filepath.Dir(realPath(e.Path)))
	}
	parent := filepath.Dir(realPath(e.Path))
	return fmt.Sprintf("job folder %s was replaced while the job ran (by a user who can write into %s): nothing was joined or removed; make %s writable by you alone, or choose another --job-dir",
		e.Path, parent, parent)
}

// Same is a *ReplacedError when the folder at j.Path is not the one pinned (another folder, or
// none); nil when it is, or when nothing was pinned.
func (j *JobDir) Same() error {
	if j.ID == (FolderID{}) {
		return nil
	}
	id, err := folderID(j.Path)
	if err != nil {
		return &ReplacedError{Path: j.Path, Own: errors.Is(err, os.ErrNotExist)}
	}
	if id != j.ID {
		st, serr := os.Lstat(j.Path)
		return &ReplacedError{Path: j.Path, Own: serr == nil && st.IsDir() && safefs.Mine(st) && j.Owned()}
	}
	return nil
}

// Create makes the job folder with its ownership marker, or checks that an existing one is the
// program's; created says whether this call made it. The folder is made with its marker under
// a temp name and renamed into place, so no other run ever sees it without the marker (and
// takes it for a user's). Parents that are missing are made too (and never removed).
func Create(path string) (j *JobDir, created bool, err error) {
	j = &JobDir{Path: path}
	// An existing folder is pinned first, then checked: the checks by name were of the folder
	// pinned only if it is still there after them.
	found := func() (bool, error) {
		id, idErr := folderID(path)
		if err := CheckFolder(path); err != nil {
			return false, err
		}
		if idErr != nil || !j.Owned() {
			return false, nil
		}
		j.ID = id
		return true, j.Same()
	}
	if _, err := os.Lstat(path); err == nil {
		if ok, err := found(); err != nil || ok {
			if err != nil {
				return nil, false, err
			}
			return j, false, nil
		}
	}
	parent := filepath.Dir(path)
	if err := os.MkdirAll(parent, safefs.FolderMode()); err != nil {
		return nil, false, fmt.Errorf("job folder %s cannot be created: %w: choose another --job-dir", path, unwrap(err))
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(path)+".new-")
	if err != nil {
		return nil, false, fmt.Errorf("job folder %s cannot be created: %w: choose another --job-dir", path, unwrap(err))
	}
	// MkdirTemp's rwx------, widened to what the umask leaves of rwxr-xr-x: never writable by
	// others, whatever the umask.
	if err := os.Chmod(tmp, safefs.FolderMode()); err != nil {
		os.Remove(tmp)
		return nil, false, fmt.Errorf("job folder %s cannot be created: %w: choose another --job-dir", path, unwrap(err))
	}
	host, _ := os.Hostname()
	text := fmt.Sprintf("facefusion job folder, created %s by pid %d on %s.\nfacefusion removes only the files it wrote here, and this folder once it is empty.\n",
		time.Now().UTC().Format(time.RFC3339), os.Getpid(), host)
	err = writeSynced(filepath.Join(tmp, MarkerName), []byte(text))
	var id FolderID
	if err == nil {
		id, err = folderID(tmp) // the folder this call made, whatever is at path later
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(filepath.Join(tmp, MarkerName)) // only what this call made
		os.Remove(tmp)
		// Another run made it meanwhile: the claim decides who runs.
		if _, lerr := os.Lstat(path); lerr == nil {
			if ok, err := found(); err != nil || ok {
				if err != nil {
					return nil, false, err
				}
				return j, false, nil
			}
		}
		if _, serr := os.Stat(path); serr == nil {
			return nil, false, fmt.Errorf("job folder %s exists but was not created by facefusion (no %s in it): choose another --job-dir", path, MarkerName)
		}
		return nil, false, fmt.Errorf("job folder %s cannot be created: %w: choose another --job-dir", path, unwrap(err))
	}
	j.ID = id
	return j, true, SyncDir(parent)
}

// Remove deletes the job folder the program created: every entry of the layout, then the
// folder itself when nothing else is left. Anything else in it (a user's file) stays, and with
// it the folder; left lists what kept it. A folder without the marker is not touched.
func (j *JobDir) Remove() (left []string, err error) {
	if err := j.Same(); err != nil {
		return nil, err
	}
	if !j.Owned() {
		return nil, fmt.Errorf("job folder %s was not created by facefusion (no %s): nothing in it was removed", j.Path, MarkerName)
	}
	if left, err = j.removeOurs(); err != nil {
		return left, err
	}
	if len(left) > 0 {
		return left, nil
	}
	if err := os.Remove(j.Marker()); err != nil {
		return nil, err
	}
	if err := os.Remove(j.Path); err != nil {
		return nil, fmt.Errorf("removing job folder %s: %w", j.Path, unwrap(err))
	}
	return nil, nil
}

// removeOurs removes the layout's entries and empty layout subfolders; the rest is listed.
func (j *JobDir) removeOurs() (left []string, err error) {
	var walk func(rel string) error
	walk = func(rel string) error {
		ents, err := os.ReadDir(filepath.Join(j.Path, rel))
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := filepath.ToSlash(filepath.Join(rel, e.Name()))
			full := filepath.Join(j.Path, name)
			switch {
			case name == MarkerName:
			case e.IsDir() && rel == "" && contains(subfolders, name):
				if err := walk(name); err != nil {
					return err
				}
				if err := os.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
					left = append(left, name+"/")
				}
			case e.Type().IsRegular() && ours(name):
				if err := os.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("removing %s: %w", full, unwrap(err))
				}
			default:
				left = append(left, name)
			}
		}
		return nil
	}
	err = walk("")
	sort.Strings(left)
	return left, err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Joining names the file where rank 0 records the temp files it makes beside the output while
// joining, so that the next attempt of the same job removes what a killed join left there.
func (j *JobDir) Joining() string { return filepath.Join(j.Path, "JOINING") }

// JoinTemp is where earlier versions concatenated the segments before muxing the audio (the join
// is one ffmpeg run now and writes no such file): kept in the layout, so that removing a folder an
// earlier version's killed join left behind still removes it.
func (j *JobDir) JoinTemp(attempt int) string {
	return filepath.Join(j.Path, fmt.Sprintf(".joined.a%d.mkv", attempt))
}

// Side is where rank 0's ffmpeg writes the parallel join's side file (the target's other
// streams) during attempt, in the output's container ext (".mp4" or ".mov"): in the job
// folder, so that CleanStale removes what a killed attempt left and Remove what a finished one
// did not.
func (j *JobDir) Side(attempt int, ext string) string {
	return filepath.Join(j.Path, fmt.Sprintf(".side.a%d%s", attempt, strings.ToLower(ext)))
}

// RecordJoin writes which output a join is for and the temp files it is about to create
// beside it (absolute paths): a rerun that spells -o another way, or names another output,
// still finds them.
func (j *JobDir) RecordJoin(output string, temps ...string) error {
	return WriteAtomic(j.Joining(), []byte(strings.Join(append([]string{output}, temps...), "\n")+"\n"))
}

// CleanStale removes what a dead attempt of this job left: temp segments, the join's temp
// files (those recorded in JOINING, beside the output they were recorded for, and only when
// isTemp says they are the program's hidden temp names for it and they are regular files of
// the running user's with no other name), the flags and the progress files. Only call it while
// holding the claim: a live attempt's files are never stale. removed lists what went, kept what
// JOINING named that was left alone and why, both for the log.
func (j *JobDir) CleanStale(isTemp func(path, output string) bool) (removed, kept []string) {
	if err := j.Same(); err != nil {
		return nil, []string{err.Error()}
	}
	if lines, err := j.joinRecord(); err != nil {
		kept = append(kept, err.Error())
	} else if len(lines) > 0 {
		for _, p := range lines[1:] {
			if p == "" {
				continue
			}
			if why := joinTemp(p, lines[0], isTemp); why != "" {
				kept = append(kept, fmt.Sprintf("%s, named in %s (%s)", p, j.Joining(), why))
				continue
			}
			if os.Remove(p) == nil {
				removed = append(removed, p)
			}
		}
	}
	if st, err := os.Lstat(j.Joining()); err == nil && !st.IsDir() {
		os.Remove(j.Joining())
	}
	for _, pattern := range []string{".seg-*.part.*", ".joined.a*.mkv", ".side.a*", ".voice.bin.tmp-*"} {
		names, _ := filepath.Glob(filepath.Join(j.Path, pattern))
		for _, n := range names {
			if ours(filepath.Base(n)) && os.Remove(n) == nil {
				removed = append(removed, n)
			}
		}
	}
	os.Remove(j.Failed())
	os.Remove(j.Stop())
	os.Remove(j.Progress())
	if dir, err := j.sub("progress"); err == nil {
		names, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, n := range names {
			if ours("progress/" + filepath.Base(n)) {
				os.Remove(n)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		kept = append(kept, err.Error())
	}
	return removed, kept
}

// joinRecord is JOINING's lines (nil when there is none): read only when it is a regular
// file of the running user's, not a link.
func (j *JobDir) joinRecord() ([]string, error) {
	st, err := os.Lstat(j.Joining())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || !safefs.Mine(st) {
		return nil, fmt.Errorf("%s is %s not written by you: nothing it names was removed", j.Joining(), safefs.KindOf(st.Mode()))
	}
	b, err := safefs.ReadOwnFile(j.Joining(), safefs.SmallLimit, "join record")
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n"), nil
}

// joinTemp says why p, named in JOINING as a temp file of output, is not one the program may
// remove ("" when it is): it must be one of the program's temp names beside that output
// (isTemp), and a regular file of the running user's with no other name.
func joinTemp(p, output string, isTemp func(path, output string) bool) string {
	if !isTemp(p, output) {
		return "not a temp name facefusion gives beside " + output
	}
	st, err := os.Lstat(p)
	if err != nil {
		return unwrap(err).Error()
	}
	if !st.Mode().IsRegular() {
		return safefs.KindOf(st.Mode())
	}
	if !safefs.Mine(st) {
		return "not yours"
	}
	if s, ok := st.Sys().(*syscall.Stat_t); !ok || s.Nlink != 1 {
		return "it has other names"
	}
	return ""
}

// sub is the path of the layout's subfolder name ("done", "progress"): never through a link,
// which another user could point anywhere (removing a journal there would remove their
// target's file).
func (j *JobDir) sub(name string) (string, error) {
	p := filepath.Join(j.Path, name)
	st, err := os.Lstat(p)
	if err != nil {
		return p, err
	}
	if !st.IsDir() {
		return p, fmt.Errorf("%s is %s, not the folder facefusion made: it is left alone", p, safefs.KindOf(st.Mode()))
	}
	return p, nil
}

// makeSub is sub, made (FolderMode) when it does not exist.
func (j *JobDir) makeSub(name string) (string, error) {
	p, err := j.sub(name)
	if errors.Is(err, os.ErrNotExist) {
		if err = os.Mkdir(p, safefs.FolderMode()); errors.Is(err, os.ErrExist) {
			_, err = j.sub(name) // made by another rank meanwhile
		}
	}
	return p, err
}

// Discard removes the finished work of the job (segments, manifest, journals) to start it over
// (--fresh); it returns how many segments went.
func (j *JobDir) Discard() int {
	if j.Same() != nil {
		return 0 // another's folder: the steps after this say so
	}
	segs, _ := filepath.Glob(filepath.Join(j.Path, "seg-*"))
	n := 0
	for _, s := range segs {
		if ours(filepath.Base(s)) && os.Remove(s) == nil {
			n++
		}
	}
	os.Remove(j.Manifest())
	j.ClearJournals()
	return n
}

// ClearJournals removes every rank's journal (once the manifest holds their records).
func (j *JobDir) ClearJournals() {
	dir, err := j.sub("done")
	if err != nil || j.Same() != nil {
		return
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, n := range names {
		if ours("done/" + filepath.Base(n)) {
			os.Remove(n)
		}
	}
	os.Remove(dir) // only when empty
}
