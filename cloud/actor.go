package cloud

import (
	"context"

	"github.com/storeprint/storeprint"
)

// Actor kinds: which credential made a call.
const (
	ActorAdmin   = "admin"   // the operator's admin token: every tenant
	ActorTenant  = "tenant"  // a tenant token: that tenant's stores only
	ActorGateway = "gateway" // a gateway token: the sync link only
)

// Actor is who makes a call: the credential, never the secret. Its String
// form is the "who" of audit events.
type Actor struct {
	Kind      string
	TenantID  string // tenant and gateway actors
	TokenID   string // tenant actors: the public handle of the token
	StoreID   string // gateway actors
	GatewayID string // gateway actors
}

func (a *Actor) String() string {
	if a == nil {
		return "anonymous"
	}
	switch a.Kind {
	case ActorAdmin:
		return "admin"
	case ActorTenant:
		return "tenant:" + a.TenantID + "/token:" + a.TokenID
	case ActorGateway:
		return "gateway:" + a.GatewayID
	}
	return "unknown"
}

// IsAdmin reports whether the actor holds the admin token.
func (a *Actor) IsAdmin() bool { return a != nil && a.Kind == ActorAdmin }

// TenantScope returns the tenant the actor is confined to, and false for
// the admin, who sees every tenant. Queries filter on it.
func (a *Actor) TenantScope() (tenantID string, scoped bool) {
	if a.IsAdmin() {
		return "", false
	}
	if a == nil || a.TenantID == "" {
		// Fail closed: an actor without a tenant sees nothing.
		return "\x00none", true
	}
	return a.TenantID, true
}

type actorKey struct{}

// NewContextWithActor returns a context carrying the actor.
func NewContextWithActor(ctx context.Context, a *Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFromContext returns the context's actor, or nil.
func ActorFromContext(ctx context.Context) *Actor {
	a, _ := ctx.Value(actorKey{}).(*Actor)
	return a
}

// RequireActor returns the context's actor, or EUNAUTHORIZED. Gateway
// actors are refused: their token is for the sync link only.
func RequireActor(ctx context.Context) (*Actor, error) {
	a := ActorFromContext(ctx)
	switch {
	case a == nil:
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "no credential")
	case a.Kind == ActorGateway:
		return nil, storeprint.Errorf(storeprint.EFORBIDDEN, "a gateway token is only accepted on the sync link")
	case a.Kind != ActorAdmin && a.Kind != ActorTenant:
		return nil, storeprint.Errorf(storeprint.EUNAUTHORIZED, "unknown credential")
	}
	return a, nil
}

// RequireAdmin returns the context's actor if it holds the admin token.
func RequireAdmin(ctx context.Context) (*Actor, error) {
	a, err := RequireActor(ctx)
	if err != nil {
		return nil, err
	}
	if !a.IsAdmin() {
		return nil, storeprint.Errorf(storeprint.EFORBIDDEN, "this action needs the admin token")
	}
	return a, nil
}
