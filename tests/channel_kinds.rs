//! `channel test` through every kind against real receivers on 127.0.0.1 (an HTTP server, an
//! SMTP sink, a file the shell command writes), each request asserted for the method, path,
//! headers and body shape the service documents; secrets never show in `channel ls`.

use crate::receivers;

use std::time::Duration;

use overdue::cli::{ChannelAddArgs, ChannelCmd};
use overdue::notify::NotifyConfig;
use receivers::{HttpReceiver, SmtpSink, add, add_channel, admin, channels_json, start};
use serde_json::json;

/// `channel test` through every kind, against the HTTP receiver (or the SMTP sink, or a
/// file the shell command writes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channel_test_works_for_every_kind_with_each_services_request_shape() {
    let http = HttpReceiver::start().await;
    let smtp = SmtpSink::start().await;
    let out_dir = tempfile::tempdir().expect("dir");
    let out_file = out_dir.path().join("shell.out");
    let notify = NotifyConfig {
        smtp_url: Some(format!("smtp://127.0.0.1:{}", smtp.port)),
        allow_shell: true,
        ..NotifyConfig::default()
    };
    let t = start(notify, None).await;
    let b = &http.base;
    let with = |kind: &str, f: &dyn Fn(&mut ChannelAddArgs)| {
        let mut a = add(kind, kind);
        f(&mut a);
        a
    };
    let channels = vec![
        with("email", &|a| a.value = Some("ops@example.org".into())),
        with("webhook", &|a| {
            a.url = Some(format!("{b}/wh?s=$STATUS"));
            a.body = Some("{\"status\": \"$STATUS\"}".into());
            a.headers = vec!["Authorization: Bearer wh".into()];
        }),
        with("ntfy", &|a| {
            a.url = Some(format!("{b}/ntfy"));
            a.topic = Some("alerts".into());
            a.token = Some("tk_ntfy".into());
        }),
        with("gotify", &|a| {
            a.url = Some(format!("{b}/gotify/"));
            a.token = Some("AppTok".into());
        }),
        with("discord", &|a| {
            a.url = Some(format!("{b}/api/webhooks/1/dtok"));
        }),
        with("slack", &|a| {
            a.url = Some(format!("{b}/services/T0/B0/stok"));
        }),
        with("telegram", &|a| {
            a.url = Some(format!("{b}/tg"));
            a.token = Some("123:ABC-d_e".into());
            a.chat = Some("-1001".into());
        }),
        with("pushover", &|a| {
            a.url = Some(format!("{b}/po"));
            a.token = Some("apptoken".into());
            a.user = Some("userkey".into());
        }),
        with("matrix", &|a| {
            a.url = Some(format!("{b}/mx"));
            a.room = Some("!room:hs.test".into());
            a.token = Some("syt_tok".into());
        }),
        with("mattermost", &|a| a.url = Some(format!("{b}/hooks/mm"))),
        with("shell", &|a| {
            a.cmd_down = Some(format!(
                "printf '%s|%s' \"$STATUS\" \"$NAME\" > '{}'",
                out_file.display()
            ));
        }),
    ];
    for a in channels {
        add_channel(&t, a).await;
    }
    let test = |name: &str| ChannelCmd::Test {
        project: Some("default".into()),
        ident: name.into(),
    };
    let mut tested = Vec::new();
    for kind in overdue::notify::KINDS {
        let out = admin(&t, test(kind)).await;
        assert_eq!(out.code, 0, "{kind}: {}", out.stderr);
        assert!(
            out.stdout.contains("delivered in"),
            "{kind}: {}",
            out.stdout
        );
        tested.push(*kind);
        match *kind {
            "email" => {
                let m = smtp.next(Duration::from_secs(2)).await.expect("mail");
                assert_eq!(m.header("Subject"), "TEST | overdue");
                assert!(m.body().contains("test notification"));
                continue;
            }
            "shell" => {
                let text = std::fs::read_to_string(&out_file).expect("the command ran");
                assert_eq!(text, "test|Test check");
                continue;
            }
            _ => {}
        }
        let r = http.next(Duration::from_secs(2)).await.expect(kind);
        match *kind {
            "webhook" => {
                assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/wh"));
                assert_eq!(r.query, "s=test");
                assert_eq!(r.header("authorization"), "Bearer wh");
                assert_eq!(r.json(), json!({"status": "test"}));
            }
            "ntfy" => {
                assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/ntfy/"));
                assert_eq!(r.header("authorization"), "Bearer tk_ntfy");
                assert_eq!(r.header("content-type"), "application/json");
                let j = r.json();
                assert_eq!(j["topic"], "alerts");
                assert_eq!(j["title"], "TEST | overdue");
                assert!(
                    j["message"].is_string() && j["priority"].is_number() && j["tags"].is_array()
                );
            }
            "gotify" => {
                assert_eq!(
                    (r.method.as_str(), r.path.as_str()),
                    ("POST", "/gotify/message")
                );
                assert_eq!(r.header("x-gotify-key"), "AppTok");
                let j = r.json();
                assert!(
                    j["title"].is_string() && j["message"].is_string() && j["priority"].is_number()
                );
            }
            "discord" => {
                assert_eq!(
                    (r.method.as_str(), r.path.as_str()),
                    ("POST", "/api/webhooks/1/dtok")
                );
                let j = r.json();
                assert_eq!(j["content"], "TEST | overdue");
                assert!(j["embeds"][0]["description"].is_string());
            }
            "slack" | "mattermost" => {
                let path = if *kind == "slack" {
                    "/services/T0/B0/stok"
                } else {
                    "/hooks/mm"
                };
                assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", path));
                let j = r.json();
                assert_eq!(j["text"], "TEST | overdue");
                assert!(j["attachments"][0]["text"].is_string());
                if *kind == "mattermost" {
                    assert_eq!(j["username"], "overdue");
                }
            }
            "telegram" => {
                assert_eq!(
                    (r.method.as_str(), r.path.as_str()),
                    ("POST", "/tg/bot123:ABC-d_e/sendMessage")
                );
                let j = r.json();
                assert_eq!(j["chat_id"], -1001);
                assert!(
                    j["text"]
                        .as_str()
                        .expect("text")
                        .starts_with("TEST | overdue")
                );
            }
            "pushover" => {
                assert_eq!(
                    (r.method.as_str(), r.path.as_str()),
                    ("POST", "/po/1/messages.json")
                );
                assert_eq!(
                    r.header("content-type"),
                    "application/x-www-form-urlencoded"
                );
                let form: std::collections::HashMap<String, String> =
                    form_urlencoded::parse(&r.body).into_owned().collect();
                assert_eq!(form["token"], "apptoken");
                assert_eq!(form["user"], "userkey");
                assert_eq!(form["title"], "TEST | overdue");
                assert!(form.contains_key("message"));
            }
            "matrix" => {
                assert_eq!(r.method, "PUT");
                assert!(
                    r.path.starts_with(
                        "/mx/_matrix/client/v3/rooms/%21room%3Ahs.test/send/m.room.message/"
                    ),
                    "{}",
                    r.path
                );
                assert_eq!(r.header("authorization"), "Bearer syt_tok");
                let j = r.json();
                assert_eq!(j["msgtype"], "m.text");
                assert!(
                    j["body"]
                        .as_str()
                        .expect("body")
                        .starts_with("TEST | overdue")
                );
            }
            other => panic!("no assertions for {other}"),
        }
    }
    assert_eq!(tested.len(), 11);

    // A failing receiver: the outcome is printed and the exit code is 1.
    http.answer(&[500]);
    let out = admin(&t, test("slack")).await;
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("Received status code 500"),
        "{}",
        out.stderr
    );

    // Secrets never appear in `channel ls`.
    let ls = admin(
        &t,
        ChannelCmd::Ls {
            project: Some("default".into()),
            json: false,
        },
    )
    .await
    .stdout
        + &serde_json::to_string(&channels_json(&t).await).expect("json");
    for secret in [
        "tk_ntfy",
        "AppTok",
        "dtok",
        "stok",
        "123:ABC",
        "apptoken",
        "syt_tok",
        "Bearer wh",
    ] {
        assert!(!ls.contains(secret), "{secret} leaked:\n{ls}");
    }
    t.shutdown().await;
}
