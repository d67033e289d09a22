//go:build unix

package descriptors

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// privateFile checks that fi is a file of this process's user that no
// one else may read or write.
func privateFile(fi fs.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("others may read or write it (mode %v)", perm)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("owned by user %d, not by this process's (%d)", st.Uid, os.Geteuid())
	}
	return nil
}
