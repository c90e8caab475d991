//! Test harness: a real server on 127.0.0.1:0 over a temporary data directory, and an HTTP
//! client that talks to it like any other client.

use std::sync::Arc;
use std::time::Duration;

use overdue::api::{ApiConfig, App};
use overdue::service::{Clock, Service, ServiceConfig};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// A ping as the HTTP handler hands it to the service: `GET /ping/<check>` (with `signal`),
/// or a `POST` carrying `body` when one is given; for tests that drive the service directly.
pub fn ping_request(
    check: uuid::Uuid,
    signal: overdue::model::signal::Signal,
    body: &'static [u8],
) -> overdue::service::pings::PingRequest {
    overdue::service::pings::PingRequest {
        target: overdue::model::signal::Target::Uuid(check),
        create: false,
        signal,
        method: if body.is_empty() { "GET" } else { "POST" }.into(),
        scheme: "http".into(),
        remote_addr: Some("127.0.0.1".into()),
        ua: "test".into(),
        rid: None,
        body: bytes::Bytes::from_static(body),
    }
}

/// The superuser URL of a throwaway PostgreSQL cluster (`OVERDUE_TEST_DATABASE`, as
/// `.ci/run` sets it for the second run of these tests): then every in-process server runs on
/// a fresh database of its own instead of a data file.
pub fn test_database() -> Option<String> {
    std::env::var("OVERDUE_TEST_DATABASE")
        .ok()
        .filter(|url| !url.is_empty())
}

/// `config` with the engine of this test run: unchanged on the data file; on PostgreSQL
/// ([`test_database`]) with the database of `dir`, created on first use and named in the
/// directory, so a restart over the same directory finds the same database.
pub fn engine(dir: &std::path::Path, mut config: ServiceConfig) -> ServiceConfig {
    let Some(admin) = test_database() else {
        return config;
    };
    let marker = dir.join("test-database");
    let name = std::fs::read_to_string(&marker).unwrap_or_else(|_| {
        let name = format!("t_{}", uuid::Uuid::new_v4().simple());
        create_database(&admin, &name);
        std::fs::write(&marker, &name).expect("name the test database");
        name
    });
    let (server, _) = admin.rsplit_once('/').expect("a URL with a database name");
    config.database = Some(
        format!("{server}/{name}")
            .parse()
            .expect("test database URL"),
    );
    config
}

/// `CREATE DATABASE name` on a thread and runtime of its own, so that any test (sync, async,
/// on a paused clock) can call it.
fn create_database(admin: &str, name: &str) {
    let (admin, sql) = (admin.to_string(), format!("CREATE DATABASE {name}"));
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
                .await
                .expect("connect to OVERDUE_TEST_DATABASE");
            let task = tokio::spawn(connection);
            client
                .batch_execute(&sql)
                .await
                .expect("create a test database");
            drop(client);
            let _ = task.await;
        });
    })
    .join()
    .expect("create the test database");
}

pub struct TestServer {
    pub base: String,
    pub rw: String,
    pub ro: String,
    pub ping_key: String,
    pub service: Arc<Service>,
    pub http: reqwest::Client,
    pub dir: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    monitor: tokio::task::JoinHandle<()>,
    delivery: Option<tokio::task::JoinHandle<()>>,
}

pub struct Options {
    pub api: ApiConfig,
    pub service: ServiceConfig,
    /// Start the delivery worker (alerts reach their channels).
    pub deliver: bool,
    /// Reuse this data directory (a restart) instead of a fresh one.
    pub dir: Option<tempfile::TempDir>,
    /// A path after the address in the site root (`/overdue`: served behind a proxy there).
    pub site_path: &'static str,
    /// The service's clock (default: the system's); an offset clock stands for days passing.
    pub clock: Option<Clock>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            api: ApiConfig {
                api_rate_limit: 0,
                ..Default::default()
            },
            service: ServiceConfig::default(),
            deliver: false,
            dir: None,
            site_path: "",
            clock: None,
        }
    }
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_with(Options::default()).await
    }

    pub async fn start_with(mut opts: Options) -> TestServer {
        overdue::tls::install_provider();
        let dir = match opts.dir.take() {
            Some(dir) => dir,
            None => tempfile::tempdir().expect("temp dir"),
        };
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        opts.service.site_root = Some(format!("{base}{}", opts.site_path));
        let config = engine(dir.path(), opts.service);
        let service = Arc::new(
            Service::open(dir.path(), config, opts.clock.unwrap_or(Clock::System)).expect("open"),
        );
        let created = service
            .ensure_default_project()
            .await
            .expect("default project");
        let (ping_key, rw, ro) = if let Some((project, rw, ro)) = created {
            (project.ping_key, rw.plaintext, ro.plaintext)
        } else {
            // A restart: the keys were shown once, at the first start; add fresh ones.
            let rw = service.add_key("default", false, "").await.expect("rw key");
            let ro = service.add_key("default", true, "").await.expect("ro key");
            let ping_key = service.read(|s| {
                s.project_by_name("default")
                    .expect("default")
                    .ping_key
                    .clone()
            });
            (ping_key, rw.plaintext, ro.plaintext)
        };
        let monitor = overdue::monitor::start(service.clone());
        let delivery = opts
            .deliver
            .then(|| overdue::notify::worker::start(service.clone()).expect("delivery worker"));
        let app = Arc::new(App::new(service.clone(), opts.api));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(overdue::server::run(
            listener,
            app,
            overdue::server::Limits::default(),
            async move {
                let _ = stopped.await;
            },
            Duration::from_secs(5),
        ));
        TestServer {
            base,
            rw,
            ro,
            ping_key,
            service,
            http: reqwest::Client::new(),
            dir,
            stop: Some(stop),
            task: Some(task),
            monitor,
            delivery,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Stops the server, closes the data file and hands back the data directory.
    pub async fn shutdown(mut self) -> tempfile::TempDir {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.monitor.abort();
        let _ = (&mut self.monitor).await;
        if let Some(delivery) = self.delivery.take() {
            delivery.abort();
            let _ = delivery.await;
        }
        let TestServer { service, dir, .. } = self;
        // Aborted deliveries drop their handle on the service at their next poll.
        for _ in 0..500 {
            if Arc::strong_count(&service) == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let Ok(service) = Arc::try_unwrap(service) else {
            panic!("the service is still shared after shutdown")
        };
        service.close().await;
        dir
    }

    /// A request with the read-write key.
    pub fn rw(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, self.url(path))
            .header("X-Api-Key", &self.rw)
    }

    /// Sends a request with the read-write key (and a JSON body when given): the status and
    /// the JSON answer (a string when the answer is not JSON).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut request = self.rw(method, path);
        if let Some(body) = body {
            request = request.json(body);
        }
        status_json(request.send().await.expect("send")).await
    }

    /// A check's pings as the Management API lists them (asserting a 200).
    pub async fn pings(&self, uuid: &str) -> Vec<Value> {
        let path = format!("/api/v3/checks/{uuid}/pings/");
        let (code, doc) =
            status_json(self.rw(reqwest::Method::GET, &path).send().await.unwrap()).await;
        assert_eq!(code, 200, "{doc}");
        doc["pings"].as_array().unwrap().clone()
    }

    pub fn ro(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, self.url(path))
            .header("X-Api-Key", &self.ro)
    }

    pub fn anon(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, self.url(path))
    }

    pub async fn create(&self, body: Value) -> Value {
        let r = self
            .rw(reqwest::Method::POST, "/api/v3/checks/")
            .json(&body)
            .send()
            .await
            .expect("send");
        assert!(r.status().is_success(), "create failed: {}", r.status());
        r.json().await.expect("json")
    }

    /// Adds the email channel "ops mail" (ops@example.org) to the default project.
    pub async fn mail_channel(&self) -> overdue::model::Channel {
        self.service
            .add_channel(
                "default",
                "ops mail",
                overdue::model::ChannelConfig::Email {
                    address: "ops@example.org".into(),
                },
            )
            .await
            .expect("channel")
    }

    pub async fn get_check(&self, uuid: &str) -> Value {
        let r = self
            .rw(reqwest::Method::GET, &format!("/api/v3/checks/{uuid}"))
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 200);
        r.json().await.expect("json")
    }

    pub async fn list(&self) -> Vec<Value> {
        let r = self
            .rw(reqwest::Method::GET, "/api/v3/checks/")
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 200);
        let doc: Value = r.json().await.expect("json");
        doc["checks"].as_array().expect("array").clone()
    }
}

/// A dashboard visitor: a session cookie and its CSRF token, as a browser holds them.
pub struct WebSession<'a> {
    pub server: &'a TestServer,
    pub cookie: String,
    pub csrf: String,
}

/// The value of a response's `Set-Cookie` for the session cookie (`name=value` only).
pub fn session_cookie(r: &reqwest::Response) -> Option<String> {
    r.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("overdue_session=") && !v.starts_with("overdue_session=;"))
        .map(|v| v.split(';').next().unwrap_or("").to_string())
}

/// The value of the first `name="csrf"` hidden field of a page.
pub fn csrf_of(page: &str) -> Option<String> {
    let at = page.find("name=\"csrf\" value=\"")? + "name=\"csrf\" value=\"".len();
    Some(page[at..].split('"').next()?.to_string())
}

impl TestServer {
    /// A client that does not follow redirects (the tests look at them).
    #[allow(
        clippy::unused_self,
        reason = "read as s.browser() beside s.url() in the tests"
    )]
    pub fn browser(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client")
    }

    /// Signs in to the dashboard with `key`, asserting it works.
    pub async fn sign_in(&self, key: &str) -> WebSession<'_> {
        let r = self
            .browser()
            .post(self.url("/signin/"))
            .form(&[("key", key)])
            .send()
            .await
            .expect("sign in");
        assert_eq!(r.status(), 303, "sign-in refused");
        let cookie = session_cookie(&r).expect("session cookie");
        let mut session = WebSession {
            server: self,
            cookie,
            csrf: String::new(),
        };
        let (_, page) = session.get("/signin/").await;
        session.csrf = csrf_of(&page).expect("csrf token on the page");
        session
    }
}

impl WebSession<'_> {
    /// GETs a dashboard path: the status and the body.
    pub async fn get(&self, path: &str) -> (u16, String) {
        let r = self
            .server
            .browser()
            .get(self.server.url(path))
            .header("cookie", &self.cookie)
            .send()
            .await
            .expect("get");
        (r.status().as_u16(), r.text().await.expect("body"))
    }

    /// POSTs a form with the session's CSRF token added.
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> reqwest::Response {
        let mut all: Vec<(&str, &str)> = vec![("csrf", &self.csrf)];
        all.extend_from_slice(fields);
        self.post_raw(path, &all).await
    }

    /// POSTs a form as it is (no CSRF token added).
    pub async fn post_raw(&self, path: &str, fields: &[(&str, &str)]) -> reqwest::Response {
        self.server
            .browser()
            .post(self.server.url(path))
            .header("cookie", &self.cookie)
            .form(fields)
            .send()
            .await
            .expect("post")
    }
}

/// Status and JSON body of a response.
pub async fn status_json(r: reqwest::Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let text = r.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}
