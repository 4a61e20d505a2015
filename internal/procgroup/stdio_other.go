//go:build !unix

package procgroup

import "errors"

// terminal is unsupported without Unix pseudo-terminals.
func terminal(*Terminal) (*streams, error) {
	return nil, errors.ErrUnsupported
}
