//! `overdue doctor --database`: the checks a PostgreSQL URL gets, against a real throwaway
//! cluster (`pgcluster`): a usable database, each way a connection fails, and TLS with each
//! `sslmode`.

use crate::pgcluster::{Cluster, OWNER_PASSWORD, READER_PASSWORD};
use crate::process::{Ran, base_command, free_port};

/// The database line of `overdue doctor --database URL`.
fn doctor_database(url: &str) -> String {
    let data = tempfile::tempdir().expect("data");
    let ran: Ran = base_command()
        .arg("--data")
        .arg(data.path())
        .args(["doctor", "--database", url])
        .env("NO_COLOR", "1")
        .output()
        .expect("run doctor")
        .into();
    let line = ran
        .stdout
        .lines()
        .find(|l| l.contains("database: "))
        .unwrap_or_else(|| panic!("no database line:\n{}\n{}", ran.stdout, ran.stderr));
    assert!(
        !line.contains(OWNER_PASSWORD) && !line.contains(READER_PASSWORD),
        "{line}"
    );
    line.to_string()
}

#[test]
fn doctor_finds_a_usable_database_and_says_what_is_wrong_with_unusable_ones() {
    let Some(pg) = Cluster::start(false) else {
        return;
    };
    let ok = doctor_database(&pg.url("overdue", OWNER_PASSWORD, ""));
    assert!(ok.contains("PostgreSQL 1"), "{ok}");
    assert!(
        ok.contains("tables can be created in schema \"public\""),
        "{ok}"
    );
    assert!(ok.contains("TLS off (a local connection)"), "{ok}");

    let wrong = doctor_database(&pg.url("overdue", "not-the-password", ""));
    assert!(
        wrong.contains("refused the password of user \"overdue\""),
        "{wrong}"
    );

    let reader = doctor_database(&pg.url("reader", READER_PASSWORD, ""));
    assert!(
        reader.contains("may not create tables in schema \"public\"")
            && reader.contains("GRANT CREATE ON SCHEMA public TO reader"),
        "{reader}"
    );

    let stranger = doctor_database(&pg.url("stranger", "stranger-pw", ""));
    assert!(
        stranger.contains("permission denied for database"),
        "{stranger}"
    );

    let missing = format!(
        "postgres://overdue:{OWNER_PASSWORD}@127.0.0.1:{}/nosuch",
        pg.port
    );
    let missing = doctor_database(&missing);
    assert!(missing.contains("no such database"), "{missing}");

    let plain = doctor_database(&pg.url("overdue", OWNER_PASSWORD, "sslmode=require"));
    assert!(
        plain.contains("TLS to PostgreSQL") && plain.contains("does not support TLS"),
        "{plain}"
    );
}

/// Needs no PostgreSQL: nothing listening, a listener that never speaks, a bad URL.
#[test]
fn doctor_says_what_is_wrong_when_there_is_no_database_to_talk_to() {
    let nobody = format!("postgres://overdue:x@127.0.0.1:{}/overdue", free_port());
    let nobody = doctor_database(&nobody);
    assert!(
        nobody.contains("cannot reach PostgreSQL at 127.0.0.1:") && nobody.contains("refused"),
        "{nobody}"
    );
    // The kernel completes the connection from the backlog; nobody ever answers on it.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = silent.local_addr().expect("addr").port();
    let started = std::time::Instant::now();
    let line = doctor_database(&format!(
        "postgres://overdue:x@127.0.0.1:{port}/overdue?sslmode=disable&connect_timeout=1"
    ));
    assert!(
        line.contains("no answer to the sign-in within 1s"),
        "{line}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    drop(silent);

    let bad = doctor_database("postgres://overdue@127.0.0.1/overdue?sslmode=sometimes");
    assert!(
        bad.contains("invalid database URL: sslmode=sometimes"),
        "{bad}"
    );
}

#[test]
fn doctor_checks_the_servers_certificate_as_sslmode_asks() {
    let Some(pg) = Cluster::start(true) else {
        return;
    };
    let ca = pg.ca.clone().expect("a TLS cluster has a CA");
    // `prefer` (the default) and `require` encrypt without checking the certificate.
    for params in ["", "sslmode=require"] {
        let line = doctor_database(&pg.url("overdue", OWNER_PASSWORD, params));
        assert!(line.contains("TLS on"), "{params}: {line}");
    }
    let by_name = |params: &str| {
        format!(
            "postgres://overdue:{OWNER_PASSWORD}@localhost:{}/overdue?{params}",
            pg.port
        )
    };
    // The test CA is nobody's root: verify-full refuses it without sslrootcert...
    let untrusted = doctor_database(&by_name("sslmode=verify-full"));
    assert!(
        untrusted.contains("TLS to PostgreSQL") && untrusted.contains("certificate"),
        "{untrusted}"
    );
    // ...and takes it with, for the name the certificate carries only.
    let root = format!("sslrootcert={}", ca.display());
    let trusted = doctor_database(&by_name(&format!("sslmode=verify-full&{root}")));
    assert!(trusted.contains("TLS on"), "{trusted}");
    let other_name = doctor_database(&pg.url(
        "overdue",
        OWNER_PASSWORD,
        &format!("sslmode=verify-full&{root}"),
    ));
    assert!(other_name.contains("TLS to PostgreSQL"), "{other_name}");
}
