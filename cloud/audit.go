package cloud

import (
	"context"
	"encoding/json"
	"time"
)

// Audit sources.
const (
	AuditFromCloud   = "cloud"   // an admin action through the cloud API
	AuditFromGateway = "gateway" // a person's action at the store, replayed upstream
)

// AuditEvent is one entry of the append-only audit trail: who did what,
// why, the state before and after, and when. The database refuses to
// update or delete one.
type AuditEvent struct {
	TenantID string          `json:"tenant_id"`
	ID       string          `json:"audit_id"`
	StoreID  string          `json:"store_id,omitempty"`
	Source   string          `json:"source"`
	Actor    string          `json:"actor"`              // the credential (Actor.String)
	Operator string          `json:"operator,omitempty"` // the person, when named
	Action   string          `json:"action"`
	Resource string          `json:"resource"`
	Reason   string          `json:"reason,omitempty"`
	Before   json.RawMessage `json:"before"`
	After    json.RawMessage `json:"after"`
	At       time.Time       `json:"at"`
}

// Admin actions recorded by the cloud.
const (
	ActionCreateTenant      = "tenant.create"
	ActionCreateTenantToken = "tenant_token.create"
	ActionCreateStore       = "store.create"
	ActionCreateGateway     = "gateway.create"
	ActionRevokeGateway     = "gateway.revoke"
	ActionRetry             = "task.retry"
	ActionReprint           = "task.reprint"
	ActionFailoverAck       = "printer.failover_ack"
	ActionAlertAck          = "alert.ack"
)

// Audit list limits.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// AuditFilter selects audit events the actor may see.
type AuditFilter struct {
	TenantID string // admin: one tenant; empty: all. Tenants see their own.
	StoreID  string // empty: any
	Limit    int    // 0: DefaultAuditLimit
}

// AuditService reads the audit trail.
type AuditService interface {
	// FindAuditEvents lists audit events, newest first.
	FindAuditEvents(ctx context.Context, f AuditFilter) ([]*AuditEvent, error)
}
