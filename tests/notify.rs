//! Alerts reach real receivers: an SMTP sink and an HTTP server on 127.0.0.1, started here.
//! Fail pings, recoveries, retries after 500s, a restart in the middle of retries, repeats,
//! slow receivers, shell permission and SMTP TLS modes. (`channel test` for every kind is in
//! `channel_kinds.rs`.)

use crate::common;
use crate::receivers;

use std::time::Duration;

use common::{Options, TestServer};
use overdue::cli::ChannelCmd;
use overdue::model::ChannelConfig;
use overdue::model::channel::{HookSpec, WebhookConfig};
use overdue::notify::NotifyConfig;
use receivers::{HttpReceiver, SmtpSink, add, add_channel, admin, channels_json, fast, start};
use serde_json::json;

/// The data directory of a stopped service, opened without starting anything.
fn stopped(dir: &std::path::Path) -> overdue::service::Service {
    use overdue::service::{Clock, Service, ServiceConfig};
    Service::open(
        dir,
        common::engine(dir, ServiceConfig::default()),
        Clock::System,
    )
    .expect("open")
}

/// Checks an alert email as a strict receiver would (RFC 5322 and what large providers demand:
/// one `Message-ID`, a `Date` near now, `MIME-Version`, a charset, CRLF line ends, no line over
/// 998 octets) and parses it; its Message-ID.
fn strict_headers(mail: &receivers::Mail) -> String {
    let raw = mail.data.as_bytes();
    assert!(
        !mail.data.replace("\r\n", "").contains('\n'),
        "bare LF in {:?}",
        mail.data
    );
    assert!(mail.data.split("\r\n").all(|l| l.len() <= 998));
    let parsed = mail_parser::MessageParser::default()
        .parse(raw)
        .expect("the email parses");
    let id = parsed.message_id().expect("a Message-ID").to_string();
    assert!(id.ends_with("@monitor.test"), "{id}: the sender's domain");
    assert_eq!(mail.data.matches("\r\nMessage-ID:").count(), 1);
    let date = parsed.date().expect("a Date header");
    let age = jiff::Timestamp::now().as_second() - date.to_timestamp();
    assert!((-60..60).contains(&age), "Date {date} is {age} s from now");
    assert_eq!(mail.header("MIME-Version"), "1.0");
    assert!(
        mail.header("Content-Type").contains("charset=utf-8"),
        "{}",
        mail.header("Content-Type")
    );
    assert_eq!(
        parsed
            .from()
            .and_then(|a| a.first())
            .and_then(|a| a.address()),
        Some("overdue@monitor.test")
    );
    assert_eq!(
        parsed
            .to()
            .and_then(|a| a.first())
            .and_then(|a| a.address()),
        Some("ops@example.org")
    );
    assert!(parsed.subject().is_some());
    id
}

/// A webhook with a JSON POST for down and a GET with the status in the query for up.
fn hook(base: &str) -> ChannelConfig {
    ChannelConfig::Webhook(WebhookConfig {
        down: Some(HookSpec {
            method: "POST".into(),
            url: format!("{base}/hook/$CODE"),
            body: r#"{"name": $NAME_JSON, "status": "$STATUS", "body": $BODY_JSON}"#.into(),
            headers: vec![("X-Secret".into(), "abc".into())],
        }),
        up: Some(HookSpec::new(&format!("{base}/hook/up?name=$NAME"), "")),
    })
}

async fn create_check(t: &TestServer, name: &str) -> String {
    let c = t
        .create(json!({"name": name, "channels": "*", "timeout": 3600, "grace": 60}))
        .await;
    c["ping_url"]
        .as_str()
        .expect("ping_url")
        .rsplit('/')
        .next()
        .expect("uuid")
        .to_string()
}

async fn ping(t: &TestServer, path: &str, body: &str) {
    let r = t
        .anon(reqwest::Method::POST, path)
        .body(body.to_string())
        .send()
        .await
        .expect("ping");
    assert_eq!(r.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fail_ping_emails_and_calls_the_webhook_within_two_seconds_and_recovery_follows() {
    let smtp = SmtpSink::start().await;
    let http = HttpReceiver::start().await;
    let notify = NotifyConfig {
        smtp_url: Some(format!("smtp://alerts:pw@127.0.0.1:{}", smtp.port)),
        smtp_from: Some("overdue@monitor.test".into()),
        ..NotifyConfig::default()
    };
    let t = start(notify, None).await;
    t.service
        .add_channel(
            "default",
            "mail",
            ChannelConfig::Email {
                address: "ops@example.org".into(),
            },
        )
        .await
        .expect("email");
    t.service
        .add_channel("default", "hook", hook(&http.base))
        .await
        .expect("hook");
    let uuid = create_check(&t, "Nightly backup").await;

    let sent = std::time::Instant::now();
    ping(&t, &format!("/ping/{uuid}/fail"), "disk full").await;
    let mail = smtp
        .next(Duration::from_secs(2))
        .await
        .expect("an email within 2 s");
    let req = http
        .next(Duration::from_secs(2))
        .await
        .expect("a webhook within 2 s");
    assert!(sent.elapsed() < Duration::from_secs(2));

    assert_eq!(mail.header("Subject"), "DOWN | Nightly backup");
    let down_id = strict_headers(&mail);
    assert_eq!(mail.to, vec!["ops@example.org".to_string()]);
    assert_eq!(mail.from, "overdue@monitor.test");
    assert_eq!(
        mail.auth.as_deref(),
        Some("alerts"),
        "authenticated as the URL's user"
    );
    let body = mail.body();
    assert!(
        body.starts_with("The check \"Nightly backup\" has gone down.\n"),
        "{body}"
    );
    assert!(
        body.contains("Reason: received a failure signal."),
        "{body}"
    );
    // The link opens the check's dashboard page (issue 16.5).
    assert!(
        body.contains(&format!("{}/checks/{uuid}/\n", t.base)),
        "{body}"
    );
    assert!(body.contains("Last ping type: Failure"), "{body}");
    assert!(body.contains("Last ping body:\ndisk full"), "{body}");

    assert_eq!(req.method, "POST");
    assert_eq!(req.path, format!("/hook/{uuid}"));
    assert_eq!(req.header("x-secret"), "abc");
    assert_eq!(req.header("user-agent"), "overdue");
    assert_eq!(
        req.json(),
        json!({"name": "Nightly backup", "status": "down", "body": "disk full"})
    );

    // Recovery: the up message, through both.
    ping(&t, &format!("/ping/{uuid}"), "").await;
    let mail = smtp.next(Duration::from_secs(2)).await.expect("up email");
    assert_eq!(mail.header("Subject"), "UP | Nightly backup");
    assert_ne!(
        strict_headers(&mail),
        down_id,
        "every alert has its own Message-ID"
    );
    assert!(mail.body().contains("has gone up."), "{}", mail.body());
    let req = http.next(Duration::from_secs(2)).await.expect("up webhook");
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("GET", "/hook/up")
    );
    assert_eq!(req.query, "name=Nightly%20backup");
    assert!(req.body.is_empty());

    // Delivered once each: nothing more arrives, the outbox is empty, and ls says ok.
    assert!(http.next(Duration::from_millis(500)).await.is_none());
    assert!(smtp.next(Duration::from_millis(100)).await.is_none());
    assert!(t.service.outbox_pending().expect("outbox").is_empty());
    for c in channels_json(&t).await {
        assert_eq!(c["failing"], 0, "{c}");
        assert_eq!(c["last_delivery"]["ok"], true, "{c}");
    }
    t.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_answering_500_twice_gets_the_alert_on_the_third_try() {
    let http = HttpReceiver::start().await;
    let t = start(NotifyConfig::default(), None).await;
    let chan = t
        .service
        .add_channel("default", "hook", hook(&http.base))
        .await
        .expect("hook");
    let uuid = create_check(&t, "db").await;
    http.answer(&[500, 500]);
    ping(&t, &format!("/ping/{uuid}/fail"), "").await;

    let mut bodies = Vec::new();
    for n in 1..=3 {
        let req = http
            .next(Duration::from_secs(3))
            .await
            .unwrap_or_else(|| panic!("try {n}"));
        bodies.push(req.json());
    }
    assert!(
        bodies.iter().all(|b| *b == bodies[0]),
        "the same alert each time"
    );
    assert!(
        http.next(Duration::from_secs(1)).await.is_none(),
        "no fourth try"
    );
    // Give the recording of the third try a moment to commit.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(t.service.outbox_pending().expect("outbox").is_empty());
    let history = t.service.deliveries(chan.uuid, 10).expect("history");
    let summary: Vec<(u32, Option<u16>, String)> = history
        .iter()
        .rev()
        .map(|d| (d.attempt, d.code, d.error.clone()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, Some(500), "Received status code 500".to_string()),
            (2, Some(500), "Received status code 500".to_string()),
            (3, Some(200), String::new()),
        ]
    );
    let counted = t.service.metrics().snapshot(0, false);
    assert_eq!(
        (counted.deliveries_ok, counted.deliveries_failed),
        (1, 2),
        "the operator metrics count every attempt"
    );
    t.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_that_keeps_failing_shows_in_channel_ls_and_is_given_up_after_five_tries() {
    let http = HttpReceiver::start().await;
    let t = start(NotifyConfig::default(), None).await;
    t.service
        .add_channel("default", "hook", hook(&http.base))
        .await
        .expect("hook");
    let uuid = create_check(&t, "db").await;
    http.answer(&[503; 10]);
    ping(&t, &format!("/ping/{uuid}/fail"), "").await;
    for n in 1..=5 {
        http.next(Duration::from_secs(3))
            .await
            .unwrap_or_else(|| panic!("try {n}"));
    }
    assert!(
        http.next(Duration::from_secs(2)).await.is_none(),
        "five tries only"
    );
    let ls = channels_json(&t).await;
    assert_eq!(ls[0]["failing"], 5, "{ls:?}");
    assert_eq!(ls[0]["last_delivery"]["error"], "Received status code 503");
    let text = admin(
        &t,
        ChannelCmd::Ls {
            project: Some("default".into()),
            json: false,
        },
    )
    .await
    .stdout;
    assert!(
        text.contains("FAILING x5: Received status code 503"),
        "{text}"
    );
    assert!(t.service.outbox_pending().expect("outbox").is_empty());
    t.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_in_the_middle_of_retries_neither_loses_nor_duplicates_the_alert() {
    let http = HttpReceiver::start().await;
    let notify = NotifyConfig {
        retry_delays: vec![Duration::from_millis(1500); 4],
        ..NotifyConfig::default()
    };
    let mut opts = Options {
        deliver: true,
        ..Options::default()
    };
    opts.service.notify = notify.clone();
    let t = TestServer::start_with(opts).await;
    t.service
        .add_channel("default", "hook", hook(&http.base))
        .await
        .expect("hook");
    let uuid = create_check(&t, "db").await;
    http.answer(&[500]);
    ping(&t, &format!("/ping/{uuid}/fail"), "").await;
    let first = http.next(Duration::from_secs(2)).await.expect("first try");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let dir = t.shutdown().await;

    // Stopped with one failed try on record and the entry still queued.
    {
        let service = stopped(dir.path());
        let pending = service.outbox_pending().expect("outbox");
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].1.expect("tries").done, 1);
        service.close().await;
    }

    let mut opts = Options {
        deliver: true,
        dir: Some(dir),
        ..Options::default()
    };
    opts.service.notify = notify.clone();
    let t = TestServer::start_with(opts).await;
    let second = http
        .next(Duration::from_secs(3))
        .await
        .expect("the retry, after the restart");
    assert_eq!(second.json(), first.json());
    assert!(http.next(Duration::from_secs(1)).await.is_none());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let dir = t.shutdown().await;

    // A second restart sends nothing again: it was delivered.
    let mut opts = Options {
        deliver: true,
        dir: Some(dir),
        ..Options::default()
    };
    opts.service.notify = notify;
    let t = TestServer::start_with(opts).await;
    assert!(
        http.next(Duration::from_secs(2)).await.is_none(),
        "no duplicate"
    );
    assert!(t.service.outbox_pending().expect("outbox").is_empty());
    t.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeat_alerts_while_down_stop_at_recovery_and_survive_a_restart() {
    let http = HttpReceiver::start().await;
    let t = start(NotifyConfig::default(), None).await;
    let every = jiff::SignedDuration::from_millis(700);
    t.service
        .add_channel_repeating(
            "default",
            "hook",
            ChannelConfig::webhook(&format!("{}/r", http.base)),
            Some(every),
        )
        .await
        .expect("hook");
    let uuid = create_check(&t, "db").await;
    ping(&t, &format!("/ping/{uuid}/fail"), "").await;
    http.next(Duration::from_secs(2)).await.expect("the alert");
    http.next(Duration::from_secs(2))
        .await
        .expect("first repeat");
    let dir = t.shutdown().await;
    {
        let service = stopped(dir.path());
        assert_eq!(service.repeats().expect("repeats").len(), 1, "kept on disk");
        service.close().await;
    }
    let mut opts = Options {
        deliver: true,
        dir: Some(dir),
        ..Options::default()
    };
    opts.service.notify = fast(NotifyConfig::default());
    let t = TestServer::start_with(opts).await;
    http.next(Duration::from_secs(2))
        .await
        .expect("a repeat after the restart");
    ping(&t, &format!("/ping/{uuid}"), "").await;
    // Drain a repeat that may have been queued just before the recovery.
    let mut saw_up = false;
    while let Some(_req) = http.next(Duration::from_millis(1500)).await {
        saw_up = true;
    }
    assert!(saw_up, "the up alert");
    assert!(
        http.next(Duration::from_millis(1500)).await.is_none(),
        "repeats stopped"
    );
    t.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_channels_run_only_when_allowed() {
    let out_dir = tempfile::tempdir().expect("dir");
    let out_file = out_dir.path().join("ran");
    let t = start(NotifyConfig::default(), None).await;
    let mut a = add("shell", "sh");
    a.cmd_down = Some(format!("touch '{}'", out_file.display()));
    add_channel(&t, a).await;
    let out = admin(
        &t,
        ChannelCmd::Test {
            project: Some("default".into()),
            ident: "sh".into(),
        },
    )
    .await;
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("--allow-shell-channels"),
        "{}",
        out.stderr
    );
    // A real alert is refused the same way.
    let uuid = create_check(&t, "db").await;
    ping(&t, &format!("/ping/{uuid}/fail"), "").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(!out_file.exists(), "the command must not run");
    t.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_never_answers_does_not_delay_the_other_channels() {
    // Accepts connections and never answers: each attempt waits for the timeout (3 s here).
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let silent_base = format!("http://{}", silent.local_addr().expect("addr"));
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            held.push(stream);
        }
    });
    let http = HttpReceiver::start().await;
    let t = start(NotifyConfig::default(), None).await;
    t.service
        .add_channel("default", "a-silent", hook(&silent_base))
        .await
        .expect("silent");
    t.service
        .add_channel("default", "b-live", hook(&http.base))
        .await
        .expect("live");
    let mut uuids = Vec::new();
    for i in 0..6 {
        uuids.push(create_check(&t, &format!("job {i}")).await);
    }
    let sent = std::time::Instant::now();
    for uuid in &uuids {
        ping(&t, &format!("/ping/{uuid}/fail"), "").await;
    }
    for _ in &uuids {
        http.next(Duration::from_secs(2))
            .await
            .expect("every live alert while the silent channel hangs");
    }
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "the live channel waited for the silent one: {:?}",
        sent.elapsed()
    );
    t.shutdown().await;
}

/// The TLS modes of `--smtp-url` are honoured: with `?tls=required` (STARTTLS) or `smtps://`
/// (implicit TLS), a server without TLS gets no mail, and the failure is reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smtp_tls_modes_refuse_a_server_without_tls() {
    let smtp = SmtpSink::start().await;
    for (url, why) in [
        (
            format!("smtp://127.0.0.1:{}?tls=required", smtp.port),
            "STARTTLS is not supported",
        ),
        (
            format!("smtps://127.0.0.1:{}", smtp.port),
            "Connection error",
        ),
    ] {
        let notify = NotifyConfig {
            smtp_url: Some(url.clone()),
            ..NotifyConfig::default()
        };
        let t = start(notify, None).await;
        let mut a = add("email", "mail");
        a.value = Some("ops@example.org".into());
        add_channel(&t, a).await;
        let out = admin(
            &t,
            ChannelCmd::Test {
                project: Some("default".into()),
                ident: "mail".into(),
            },
        )
        .await;
        assert_eq!(out.code, 1, "{url}: {}", out.stdout);
        assert!(out.stderr.contains(why), "{url}: {}", out.stderr);
        assert!(
            smtp.next(Duration::from_millis(300)).await.is_none(),
            "{url}"
        );
        t.shutdown().await;
    }
}
