//! Overdue's integration tests, as one test binary (ripgrep's layout): each module is a theme,
//! and the helpers (`common`: an in-process server; `process`: the real binary; `receivers`:
//! webhook and SMTP receivers; `smallfs`: a small loop-mounted filesystem; `pgcluster`: a
//! throwaway PostgreSQL cluster) are compiled once.
//! Most tests start the real server on 127.0.0.1:0 with a temporary data directory and talk to
//! it as a client would. Run one theme with `cargo test --test integration storage::`.

// A test crate has no public surface; its helper modules share items with plain `pub`.
#![allow(unreachable_pub)]

mod common;
mod pgcluster;
mod process;
mod receivers;
mod smallfs;

mod api_auth;
mod api_badges;
mod api_checks;
mod api_pings;
mod api_validation;
mod badge_render;
mod browser;
mod channel_kinds;
mod cli;
mod cli_channels;
mod cli_checks;
mod cli_confirm;
mod cli_datadir;
mod connections;
mod control_protocol;
mod crash;
mod data;
mod email_pings;
mod events;
mod failover;
mod metrics;
mod migrate;
mod monitor;
mod notify;
mod ops;
mod packaging;
mod postgres_doctor;
mod postgres_serve;
mod project_rules;
mod rules;
mod rules_kill;
mod schedule_props;
mod schedule_vectors;
mod storage;
mod web;
mod web_check;
mod web_checks;
mod web_project;
mod writer;
