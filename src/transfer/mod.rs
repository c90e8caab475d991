//! Moving data in and out of a data file other than by copying it: the versioned JSON export
//! format ([`dump`]) and the migration from a running Healthchecks instance
//! ([`healthchecks`]). The service applies both (`service/transfer.rs`); the CLI drives them.

pub mod dump;
pub mod dump_stream;
pub(crate) mod healthchecks;
