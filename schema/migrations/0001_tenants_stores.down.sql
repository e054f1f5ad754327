BEGIN;
DROP TABLE printers;
DROP TABLE gateway_cursors;
DROP TABLE gateways;
DROP TABLE stores;
DROP TABLE tenant_tokens;
DROP TABLE tenants;
COMMIT;
