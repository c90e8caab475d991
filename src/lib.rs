//! Overdue: a self-hosted dead-man's-switch monitor that speaks the Healthchecks.io
//! Management API v3 and Pinging API.
//!
//! The layout follows the architecture: `model` (plain data and pure rules), `schedule`
//! (cron and OnCalendar), `store` (the redb file), `service` (in-memory state, the single
//! writer, operations), `monitor` (deadlines), `notify` (alert delivery), `api` (HTTP),
//! `email` (the SMTP listener for email pings), `web` (the dashboard), `transfer` (export, import, migration),
//! `server` (listeners and shutdown), `cli` (commands).

pub mod api;
pub mod cli;
pub mod email;
pub(crate) mod error_line;
pub mod model;
pub mod monitor;
pub mod notify;
pub mod schedule;
pub mod server;
pub mod service;
pub(crate) mod store;
pub mod tls;
pub mod transfer;
pub(crate) mod web;
