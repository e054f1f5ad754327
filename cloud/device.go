package cloud

import (
	"context"
	"time"

	"github.com/storeprint/storeprint"
)

// Device is a device paired with a store's gateway, as the cloud learns of
// it from the store's audit trail (device_pair and device_revoke).
type Device struct {
	StoreID   string          `json:"store_id"`
	ID        string          `json:"device_id"`
	Name      string          `json:"name"`
	Role      storeprint.Role `json:"role"`
	CreatedAt time.Time       `json:"created_at"`
	RevokedAt *time.Time      `json:"revoked_at"` // null while the device may call the gateway
}

// DeviceService shows HQ the devices of a store. Revoking one goes through
// CommandService (storeprint.CommandDeviceRevoke).
type DeviceService interface {
	// FindDevices lists the devices paired at a store, oldest first; a
	// store the actor may not see is ENOTFOUND.
	FindDevices(ctx context.Context, storeID string) ([]*Device, error)
}
