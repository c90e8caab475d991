//! `doctor --database`: whether the PostgreSQL database a URL names could hold Overdue's
//! tables (reachable, the password taken, the right to create tables), and whether the
//! session to it is encrypted where that matters, and the role of each overdue node connected
//! to it (the active one holds its lock, the others stand by). The probe is the store's own
//! ([`Database::probe`]); judging its outcome is a plain function.

use crate::cli::doctor::Finding;
use crate::service::{Database, NodeSeen, PgError, Probe};

/// Parses `url`, probes the database and judges the outcome: the database, then its nodes.
pub(crate) async fn check(url: &str) -> Vec<Finding> {
    let db = match url.parse::<Database>() {
        Ok(db) => db,
        Err(e) => return vec![judge("", Err(&e))],
    };
    let target = db.target();
    let probe = db.probe().await;
    let mut findings = vec![judge(&target, probe.as_ref())];
    if let Ok(p) = &probe {
        findings.push(judge_nodes(&p.nodes));
    }
    findings
}

/// The finding about the nodes connected to the database: which one is active, which stand
/// by. Two active nodes cannot happen (one lock); none active while some stand by is the
/// moment of a failover, or a standby that cannot prepare the tables (its log says why).
pub(crate) fn judge_nodes(nodes: &[NodeSeen]) -> Finding {
    if nodes.is_empty() {
        return Finding::Ok("nodes: none is connected to the database".into());
    }
    let list = nodes
        .iter()
        .map(|n| {
            let role = if n.active { "active" } else { "standing by" };
            format!("{} from {} ({role})", n.name, n.from)
        })
        .collect::<Vec<_>>()
        .join(", ");
    if nodes.iter().any(|n| n.active) {
        Finding::Ok(format!("nodes: {list}"))
    } else {
        Finding::Warning(format!(
            "nodes: {list}, and none is active: a standby takes over within seconds of a \
             failover; if this lasts, see the standby's log"
        ))
    }
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
    if !p.durable {
        return Finding::Warning(format!(
            "{seen}, but the server runs with fsync off: pings acknowledged just before a \
             crash of its machine can be lost; set fsync = on in postgresql.conf"
        ));
    }
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
            nodes: Vec::new(),
            durable: true,
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
    fn a_server_that_does_not_commit_durably_is_a_warning() {
        let lax = Probe {
            durable: false,
            ..probe(true)
        };
        let f = judge("db.example:5432/overdue", Ok(&lax));
        assert!(
            matches!(&f, Finding::Warning(t) if t.contains("fsync = on")),
            "{f:?}"
        );
    }

    #[test]
    fn the_nodes_are_listed_with_their_roles() {
        let node = |name: &str, active| NodeSeen {
            name: name.into(),
            from: "10.0.0.5".into(),
            active,
        };
        assert!(matches!(judge_nodes(&[]), Finding::Ok(t) if t.contains("none is connected")));
        let pair = judge_nodes(&[node("overdue/a/1", true), node("overdue/b/2", false)]);
        assert!(
            matches!(&pair, Finding::Ok(t) if t.contains("overdue/a/1 from 10.0.0.5 (active)")
                && t.contains("overdue/b/2 from 10.0.0.5 (standing by)")),
            "{pair:?}"
        );
        let leaderless = judge_nodes(&[node("overdue/b/2", false)]);
        assert!(
            matches!(&leaderless, Finding::Warning(t) if t.contains("none is active")),
            "{leaderless:?}"
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
