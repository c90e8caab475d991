//! The process's TLS crypto provider. reqwest is built with rustls but without a provider
//! (its default, aws-lc-rs, needs a C toolchain and complicates static builds), so ring is
//! installed here before any client is built.

/// Makes ring the process-wide rustls provider; calling it again does nothing.
pub fn install_provider() {
    // An error only means that a provider is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
