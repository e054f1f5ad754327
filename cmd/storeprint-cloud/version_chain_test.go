package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeprint/storeprint/cloud/postgres/pgtest"
	"github.com/storeprint/storeprint/internal/testbin"
)

// The gateway says its version in the sync link's hello, and HQ sees it.
func TestChain_GatewayVersion(t *testing.T) {
	t.Parallel()
	const stamped = "v0.0.0-chain-test"
	bin := filepath.Join(t.TempDir(), "storeprint-gateway")
	build := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-X github.com/storeprint/storeprint/internal/version.stamped="+stamped,
		"github.com/storeprint/storeprint/cmd/storeprint-gateway")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "storeprint-gateway "+stamped+" ") {
		t.Fatalf("version: got %q, %v", out, err)
	}

	node := startCloud(t, pgtest.NewDatabase(t), "127.0.0.1:0")
	st := createStore(t, node.base, "t-version", "s-version")
	_, hotAddr := startSim(t)
	cfg := filepath.Join(t.TempDir(), "gateway.toml")
	body := fmt.Sprintf("store_id = %q\ndata_dir = %q\nlisten = \"127.0.0.1:0\"\napi_tokens = [%q]\n"+
		"[cloud]\nurl = \"ws://%s/v1/sync\"\ninsecure = true\ngateway_id = %q\ntoken = %q\n"+
		"[[printers]]\nid = \"hot-1\"\ndriver = \"tcp\"\naddress = %q\n[[stations]]\nname = \"hot\"\nprinter = \"hot-1\"\n",
		st.id, filepath.Join(t.TempDir(), "data"), posToken, strings.TrimPrefix(node.base, "http://"), st.gatewayID, st.token, hotAddr)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	g := testbin.StartGateway(t, bin, cfg)
	waitSynced(t, &gatewayProc{Gateway: g, base: g.Base}, 30*time.Second)

	var stores []struct {
		ID       string `json:"store_id"`
		Gateways []struct {
			ID      string `json:"gateway_id"`
			Version string `json:"version"`
		} `json:"gateways"`
	}
	if code := do(t, adminToken, "GET", node.base+"/v1/stores", nil, &stores); code != 200 {
		t.Fatalf("GET /v1/stores: %d", code)
	}
	for _, s := range stores {
		for _, gw := range s.Gateways {
			if s.ID == st.id && gw.ID == st.gatewayID {
				if gw.Version != stamped {
					t.Fatalf("the cloud has the gateway's version as %q, want %q", gw.Version, stamped)
				}
				return
			}
		}
	}
	t.Fatalf("GET /v1/stores does not list gateway %s of %s: %+v", st.gatewayID, st.id, stores)
}
