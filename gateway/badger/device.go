package badger

import (
	"errors"
	"fmt"
	"sort"

	bdg "github.com/dgraph-io/badger/v4"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// Devices paired with the gateway:
//
//	D/<device_id>       device (its token's SHA-256, never the token)
//	H/<token_sha256>    device_id: the look-up of every authenticated request
const (
	spaceDevice      = 'D'
	spaceDeviceToken = 'H'
)

func (t *tx) Device(deviceID string) (*gateway.Device, error) {
	var d gateway.Device
	if err := t.getValue(key(spaceDevice, deviceID), &d); err != nil {
		if errors.Is(err, bdg.ErrKeyNotFound) {
			return nil, storeprint.Errorf(storeprint.ENOTFOUND, "device %q not found", deviceID)
		}
		return nil, fmt.Errorf("read device %q: %w", deviceID, err)
	}
	return &d, nil
}

func (t *tx) DeviceByToken(tokenSHA256 string) (*gateway.Device, error) {
	id, err := t.get(key(spaceDeviceToken, tokenSHA256))
	if errors.Is(err, bdg.ErrKeyNotFound) {
		return nil, storeprint.Errorf(storeprint.ENOTFOUND, "no device has this token")
	}
	if err != nil {
		return nil, fmt.Errorf("read device token: %w", err)
	}
	return t.Device(string(id))
}

func (t *tx) Devices() ([]*gateway.Device, error) {
	out := []*gateway.Device{}
	err := t.scan(prefix(spaceDevice), func(_, v []byte) (bool, error) {
		var d gateway.Device
		if err := decode(v, &d); err != nil {
			return false, err
		}
		out = append(out, &d)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read devices: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

func (t *tx) PutDevice(d *gateway.Device) error {
	if d.ID == "" || d.TokenSHA256 == "" {
		return fmt.Errorf("put device: id and token hash are required")
	}
	old, err := t.Device(d.ID)
	if err != nil && storeprint.ErrorCode(err) != storeprint.ENOTFOUND {
		return err
	}
	if old != nil && old.TokenSHA256 != d.TokenSHA256 {
		t.del(key(spaceDeviceToken, old.TokenSHA256))
	}
	if err := t.put(key(spaceDevice, d.ID), d); err != nil {
		return err
	}
	t.set(key(spaceDeviceToken, d.TokenSHA256), []byte(d.ID))
	return nil
}

func (t *tx) DeleteDevice(deviceID string) error {
	d, err := t.Device(deviceID)
	if err != nil {
		return err
	}
	t.del(key(spaceDevice, d.ID))
	t.del(key(spaceDeviceToken, d.TokenSHA256))
	return nil
}
