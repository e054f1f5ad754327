package cloud_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/cloud"
)

func TestParseTenantToken(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		tok, id := cloud.NewTenantToken("acme.cn-1")
		got, ok := cloud.ParseTenantToken(tok)
		if !ok || got != "acme.cn-1" {
			t.Fatalf("got %q %v, want acme.cn-1 true", got, ok)
		}
		if len(id) != 16 || strings.Contains(tok, id) {
			t.Fatalf("got id %q: want 16 hex characters, not part of the token", id)
		}
		if other, _ := cloud.NewTenantToken("acme.cn-1"); other == tok {
			t.Fatal("two tokens are equal")
		}
	})
	t.Run("ErrMalformed", func(t *testing.T) {
		gw := cloud.NewGatewayToken("s1")
		for _, s := range []string{"", "spt1.", "spt1.YWNtZQ", "spt1.YWNtZQ.short", "spt1..0123456789012345678901234567890123456789012", gw} {
			if _, ok := cloud.ParseTenantToken(s); ok {
				t.Errorf("%q parsed", s)
			}
		}
	})
}

func TestParseGatewayToken(t *testing.T) {
	tok := cloud.NewGatewayToken("store-001")
	if got, ok := cloud.ParseGatewayToken(tok); !ok || got != "store-001" {
		t.Fatalf("got %q %v, want store-001 true", got, ok)
	}
	if len(cloud.HashToken(tok)) != 32 {
		t.Fatal("the hash is not SHA-256")
	}
}

func TestActor_TenantScope(t *testing.T) {
	for name, tc := range map[string]struct {
		actor  *cloud.Actor
		tenant string
		scoped bool
	}{
		"Admin":          {&cloud.Actor{Kind: cloud.ActorAdmin}, "", false},
		"Tenant":         {&cloud.Actor{Kind: cloud.ActorTenant, TenantID: "acme"}, "acme", true},
		"TenantWithout":  {&cloud.Actor{Kind: cloud.ActorTenant}, "\x00none", true},
		"Nil":            {nil, "\x00none", true},
		"GatewayNoScope": {&cloud.Actor{Kind: cloud.ActorGateway}, "\x00none", true},
	} {
		t.Run(name, func(t *testing.T) {
			tenant, scoped := tc.actor.TenantScope()
			if tenant != tc.tenant || scoped != tc.scoped {
				t.Fatalf("got %q %v, want %q %v", tenant, scoped, tc.tenant, tc.scoped)
			}
		})
	}
}

func TestRequireAdmin(t *testing.T) {
	ctx := context.Background()
	with := func(a *cloud.Actor) context.Context { return cloud.NewContextWithActor(ctx, a) }
	for name, tc := range map[string]struct {
		ctx  context.Context
		code string
	}{
		"Admin":   {with(&cloud.Actor{Kind: cloud.ActorAdmin}), ""},
		"Tenant":  {with(&cloud.Actor{Kind: cloud.ActorTenant, TenantID: "a"}), storeprint.EFORBIDDEN},
		"Gateway": {with(&cloud.Actor{Kind: cloud.ActorGateway}), storeprint.EFORBIDDEN},
		"None":    {ctx, storeprint.EUNAUTHORIZED},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := cloud.RequireAdmin(tc.ctx)
			if got := storeprint.ErrorCode(err); got != tc.code {
				t.Fatalf("got %q (%v), want %q", got, err, tc.code)
			}
		})
	}
}

func TestErrorCode(t *testing.T) {
	wrapped := fmt.Errorf("create store: %w", storeprint.Errorf(storeprint.ECONFLICT, "store %q exists", "s1"))
	if storeprint.ErrorCode(wrapped) != storeprint.ECONFLICT || storeprint.ErrorMessage(wrapped) != `store "s1" exists` {
		t.Fatalf("got %q %q", storeprint.ErrorCode(wrapped), storeprint.ErrorMessage(wrapped))
	}
	plain := errors.New("connection reset: secret detail")
	if storeprint.ErrorCode(plain) != storeprint.EINTERNAL || storeprint.ErrorMessage(plain) != "internal error" {
		t.Fatalf("got %q %q, want the detail hidden", storeprint.ErrorCode(plain), storeprint.ErrorMessage(plain))
	}
	if storeprint.ErrorCode(nil) != "" {
		t.Fatal("nil has a code")
	}
}

func TestCommandRequest_Validate(t *testing.T) {
	for name, tc := range map[string]struct {
		req  cloud.CommandRequest
		code string
	}{
		"Retry":         {cloud.CommandRequest{Kind: storeprint.CommandRetry, TaskNo: "order_1_station_hot"}, ""},
		"FailoverAck":   {cloud.CommandRequest{Kind: storeprint.CommandFailoverAck, PrinterID: "hot-1"}, ""},
		"ErrNoTask":     {cloud.CommandRequest{Kind: storeprint.CommandReprint}, storeprint.EINVALID},
		"DeviceRevoke":  {cloud.CommandRequest{Kind: storeprint.CommandDeviceRevoke, DeviceID: "dev-1a2b"}, ""},
		"ErrNoDevice":   {cloud.CommandRequest{Kind: storeprint.CommandDeviceRevoke}, storeprint.EINVALID},
		"ErrDeviceID":   {cloud.CommandRequest{Kind: storeprint.CommandDeviceRevoke, DeviceID: "dev/1"}, storeprint.EINVALID},
		"ErrKind":       {cloud.CommandRequest{Kind: "order", TaskNo: "x"}, storeprint.EINVALID},
		"ErrCommandID":  {cloud.CommandRequest{ID: "a b", Kind: storeprint.CommandRetry, TaskNo: "x"}, storeprint.EINVALID},
		"ErrLongReason": {cloud.CommandRequest{Kind: storeprint.CommandRetry, TaskNo: "x", Note: cloud.Note{Reason: strings.Repeat("x", 501)}}, storeprint.EINVALID},
		"ErrControl":    {cloud.CommandRequest{Kind: storeprint.CommandRetry, TaskNo: "x", Note: cloud.Note{Operator: "a\x1bb"}}, storeprint.EINVALID},
	} {
		t.Run(name, func(t *testing.T) {
			if got := storeprint.ErrorCode(tc.req.Validate()); got != tc.code {
				t.Fatalf("got %q, want %q", got, tc.code)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"24h": 24 * time.Hour, "90m": 90 * time.Minute, "2d": 48 * time.Hour, "1.5d": 36 * time.Hour} {
		if got, err := cloud.ParseDuration(in); err != nil || got != want {
			t.Errorf("%s: got %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "xd", "1e300d", "NaNd", "soon"} {
		if _, err := cloud.ParseDuration(in); err == nil {
			t.Errorf("%q: got no error", in)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"24h", "2d", "1.5d", "-1d", "1e300d", "90m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := cloud.ParseDuration(s)
		if err != nil {
			return
		}
		if days, ok := strings.CutSuffix(s, "d"); ok {
			n, _ := strconv.ParseFloat(days, 64)
			if want := n * float64(24*time.Hour); math.Abs(float64(d)-want) > 1 && math.Abs(float64(d)-want) > math.Abs(want)*1e-9 {
				t.Fatalf("%q: got %v, want about %v ns", s, d, want)
			}
		}
	})
}
