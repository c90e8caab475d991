//! Shared harness for running the real `overdue` binary: a clean command, a `serve` spawned on
//! a free port with its output collected, and raw HTTP/1.0 requests to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_overdue");
/// Every environment variable the binary reads (`NOTIFY_SOCKET` is systemd's readiness socket);
/// cleared so the caller's shell cannot leak in.
pub const OVERDUE_VARS: &[&str] = &[
    "OVERDUE_DATA",
    "OVERDUE_PACKAGED_DATA",
    "OVERDUE_LISTEN",
    "OVERDUE_SITE_ROOT",
    "OVERDUE_DASHBOARD",
    "OVERDUE_API_RATE_LIMIT",
    "OVERDUE_PING_BODY_LIMIT",
    "OVERDUE_PING_LOG",
    "OVERDUE_PING_RATE_LIMIT",
    "OVERDUE_TRUST_PROXY",
    "OVERDUE_SHUTDOWN_GRACE",
    "OVERDUE_LOG",
    "OVERDUE_SMTP_LISTEN",
    "OVERDUE_PING_EMAIL_DOMAIN",
    "OVERDUE_METRICS_TOKEN",
    "OVERDUE_LOG_FORMAT",
    "OVERDUE_SMTP_URL",
    "OVERDUE_HC_API_KEY",
    "OVERDUE_STORAGE_GIVE_UP",
    "OVERDUE_MAX_CONNECTIONS",
    "OVERDUE_WORKERS",
    "OVERDUE_HEADER_TIMEOUT",
    "OVERDUE_IDLE_TIMEOUT",
    "OVERDUE_BODY_TIMEOUT",
    "OVERDUE_SMTP_FROM",
    "OVERDUE_ALLOW_SHELL_CHANNELS",
    "OVERDUE_DELIVERY_TRIES",
    "OVERDUE_RETRY_BASE",
    "OVERDUE_DELIVERY_TIMEOUT",
    "NOTIFY_SOCKET",
    "OVERDUE_DATABASE",
];
pub const STARTUP_DEADLINE: Duration = Duration::from_secs(10);
/// Read and write timeout of every test connection.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// `overdue` with none of its environment variables set and stdin closed.
pub fn base_command() -> Command {
    let mut cmd = Command::new(BIN);
    for var in OVERDUE_VARS {
        cmd.env_remove(var);
    }
    cmd.stdin(Stdio::null());
    cmd
}

pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("addr").port()
}

/// Collects everything a pipe delivers, on a thread of its own so the child never blocks.
pub fn drain(pipe: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let buf = Arc::new(Mutex::new(String::new()));
    let sink = buf.clone();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut line = String::new();
        while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
            sink.lock().expect("lock").push_str(&line);
            line.clear();
        }
    });
    buf
}

/// Polls `cond` every 10 ms until it holds or `limit` passes; whether it held.
pub fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A running (or exited) `overdue serve`; killed (and reaped) when dropped, whatever the test
/// did.
pub struct Serve {
    pub child: Child,
    pub port: u16,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    /// Spawns `overdue --data DIR serve --api-rate-limit 0 --listen 127.0.0.1:PORT`.
    pub fn spawn(data: &Path, port: u16) -> Serve {
        Serve::spawn_with(data, port, &[])
    }

    /// Like [`Serve::spawn`], with `extra` arguments to `serve` before `--listen`.
    pub fn spawn_with(data: &Path, port: u16, extra: &[&str]) -> Serve {
        Serve::spawn_with_env(data, port, extra, &[])
    }

    /// Like [`Serve::spawn_with`], with environment variables `env` set.
    pub fn spawn_with_env(data: &Path, port: u16, extra: &[&str], env: &[(&str, &str)]) -> Serve {
        let mut child = base_command()
            .envs(env.iter().copied())
            .arg("--data")
            .arg(data)
            .args(["serve", "--api-rate-limit", "0"])
            .args(extra)
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn overdue serve");
        let stdout = drain(child.stdout.take().expect("stdout"));
        let stderr = drain(child.stderr.take().expect("stderr"));
        Serve {
            child,
            port,
            stdout,
            stderr,
        }
    }

    /// A node on a PostgreSQL database (`OVERDUE_DATABASE=url`) on a free port, from data
    /// directory `data` (its control socket); not waited for.
    pub fn spawn_on_database(data: &Path, url: &str) -> Serve {
        Serve::spawn_with_env(data, free_port(), &[], &[("OVERDUE_DATABASE", url)])
    }

    /// Polls the status endpoint until it answers the standby's 503 (true), for at most 10 s.
    pub fn wait_standby(&self) -> bool {
        wait_until(Duration::from_secs(10), || {
            matches!(
                try_http(self.port, "GET", "/api/v3/status/", None, None),
                Ok((503, body)) if body.as_str().is_some_and(|b| b.starts_with("standby: "))
            )
        })
    }

    /// Starts a service on a free port and waits until `/api/v3/status/` answers 200.
    pub fn start(data: &Path) -> Serve {
        Serve::start_with(data, &[])
    }

    /// Like [`Serve::start`], with `extra` arguments to `serve`.
    pub fn start_with(data: &Path, extra: &[&str]) -> Serve {
        // The port is free when picked but could be taken before the child binds it: retry
        // on that one failure.
        for _ in 0..3 {
            let mut serve = Serve::spawn_with(data, free_port(), extra);
            if serve.wait_ready() {
                return serve;
            }
            let stderr = serve.stderr();
            assert!(
                stderr.contains("cannot listen"),
                "serve did not start\nstdout: {}\nstderr: {stderr}",
                serve.stdout()
            );
        }
        panic!("could not find a free port for serve");
    }

    /// Polls the status endpoint until 200 (true) or the process exits (false).
    pub fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + STARTUP_DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                // Give the drain threads a moment to collect the last lines.
                let _ = wait_until(Duration::from_secs(2), || !self.stderr().is_empty());
                eprintln!("serve exited early with {status}");
                return false;
            }
            if let Ok((200, _)) = try_http(self.port, "GET", "/api/v3/status/", None, None) {
                return true;
            }
            assert!(
                Instant::now() < deadline,
                "serve not ready after {STARTUP_DEADLINE:?}\nstderr: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stdout(&self) -> String {
        self.stdout.lock().expect("lock").clone()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("lock").clone()
    }

    /// The key printed at first start on the line starting with `label` (e.g.
    /// `"read-write API key:"`). It is printed before the server answers, but the drain
    /// thread may be a moment behind.
    pub fn first_start_key(&self, label: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let out = self.stdout();
            if let Some(key) = out.lines().find_map(|l| l.trim().strip_prefix(label)) {
                return key.trim().to_string();
            }
            assert!(
                Instant::now() < deadline,
                "no {label:?} line in serve's stdout:\n{out}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// [`http`] against this service.
    pub fn http(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<&Value>,
    ) -> Response {
        http(self.port, method, path, key, body)
    }

    /// [`http_ok`] against this service.
    pub fn http_ok(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<&Value>,
    ) -> Value {
        http_ok(self.port, method, path, key, body)
    }
}

/// Status and body (JSON when it parses, else a JSON string).
pub type Response = (u16, Value);

/// One HTTP/1.0 request over a fresh connection; status and body (JSON when it parses).
pub fn try_http(
    port: u16,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<&Value>,
) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let body = body
        .map(std::string::ToString::to_string)
        .unwrap_or_default();
    let mut request = format!("{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n");
    if let Some(key) = key {
        request.push_str(&format!("X-Api-Key: {key}\r\n"));
    }
    if !body.is_empty() {
        request.push_str("Content-Type: application/json\r\n");
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other(format!("no header end in {text:?}")))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line in {head:?}")))?;
    let value = serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.to_string()));
    Ok((status, value))
}

/// [`try_http`], panicking when the request itself fails.
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<&Value>,
) -> Response {
    try_http(port, method, path, key, body)
        .unwrap_or_else(|e| panic!("{method} {path} on port {port}: {e}"))
}

/// [`http`], asserting a 2xx status; the body.
pub fn http_ok(
    port: u16,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<&Value>,
) -> Value {
    let (status, doc) = http(port, method, path, key, body);
    assert!(
        (200..300).contains(&status),
        "{method} {path}: {status} {doc}"
    );
    doc
}

/// What a finished `overdue` command printed, and its exit code.
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Ran {
    fn from(out: std::process::Output) -> Ran {
        Ran {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Ran {
    /// Asserts success; stdout.
    pub fn ok(self) -> String {
        assert_eq!(
            self.code,
            Some(0),
            "stdout: {}\nstderr: {}",
            self.stdout,
            self.stderr
        );
        self.stdout
    }
}

/// An export with nothing in it: importing it makes a data directory with an empty data file.
pub const EMPTY_DUMP: &str = r#"{"format": "overdue-export", "version": 1,
    "exported_at": "2026-01-01T00:00:00Z", "badge_secret": "00", "projects": []}"#;

/// Makes `data` a data directory with an empty data file, as importing an empty export does:
/// admin commands other than `import` refuse a directory without one, and `serve` would add
/// a `default` project.
pub fn init_data(data: &Path) {
    let mut child = base_command()
        .arg("--data")
        .arg(data)
        .args(["import", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run overdue import");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(EMPTY_DUMP.as_bytes())
        .expect("write the export");
    let out = child.wait_with_output().expect("overdue import");
    assert!(
        out.status.success(),
        "init_data: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `overdue --data DATA ARGS...` to its end.
pub fn overdue_in(data: &Path, args: &[&str]) -> Ran {
    base_command()
        .arg("--data")
        .arg(data)
        .args(args)
        .output()
        .expect("run overdue")
        .into()
}

impl Serve {
    /// The `checks` of `GET /api/v3/checks/` with `key`.
    pub fn checks(&self, key: &str) -> Vec<Value> {
        let doc = self.http_ok("GET", "/api/v3/checks/", Some(key), None);
        doc["checks"].as_array().expect("checks").clone()
    }
}
