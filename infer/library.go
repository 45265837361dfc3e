package infer

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
)

// checkLibrary reports why the file at path is not a complete ELF shared object. dlopen maps a
// truncated copy (a full disk, an interrupted download or copy) without complaint, and the
// first touch of a page past the file's end kills the process with SIGBUS and a Go stack of
// some hundred lines: this check says what is wrong before dlopen sees the file.
func checkLibrary(path string) error { return checkELF(path, runtimeKind) }

// A libraryKind names a library in messages, with the fetch that brings it and the setting
// that names another.
type libraryKind struct{ what, fetch, key string }

var runtimeKind = libraryKind{"ONNX Runtime library", "make fetch", "onnxruntime_library"}

// checkELF is checkLibrary for a library of kind k.
func checkELF(path string, k libraryKind) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s %s cannot be read (%v): run `%s` or set %s in the config", k.what, path, unwrapPathError(err), k.fetch, k.key)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s %s cannot be read (%v): run `%s` or set %s in the config", k.what, path, unwrapPathError(err), k.fetch, k.key)
	}
	bad := func(why string, a ...any) error {
		return fmt.Errorf("%s %s is truncated or not a shared library (%s): run `%s` again, or point %s at a complete file",
			k.what, path, fmt.Sprintf(why, a...), k.fetch, k.key)
	}
	if end, ok := sectionTableEnd(f); ok && end > uint64(st.Size()) {
		return bad("its section header table ends at byte %d, but the file has %d bytes", end, st.Size())
	}
	ef, err := elf.NewFile(f) // reads the file header and the section header table
	if err != nil {
		return bad("not a readable ELF file: %v", err)
	}
	if ef.Type != elf.ET_DYN {
		return bad("an ELF file of type %v, not a shared object", ef.Type)
	}
	if err := withinFile(ef, st.Size()); err != nil {
		return bad("%v, but the file has %d bytes", err, st.Size())
	}
	return nil
}

// sectionTableEnd is where a 64-bit ELF file's section header table ends, from its header:
// the table is the file's last part, so a cut anywhere shows here first, and debug/elf would
// only say EOF.
func sectionTableEnd(f *os.File) (uint64, bool) {
	var h [64]byte
	if _, err := f.ReadAt(h[:], 0); err != nil || string(h[:4]) != elf.ELFMAG || elf.Class(h[4]) != elf.ELFCLASS64 {
		return 0, false
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(h[5]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	off, entSize, n := bo.Uint64(h[0x28:]), uint64(bo.Uint16(h[0x3a:])), uint64(bo.Uint16(h[0x3c:]))
	if off == 0 || n == 0 {
		return 0, false
	}
	return off + entSize*n, true
}

// withinFile reports the first loadable segment or section that ends past size bytes.
func withinFile(ef *elf.File, size int64) error {
	loads := 0
	for i, p := range ef.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		loads++
		if end := p.Off + p.Filesz; end < p.Off || end > uint64(size) {
			return fmt.Errorf("loadable segment %d ends at byte %d", i, end)
		}
	}
	if loads == 0 {
		return fmt.Errorf("no loadable segment")
	}
	for _, s := range ef.Sections {
		if s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL { // .bss and the null entry take no bytes
			continue
		}
		if end := s.Offset + s.FileSize; end < s.Offset || end > uint64(size) {
			return fmt.Errorf("section %s ends at byte %d", s.Name, end)
		}
	}
	return nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
