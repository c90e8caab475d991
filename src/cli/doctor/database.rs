//! `doctor --database`: whether the PostgreSQL database a URL names could hold Overdue's
//! tables (reachable, the password taken, the right to create tables), and whether the
//! session to it is encrypted where that matters. The probe is the store's own
//! ([`Database::probe`]); judging its outcome is a plain function.

use crate::cli::doctor::Finding;
use crate::service::{Database, PgError, Probe};

/// Parses `url`, probes the database and judges the outcome.
pub(crate) async fn check(url: &str) -> Finding {
    let db = match url.parse::<Database>() {
        Ok(db) => db,
        Err(e) => return judge("", Err(&e)),
    };
    let target = db.target();
    let probe = db.probe().await;
    judge(&target, probe.as_ref())
}

/// The finding for a probe of `target`.
pub(crate) fn judge(target: &str, probe: Result<&Probe, &PgError>) -> Finding {
    let p = match probe {
        Ok(p) => p,
        Err(e) => return Finding::Problem(format!("database: {e}")),
    };
    let seen = format!(
        "database: PostgreSQL {} at {target}, user {:?}, tables can be created in schema {:?}",
        p.server_version, p.user, p.schema
    );
    let local = ["localhost", "127.", "[::1]", "/"]
        .iter()
        .any(|l| target.starts_with(l));
    if p.tls {
        Finding::Ok(format!("{seen}, TLS on"))
    } else if local {
        Finding::Ok(format!("{seen}, TLS off (a local connection)"))
    } else {
        Finding::Warning(format!(
            "{seen}, but the session is not encrypted: the password and every ping cross the \
             network in clear; add ?sslmode=verify-full (or sslmode=require) to the URL"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(tls: bool) -> Probe {
        Probe {
            server_version: "15.18".into(),
            user: "overdue".into(),
            schema: "public".into(),
            tls,
        }
    }

    #[test]
    fn a_usable_database_is_fine_and_clear_text_is_a_warning_only_off_this_machine() {
        let ok = judge("db.example:5432/overdue", Ok(&probe(true)));
        assert!(matches!(&ok, Finding::Ok(t) if t.contains("15.18") && t.contains("TLS on")));
        let local = judge("localhost:5432/overdue", Ok(&probe(false)));
        assert!(
            matches!(&local, Finding::Ok(t) if t.contains("TLS off")),
            "{local:?}"
        );
        let socket = judge("/var/run/postgresql:5432/overdue", Ok(&probe(false)));
        assert!(matches!(socket, Finding::Ok(_)));
        let remote = judge("db.example:5432/overdue", Ok(&probe(false)));
        assert!(
            matches!(&remote, Finding::Warning(t) if t.contains("sslmode=verify-full")),
            "{remote:?}"
        );
    }

    #[test]
    fn a_failed_probe_is_a_problem_with_the_stores_own_words() {
        let e = PgError::WrongPassword {
            target: "h:5432/d".into(),
            user: "overdue".into(),
        };
        let f = judge("h:5432/d", Err(&e));
        assert!(
            matches!(&f, Finding::Problem(t) if t.starts_with("database: ") && t.contains("password")),
            "{f:?}"
        );
    }
}
