//go:build !linux

package scan

import (
	"io/fs"
	"time"
)

// platformCache is empty here: every directory is validated by stat.
type platformCache struct{}

func (c *Cache) initPlatform()        {}
func (c *Cache) closePlatform() error { return nil }
func (c *Cache) validatePlatform()    {}
func (c *Cache) overflows() int       { return 0 }
func (c *Cache) unwatch(n *node)      {}

// noteListing records directory n's stat, taken before it is read.
func (c *Cache) noteListing(n *node, fi fs.FileInfo) {
	n.readAt = time.Now().UnixNano()
	n.st = statOf(fi)
	c.wmu.Lock()
	c.unwatched[n] = struct{}{}
	c.wmu.Unlock()
}
