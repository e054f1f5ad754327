package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/storeprint/storeprint/cloud"
)

// Each side's data: which incarnation of the store's data dir it knows,
// and whether one side was found behind the other and caught up (a resync).

// resyncState is the gateway's last resync since it started (its /healthz).
type resyncState struct {
	Kind  string    `json:"kind"`  // snapshot: the cloud was behind; learned: the gateway was
	Tasks int       `json:"tasks"` // tasks sent, or states learned
	At    time.Time `json:"at"`
}

// incarnations is what reconcile reports of both sides' data.
type incarnations struct {
	Store       string               `json:"store"`                  // the gateway's data dir; "" for one made before incarnations
	StoreResync *resyncState         `json:"store_resync,omitempty"` // since the gateway started
	Cloud       []*cloud.Incarnation `json:"cloud"`                  // every incarnation the cloud knows of the store's gateways, newest first
	Events      []*cloud.LinkEvent   `json:"cloud_events"`           // the cloud's data reset and resync events, newest first
}

// cloudLink reads the store's link as the cloud knows it; nil from a cloud
// too old to say.
func cloudLink(ctx context.Context, a *api, storeID string) (*cloud.StoreLink, error) {
	var l cloud.StoreLink
	if _, err := a.do(ctx, "GET", "/v1/stores/"+storeID+"/link", nil, nil, &l, true); err != nil {
		if errors.Is(err, errNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return &l, nil
}

func newIncarnations(link linkState, cl *cloud.StoreLink) *incarnations {
	in := &incarnations{Store: link.Incarnation, StoreResync: link.Resync, Cloud: []*cloud.Incarnation{}, Events: []*cloud.LinkEvent{}}
	if cl == nil {
		return in
	}
	in.Cloud = cl.Incarnations
	for _, e := range cl.Events {
		switch e.Kind {
		case cloud.LinkGatewayReset, cloud.LinkResynchronised, cloud.LinkGatewayBehind:
			in.Events = append(in.Events, e)
		}
	}
	return in
}

// describe says in two lines what each side knows, for people.
func (in *incarnations) describe() string {
	var b strings.Builder
	store := in.Store
	if store == "" {
		store = "none (its data dir was made before incarnations)"
	}
	fmt.Fprintf(&b, "incarnation: store %s; cloud ", store)
	if len(in.Cloud) == 0 {
		b.WriteString("knows none")
	} else {
		newest := in.Cloud[0]
		fmt.Fprintf(&b, "newest %s of gateway %s", orNone(newest.Incarnation), newest.GatewayID)
		if newest.Incarnation != in.Store {
			b.WriteString(" (not the store's)")
		}
		if n := len(in.Cloud) - 1; n > 0 {
			fmt.Fprintf(&b, ", %s before it", plural(n, "other"))
		}
	}
	b.WriteString("\nresync: store ")
	switch r := in.StoreResync; {
	case r == nil:
		b.WriteString("none since the gateway started")
	case r.Kind == "snapshot":
		fmt.Fprintf(&b, "sent a snapshot of %s at %s (the cloud was behind)", plural(r.Tasks, "task"), r.At.Local().Format(time.DateTime))
	default:
		fmt.Fprintf(&b, "learned %s from the cloud at %s (the store was behind)", plural(r.Tasks, "state"), r.At.Local().Format(time.DateTime))
	}
	b.WriteString("; cloud ")
	if len(in.Events) == 0 {
		b.WriteString("recorded none")
	} else {
		e := in.Events[0]
		fmt.Fprintf(&b, "last recorded %s at %s", strings.ReplaceAll(e.Kind, "_", " "), e.At.Local().Format(time.DateTime))
	}
	return b.String()
}

func orNone(inc string) string {
	if inc == "" {
		return "none"
	}
	return inc
}
