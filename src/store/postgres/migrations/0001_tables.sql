-- Overdue's tables, version 1. Every `record` is a value encoded by store/records.rs (a
-- version byte, then bincode): the same bytes the embedded engine stores. Keys are columns.

CREATE TABLE overdue_meta (
    key text PRIMARY KEY,
    value bytea NOT NULL
);

CREATE TABLE overdue_projects (
    uuid uuid PRIMARY KEY,
    record bytea NOT NULL
);

CREATE TABLE overdue_api_keys (
    id bytea PRIMARY KEY,
    record bytea NOT NULL
);

CREATE TABLE overdue_checks (
    uuid uuid PRIMARY KEY,
    record bytea NOT NULL
);

-- Derived from the checks: which checks carry a slug in a project.
CREATE TABLE overdue_slug_index (
    project uuid NOT NULL,
    slug text NOT NULL,
    check_id uuid NOT NULL,
    PRIMARY KEY (project, slug, check_id)
);

-- Derived from the checks: the check of each per-check badge key.
CREATE TABLE overdue_badge_keys (
    badge_key uuid PRIMARY KEY,
    check_id uuid NOT NULL
);

CREATE TABLE overdue_pings (
    check_id uuid NOT NULL,
    n bigint NOT NULL,
    record bytea NOT NULL,
    PRIMARY KEY (check_id, n)
);

CREATE TABLE overdue_ping_bodies (
    check_id uuid NOT NULL,
    n bigint NOT NULL,
    body bytea NOT NULL,
    PRIMARY KEY (check_id, n)
);

-- Every acknowledged ping until its check's record has caught up with it (replayed at start).
CREATE TABLE overdue_journal (
    seq bigint PRIMARY KEY,
    record bytea NOT NULL
);

CREATE TABLE overdue_flips (
    check_id uuid NOT NULL,
    at_us bigint NOT NULL,
    record bytea NOT NULL,
    PRIMARY KEY (check_id, at_us)
);

CREATE TABLE overdue_channels (
    uuid uuid PRIMARY KEY,
    record bytea NOT NULL
);

CREATE TABLE overdue_check_channels (
    check_id uuid NOT NULL,
    channel uuid NOT NULL,
    PRIMARY KEY (check_id, channel)
);

CREATE TABLE overdue_outbox (
    seq bigint PRIMARY KEY,
    record bytea NOT NULL
);

CREATE TABLE overdue_outbox_tries (
    seq bigint PRIMARY KEY,
    record bytea NOT NULL
);

CREATE TABLE overdue_deliveries (
    channel uuid NOT NULL,
    at_us bigint NOT NULL,
    record bytea NOT NULL,
    PRIMARY KEY (channel, at_us)
);

CREATE TABLE overdue_repeats (
    check_id uuid NOT NULL,
    channel uuid NOT NULL,
    due_us bigint NOT NULL,
    PRIMARY KEY (check_id, channel)
);

-- Dashboard sessions by the SHA-256 of their token.
CREATE TABLE overdue_sessions (
    id bytea PRIMARY KEY,
    record bytea NOT NULL
);
