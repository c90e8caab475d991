//! What a ping says and whom it is for, whichever way it came (an HTTP URL, an email address):
//! the signal, and the check named by UUID or by project ping key and slug.

use uuid::Uuid;

/// The signal a URL carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Success,
    Start,
    Fail,
    Log,
    /// `/<exit-status>`; `None` when the digits do not fit (certainly above 255).
    Exit(Option<u32>),
}

/// Which check a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Uuid(Uuid),
    Slug { ping_key: String, slug: String },
}
