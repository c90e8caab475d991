//! Real receivers for alert tests, on 127.0.0.1: an HTTP server (warp) that records every
//! request and answers from a script of status codes, and an SMTP sink that speaks SMTP over
//! TCP (EHLO, AUTH PLAIN/LOGIN, MAIL, RCPT, DATA, RSET, NOOP, QUIT) and keeps each message.
//! Also the helpers the alert tests share (a server with the delivery worker, admin commands).

use overdue::cli::admin::{AdminCommand, AdminOutput, execute};
use overdue::cli::{ChannelAddArgs, ChannelCmd};
use overdue::notify::NotifyConfig;
use serde_json::Value;

use crate::common::{Options, TestServer};

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use warp::Filter;

/// One request the HTTP receiver got.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: warp::http::HeaderMap,
    pub body: Bytes,
}

impl Request {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

pub struct HttpReceiver {
    pub base: String,
    rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Request>>,
    /// Status codes to answer, in order; 200 once empty.
    script: Arc<Mutex<VecDeque<u16>>>,
}

impl HttpReceiver {
    pub async fn start() -> HttpReceiver {
        let (tx, rx) = mpsc::unbounded_channel();
        let script: Arc<Mutex<VecDeque<u16>>> = Arc::default();
        let answers = script.clone();
        let route = warp::method()
            .and(warp::path::full())
            .and(warp::query::raw().or(warp::any().map(String::new)).unify())
            .and(warp::header::headers_cloned())
            .and(warp::body::bytes())
            .map(
                move |method: warp::http::Method,
                      path: warp::path::FullPath,
                      query: String,
                      headers: warp::http::HeaderMap,
                      body: Bytes| {
                    let _ = tx.send(Request {
                        method: method.to_string(),
                        path: path.as_str().to_string(),
                        query,
                        headers,
                        body,
                    });
                    let code = answers.lock().expect("script").pop_front().unwrap_or(200);
                    warp::reply::with_status(
                        "{}",
                        warp::http::StatusCode::from_u16(code).expect("status"),
                    )
                },
            );
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(warp::serve(route).incoming(listener).run());
        HttpReceiver {
            base,
            rx: tokio::sync::Mutex::new(rx),
            script,
        }
    }

    /// Answers the next requests with these codes.
    pub fn answer(&self, codes: &[u16]) {
        self.script.lock().expect("script").extend(codes);
    }

    /// The next request, if one arrives within `within`.
    pub async fn next(&self, within: Duration) -> Option<Request> {
        let mut rx = self.rx.lock().await;
        tokio::time::timeout(within, rx.recv()).await.ok().flatten()
    }
}

/// One message the SMTP sink accepted.
#[derive(Debug, Clone)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    pub data: String,
    /// The identity given with AUTH, if any.
    pub auth: Option<String>,
}

impl Mail {
    /// A header's value (first occurrence, unfolded).
    pub fn header(&self, name: &str) -> String {
        let head = self.data.split("\r\n\r\n").next().unwrap_or("");
        let mut value = None::<String>;
        for line in head.split("\r\n") {
            if let Some(v) = value.as_mut() {
                if line.starts_with([' ', '\t']) {
                    v.push_str(line.trim_start());
                    continue;
                }
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case(name)
            {
                value = Some(v.trim().to_string());
            }
        }
        value.unwrap_or_default()
    }

    /// The body, with quoted-printable soft line breaks and escapes undone.
    pub fn body(&self) -> String {
        let body = self.data.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        if !self
            .header("Content-Transfer-Encoding")
            .eq_ignore_ascii_case("quoted-printable")
        {
            return body.replace("\r\n", "\n");
        }
        let joined = body.replace("=\r\n", "");
        let bytes = joined.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'='
                && i + 2 < bytes.len()
                && let Ok(b) = u8::from_str_radix(&joined[i + 1..i + 3], 16)
            {
                out.push(b);
                i += 3;
                continue;
            }
            out.push(bytes[i]);
            i += 1;
        }
        String::from_utf8_lossy(&out).replace("\r\n", "\n")
    }
}

pub struct SmtpSink {
    pub port: u16,
    rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Mail>>,
}

impl SmtpSink {
    pub async fn start() -> SmtpSink {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let tx = tx.clone();
                tokio::spawn(async move {
                    let _ = session(stream, tx).await;
                });
            }
        });
        SmtpSink {
            port,
            rx: tokio::sync::Mutex::new(rx),
        }
    }

    pub async fn next(&self, within: Duration) -> Option<Mail> {
        let mut rx = self.rx.lock().await;
        tokio::time::timeout(within, rx.recv()).await.ok().flatten()
    }
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

async fn session(
    stream: tokio::net::TcpStream,
    tx: mpsc::UnboundedSender<Mail>,
) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    write.write_all(b"220 sink.test ESMTP\r\n").await?;
    let (mut from, mut to, mut auth) = (String::new(), Vec::new(), None::<String>);
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let cmd = line.trim_end().to_string();
        let upper = cmd.to_ascii_uppercase();
        let reply: &[u8] = if upper.starts_with("EHLO") {
            b"250-sink.test\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n"
        } else if upper.starts_with("HELO") {
            b"250 sink.test\r\n"
        } else if let Some(rest) = upper.strip_prefix("AUTH PLAIN") {
            let arg = if rest.trim().is_empty() {
                write.write_all(b"334 \r\n").await?;
                line.clear();
                lines.read_line(&mut line).await?;
                line.trim().to_string()
            } else {
                cmd["AUTH PLAIN".len()..].trim().to_string()
            };
            // authzid \0 authcid \0 password
            let decoded = b64(&arg);
            auth = decoded.split('\0').nth(1).map(str::to_string);
            b"235 2.7.0 accepted\r\n"
        } else if upper.starts_with("AUTH LOGIN") {
            write.write_all(b"334 VXNlcm5hbWU6\r\n").await?;
            line.clear();
            lines.read_line(&mut line).await?;
            auth = Some(b64(&line));
            write.write_all(b"334 UGFzc3dvcmQ6\r\n").await?;
            line.clear();
            lines.read_line(&mut line).await?;
            b"235 2.7.0 accepted\r\n"
        } else if upper.starts_with("MAIL FROM:") {
            from = cmd[10..].trim().trim_matches(['<', '>']).to_string();
            to.clear();
            b"250 ok\r\n"
        } else if upper.starts_with("RCPT TO:") {
            to.push(cmd[8..].trim().trim_matches(['<', '>']).to_string());
            b"250 ok\r\n"
        } else if upper == "DATA" {
            write.write_all(b"354 end with .\r\n").await?;
            let mut data = String::new();
            loop {
                line.clear();
                if lines.read_line(&mut line).await? == 0 {
                    return Ok(());
                }
                if line == ".\r\n" || line == ".\n" {
                    break;
                }
                let l = line.strip_prefix('.').unwrap_or(&line);
                data.push_str(l);
            }
            let _ = tx.send(Mail {
                from: from.clone(),
                to: to.clone(),
                data,
                auth: auth.clone(),
            });
            b"250 2.0.0 queued\r\n"
        } else if upper == "QUIT" {
            write.write_all(b"221 bye\r\n").await?;
            return Ok(());
        } else if upper == "RSET" || upper == "NOOP" {
            b"250 ok\r\n"
        } else {
            b"502 not implemented\r\n"
        };
        write.write_all(reply).await?;
    }
}

/// Fast retries for tests: 150 ms, then 300 ms, 600 ms, 1.2 s.
pub fn fast(mut notify: NotifyConfig) -> NotifyConfig {
    notify.retry_delays = overdue::model::outbox::backoff(Duration::from_millis(150), 5);
    notify.timeout = Duration::from_secs(3);
    notify
}

pub async fn start(notify: NotifyConfig, dir: Option<tempfile::TempDir>) -> TestServer {
    let mut opts = Options {
        deliver: true,
        dir,
        ..Options::default()
    };
    opts.service.notify = fast(notify);
    TestServer::start_with(opts).await
}

pub async fn admin(t: &TestServer, cmd: ChannelCmd) -> AdminOutput {
    execute(&t.service, AdminCommand::Channel(cmd)).await
}

pub fn add(kind: &str, name: &str) -> ChannelAddArgs {
    ChannelAddArgs {
        project: Some("default".into()),
        kind: kind.into(),
        name: name.into(),
        ..Default::default()
    }
}

pub async fn add_channel(t: &TestServer, args: ChannelAddArgs) {
    let out = admin(t, ChannelCmd::Add(Box::new(args))).await;
    assert_eq!(out.code, 0, "channel add: {}", out.stderr);
}

pub async fn channels_json(t: &TestServer) -> Vec<Value> {
    let out = admin(
        t,
        ChannelCmd::Ls {
            project: Some("default".into()),
            json: true,
        },
    )
    .await;
    serde_json::from_str::<Vec<Value>>(&out.stdout).expect("a JSON array")
}
