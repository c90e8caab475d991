//! `serve --database` against a real throwaway cluster: each bad configuration stops it at
//! start with a message that says what to change, and `doctor --database` names the role of
//! each node connected to the database.

use std::path::Path;

use crate::pgcluster::{Cluster, OWNER_PASSWORD, READER_PASSWORD};
use crate::process::{Serve, base_command, free_port, init_data, overdue_in};

/// Runs `serve` on `url` from `data` to its end (it must end by itself): its stderr.
fn serve_fails(data: &Path, url: &str) -> String {
    let out = base_command()
        .arg("--data")
        .arg(data)
        .args(["--database", url, "serve", "--listen"])
        .arg(format!("127.0.0.1:{}", free_port()))
        .output()
        .expect("run overdue serve");
    assert_eq!(out.status.code(), Some(1), "serve stops with 1");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_bad_database_configuration_stops_serve_with_what_to_change() {
    let Some(cluster) = Cluster::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().expect("dir");
    let wrong = serve_fails(dir.path(), &cluster.url("overdue", "not-the-password", ""));
    assert!(
        wrong.contains("refused the password of user \"overdue\""),
        "{wrong}"
    );
    assert!(!wrong.contains("not-the-password"), "{wrong}");
    let nobody = format!("postgres://overdue:pw@127.0.0.1:{}/overdue", free_port());
    let unreachable = serve_fails(dir.path(), &nobody);
    assert!(
        unreachable.contains("cannot reach PostgreSQL"),
        "{unreachable}"
    );
    let reader = serve_fails(dir.path(), &cluster.url("reader", READER_PASSWORD, ""));
    assert!(
        reader.contains("may not create tables in schema \"public\"")
            && reader.contains("GRANT CREATE ON SCHEMA public TO reader"),
        "{reader}"
    );
    assert!(
        !dir.path().join("overdue.redb").exists(),
        "nothing was made in the data directory"
    );

    // A data directory that holds a data file, and a database: the service runs on one.
    let redb = tempfile::tempdir().expect("dir");
    init_data(redb.path());
    let both = serve_fails(redb.path(), &cluster.url("overdue", OWNER_PASSWORD, ""));
    assert!(
        both.contains("holds a data file, and --database names") && both.contains("overdue export"),
        "{both}"
    );
}

#[test]
fn doctor_names_the_active_node_and_the_standby() {
    let Some(cluster) = Cluster::start(false) else {
        return;
    };
    let url = cluster.url("overdue", OWNER_PASSWORD, "");
    let (dir_a, dir_b) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let mut a = Serve::spawn_on_database(dir_a.path(), &url);
    assert!(a.wait_ready(), "{}", a.stderr());
    let b = Serve::spawn_on_database(dir_b.path(), &url);
    assert!(b.wait_standby(), "{}", b.stderr());
    let listen = format!("127.0.0.1:{}", b.port);
    let out = base_command()
        .arg("--data")
        .arg(dir_b.path())
        .args(["--database", &url, "doctor", "--listen", &listen])
        .output()
        .expect("run overdue doctor");
    let report = String::from_utf8_lossy(&out.stdout);
    let (pid_a, pid_b) = (a.child.id(), b.child.id());
    assert!(
        report.lines().any(|l| l.contains("nodes: ")
            && l.contains(&format!("/{pid_a} from 127.0.0.1 (active)"))
            && l.contains(&format!("/{pid_b} from 127.0.0.1 (standing by)"))),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "a standby node answers http://{listen}/api/v3/status/"
        )),
        "{report}"
    );
}

#[test]
fn an_install_moves_from_the_data_file_to_postgresql_with_its_uuids_and_keys() {
    let Some(cluster) = Cluster::start(false) else {
        return;
    };
    let url = cluster.url("overdue", OWNER_PASSWORD, "");
    let redb = tempfile::tempdir().expect("dir");
    init_data(redb.path());
    overdue_in(redb.path(), &["project", "add", "ops"]).ok();
    let key = overdue_in(
        redb.path(),
        &["key", "add", "ops", "--label", "ci", "--json"],
    )
    .ok();
    let key: serde_json::Value = serde_json::from_str(&key).expect("key JSON");
    let key = key["key"].as_str().expect("key").to_string();
    let check = overdue_in(
        redb.path(),
        &["check", "add", "ops", "--name", "db", "--json"],
    )
    .ok();
    let check: serde_json::Value = serde_json::from_str(&check).expect("check JSON");
    let uuid = check["uuid"].as_str().expect("uuid").to_string();
    let dump = redb.path().join("dump.json");
    overdue_in(
        redb.path(),
        &["export", "--output", dump.to_str().expect("path")],
    )
    .ok();

    let node = tempfile::tempdir().expect("dir");
    let imported = overdue_in(
        node.path(),
        &["--database", &url, "import", dump.to_str().expect("path")],
    )
    .ok();
    assert!(
        imported.contains("imported 1 project, 1 API key"),
        "{imported}"
    );
    let mut serve = Serve::spawn_on_database(node.path(), &url);
    assert!(serve.wait_ready(), "{}", serve.stderr());
    assert!(
        !serve.stdout().contains("First start"),
        "no default project on an imported database"
    );
    let listed = serve.checks(&key);
    assert_eq!(listed.len(), 1);
    assert!(
        listed[0]["ping_url"]
            .as_str()
            .expect("url")
            .ends_with(&uuid)
    );
    let (code, _) = serve.http("GET", &format!("/ping/{uuid}"), None, None);
    assert_eq!(code, 200);
}
