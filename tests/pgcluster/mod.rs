//! A throwaway PostgreSQL cluster for the tests: Debian's `postgresql` server binaries,
//! `initdb` into a temporary directory, `postgres` on a free port of 127.0.0.1, stopped and
//! removed when dropped. Password authentication over TCP (scram-sha-256), as a real install
//! has it; optionally TLS with a certificate from a CA of its own (`openssl`).
//!
//! Roles made for the tests: `overdue` (password [`OWNER_PASSWORD`]), owner of database
//! `overdue`; `reader` (password [`READER_PASSWORD`]), who may connect but not create tables;
//! `stranger` (password `stranger-pw`), who may not even connect to it.
//!
//! Outside CI a machine without PostgreSQL skips these tests ([`Cluster::start`] gives None);
//! in CI (`CI` set, as `.ci/run` does) a missing server is a failure.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::process::{free_port, wait_until};

pub const OWNER_PASSWORD: &str = "owner-pw-7c1d";
pub const READER_PASSWORD: &str = "reader-pw-51ab";

pub struct Cluster {
    pub port: u16,
    /// The CA certificate that signed the server's (TLS clusters only).
    pub ca: Option<PathBuf>,
    server: Child,
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SIGTERM: a smart shutdown, so the postmaster takes its children with it.
        let _ = Command::new("kill")
            .arg(self.server.id().to_string())
            .status();
        let _ = self.server.wait();
    }
}

/// The newest installed server's binaries.
fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// Runs `program` as the `postgres` user when this process is root (PostgreSQL refuses to
/// run as root), as ourselves otherwise.
fn as_server_user(program: &Path) -> Command {
    if rustix::process::geteuid().is_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Makes a CA and a server certificate for `localhost` in `dir`; the CA's path.
fn make_certificates(dir: &Path) -> PathBuf {
    let ca_key = dir.join("ca.key");
    let ca = dir.join("ca.crt");
    run(
        Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .args(["-subj", "/CN=overdue test CA", "-keyout"])
            .arg(&ca_key)
            .arg("-out")
            .arg(&ca),
        "openssl: make the CA",
    );
    let csr = dir.join("server.csr");
    run(
        Command::new("openssl")
            .args([
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                "/CN=localhost",
            ])
            .arg("-keyout")
            .arg(dir.join("server.key"))
            .arg("-out")
            .arg(&csr),
        "openssl: make the server's request",
    );
    // PostgreSQL refuses a key that others may read.
    std::fs::set_permissions(
        dir.join("server.key"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .expect("chmod server.key");
    let ext = dir.join("server.ext");
    std::fs::write(&ext, "subjectAltName=DNS:localhost\n").expect("write ext");
    run(
        Command::new("openssl")
            .args(["x509", "-req", "-days", "2", "-in"])
            .arg(&csr)
            .arg("-CA")
            .arg(&ca)
            .arg("-CAkey")
            .arg(&ca_key)
            .args(["-CAcreateserial", "-extfile"])
            .arg(&ext)
            .arg("-out")
            .arg(dir.join("server.crt")),
        "openssl: sign the server's certificate",
    );
    ca
}

impl Cluster {
    /// A running cluster with the test roles, or None when PostgreSQL is not installed here
    /// (outside CI only).
    pub fn start(tls: bool) -> Option<Cluster> {
        let Some(bin) = bin_dir() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must have PostgreSQL installed (apt-get install postgresql, see .ci/run)"
            );
            eprintln!("SKIPPED: no PostgreSQL server in /usr/lib/postgresql");
            return None;
        };
        let dir = tempfile::tempdir().expect("cluster dir");
        let data = dir.path().join("data");
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, "superuser-pw\n").expect("pwfile");
        let ca = tls.then(|| make_certificates(dir.path()));
        if rustix::process::geteuid().is_root() {
            run(
                Command::new("chown")
                    .args(["-R", "postgres:"])
                    .arg(dir.path()),
                "chown the cluster directory to postgres",
            );
        }
        run(
            as_server_user(&bin.join("initdb"))
                .arg("-D")
                .arg(&data)
                .args(["-U", "postgres", "-E", "UTF8", "--no-sync"])
                .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
                .arg(format!("--pwfile={}", pwfile.display())),
            "initdb",
        );
        let port = free_port();
        let mut server = as_server_user(&bin.join("postgres"));
        server
            .arg("-D")
            .arg(&data)
            .arg("-p")
            .arg(port.to_string())
            .arg("-k")
            .arg(dir.path())
            .args(["-c", "listen_addresses=127.0.0.1"]);
        if tls {
            server
                .args(["-c", "ssl=on", "-c"])
                .arg(format!(
                    "ssl_cert_file={}",
                    dir.path().join("server.crt").display()
                ))
                .arg("-c")
                .arg(format!(
                    "ssl_key_file={}",
                    dir.path().join("server.key").display()
                ));
        }
        let server = server
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start postgres");
        let cluster = Cluster {
            port,
            ca,
            server,
            dir,
            bin: bin.clone(),
        };
        let psql = bin.join("psql");
        let socket = cluster.dir.path().to_path_buf();
        let ready = wait_until(Duration::from_secs(30), || {
            as_server_user(&psql)
                .arg("-h")
                .arg(&socket)
                .args(["-p", &port.to_string(), "-U", "postgres", "-c", "SELECT 1"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        assert!(ready, "postgres did not start on port {port}");
        let sql = |db: &str, sql: &str| {
            run(
                as_server_user(&psql)
                    .arg("-h")
                    .arg(&socket)
                    .args(["-p", &port.to_string(), "-U", "postgres", "-d", db])
                    .args(["-v", "ON_ERROR_STOP=1", "-c", sql]),
                sql,
            );
        };
        sql(
            "postgres",
            &format!("CREATE ROLE overdue LOGIN PASSWORD '{OWNER_PASSWORD}'"),
        );
        sql("postgres", "CREATE DATABASE overdue OWNER overdue");
        sql(
            "postgres",
            &format!("CREATE ROLE reader LOGIN PASSWORD '{READER_PASSWORD}'"),
        );
        sql(
            "postgres",
            "CREATE ROLE stranger LOGIN PASSWORD 'stranger-pw'",
        );
        sql(
            "postgres",
            "REVOKE CONNECT ON DATABASE overdue FROM PUBLIC; \
             GRANT CONNECT ON DATABASE overdue TO reader",
        );
        // PostgreSQL 15 takes CREATE on public from everyone by default; older ones do not.
        sql(
            "overdue",
            "ALTER SCHEMA public OWNER TO overdue; REVOKE CREATE ON SCHEMA public FROM PUBLIC",
        );
        Some(cluster)
    }

    /// Runs `sql` in database `db` as the superuser (psql over the cluster's socket).
    pub fn sql(&self, db: &str, sql: &str) {
        run(
            as_server_user(&self.bin.join("psql"))
                .arg("-h")
                .arg(self.dir.path())
                .args(["-p", &self.port.to_string(), "-U", "postgres", "-d", db])
                .args(["-v", "ON_ERROR_STOP=1", "-c", sql]),
            sql,
        );
    }

    /// The URL of database `overdue` as `user` with `password`, and `params` after `?`.
    pub fn url(&self, user: &str, password: &str, params: &str) -> String {
        let base = format!(
            "postgres://{user}:{password}@127.0.0.1:{}/overdue",
            self.port
        );
        if params.is_empty() {
            base
        } else {
            format!("{base}?{params}")
        }
    }
}
