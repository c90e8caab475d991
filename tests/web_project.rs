//! The dashboard's integrations and project pages: channels added through the form by the
//! CLI's rules and listed without secrets, test notifications, removal; API keys created
//! (shown once) and removed, the session's own included; read-only sessions; badges and the
//! Prometheus URL; the project's quiet window and snoozing a tag's checks; and alerts that
//! link to the check's page.

use std::time::Duration;

use overdue::cli::ChannelCmd;
use overdue::cli::admin::{AdminCommand, KeyCmd, execute};
use overdue::model::ChannelConfig;
use overdue::notify::NotifyConfig;

use crate::common::{TestServer, WebSession};
use crate::receivers::{self, HttpReceiver};

/// The value of the first `<input ... name="NAME" value="...">` of a page.
fn input_value(page: &str, name: &str) -> Option<String> {
    let marker = format!("name=\"{name}\" value=\"");
    let at = page.find(&marker)? + marker.len();
    Some(page[at..].split('"').next()?.to_string())
}

/// The text of the element with `id="ID"`.
fn text_of(page: &str, id: &str) -> Option<String> {
    let marker = format!("id=\"{id}\">");
    let at = page.find(&marker)? + marker.len();
    Some(page[at..].split('<').next()?.to_string())
}

fn project_uuid(s: &TestServer) -> String {
    s.service.read(|st| {
        st.project_by_name("default")
            .expect("default")
            .uuid
            .to_string()
    })
}

async fn channel_count(s: &TestServer) -> usize {
    receivers::channels_json(s).await.len()
}

/// The project's keys as `key ls --json` lists them.
async fn keys_json(s: &TestServer) -> Vec<serde_json::Value> {
    let out = execute(
        &s.service,
        AdminCommand::Key(KeyCmd::Ls {
            project: Some("default".into()),
            json: true,
        }),
    )
    .await;
    serde_json::from_str(&out.stdout).expect("a JSON array")
}

async fn add_form(web: &WebSession<'_>, p: &str, fields: &[(&str, &str)]) -> (u16, String) {
    let r = web
        .post(&format!("/projects/{p}/add_channel/"), fields)
        .await;
    (r.status().as_u16(), r.text().await.expect("body"))
}

#[tokio::test]
async fn a_webhook_added_through_the_form_is_listed_by_host_tested_and_removed() {
    let s = TestServer::start().await;
    let hook = HttpReceiver::start().await;
    let p = project_uuid(&s);
    s.create(serde_json::json!({"name": "nightly-db"})).await;
    let web = s.sign_in(&s.rw).await;
    let (code, page) = web.get(&format!("/projects/{p}/integrations/")).await;
    assert_eq!(code, 200);
    assert!(page.contains("No integrations yet"), "{page}");

    let url = format!("{}/hooks/s3cretpath?token=t0ken", hook.base);
    let r = web
        .post(
            &format!("/projects/{p}/add_channel/"),
            &[
                ("kind", "webhook"),
                ("name", "ops hook"),
                ("url", &url),
                ("header", "X-Auth: h3ader"),
                ("event_listed", "1"),
                ("event", "down"),
                ("event", "late"),
                ("assign", "1"),
                ("default", "1"),
            ],
        )
        .await;
    assert_eq!(r.status(), 303, "{}", r.text().await.unwrap_or_default());

    let (_, page) = web.get(&format!("/projects/{p}/integrations/")).await;
    let host = hook.base.trim_start_matches("http://");
    assert!(page.contains("ops hook"), "{page}");
    assert!(page.contains(&format!("<code>{host}</code>")), "{page}");
    for secret in ["s3cretpath", "t0ken", "h3ader"] {
        assert!(!page.contains(secret), "the page shows {secret}");
    }
    assert!(
        page.contains(">nightly-db</a>"),
        "assigned to the check: {page}"
    );
    assert!(page.contains("never used"));
    assert!(page.contains("sends down,late"), "{page}");

    let channel = input_value(&page, "channel").expect("the channel's id in its forms");
    let r = web
        .post(
            &format!("/projects/{p}/test_channel/"),
            &[("channel", &channel)],
        )
        .await;
    assert_eq!(r.status(), 200);
    let page = r.text().await.expect("body");
    assert!(
        page.contains("Test notification to ops hook (webhook) delivered in"),
        "{page}"
    );
    let req = hook
        .next(Duration::from_secs(5))
        .await
        .expect("the test reached the receiver");
    assert_eq!(req.path, "/hooks/s3cretpath");
    assert_eq!(req.header("x-auth"), "h3ader");
    let (_, page) = web.get(&format!("/projects/{p}/integrations/")).await;
    assert!(page.contains("(test)"), "the delivery is listed: {page}");
    assert!(page.contains("delivered, code 200"), "{page}");

    // A failing receiver: the test says so.
    hook.answer(&[500]);
    let r = web
        .post(
            &format!("/projects/{p}/test_channel/"),
            &[("channel", &channel)],
        )
        .await;
    let page = r.text().await.expect("body");
    assert!(page.contains("failed after"), "{page}");
    assert!(page.contains("failing ×1"), "{page}");

    let r = web
        .post(
            &format!("/projects/{p}/remove_channel/"),
            &[("channel", &channel)],
        )
        .await;
    assert_eq!(r.status(), 303);
    assert_eq!(channel_count(&s).await, 0);
    let (_, page) = web.get(&format!("/projects/{p}/integrations/")).await;
    assert!(!page.contains("ops hook"));
    let check = &s.list().await[0];
    assert_eq!(check["name"], "nightly-db");
    s.stop().await;
}

#[tokio::test]
async fn the_form_refuses_what_the_cli_refuses_and_adds_nothing() {
    let s = TestServer::start().await;
    let p = project_uuid(&s);
    let web = s.sign_in(&s.rw).await;
    let cases: [(&[(&str, &str)], &str); 7] = [
        (
            &[("kind", "email"), ("name", "m")],
            "email needs “Email address”",
        ),
        (
            &[("kind", "ntfy"), ("name", "n")],
            "ntfy channel: needs “Topic”",
        ),
        (
            &[("kind", "webhook"), ("name", "w"), ("url", "ftp://h/")],
            "is not an http:// or https:// URL",
        ),
        (
            &[
                ("kind", "webhook"),
                ("name", "w"),
                ("url", "http://h/"),
                ("topic", "t"),
            ],
            "webhook does not take “Topic”",
        ),
        (
            &[
                ("kind", "email"),
                ("name", "m"),
                ("value", "a@b.example"),
                ("repeat", "10s"),
            ],
            "“Repeat” is at least",
        ),
        (
            &[("kind", "shell"), ("name", "sh"), ("cmd_down", "true")],
            "overdue channel add --kind shell",
        ),
        (
            &[("kind", "pigeon"), ("name", "p")],
            "no kind of integration",
        ),
    ];
    for (fields, message) in cases {
        let (code, page) = add_form(&web, &p, fields).await;
        assert_eq!(code, 400, "{fields:?}");
        assert!(page.contains(message), "{fields:?}: {page}");
        assert!(page.contains("role=\"alert\""));
    }
    assert_eq!(channel_count(&s).await, 0);

    // The CLI refuses the same inputs.
    let mut a = receivers::add("ntfy", "n");
    let out = receivers::admin(&s, ChannelCmd::Add(Box::new(a.clone()))).await;
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("needs --topic"), "{}", out.stderr);
    a.topic = Some("alerts".into());
    receivers::add_channel(&s, a).await;
    // A name taken, by the CLI's channel, is refused by the form.
    let (code, page) = add_form(
        &web,
        &p,
        &[("kind", "ntfy"), ("name", "n"), ("topic", "other")],
    )
    .await;
    assert_eq!(code, 400);
    assert!(page.contains("already"), "{page}");
    // What was typed comes back, secrets excepted.
    let (code, page) = add_form(
        &web,
        &p,
        &[
            ("kind", "gotify"),
            ("name", "g"),
            ("url", "not-a-url"),
            ("token", "s3cret-token"),
        ],
    )
    .await;
    assert_eq!(code, 400);
    assert!(page.contains("value=\"not-a-url\""), "{page}");
    assert!(!page.contains("s3cret-token"));
    assert_eq!(channel_count(&s).await, 1);
    s.stop().await;
}

#[tokio::test]
async fn an_api_key_is_shown_once_works_and_is_removed() {
    let s = TestServer::start().await;
    let p = project_uuid(&s);
    let web = s.sign_in(&s.rw).await;
    let r = web
        .post(
            &format!("/projects/{p}/add_key/"),
            &[("label", "grafana-prod"), ("read_only", "1")],
        )
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "no-store");
    let page = r.text().await.expect("body");
    let key = text_of(&page, "new-key-value").expect("the key, once");
    assert!(key.starts_with("hcr_") && key.len() == 32, "{key}");
    let metrics = text_of(&page, "new-key-metrics").expect("its Prometheus URL");
    assert_eq!(metrics, s.url(&format!("/projects/{p}/metrics/{key}")));
    let r = s.http.get(&metrics).send().await.expect("scrape");
    assert_eq!(r.status(), 200, "the URL shown is the API's");
    let r = s
        .http
        .get(s.url("/api/v3/checks/"))
        .header("X-Api-Key", &key)
        .send()
        .await
        .expect("api");
    assert_eq!(r.status(), 200);

    let (_, page) = web.get(&format!("/projects/{p}/settings/")).await;
    assert!(page.contains("grafana-prod"));
    assert!(!page.contains(&key), "never shown again");
    let id = &key[..12];
    assert!(page.contains(&format!("<code>{id}…</code>")), "{page}");
    assert!(page.contains("(you are signed in with it)"));

    let r = web
        .post(&format!("/projects/{p}/remove_key/"), &[("key", id)])
        .await;
    assert_eq!(r.status(), 303);
    assert_eq!(
        r.headers()["location"],
        format!("/projects/{p}/settings/").as_str()
    );
    let (_, page) = web.get(&format!("/projects/{p}/settings/")).await;
    assert!(!page.contains("grafana-prod"));
    let r = s
        .http
        .get(s.url("/api/v3/checks/"))
        .header("X-Api-Key", &key)
        .send()
        .await
        .expect("api");
    assert_eq!(r.status(), 401, "removed at once");
    s.stop().await;
}

#[tokio::test]
async fn removing_the_key_a_session_uses_signs_it_out_at_once() {
    let s = TestServer::start().await;
    let p = project_uuid(&s);
    let key = s
        .service
        .add_key("default", false, "laptop")
        .await
        .expect("key")
        .plaintext;
    let web = s.sign_in(&key).await;
    let (code, page) = web.get(&format!("/projects/{p}/settings/")).await;
    assert_eq!(code, 200);
    let r = web
        .post(
            &format!("/projects/{p}/remove_key/"),
            &[("key", &key[..12])],
        )
        .await;
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/");
    let (code, _) = web.get(&format!("/projects/{p}/settings/")).await;
    assert_eq!(code, 404, "the session holds the project no more");
    assert!(page.contains("laptop"));
    // Removed by the service (`overdue key rm`), the same.
    let web = s.sign_in(&s.rw).await;
    s.service
        .remove_key("default", &s.rw[..12])
        .await
        .expect("rm");
    let (code, _) = web.get(&format!("/projects/{p}/integrations/")).await;
    assert_eq!(code, 404);
    s.stop().await;
}

#[tokio::test]
async fn a_read_only_session_sees_no_secrets_and_every_change_is_forbidden() {
    let s = TestServer::start().await;
    let p = project_uuid(&s);
    let channel = s
        .service
        .add_channel(
            "default",
            "pager",
            ChannelConfig::webhook("https://hooks.example/s3cret"),
        )
        .await
        .expect("channel");
    let web = s.sign_in(&s.ro).await;
    let (code, page) = web.get(&format!("/projects/{p}/integrations/")).await;
    assert_eq!(code, 200);
    assert!(page.contains("pager") && page.contains("hooks.example"));
    for hidden in [
        channel.uuid.to_string().as_str(),
        "s3cret",
        "Send test",
        "add_channel",
        "remove_channel",
    ] {
        assert!(!page.contains(hidden), "read-only page shows {hidden}");
    }
    let ping_key = s.ping_key.clone();
    let (code, page) = web.get(&format!("/projects/{p}/settings/")).await;
    assert_eq!(code, 200);
    assert!(page.contains("read-write") && page.contains("Badges"));
    for hidden in [
        ping_key.as_str(),
        &s.rw[..12],
        &s.ro[..12],
        "add_key",
        "remove_key",
        "/quiet/",
        "/snooze/",
    ] {
        assert!(!page.contains(hidden), "read-only page shows {hidden}");
    }
    let uuid = channel.uuid.to_string();
    let posts: [(&str, Vec<(&str, &str)>); 7] = [
        (
            "add_channel",
            vec![("kind", "email"), ("name", "x"), ("value", "a@b.example")],
        ),
        ("remove_channel", vec![("channel", uuid.as_str())]),
        ("test_channel", vec![("channel", uuid.as_str())]),
        ("add_key", vec![("label", "x")]),
        ("remove_key", vec![("key", &s.rw[..12])]),
        ("quiet", vec![("quiet_schedule", "Sun 02:00")]),
        ("snooze", vec![("tag", ""), ("seconds", "3600")]),
    ];
    for (action, fields) in posts {
        let r = web.post(&format!("/projects/{p}/{action}/"), &fields).await;
        assert_eq!(r.status(), 403, "{action}");
    }
    assert_eq!(channel_count(&s).await, 1);
    assert_eq!(keys_json(&s).await.len(), 2, "no key added or removed");
    let (_, project) = s.call(reqwest::Method::GET, "/api/v3/project/", None).await;
    assert_eq!(project["quiet_schedule"], "", "no quiet window set");
    s.stop().await;
}

#[tokio::test]
async fn the_quiet_window_and_snoozing_a_tag_are_set_on_the_project_page() {
    let s = TestServer::start().await;
    let p = project_uuid(&s);
    for (name, tags) in [("db", "prod"), ("web", "prod"), ("dev", "")] {
        s.create(serde_json::json!({"name": name, "tags": tags}))
            .await;
    }
    let web = s.sign_in(&s.rw).await;
    let (_, page) = web.get(&format!("/projects/{p}/settings/")).await;
    assert!(page.contains("No quiet window."), "{page}");
    assert_eq!(
        input_value(&page, "quiet_duration").as_deref(),
        Some("3600")
    );
    // Refused as the API refuses it, with its message, and nothing set.
    let quiet = format!("/projects/{p}/quiet/");
    let r = web
        .post(
            &quiet,
            &[
                ("quiet_schedule", "Sun 02:00"),
                ("quiet_tz", "Mars/Base"),
                ("quiet_duration", "7200"),
            ],
        )
        .await;
    assert_eq!(r.status(), 400);
    let page = r.text().await.expect("body");
    assert!(page.contains("quiet_tz is not a valid timezone"), "{page}");
    let (_, project) = s.call(reqwest::Method::GET, "/api/v3/project/", None).await;
    assert_eq!(project["quiet_schedule"], "");
    let r = web
        .post(
            &quiet,
            &[
                ("quiet_schedule", "Sun 02:00"),
                ("quiet_tz", "Europe/Riga"),
                ("quiet_duration", "7200"),
            ],
        )
        .await;
    assert_eq!(r.status(), 303);
    let (_, page) = web.get(&format!("/projects/{p}/settings/")).await;
    assert!(
        page.contains("Quiet window: <strong>2h from each Sun 02:00 (Europe/Riga)</strong>"),
        "{page}"
    );
    let (_, project) = s.call(reqwest::Method::GET, "/api/v3/project/", None).await;
    assert_eq!(project["quiet_duration"], 7200);
    // Snoozing one tag's checks, then ending it for every check.
    assert!(
        page.contains("<option value=\"prod\">the checks tagged prod</option>"),
        "{page}"
    );
    let snooze = format!("/projects/{p}/snooze/");
    let r = web
        .post(&snooze, &[("tag", "prod"), ("seconds", "3600")])
        .await;
    assert_eq!(r.status(), 303);
    let snoozed = |list: Vec<serde_json::Value>| -> Vec<String> {
        let mut names: Vec<String> = list
            .iter()
            .filter(|c| !c["snoozed_until"].is_null())
            .map(|c| c["name"].as_str().expect("name").to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(snoozed(s.list().await), ["db", "web"]);
    let (_, page) = web.get(&format!("/projects/{p}/settings/")).await;
    assert!(page.contains("2 checks are snoozed."), "{page}");
    let r = web.post(&snooze, &[("tag", ""), ("seconds", "0")]).await;
    assert_eq!(r.status(), 303);
    assert!(snoozed(s.list().await).is_empty());
    // Removing the window: an empty schedule.
    let r = web
        .post(
            &quiet,
            &[
                ("quiet_schedule", ""),
                ("quiet_tz", ""),
                ("quiet_duration", ""),
            ],
        )
        .await;
    assert_eq!(r.status(), 303);
    let (_, page) = web.get(&format!("/projects/{p}/settings/")).await;
    assert!(page.contains("No quiet window."));
    s.stop().await;
}

#[tokio::test]
async fn badges_render_and_their_urls_are_listed_per_tag() {
    let s = TestServer::start().await;
    let p = project_uuid(&s);
    s.create(serde_json::json!({"name": "db", "tags": "prod db@dc1"}))
        .await;
    let web = s.sign_in(&s.rw).await;
    let (_, page) = web.get(&format!("/projects/{p}/settings/")).await;
    assert!(page.contains("Tag <code>prod</code>") && page.contains("All checks"));
    let badges: serde_json::Value = s
        .rw(reqwest::Method::GET, "/api/v3/badges/")
        .send()
        .await
        .expect("badges")
        .json()
        .await
        .expect("json");
    for tag in ["*", "prod", "db@dc1"] {
        let svg = badges["badges"][tag]["svg"].as_str().expect("svg");
        assert!(page.contains(svg), "the API's URL for {tag} is listed");
        let path = svg.strip_prefix(&s.base).expect("site root");
        assert!(
            page.contains(&format!("<img src=\"{path}\"")),
            "rendered by its path"
        );
        let r = s.http.get(svg).send().await.expect("badge");
        assert_eq!(r.status(), 200);
        assert!(r.text().await.expect("svg").starts_with("<svg"));
    }
    assert!(page.contains(&s.ping_key), "the ping key, for read-write");
    assert!(
        page.contains(&format!(
            "/projects/{p}/metrics/&#60;read-only API key&#62;"
        )) || page.contains(&format!("/projects/{p}/metrics/&lt;read-only API key&gt;"))
    );
    s.stop().await;
}

/// The `click` URL of an ntfy alert for a check that fails, with the dashboard on or off.
async fn alert_link(dashboard: bool) -> (String, String, String) {
    let ntfy = HttpReceiver::start().await;
    let notify = NotifyConfig {
        dashboard,
        ..NotifyConfig::default()
    };
    let t = receivers::start(notify, None).await;
    let mut a = receivers::add("ntfy", "phone");
    a.url = Some(ntfy.base.clone());
    a.topic = Some("alerts".into());
    receivers::add_channel(&t, a).await;
    let check = t
        .create(serde_json::json!({"name": "backup", "channels": "*"}))
        .await;
    let uuid = check["uuid"].as_str().expect("uuid").to_string();
    let r = t
        .http
        .post(t.url(&format!("/ping/{uuid}/fail")))
        .send()
        .await
        .expect("ping");
    assert_eq!(r.status(), 200);
    let req = ntfy
        .next(Duration::from_secs(5))
        .await
        .expect("an ntfy alert");
    let click = req.json()["click"].as_str().expect("click").to_string();
    let base = t.base.clone();
    t.stop().await;
    (click, base, uuid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alerts_link_to_the_checks_page_or_with_the_dashboard_off_to_the_api() {
    let (click, base, uuid) = alert_link(true).await;
    assert_eq!(click, format!("{base}/checks/{uuid}/"));
    let (click, base, uuid) = alert_link(false).await;
    assert_eq!(click, format!("{base}/api/v3/checks/{uuid}"));
}
