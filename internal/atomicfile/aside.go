package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Aside renames path to a temporary name beside it (".NAME.tmp-pPID-asideN"),
// a change that renaming it back takes back, and returns that name: the
// caller removes it once the change is published, or renames it back. A
// process killed in between leaves it as the leftover of a killed run, which
// the next Add for path removes (see the package comment).
func Aside(path string) (string, error) {
	dir, base := filepath.Split(path)
	for try := range 10 {
		name := filepath.Join(dir, tempPrefix(base)+"p"+strconv.Itoa(os.Getpid())+"-aside"+strconv.FormatInt(time.Now().UnixNano(), 36)+strconv.Itoa(try))
		if _, err := os.Lstat(name); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := os.Rename(path, name); err != nil {
			return "", err
		}
		return name, nil
	}
	return "", errors.New("no free temporary name")
}
