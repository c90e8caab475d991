//! Why a service operation did not happen: one narrow enum for what every caller may meet
//! ([`ServiceError`]) and one for what only the admin commands meet ([`AdminError`]: names
//! that match nothing or too much, usage). The HTTP mapping is `api::error` alone; the
//! command line prints the message and exits non-zero.

use std::sync::Arc;

use crate::model::spec::SpecError;
use crate::store::StoreError;

/// Why an operation did not happen.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ServiceError {
    /// No such check (or object) for this caller.
    #[error("not found")]
    NotFound,
    /// The check belongs to another project than the caller's key.
    #[error("the check belongs to another project")]
    Forbidden,
    /// Resume of a check that is not paused.
    #[error("check is not paused")]
    NotPaused,
    /// A slug ping names a slug that several checks of the project share.
    #[error("ambiguous slug")]
    AmbiguousSlug,
    /// A ping URL that routes but cannot be accepted (exit status above 255).
    #[error("invalid url format")]
    InvalidUrl,
    /// A check's fields fail validation (the API's messages).
    #[error("json validation error: {0}")]
    Invalid(#[from] SpecError),
    /// Other input the caller must fix, with its message (e.g. channel identifiers).
    #[error("{0}")]
    BadRequest(String),
    /// An admin command's names or usage (never produced by the HTTP APIs).
    #[error(transparent)]
    Admin(#[from] AdminError),
    /// The writer's queue is full; the caller may retry at once.
    #[error("the service is overloaded, try again shortly")]
    Busy,
    /// The writer has stopped: the service is shutting down.
    #[error("the service is shutting down")]
    ShuttingDown,
    /// The data file does not take writes (an I/O error: a full disk, an unwritable file);
    /// the writer is reopening it. Not the client's fault, and worth a retry later.
    #[error("storage unavailable")]
    StorageUnavailable(Arc<StoreError>),
    /// The data file answered with something other than an I/O error (damaged contents).
    #[error("{0}")]
    Storage(Arc<StoreError>),
    /// The system's random source failed (keys and secrets cannot be made).
    #[error("cannot generate a random secret: {0}")]
    Random(String),
}

/// What only the admin commands meet: names that match nothing, or several things, and
/// commands that cannot be done as given.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AdminError {
    #[error("no project named {0:?}")]
    NoSuchProject(String),
    #[error("a project named {0:?} already exists")]
    ProjectExists(String),
    #[error("project {project:?} has no key {key:?}")]
    NoSuchKey { project: String, key: String },
    #[error("project {project:?} has no channel {channel:?}")]
    NoSuchChannel { project: String, channel: String },
    #[error("project {project:?} already has a channel named {channel:?}; choose another name")]
    ChannelExists { project: String, channel: String },
    #[error("project {project:?} has no check {check:?}")]
    NoSuchCheck { project: String, check: String },
    /// A command without a project while several exist (it would guess otherwise).
    #[error("there are {} projects, name one of them: {}", .0.len(), .0.join(", "))]
    ProjectNeeded(Vec<String>),
    /// Anything else the user must change, with what to do.
    #[error("{0}")]
    Usage(String),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        ServiceError::storage(Arc::new(e))
    }
}

impl From<getrandom::Error> for ServiceError {
    fn from(e: getrandom::Error) -> Self {
        ServiceError::Random(e.to_string())
    }
}

impl ServiceError {
    /// A usage error of an admin command, with what to do.
    pub(crate) fn usage(message: impl Into<String>) -> ServiceError {
        ServiceError::Admin(AdminError::Usage(message.into()))
    }

    /// A storage error as callers should see it: I/O failures are "storage unavailable".
    pub(crate) fn storage(e: Arc<StoreError>) -> ServiceError {
        if e.is_io() {
            ServiceError::StorageUnavailable(e)
        } else {
            ServiceError::Storage(e)
        }
    }

    /// The store error behind a storage failure.
    pub(crate) fn store_error(&self) -> Option<&Arc<StoreError>> {
        match self {
            ServiceError::Storage(e) | ServiceError::StorageUnavailable(e) => Some(e),
            _ => None,
        }
    }
}
