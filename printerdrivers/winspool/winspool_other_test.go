//go:build !windows

package winspool_test

import (
	"errors"
	"testing"

	"github.com/storeprint/storeprint/printerdrivers/printertest"
	"github.com/storeprint/storeprint/printerdrivers/winspool"
)

func TestNew(t *testing.T) {
	t.Parallel()
	t.Run("ErrUnsupported", func(t *testing.T) {
		t.Parallel()
		p, err := winspool.New(printertest.Config(0), "store-001")
		if !errors.Is(err, winspool.ErrUnsupported) || p != nil {
			t.Fatalf("got %v, %v; want ErrUnsupported off Windows", p, err)
		}
	})
}
