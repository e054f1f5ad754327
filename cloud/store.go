package cloud

import (
	"context"
	"time"

	"github.com/storeprint/storeprint"
)

// Store is one restaurant of a tenant, with one gateway in service.
type Store struct {
	ID        string    `json:"store_id"`
	TenantID  string    `json:"tenant_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Validate checks the store's fields.
func (s *Store) Validate() error {
	if err := validID("store_id", s.ID); err != nil {
		return err
	}
	if err := validID("tenant_id", s.TenantID); err != nil {
		return err
	}
	return validName(s.Name)
}

// StoreStatus is a store as the HQ dashboard shows it.
type StoreStatus struct {
	Store
	Online     bool       `json:"online"` // a gateway of the store has a live sync link
	LastSeen   *time.Time `json:"last_seen"`
	Gateways   []*Gateway `json:"gateways"`
	Printers   []*Printer `json:"printers"`
	OpenAlerts int        `json:"open_alerts"`
}

// Printer is a store's printer as its gateway last reported it.
type Printer struct {
	ID        string                  `json:"printer_id"`
	Status    storeprint.PrinterState `json:"status"`
	Stations  []string                `json:"stations"`
	Backup    string                  `json:"backup"`
	Failover  bool                    `json:"failover"` // its stations print on the backup
	UpdatedAt time.Time               `json:"updated_at"`
}

// Validate checks a printer report.
func (p *Printer) Validate() error {
	if err := validID("printer_id", p.ID); err != nil {
		return err
	}
	switch p.Status {
	case storeprint.PrinterReady, storeprint.PrinterOffline, storeprint.PrinterPaperEnd, storeprint.PrinterCoverOpen, storeprint.PrinterUnknown:
	default:
		return Errorf(EINVALID, "printer %q: unknown status %q", p.ID, p.Status)
	}
	for _, s := range p.Stations {
		if err := validID("station", s); err != nil {
			return err
		}
	}
	if p.Backup != "" {
		return validID("backup", p.Backup)
	}
	return nil
}

// StoreService manages stores and answers the dashboard.
type StoreService interface {
	// CreateStore creates a store of an existing tenant (admin only). The
	// same store again changes nothing and reports created false; the
	// same id with other fields is ECONFLICT.
	CreateStore(ctx context.Context, s *Store, note Note) (created bool, err error)

	// FindStores lists the stores the actor may see, with their gateways,
	// printers and open alert counts.
	FindStores(ctx context.Context) ([]*StoreStatus, error)

	// FindAlerts lists a store's open alerts, oldest first.
	FindAlerts(ctx context.Context, storeID string) ([]*Alert, error)
}

// Alert is something at a store a person must act on.
type Alert struct {
	StoreID    string     `json:"store_id"`
	ID         string     `json:"alert_id"`
	Kind       string     `json:"kind"` // a task status: failed, attention_required
	TaskNo     string     `json:"task_no,omitempty"`
	PrinterID  string     `json:"printer_id,omitempty"`
	Message    string     `json:"message"`
	RaisedAt   time.Time  `json:"raised_at"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
}
