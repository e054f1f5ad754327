// Package chromium starts the system's headless Chromium for browser tests
// of the LAN page and the HQ dashboard.
package chromium
