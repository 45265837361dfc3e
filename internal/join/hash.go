package join

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// The run report's output hash (lustre's block hash) after a serial join, computed by every
// rank once the output's bytes are final (the serial join's ffmpeg has exited) and before the
// rename; the parallel join hashes what it writes instead (chain.go), and this protocol does
// not run after it. The protocol: rank 0 broadcasts the file to hash (its path,
// size and modification time; empty: nothing to hash); every rank hashes its even share of the
// blocks (rank.Even) from the file itself, and the sums go to rank 0 in one gather; rank 0
// combines them. A rank that cannot read the file, or finds another file at its path (another
// size or time: the output folder on a disk only rank 0 sees), sends why instead, and rank 0
// hashes that rank's blocks itself. Every rank takes part in both collectives, whatever fails;
// a rank with no block opens nothing.

// hashInstruction is the file rank 0 asks every rank to hash.
type hashInstruction struct {
	Path    string
	Size    int64
	ModTime int64 // nanoseconds since 1970: another file at the path on another node differs
	// Inode is the file's (Lustre gives a file one inode number on every node): a file put
	// at its name by another user who can write into its folder is not read.
	Inode uint64 `json:",omitempty"`
}

// hashReport is one rank's share for rank 0: its blocks' sums in order, or why it has none.
type hashReport struct {
	Err     string  `json:",omitempty"`
	Sums    []byte  `json:",omitempty"` // sha256.Size bytes a block
	Seconds float64 `json:",omitempty"` // its wall time hashing them (0: it had no block)
}

// hashOutput is rank 0's part: the size and block hash of the file at path, and each rank's
// wall time in its share (rank 0's: its whole part, the blocks of the ranks that could not read
// the file included). err is a collective's failure (the ranks can no longer talk); the hash's
// own failure is failed, a warning's text, with sum "".
func hashOutput(comm collective.Comm, f *os.File, log *logging.Logger) (size int64, sum string, seconds []float64, failed string, err error) {
	start := time.Now()
	st, serr := f.Stat()
	if serr != nil {
		return 0, "", nil, serr.Error(), sendHash(comm, nil)
	}
	ins := hashInstruction{Path: f.Name(), Size: st.Size(), ModTime: st.ModTime().UnixNano(), Inode: st.Sys().(*syscall.Stat_t).Ino}
	if err := sendHash(comm, &ins); err != nil {
		return 0, "", nil, "", err
	}
	sums, seconds, failed, err := hashShare(comm, &ins, f, nil, log)
	if len(seconds) > 0 {
		seconds[0] = time.Since(start).Seconds()
	}
	if err != nil || failed != "" {
		return 0, "", seconds, failed, err
	}
	log.Debugf("output hash: %d block(s) of %d bytes over %d rank(s) in %.3f s", len(sums), lustre.HashBlockBytes, comm.Size(), seconds[0])
	return ins.Size, lustre.CombineBlockSums(sums), seconds, "", nil
}

// sendHash broadcasts rank 0's hash instruction (nil: nothing to hash).
func sendHash(comm collective.Comm, ins *hashInstruction) error {
	b := []byte{}
	if ins != nil {
		b, _ = json.Marshal(ins)
	}
	if _, err := collective.BcastBytes(comm, 0, b); err != nil {
		return fmt.Errorf("broadcasting the output's hash: %w", err)
	}
	return nil
}

// serveHash is the part of a rank other than 0: it takes rank 0's instruction and, when there is
// one, hashes its share. Only a collective's failure is an error: a read's goes to rank 0.
func serveHash(comm collective.Comm, log *logging.Logger) error {
	b, err := collective.BcastBytes(comm, 0, nil)
	if err != nil {
		return fmt.Errorf("receiving the output's hash: %w", err)
	}
	if len(b) == 0 {
		return nil
	}
	var ins hashInstruction
	var local error
	if err := json.Unmarshal(b, &ins); err != nil {
		local = fmt.Errorf("decoding the output's hash: %w", err)
	}
	_, _, _, err = hashShare(comm, &ins, nil, local, log)
	return err
}

// hashShare is every rank's share of the hash, read through own where rank 0 has the file open
// (nil: opened by its name); local is a failure before it (the rank then reads nothing, but
// still takes part). On rank 0 it returns every block's sum in order (the
// blocks of a rank that sent none hashed by rank 0 itself), each rank's seconds, and failed when
// rank 0 could not hash its own or another's blocks.
func hashShare(comm collective.Comm, ins *hashInstruction, own *os.File, local error, log *logging.Logger) (sums []lustre.BlockSum, seconds []float64, failed string, err error) {
	me := comm.Rank()
	shares := rank.Even(rank.Range{Start: 0, End: lustre.HashBlockCount(ins.Size)}, comm.Size())
	var rep hashReport
	if local != nil {
		rep.Err = local.Error()
	} else {
		start := time.Now()
		mine, err := hashRange(ins, shares[me], own)
		if err != nil {
			rep.Err = err.Error()
		}
		for _, s := range mine {
			rep.Sums = append(rep.Sums, s[:]...)
		}
		if !shares[me].Empty() {
			rep.Seconds = time.Since(start).Seconds()
		}
	}
	b, _ := json.Marshal(&rep)
	all, err := comm.Gather(0, b)
	if err != nil {
		return nil, nil, "", fmt.Errorf("gathering the output's hash: %w", err)
	}
	if me != 0 {
		if rep.Err != "" {
			log.Debugf("output hash: %s (rank 0 hashes blocks %v)", rep.Err, shares[me])
		}
		return nil, nil, "", nil
	}
	seconds = make([]float64, len(all))
	var notes []string
	for r, b := range all {
		var got hashReport
		if err := json.Unmarshal(b, &got); err != nil {
			got = hashReport{Err: fmt.Sprintf("its sums: %v", err)}
		}
		seconds[r] = got.Seconds
		if got.Err == "" && len(got.Sums) != shares[r].Len()*len(lustre.BlockSum{}) {
			got.Err = fmt.Sprintf("%d bytes of sums for %d block(s)", len(got.Sums), shares[r].Len())
		}
		if got.Err != "" && r == 0 {
			return nil, seconds, got.Err, nil // rank 0 cannot read the file: nobody hashes for it
		}
		if got.Err != "" {
			notes = append(notes, fmt.Sprintf("rank %d: %s", r, got.Err))
			theirs, err := hashRange(ins, shares[r], own)
			if err != nil {
				return nil, seconds, fmt.Sprintf("rank 0, for rank %d: %v", r, err), nil
			}
			sums = append(sums, theirs...)
			continue
		}
		for at := 0; at < len(got.Sums); at += len(lustre.BlockSum{}) {
			sums = append(sums, lustre.BlockSum(got.Sums[at:]))
		}
	}
	if len(notes) > 0 {
		if len(notes) > 3 {
			notes = append(notes[:3], fmt.Sprintf("%d more", len(notes)-3))
		}
		log.Warnf("output hash: %d rank(s) could not read the output, rank 0 hashed their blocks itself (%s)", len(notes), strings.Join(notes, "; "))
	}
	return sums, seconds, "", nil
}

// hashRange is the sums of blocks of the file ins names, read through own (rank 0's open
// file), or else opened here: never through a link, a FIFO refused without waiting for a
// writer, and only the regular file rank 0 made (its inode, size and time); nothing is opened
// for no block.
func hashRange(ins *hashInstruction, blocks rank.Range, own *os.File) ([]lustre.BlockSum, error) {
	if blocks.Empty() {
		return nil, nil
	}
	f := own
	if f == nil {
		var err error
		if f, err = os.OpenFile(ins.Path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0); err != nil {
			return nil, err
		}
		defer f.Close()
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	ino := st.Sys().(*syscall.Stat_t).Ino
	replaced := fmt.Errorf("%s here is not the file rank 0 made (%s, inode %d): another user who can write into its folder replaced it", ins.Path, safefs.KindOf(st.Mode()), ino)
	if !st.Mode().IsRegular() {
		return nil, replaced
	}
	if st.Size() != ins.Size || st.ModTime().UnixNano() != ins.ModTime {
		return nil, fmt.Errorf("%s here is another file (%d bytes, modified %s; rank 0's: %d bytes, modified %s)",
			ins.Path, st.Size(), st.ModTime().UTC().Format(time.RFC3339Nano), ins.Size, time.Unix(0, ins.ModTime).UTC().Format(time.RFC3339Nano))
	}
	if ins.Inode != 0 && ino != ins.Inode {
		return nil, replaced
	}
	sums, err := lustre.HashBlocks(f, ins.Size, blocks)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ins.Path, err)
	}
	return sums, nil
}
