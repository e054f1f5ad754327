package gateway_test

import (
	"testing"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

func TestPairing_Redeem(t *testing.T) {
	t.Parallel()
	setup := func() (*gateway.Pairing, *time.Time) {
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		return gateway.NewPairing(func() time.Time { return now }), &now
	}
	t.Run("OK", func(t *testing.T) {
		p, _ := setup()
		c, err := p.Create(storeprint.RolePOS, "counter 1", "admin")
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Code) != 6 {
			t.Fatalf("got code %q, want six digits", c.Code)
		}
		got, err := p.Redeem(c.Code, "192.0.2.1")
		if err != nil || got.Role != storeprint.RolePOS || got.Name != "counter 1" {
			t.Fatalf("got %+v %v, want the pos code", got, err)
		}
	})
	t.Run("ErrUsed", func(t *testing.T) {
		p, _ := setup()
		c, _ := p.Create(storeprint.RolePOS, "", "admin")
		p.Redeem(c.Code, "192.0.2.1")
		if _, err := p.Redeem(c.Code, "192.0.2.1"); storeprint.ErrorCode(err) != storeprint.EUNAUTHORIZED {
			t.Fatalf("second use: got %v, want unauthorized", err)
		}
	})
	t.Run("ErrExpired", func(t *testing.T) {
		p, now := setup()
		c, _ := p.Create(storeprint.RoleStaff, "", "admin")
		*now = now.Add(gateway.PairingCodeTTL)
		if _, err := p.Redeem(c.Code, "192.0.2.1"); storeprint.ErrorCode(err) != storeprint.EUNAUTHORIZED {
			t.Fatalf("after %s: got %v, want unauthorized", gateway.PairingCodeTTL, err)
		}
	})
	t.Run("ErrWrongTries", func(t *testing.T) {
		p, _ := setup()
		c, _ := p.Create(storeprint.RolePOS, "", "admin")
		wrong := "000000"
		if c.Code == wrong {
			wrong = "000001"
		}
		for i := 0; i < gateway.PairingMaxWrong; i++ {
			if _, err := p.Redeem(wrong, "192.0.2.1"); storeprint.ErrorCode(err) != storeprint.EUNAUTHORIZED {
				t.Fatalf("wrong try %d: got %v", i, err)
			}
		}
		if _, err := p.Redeem(c.Code, "192.0.2.1"); storeprint.ErrorCode(err) != storeprint.EUNAUTHORIZED {
			t.Fatalf("after %d wrong tries: got %v, want the code barred to their address", gateway.PairingMaxWrong, err)
		}
		// The wrong codes of one address end nobody else's pairing.
		if got, err := p.Redeem(c.Code, "192.0.2.2"); err != nil || got.Code != c.Code {
			t.Fatalf("from another address: got %v, %v, want the code", got, err)
		}
	})
	t.Run("ErrRole", func(t *testing.T) {
		if err := gateway.MayPair(storeprint.RoleStaff, storeprint.RoleAdmin); storeprint.ErrorCode(err) != storeprint.EFORBIDDEN {
			t.Fatalf("staff pairing admin: got %v, want forbidden", err)
		}
		if err := gateway.MayPair(storeprint.RolePOS, storeprint.RolePOS); storeprint.ErrorCode(err) != storeprint.EFORBIDDEN {
			t.Fatalf("pos pairing: got %v, want forbidden", err)
		}
		if err := gateway.MayPair(storeprint.RoleStaff, storeprint.RolePOS); err != nil {
			t.Fatalf("staff pairing pos: got %v", err)
		}
		p, _ := setup()
		if _, err := p.Create("boss", "", "admin"); storeprint.ErrorCode(err) != storeprint.EINVALID {
			t.Fatalf("unknown role: got %v, want invalid", err)
		}
	})
}
