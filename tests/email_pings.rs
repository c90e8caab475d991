//! Email pings end to end (reference-behavior §4.6): real SMTP conversations over TCP with the
//! inbound listener on 127.0.0.1:0, results read back through the Management API.

use crate::common;
use crate::process;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::TestServer;
use overdue::email::{InboundConfig, serve};
use overdue::service::{Clock, Service, ServiceConfig};
use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};

const DOMAIN: &str = "hc.example.com";

/// A minimal SMTP client: enough to speak to the listener as a mail relay would.
struct Client {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Client {
        let (r, w) = TcpStream::connect(addr)
            .await
            .expect("connect")
            .into_split();
        let mut c = Client {
            reader: BufReader::new(r),
            writer: w,
        };
        let (code, text) = c.reply().await;
        assert_eq!(code, 220, "{text}");
        c
    }

    /// One (possibly multi-line) reply: its code and its lines joined.
    async fn reply(&mut self) -> (u16, String) {
        let mut all = String::new();
        loop {
            let mut line = String::new();
            let n = self.reader.read_line(&mut line).await.expect("read");
            assert!(n > 0, "connection closed; read so far: {all:?}");
            all.push_str(&line);
            if line.as_bytes().get(3) != Some(&b'-') {
                return (line[..3].parse().expect("code"), all);
            }
        }
    }

    async fn raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.expect("write");
    }

    async fn cmd(&mut self, line: &str) -> (u16, String) {
        self.raw(format!("{line}\r\n").as_bytes()).await;
        self.reply().await
    }

    /// A whole transaction; the codes of MAIL, each RCPT, DATA and the end of data.
    async fn send(&mut self, from: &str, to: &[&str], message: &str) -> Vec<u16> {
        let mut codes = vec![self.cmd(&format!("MAIL FROM:<{from}>")).await.0];
        for rcpt in to {
            codes.push(self.cmd(&format!("RCPT TO:<{rcpt}>")).await.0);
        }
        let (data, _) = self.cmd("DATA").await;
        codes.push(data);
        if data == 354 {
            let mut body = String::new();
            for line in message.lines() {
                // Dot-stuffing, as every client does.
                if line.starts_with('.') {
                    body.push('.');
                }
                body.push_str(line);
                body.push_str("\r\n");
            }
            body.push_str(".\r\n");
            self.raw(body.as_bytes()).await;
            codes.push(self.reply().await.0);
        }
        codes
    }
}

struct Setup {
    s: TestServer,
    smtp: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

async fn setup_with(config: InboundConfig) -> Setup {
    let s = TestServer::start().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let smtp = listener.local_addr().expect("addr");
    let task = tokio::spawn(serve(
        listener,
        s.service.clone(),
        config,
        std::future::pending(),
    ));
    Setup { s, smtp, task }
}

async fn setup() -> Setup {
    setup_with(InboundConfig::new(DOMAIN)).await
}

impl Setup {
    async fn stop(self) {
        self.task.abort();
        let _ = self.task.await;
        self.s.stop().await;
    }

    async fn client(&self) -> Client {
        let mut c = Client::connect(self.smtp).await;
        assert_eq!(c.cmd("EHLO relay.example.org").await.0, 250);
        c
    }
}

fn message(subject: &str, body: &str) -> String {
    format!(
        "From: Backup Job <backup@example.org>\r\nTo: x@{DOMAIN}\r\nSubject: {subject}\r\n\r\n{body}\r\n"
    )
}

#[tokio::test]
async fn an_email_to_a_uuid_address_is_a_success_ping() {
    let t = setup().await;
    let c = t.s.create(json!({"name": "backup"})).await;
    let uuid = c["uuid"].as_str().unwrap();
    assert_eq!(t.s.get_check(uuid).await["status"], "new");

    let mut client = t.client().await;
    let codes = client
        .send(
            "backup@example.org",
            &[&format!("{uuid}@{DOMAIN}")],
            &message("Nightly backup", "It went fine.\n.hidden dot line"),
        )
        .await;
    assert_eq!(codes, [250, 250, 354, 250]);
    assert_eq!(client.cmd("QUIT").await.0, 221);

    assert_eq!(t.s.get_check(uuid).await["status"], "up");
    let list = t.s.pings(uuid).await;
    assert_eq!(list.len(), 1);
    let p = &list[0];
    assert_eq!(p["type"], "success");
    assert_eq!(p["scheme"], "email");
    assert_eq!(p["method"], "");
    assert_eq!(p["ua"], "Email from backup@example.org");
    assert_eq!(p["remote_addr"], "127.0.0.1");

    // The stored body is the raw message, dot-stuffing undone.
    let r =
        t.s.rw(Method::GET, &format!("/api/v3/checks/{uuid}/pings/1/body"))
            .send()
            .await
            .unwrap();
    assert_eq!(r.status(), 200);
    let body = r.text().await.unwrap();
    assert!(body.contains("Subject: Nightly backup"), "{body}");
    assert!(body.contains("\r\n.hidden dot line\r\n"), "{body}");
    t.stop().await;
}

#[tokio::test]
async fn slug_addresses_and_several_recipients() {
    let t = setup().await;
    let a = t.s.create(json!({"name": "a", "slug": "db-backup"})).await;
    let b = t.s.create(json!({"name": "b"})).await;
    let mut client = t.client().await;
    let to_slug = format!("{}+db-backup@{DOMAIN}", t.s.ping_key);
    let to_b = format!("{}@{DOMAIN}", b["uuid"].as_str().unwrap());
    let codes = client
        .send("", &[&to_slug, &to_b], &message("done", "ok"))
        .await;
    assert_eq!(codes, [250, 250, 250, 354, 250]);
    for c in [&a, &b] {
        let list = t.s.pings(c["uuid"].as_str().unwrap()).await;
        assert_eq!(list.len(), 1, "{c}");
        assert_eq!(list[0]["ua"], "Email from ");
    }
    t.stop().await;
}

#[tokio::test]
async fn keyword_filters_on_subject_and_body() {
    let t = setup().await;
    let by_subject =
        t.s.create(json!({
            "name": "subject", "filter_subject": true,
            "success_kw": "SUCCESS", "failure_kw": "FAILED",
        }))
        .await;
    let by_body =
        t.s.create(json!({
            "name": "body", "filter_body": true, "failure_kw": "ERROR",
            "success_kw": "all good", "filter_default_fail": true,
        }))
        .await;
    let unfiltered = t.s.create(json!({"name": "plain"})).await;
    let addr = |c: &Value| format!("{}@{DOMAIN}", c["uuid"].as_str().unwrap());
    let mut client = t.client().await;

    client
        .send(
            "j@x",
            &[&addr(&by_subject)],
            &message("Backup SUCCESS", "x"),
        )
        .await;
    client
        .send("j@x", &[&addr(&by_subject)], &message("Backup FAILED", "x"))
        .await;
    client
        .send(
            "j@x",
            &[&addr(&by_subject)],
            &message("no keyword", "FAILED"),
        )
        .await;
    let kinds = |list: Vec<Value>| -> Vec<String> {
        list.iter()
            .map(|p| p["type"].as_str().unwrap().to_string())
            .collect()
    };
    let uuid = |c: &Value| c["uuid"].as_str().unwrap().to_string();
    assert_eq!(
        kinds(t.s.pings(&uuid(&by_subject)).await),
        ["ign", "fail", "success"]
    );
    assert_eq!(t.s.get_check(&uuid(&by_subject)).await["status"], "down");

    // An HTML-only body: the filter reads its text, not its markup.
    let html = format!(
        "From: j@x\r\nTo: {}\r\nSubject: report\r\nMIME-Version: 1.0\r\n\
Content-Type: text/html; charset=utf-8\r\n\r\n<p>Job finished: <b>all good</b></p>\r\n",
        addr(&by_body)
    );
    client.send("j@x", &[&addr(&by_body)], &html).await;
    assert_eq!(t.s.get_check(&uuid(&by_body)).await["status"], "up");
    client
        .send("j@x", &[&addr(&by_body)], &message("report", "2 ERRORs"))
        .await;
    client
        .send("j@x", &[&addr(&by_body)], &message("report", "nothing"))
        .await;
    assert_eq!(
        kinds(t.s.pings(&uuid(&by_body)).await),
        ["fail", "fail", "success"]
    );

    // Without filters every email is a success, whatever it says.
    client
        .send("j@x", &[&addr(&unfiltered)], &message("FAILED", "ERROR"))
        .await;
    assert_eq!(kinds(t.s.pings(&uuid(&unfiltered)).await), ["success"]);
    t.stop().await;
}

#[tokio::test]
async fn recipients_outside_the_ping_addresses_get_550() {
    let t = setup().await;
    let c = t.s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    let mut client = t.client().await;
    assert_eq!(client.cmd("MAIL FROM:<j@x>").await.0, 250);
    let (code, text) = client.cmd(&format!("RCPT TO:<{uuid}@other.org>")).await;
    assert_eq!(
        (code, text.as_str()),
        (550, "550 5.1.1 Recipient rejected\r\n")
    );
    let (code, text) = client.cmd(&format!("RCPT TO:<postmaster@{DOMAIN}>")).await;
    assert_eq!(
        (code, text.as_str()),
        (550, "550 5.1.1 Invalid mailbox\r\n")
    );
    assert_eq!(client.cmd("DATA").await.0, 503);
    assert_eq!(client.cmd("RSET").await.0, 250);

    // A well-formed address of no check: accepted (the reference only logs it).
    let unknown = format!("{}@{DOMAIN}", uuid::Uuid::new_v4());
    let codes = client.send("j@x", &[&unknown], &message("s", "b")).await;
    assert_eq!(codes, [250, 250, 354, 250]);
    assert!(t.s.pings(uuid).await.is_empty());
    t.stop().await;
}

#[tokio::test]
async fn oversize_messages_get_552_and_size_is_advertised() {
    let mut config = InboundConfig::new(DOMAIN);
    config.max_message = 2_000;
    let t = setup_with(config).await;
    let c = t.s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    let to = format!("{uuid}@{DOMAIN}");

    let mut client = Client::connect(t.smtp).await;
    let (code, ehlo) = client.cmd("EHLO relay").await;
    assert_eq!(code, 250);
    assert!(ehlo.contains("250-SIZE 2000\r\n"), "{ehlo}");

    // Declared too big: refused at MAIL.
    assert_eq!(client.cmd("MAIL FROM:<j@x> SIZE=5000").await.0, 552);
    // Not declared, but too big: refused at the end of data, and the session goes on.
    let big = message("big", &"x".repeat(100).repeat(30));
    assert_eq!(client.send("j@x", &[&to], &big).await, [250, 250, 354, 552]);
    // One enormous line is no different.
    let huge_line = message("big", &"y".repeat(50_000));
    assert_eq!(
        client.send("j@x", &[&to], &huge_line).await,
        [250, 250, 354, 552]
    );
    assert!(t.s.pings(uuid).await.is_empty());
    assert_eq!(
        client.send("j@x", &[&to], &message("small", "ok")).await,
        [250, 250, 354, 250]
    );
    assert_eq!(t.s.pings(uuid).await.len(), 1);
    t.stop().await;
}

#[tokio::test]
async fn the_stored_body_is_cut_to_the_ping_body_limit() {
    let t = setup().await;
    let c = t.s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    let mut client = t.client().await;
    let long = message("long", &"z".repeat(30_000));
    let codes = client
        .send("j@x", &[&format!("{uuid}@{DOMAIN}")], &long)
        .await;
    assert_eq!(codes, [250, 250, 354, 250]);
    let r =
        t.s.rw(Method::GET, &format!("/api/v3/checks/{uuid}/pings/1/body"))
            .send()
            .await
            .unwrap();
    assert_eq!(r.bytes().await.unwrap().len(), 10_000);
    t.stop().await;
}

#[tokio::test]
async fn rude_clients_do_not_hurt_the_listener() {
    let t = setup().await;
    let c = t.s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap();
    let to = format!("{uuid}@{DOMAIN}");

    // Binary garbage and an endless command line.
    let mut rude = Client::connect(t.smtp).await;
    rude.raw(b"\x00\xff\xfe garbage\r\n").await;
    assert_eq!(rude.reply().await.0, 500);
    rude.raw(&vec![b'A'; 100_000]).await;
    rude.raw(b"\r\n").await;
    assert_eq!(rude.reply().await.0, 500);
    // A client that keeps erring is shown the door.
    let mut last = 0;
    for _ in 0..30 {
        rude.raw(b"BOGUS\r\n").await;
        last = rude.reply().await.0;
        if last == 421 {
            break;
        }
    }
    assert_eq!(last, 421);

    // A client that hangs up in the middle of a message.
    let mut quitter = t.client().await;
    quitter.cmd("MAIL FROM:<j@x>").await;
    quitter.cmd(&format!("RCPT TO:<{to}>")).await;
    assert_eq!(quitter.cmd("DATA").await.0, 354);
    quitter.raw(b"Subject: half\r\n\r\nhalf a mes").await;
    drop(quitter);

    // A malformed message is still recorded (a success: no filters), never a crash.
    let mut client = t.client().await;
    let broken = "Content-Type: multipart/mixed; boundary=\"\r\n\r\n--\r\n--\r\n\u{1}\u{2}";
    assert_eq!(
        client.send("j@x", &[&to], broken).await,
        [250, 250, 354, 250]
    );
    assert_eq!(t.s.pings(uuid).await.len(), 1);
    t.stop().await;
}

#[tokio::test]
async fn many_concurrent_senders() {
    let t = setup().await;
    let c = t.s.create(json!({})).await;
    let uuid = c["uuid"].as_str().unwrap().to_string();
    let senders = 40;
    let mut tasks = Vec::new();
    for i in 0..senders {
        let addr = t.smtp;
        let to = format!("{uuid}@{DOMAIN}");
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(addr).await;
            assert_eq!(client.cmd("HELO sender").await.0, 250);
            let codes = client
                .send(
                    &format!("job{i}@x"),
                    &[&to],
                    &message(&format!("run {i}"), "ok"),
                )
                .await;
            assert_eq!(codes, [250, 250, 354, 250]);
            client.cmd("QUIT").await;
        }));
    }
    for task in tasks {
        task.await.expect("sender");
    }
    let list = t.s.pings(&uuid).await;
    assert_eq!(list.len(), senders);
    let mut ns: Vec<u64> = list.iter().map(|p| p["n"].as_u64().unwrap()).collect();
    ns.sort_unstable();
    assert_eq!(ns, (1..=senders as u64).collect::<Vec<_>>());
    t.stop().await;
}

#[tokio::test]
async fn connections_over_the_cap_are_turned_away() {
    let mut config = InboundConfig::new(DOMAIN);
    config.max_connections = 2;
    let t = setup_with(config).await;
    let _a = Client::connect(t.smtp).await;
    let _b = Client::connect(t.smtp).await;
    let mut c = TcpStream::connect(t.smtp).await.expect("connect");
    let mut text = String::new();
    c.read_to_string(&mut text).await.expect("read");
    assert!(text.starts_with("421 "), "{text}");
    t.stop().await;
}

#[tokio::test(start_paused = true)]
async fn silent_clients_time_out() {
    // The paused clock jumps to the idle deadline as soon as everyone waits.
    let dir = tempfile::tempdir().expect("dir");
    let service =
        Arc::new(Service::open(dir.path(), ServiceConfig::default(), Clock::System).expect("open"));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(serve(
        listener,
        service,
        InboundConfig::new(DOMAIN),
        std::future::pending(),
    ));
    let mut client = Client::connect(addr).await;
    let started = tokio::time::Instant::now();
    let (code, text) = client.reply().await;
    assert_eq!(code, 421, "{text}");
    assert!(started.elapsed() >= Duration::from_secs(60));
    task.abort();
}

#[test]
fn serve_flags_start_the_listener() {
    use std::io::{BufRead, Write};
    // The flags go together.
    let out = process::base_command()
        .args(["serve", "--smtp-listen", "127.0.0.1:0"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--ping-email-domain"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let data = tempfile::tempdir().expect("dir");
    let port = process::free_port();
    let listen = format!("127.0.0.1:{port}");
    let serve = process::Serve::start_with(
        data.path(),
        &["--smtp-listen", &listen, "--ping-email-domain", DOMAIN],
    );
    let stream = std::net::TcpStream::connect(&listen).expect("connect to smtp");
    stream
        .set_read_timeout(Some(process::IO_TIMEOUT))
        .expect("timeout");
    let mut reader = std::io::BufReader::new(stream.try_clone().expect("clone"));
    let mut line = String::new();
    reader.read_line(&mut line).expect("greeting");
    assert_eq!(line, format!("220 {DOMAIN} ESMTP overdue\r\n"));
    (&stream).write_all(b"QUIT\r\n").expect("quit");
    line.clear();
    reader.read_line(&mut line).expect("bye");
    assert!(line.starts_with("221 "), "{line}");
    drop(serve);
}
