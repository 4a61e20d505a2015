//go:build !unix

package protectguard

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

type state struct{}

type cache struct{}

func newCache() *cache { return &cache{} }

func (g *Guard) scan(ctx context.Context, base *state) (*state, error) {
	return nil, fmt.Errorf("protectguard: not implemented on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)
}

func (g *Guard) repair(ctx context.Context) ([]Violation, error) {
	_, err := g.scan(ctx, nil)
	return nil, err
}

func (g *Guard) repairKnown(ctx context.Context) ([]Violation, error) {
	_, err := g.scan(ctx, nil)
	return nil, err
}

func (g *Guard) inherited(st *state) *state { return st }
