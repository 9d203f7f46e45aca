package manifest

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// FS is the filesystem paths are resolved against: the two calls the
// kernel's own lookup makes per component. OSFS is the real one; a test
// can hand in another (a temp dir, a fake with a loop).
type FS interface {
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
}

// OSFS is the operating system's filesystem.
type OSFS struct{}

// Lstat is os.Lstat.
func (OSFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// Readlink is os.Readlink.
func (OSFS) Readlink(name string) (string, error) { return os.Readlink(name) }

// Bounds of one path's resolution, the kernel's own (Linux PATH_MAX and
// MAXSYMLINKS): a longer path or a longer chain of links is refused, as
// the kernel refuses it, so resolving a hostile path costs at most
// MaxSymlinks readlinks and a few thousand lstats.
const (
	MaxPathBytes = 4096
	MaxSymlinks  = 40
)

// MaxLookupsPerCall bounds the lstats and readlinks of one call's paths
// together. The two bounds above still let one path cost tens of
// thousands of lookups (40 links, each putting 4 KiB of "d/" in front of
// what remains) and a call has MaxPathsPerCall paths; a real call needs
// a few dozen.
const MaxLookupsPerCall = 1 << 16

// ErrTooMuchWork is a call whose paths need more than MaxLookupsPerCall
// lookups.
var ErrTooMuchWork = errors.New("the call's paths need more than 65536 lookups to resolve")

// Errors of a resolution. A path the kernel could not resolve either is
// refused rather than guessed at: the call would fail downstream, and a
// guess is where an escape hides.
var (
	ErrSymlinkLoop = errors.New("too many levels of symbolic links (more than 40)")
	ErrNotDir      = errors.New("a component that is not a directory has more components after it")
	ErrPathTooLong = errors.New("longer than 4096 bytes")
)

// resolver resolves absolute paths component by component against a
// filesystem, as the kernel's path walk does: "." is skipped, ".." goes
// to the parent of what has been resolved so far (so link/.. is the
// parent of the link's target, not the directory holding the link), "//"
// is one separator, and every symbolic link met is replaced by its
// target, relative targets read from the link's directory. A component
// that does not exist is kept as written, as a directory would be, and
// the walk goes on (a later ".." can bring it back into what exists):
// a path whose parent does not exist yet resolves as far as it exists.
type resolver struct {
	fs FS
	// budget, when not nil, is the lookups left to the call.
	budget *int
}

// spend takes one lookup from the budget.
func (r resolver) spend() error {
	if r.budget == nil {
		return nil
	}
	if *r.budget--; *r.budget < 0 {
		return ErrTooMuchWork
	}
	return nil
}

// resolve returns the canonical form of the absolute path p.
func (r resolver) resolve(p string) (string, error) {
	if len(p) > MaxPathBytes {
		return "", ErrPathTooLong
	}
	if !strings.HasPrefix(p, "/") {
		return "", errors.New("is not absolute")
	}
	var w walk
	w.todo = p
	for w.todo != "" {
		if err := r.step(&w); err != nil {
			return "", err
		}
	}
	if w.done == "" {
		return "/", nil
	}
	return w.done, nil
}

// walk is a resolution in progress: done is resolved (no links, no dots;
// "" is the root), todo is what remains to walk.
type walk struct {
	done, todo string
	links      int
	missing    bool // a component of done does not exist: nothing under it does
}

// step walks one component of w.todo.
func (r resolver) step(w *walk) error {
	var comp string
	comp, w.todo = next(w.todo)
	switch comp {
	case "", ".":
		return nil
	case "..":
		if i := strings.LastIndexByte(w.done, '/'); i >= 0 {
			w.done = w.done[:i]
		}
		if w.missing {
			if err := r.spend(); err != nil {
				return err
			}
			w.missing = r.absent(w.done)
		}
		return nil
	}
	cand := w.done + "/" + comp
	if w.missing {
		w.done = cand
		return nil
	}
	if err := r.spend(); err != nil {
		return err
	}
	fi, err := r.fs.Lstat(cand)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		w.done, w.missing = cand, true
		return nil
	case errors.Is(err, syscall.ENOTDIR):
		return ErrNotDir
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return r.follow(w, cand)
	case !fi.IsDir() && w.todo != "":
		return ErrNotDir // "file/x", "file/..", and "file/" too, as the kernel has it
	}
	w.done = cand
	return nil
}

// absent reports whether the resolved dir does not exist. It is asked
// only after ".." climbs out of a missing component, to know whether the
// walk is back in what exists.
func (r resolver) absent(dir string) bool {
	if dir == "" {
		return false
	}
	_, err := r.fs.Lstat(dir)
	return err != nil
}

// follow replaces the link cand by its target in front of what remains.
func (r resolver) follow(w *walk, cand string) error {
	if w.links++; w.links > MaxSymlinks {
		return ErrSymlinkLoop
	}
	if err := r.spend(); err != nil {
		return err
	}
	target, err := r.fs.Readlink(cand)
	if err != nil {
		return err
	}
	if target == "" {
		return errors.New("a symbolic link with an empty target")
	}
	if strings.HasPrefix(target, "/") {
		w.done = ""
	}
	if len(target)+len(w.todo) > MaxPathBytes {
		return ErrPathTooLong
	}
	w.todo = target + w.todo
	return nil
}

// next splits the first component off p; rest keeps the "/" after it,
// so a trailing slash is still seen (it requires a directory).
func next(p string) (comp, rest string) {
	p = strings.TrimLeft(p, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

// lexical is p cleaned without the filesystem ("a/link/.." is "a"): how
// a server that normalises a path before it looks at the disk (Node's
// path.resolve) reads it. A rule matches if either reading is under it.
func lexical(p string) string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, c)
		}
	}
	return "/" + strings.Join(out, "/")
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
