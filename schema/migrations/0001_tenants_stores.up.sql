-- Tenants, stores and the credentials that reach them.
BEGIN;

-- A tenant is one chain. Tenant-only tables are keyed by tenant_id.
CREATE TABLE tenants (
    tenant_id  text        NOT NULL,
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id)
);

-- Tenant API tokens, stored only as SHA-256 hashes.
CREATE TABLE tenant_tokens (
    tenant_id  text        NOT NULL REFERENCES tenants (tenant_id),
    token_id   text        NOT NULL, -- public handle, names the token in audit events
    token_hash bytea       NOT NULL,
    created_by text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz,
    PRIMARY KEY (tenant_id, token_id),
    UNIQUE (tenant_id, token_hash)
);

CREATE TABLE stores (
    store_id   text        NOT NULL,
    tenant_id  text        NOT NULL REFERENCES tenants (tenant_id),
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id)
);
CREATE INDEX stores_tenant_idx ON stores (tenant_id, store_id);

-- One row per gateway credential. A replaced or stolen gateway is revoked,
-- never deleted: its events stay attributable.
CREATE TABLE gateways (
    store_id   text        NOT NULL REFERENCES stores (store_id),
    gateway_id text        NOT NULL,
    token_hash bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz,
    online     boolean     NOT NULL DEFAULT false, -- a sync link is open (see last_seen)
    link_id    text        NOT NULL DEFAULT '',    -- the link that set online; fences a late disconnect
    last_seen  timestamptz,
    version    text        NOT NULL DEFAULT '',    -- the gateway's software version
    PRIMARY KEY (store_id, gateway_id)
);
-- Admin look-ups by gateway_id alone (revocation). Not unique: a unique
-- constraint must start with store_id; gateway ids are 128-bit random.
CREATE INDEX gateways_gateway_id_idx ON gateways (gateway_id);

-- Highest contiguous upstream seq stored per gateway: what the cloud acks.
CREATE TABLE gateway_cursors (
    store_id   text        NOT NULL,
    gateway_id text        NOT NULL,
    seq        bigint      NOT NULL DEFAULT 0 CHECK (seq >= 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, gateway_id),
    FOREIGN KEY (store_id, gateway_id) REFERENCES gateways (store_id, gateway_id)
);

-- Printers as the store reports them.
CREATE TABLE printers (
    store_id   text        NOT NULL REFERENCES stores (store_id),
    printer_id text        NOT NULL,
    status     text        NOT NULL DEFAULT 'unknown'
        CHECK (status IN ('ready', 'offline', 'paper_end', 'cover_open', 'unknown')),
    stations   text[]      NOT NULL DEFAULT '{}',
    backup     text        NOT NULL DEFAULT '',
    failover   boolean     NOT NULL DEFAULT false, -- its stations print on the backup
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, printer_id)
);

COMMIT;
