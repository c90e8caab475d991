//! TLS to PostgreSQL through rustls, with libpq's `sslmode` meanings (tokio-postgres knows
//! only `disable`, `prefer` and `require`, and leaves certificates to the connector):
//!
//! | sslmode | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | - |
//! | `prefer` (libpq's default), `allow` | if the server offers it | not checked |
//! | `require` | always | not checked (libpq's meaning, unless `sslrootcert` is given) |
//! | `verify-ca`, `verify-full` | always | checked against `sslrootcert` or the web's roots, with the host name |
//!
//! `verify-ca` checks the host name too: rustls has no mode that trusts a chain for any name,
//! and a name that does not match is worth refusing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::store::postgres::PgError;

/// What the connection's `sslmode` and `sslrootcert` ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tls {
    Disable,
    /// TLS when offered (`prefer`, `allow`) or always (`require`), the certificate unchecked.
    Unverified {
        required: bool,
    },
    /// TLS always, the certificate checked against these roots (None: the web's roots).
    Verified {
        roots: Option<PathBuf>,
    },
}

impl Tls {
    /// The mode for libpq's `sslmode` value (None: not given) and `sslrootcert`.
    pub(crate) fn from_params(mode: Option<&str>, root: Option<&str>) -> Result<Tls, PgError> {
        let roots = root.map(PathBuf::from);
        match mode.unwrap_or("prefer") {
            "disable" => Ok(Tls::Disable),
            "allow" | "prefer" => Ok(Tls::Unverified { required: false }),
            // libpq: with a root certificate given, `require` behaves like `verify-ca`.
            "require" if roots.is_some() => Ok(Tls::Verified { roots }),
            "require" => Ok(Tls::Unverified { required: true }),
            "verify-ca" | "verify-full" => Ok(Tls::Verified { roots }),
            other => Err(PgError::InvalidUrl(format!(
                "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, \
                 verify-full"
            ))),
        }
    }

    /// tokio-postgres's own mode for this one.
    pub(crate) fn ssl_mode(&self) -> SslMode {
        match self {
            Tls::Disable => SslMode::Disable,
            Tls::Unverified { required: false } => SslMode::Prefer,
            Tls::Unverified { required: true } | Tls::Verified { .. } => SslMode::Require,
        }
    }

    /// The rustls connector for this mode, for the database at `target`.
    pub(crate) fn connector(&self, target: &str) -> Result<MakeRustlsConnect, PgError> {
        crate::tls::install_provider();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| PgError::Tls {
                target: target.to_string(),
                reason: e.to_string(),
            })?;
        let config = match self {
            Tls::Verified { roots } => builder
                .with_root_certificates(root_store(roots.as_deref())?)
                .with_no_client_auth(),
            Tls::Disable | Tls::Unverified { .. } => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Unchecked(provider)))
                .with_no_client_auth(),
        };
        Ok(MakeRustlsConnect::new(config))
    }
}

/// The roots in the PEM file `path`, or the web's (webpki-roots) without one.
fn root_store(path: Option<&Path>) -> Result<RootCertStore, PgError> {
    let mut store = RootCertStore::empty();
    let Some(path) = path else {
        store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        return Ok(store);
    };
    let unreadable = |e: &dyn std::fmt::Display| {
        PgError::InvalidUrl(format!(
            "cannot read the root certificates in sslrootcert={}: {e}",
            path.display()
        ))
    };
    let certs = CertificateDer::pem_file_iter(path).map_err(|e| unreadable(&e))?;
    for cert in certs {
        let cert = cert.map_err(|e| unreadable(&e))?;
        store.add(cert).map_err(|e| unreadable(&e))?;
    }
    if store.is_empty() {
        return Err(unreadable(&"the file holds no certificate"));
    }
    Ok(store)
}

/// libpq's `prefer` and `require`: encrypted, but any certificate is taken. The handshake's
/// signatures are still checked, so the session is with whoever holds the certificate's key.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_values_mean_what_libpq_says() {
        assert_eq!(
            Tls::from_params(None, None).expect("default"),
            Tls::Unverified { required: false }
        );
        assert_eq!(
            Tls::from_params(Some("disable"), None).expect("disable"),
            Tls::Disable
        );
        assert_eq!(
            Tls::from_params(Some("require"), None).expect("require"),
            Tls::Unverified { required: true }
        );
        assert_eq!(
            Tls::from_params(Some("require"), Some("/ca.pem")).expect("require + root"),
            Tls::Verified {
                roots: Some(PathBuf::from("/ca.pem"))
            }
        );
        assert_eq!(
            Tls::from_params(Some("verify-full"), None).expect("verify-full"),
            Tls::Verified { roots: None }
        );
        let e = Tls::from_params(Some("verify"), None).expect_err("unknown");
        assert!(e.to_string().contains("sslmode=verify"), "{e}");
        assert_eq!(
            Tls::from_params(Some("require"), None)
                .expect("require")
                .ssl_mode(),
            SslMode::Require
        );
    }

    #[test]
    fn a_root_file_without_certificates_is_refused_with_its_path() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, "not a certificate\n").expect("write");
        let e = root_store(Some(&path)).expect_err("empty");
        assert!(e.to_string().contains("ca.pem"), "{e}");
        assert!(root_store(None).is_ok_and(|s| !s.is_empty()));
    }
}
