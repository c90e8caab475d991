//! PostgreSQL, the second storage engine (issue 19), as far as it is built: the database a
//! `postgres://` URL names, the connection to it (tokio-postgres, TLS through rustls with
//! libpq's `sslmode` meanings, see [`tls`]), and the probe that tells whether the database
//! could hold Overdue's tables: reachable, the password taken, the right to create tables.
//! Every way a connection fails is one [`PgError`] variant whose message says what to do.
//!
//! The URL is libpq's (`postgres://user:password@host:port/dbname?sslmode=require`); the
//! password never appears in a message ([`Database::target`]).

mod conn;
mod schema;
mod store;
mod tls;
mod txn;

pub(crate) use store::PgStore;
pub(crate) use txn::PgTxn;

use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::config::Host;
use tokio_postgres::error::SqlState;

use crate::error_line::error_line;
use crate::model::limits::DATABASE_CONNECT_TIMEOUT_SECS;
use tls::Tls;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(DATABASE_CONNECT_TIMEOUT_SECS);

/// Why a database cannot be used. Each message names the database (never the password) and
/// says what to change, or gives the server's own words where those say it.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error("invalid database URL: {0}")]
    InvalidUrl(String),
    #[error(
        "cannot reach PostgreSQL at {target}: {reason}; check that it runs and listens there \
         (listen_addresses, port, firewall)"
    )]
    Unreachable { target: String, reason: String },
    #[error(
        "PostgreSQL at {target} refused the password of user {user:?}; check the URL's user \
         and password"
    )]
    WrongPassword { target: String, user: String },
    #[error("PostgreSQL at {target} refused the connection: {reason}; check pg_hba.conf")]
    NotAllowed { target: String, reason: String },
    #[error("PostgreSQL at {target} has no such database: {reason}; create it (createdb)")]
    NoDatabase { target: String, reason: String },
    #[error("TLS to PostgreSQL at {target} failed: {reason}")]
    Tls { target: String, reason: String },
    #[error(
        "user {user:?} may not create tables in schema {schema:?} of {target}; make the user \
         the database's owner, or GRANT CREATE ON SCHEMA {schema} TO {user}"
    )]
    NoPrivilege {
        target: String,
        user: String,
        schema: String,
    },
    #[error("PostgreSQL at {target}: {reason}")]
    Server { target: String, reason: String },
    /// A session that worked ended or stopped answering: the server restarted, the network
    /// broke, or an administrator ended it (`pg_terminate_backend`).
    #[error("the connection to PostgreSQL at {target} was lost: {reason}")]
    Lost { target: String, reason: String },
    /// Another node holds the database's lock: it is the active one.
    #[error(
        "another overdue node is active on {target} (it holds the database's lock); this one \
         stands by"
    )]
    Standby { target: String },
}

impl PgError {
    /// Whether the connection is what failed (reconnecting may cure it), rather than the
    /// configuration or the data.
    pub(crate) fn is_connection(&self) -> bool {
        matches!(self, PgError::Unreachable { .. } | PgError::Lost { .. })
    }
}

/// A database named by a URL, ready to connect to.
#[derive(Debug, Clone)]
pub struct Database {
    config: tokio_postgres::Config,
    tls: Tls,
}

/// What [`Database::probe`] found in a database that can be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The server's `server_version`.
    pub server_version: String,
    pub user: String,
    /// The schema tables would go in (the first of the user's `search_path` that exists).
    pub schema: String,
    /// Whether the session is encrypted.
    pub tls: bool,
    /// The overdue nodes connected to the database, by name.
    pub nodes: Vec<NodeSeen>,
    /// The server writes durably: `fsync` is not off (otherwise an acknowledged ping can be
    /// lost in a crash of the database's machine). `synchronous_commit` is the session's own,
    /// and overdue's sessions set it on.
    pub durable: bool,
}

/// One overdue node connected to the database, as its sessions show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSeen {
    /// Its sessions' `application_name`: `overdue/HOST/PID`.
    pub name: String,
    /// Where its sessions come from (`local` for a Unix socket).
    pub from: String,
    /// It holds the active node's lock.
    pub active: bool,
}

impl FromStr for Database {
    type Err = PgError;

    /// Parses a `postgres://` or `postgresql://` URL. `sslmode` and `sslrootcert` are
    /// taken out and handled here ([`tls`]); the rest is tokio-postgres's.
    fn from_str(url: &str) -> Result<Database, PgError> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(PgError::InvalidUrl(
                "it must start with postgres:// (postgres://user:password@host/dbname)".into(),
            ));
        }
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut mode = None;
        let mut root = None;
        let mut rest = form_urlencoded::Serializer::new(String::new());
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            match k.as_ref() {
                "sslmode" => mode = Some(v.into_owned()),
                "sslrootcert" => root = Some(v.into_owned()),
                _ => {
                    rest.append_pair(&k, &v);
                }
            }
        }
        let rest = rest.finish();
        let tls = Tls::from_params(mode.as_deref(), root.as_deref())?;
        let url = if rest.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{rest}")
        };
        let mut config = tokio_postgres::Config::from_str(&url)
            .map_err(|e| PgError::InvalidUrl(e.to_string()))?;
        if config.get_user().is_none() {
            return Err(PgError::InvalidUrl(
                "it names no user (postgres://user:password@host/dbname)".into(),
            ));
        }
        if config.get_hosts().is_empty() {
            config.host("localhost");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        // tokio-postgres's default (2 hours) would leave a session to a vanished server, and
        // the writer with it, waiting that long.
        if config.get_keepalives_idle() == Duration::from_secs(2 * 60 * 60) {
            config.keepalives_idle(Duration::from_secs(5));
            config.keepalives_interval(Duration::from_secs(2));
            config.keepalives_retries(3);
        }
        if config.get_application_name().is_none() {
            config.application_name(node_name());
        }
        config.ssl_mode(tls.ssl_mode());
        Ok(Database { config, tls })
    }
}

/// The `application_name` of this process's sessions, `overdue/HOST/PID`: `doctor` tells the
/// nodes on a database apart by it, and an administrator sees them in `pg_stat_activity`.
fn node_name() -> String {
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    let mut name = format!("overdue/{host}/{}", std::process::id());
    // PostgreSQL keeps 63 bytes of it.
    while name.len() > 63 {
        name.pop();
    }
    name
}

impl Database {
    /// `host:port/dbname` (the first host), for messages: never the password.
    pub fn target(&self) -> String {
        let host = match self.config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            Some(Host::Unix(p)) => p.display().to_string(),
            None => "localhost".into(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        let db = self
            .config
            .get_dbname()
            .or(self.config.get_user())
            .unwrap_or_default();
        format!("{host}:{port}/{db}")
    }

    fn user(&self) -> String {
        self.config.get_user().unwrap_or_default().to_string()
    }

    /// The URL's `connect_timeout`, or ours.
    fn timeout(&self) -> Duration {
        self.config
            .get_connect_timeout()
            .copied()
            .unwrap_or(CONNECT_TIMEOUT)
    }

    /// The error of a step that got no answer in time: a server that takes the connection but
    /// never speaks (a wrong port, a stuck proxy) is as good as unreachable.
    pub(crate) fn silent(&self, step: &str) -> PgError {
        PgError::Unreachable {
            target: self.target(),
            reason: format!("no answer to {step} within {:?}", self.timeout()),
        }
    }

    /// Opens a session; its connection runs on a task of its own until the client is dropped.
    /// tokio-postgres's `connect_timeout` covers the TCP connection only; this covers the TLS
    /// handshake and the sign-in too.
    pub async fn connect(&self) -> Result<tokio_postgres::Client, PgError> {
        self.connect_watched().await.map(|(client, _)| client)
    }

    /// Like [`Database::connect`], with a signal that turns true when the session ends (the
    /// server ended it, the network broke): the active node stops at once when its does.
    pub(crate) async fn connect_watched(
        &self,
    ) -> Result<(tokio_postgres::Client, tokio::sync::watch::Receiver<bool>), PgError> {
        let connector = self.tls.connector(&self.target())?;
        let (client, connection) =
            tokio::time::timeout(self.timeout(), self.config.connect(connector))
                .await
                .map_err(|_| self.silent("the sign-in"))?
                .map_err(|e| self.explain(&e))?;
        let (ended, watch) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("PostgreSQL connection ended: {e}");
            }
            let _ = ended.send(true);
        });
        Ok((client, watch))
    }

    /// Connects and checks that the tables could be created: the probe of `overdue doctor`.
    pub async fn probe(&self) -> Result<Probe, PgError> {
        let client = self.connect().await?;
        let query = client.query_one(
            "SELECT current_setting('server_version'), current_user::text, \
                 coalesce(current_schema()::text, ''), \
                 coalesce(has_schema_privilege(current_schema(), 'CREATE'), false), \
                 coalesce((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false), \
                 current_setting('fsync') <> 'off'",
            &[],
        );
        let row = tokio::time::timeout(self.timeout(), query)
            .await
            .map_err(|_| self.silent("a query"))?
            .map_err(|e| self.explain(&e))?;
        // try_get, not get: a server that answers with other types is an error, not a panic.
        let read = |e: tokio_postgres::Error| self.explain(&e);
        let probe = Probe {
            server_version: row.try_get(0).map_err(read)?,
            user: row.try_get(1).map_err(read)?,
            schema: row.try_get(2).map_err(read)?,
            tls: row.try_get(4).map_err(read)?,
            nodes: Vec::new(),
            durable: row.try_get(5).map_err(read)?,
        };
        let can_create: bool = row.try_get(3).map_err(read)?;
        let nodes = tokio::time::timeout(
            self.timeout(),
            client.query(
                "SELECT a.application_name, coalesce(host(a.client_addr), 'local'), \
                 bool_or(l.pid IS NOT NULL) FROM pg_stat_activity a \
                 LEFT JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'advisory' \
                 AND l.granted AND l.objsubid = 1 \
                 AND (l.classid::bigint << 32 | l.objid::bigint) = $1 \
                 WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() \
                 AND a.application_name LIKE 'overdue/%' \
                 GROUP BY 1, 2 ORDER BY 3 DESC, 1",
                &[&store::ACTIVE_LOCK],
            ),
        )
        .await
        .map_err(|_| self.silent("a query"))?
        .map_err(|e| self.explain(&e))?;
        let mut probe = probe;
        for row in nodes {
            probe.nodes.push(NodeSeen {
                name: row.try_get(0).map_err(read)?,
                from: row.try_get(1).map_err(read)?,
                active: row.try_get(2).map_err(read)?,
            });
        }
        if !can_create {
            return Err(PgError::NoPrivilege {
                target: self.target(),
                user: probe.user,
                schema: if probe.schema.is_empty() {
                    "public".into()
                } else {
                    probe.schema
                },
            });
        }
        Ok(probe)
    }

    /// The one mapping of tokio-postgres's errors to ours.
    pub(crate) fn explain(&self, e: &tokio_postgres::Error) -> PgError {
        let target = self.target();
        if e.is_closed() {
            return PgError::Lost {
                target,
                reason: error_line(e),
            };
        }
        if let Some(db) = e.as_db_error() {
            let reason = db.message().to_string();
            return match *db.code() {
                // The server ended the session (pg_terminate_backend, a shutdown).
                SqlState::ADMIN_SHUTDOWN | SqlState::CRASH_SHUTDOWN => {
                    PgError::Lost { target, reason }
                }
                SqlState::INVALID_PASSWORD => PgError::WrongPassword {
                    target,
                    user: self.user(),
                },
                SqlState::INVALID_AUTHORIZATION_SPECIFICATION => {
                    PgError::NotAllowed { target, reason }
                }
                SqlState::INVALID_CATALOG_NAME => PgError::NoDatabase { target, reason },
                // Anything else, a refused CONNECT right included ("permission denied for
                // database"), in the server's own words.
                _ => PgError::Server { target, reason },
            };
        }
        let reason = error_line(e);
        if e.to_string().contains("TLS") {
            return PgError::Tls { target, reason };
        }
        let io = std::iter::successors(std::error::Error::source(e), |s| s.source())
            .any(<dyn std::error::Error>::is::<std::io::Error>);
        if io {
            PgError::Unreachable { target, reason }
        } else {
            PgError::Server { target, reason }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_parsed_with_libpq_ssl_parameters_taken_out() {
        let db: Database = "postgres://ov:s3cret@db.example:6543/overdue?sslmode=require&\
                            application_name=x"
            .parse()
            .expect("url");
        assert_eq!(db.target(), "db.example:6543/overdue");
        assert_eq!(db.tls, Tls::Unverified { required: true });
        assert_eq!(db.config.get_application_name(), Some("x"));
        assert_eq!(db.config.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
        let db: Database = "postgresql://ov@localhost/overdue".parse().expect("url");
        assert_eq!(db.target(), "localhost:5432/overdue");
        // Named after this process, so doctor tells the nodes on a database apart.
        let name = db.config.get_application_name().expect("a name");
        assert!(
            name.starts_with("overdue/")
                && name.ends_with(&format!("/{}", std::process::id()))
                && name.len() <= 63,
            "{name}"
        );
        assert_eq!(db.config.get_keepalives_idle(), Duration::from_secs(5));
    }

    #[test]
    fn bad_urls_are_refused_without_echoing_the_password() {
        for (url, says) in [
            ("mysql://u:p@h/d", "postgres://"),
            ("postgres://h/d", "no user"),
            (
                "postgres://u:hunter2@h/d?sslmode=sometimes",
                "sslmode=sometimes",
            ),
            ("postgres://u:hunter2@h:notaport/d", "invalid"),
        ] {
            let e = url.parse::<Database>().expect_err(url).to_string();
            assert!(e.contains(says), "{url}: {e}");
            assert!(!e.contains("hunter2"), "{url}: {e}");
        }
    }
}
