//go:build linux

package docker

import (
	"bufio"
	"os"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/abspath"
)

// hostPropagates reports whether the host mount that holds p is shared or
// a slave (/proc/self/mountinfo), so that a bind of p can be made rslave.
func hostPropagates(p string) bool {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	best, prop := "", false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - type source super
		fields := strings.Fields(sc.Text())
		if len(fields) < 7 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if !abspath.Within(p, mp) || len(mp) < len(best) {
			continue
		}
		best, prop = mp, false
		for _, o := range fields[6:] {
			if o == "-" {
				break
			}
			if strings.HasPrefix(o, "shared:") || strings.HasPrefix(o, "master:") {
				prop = true
			}
		}
	}
	return prop
}

// unescapeMountinfo undoes the octal escapes (\040 for a space) of
// /proc/self/mountinfo.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
