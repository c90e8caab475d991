//! The dashboard's check page: what it shows (status, ping URLs and snippets, fire times, the
//! ping log with escaped bodies, flips), pause, resume and delete with and without the CSRF
//! token, read-only sessions (no UUID, no ping URL, every POST refused), the edit form
//! validated by the API's rules, and the schedule preview.

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::{TestServer, WebSession, csrf_of};

/// Text as askama escapes it in a page.
fn escaped(s: &str) -> String {
    s.replace('&', "&#38;")
        .replace('<', "&#60;")
        .replace('>', "&#62;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

async fn ping(s: &TestServer, path: &str, body: Option<&str>) {
    let req = match body {
        Some(b) => s
            .anon(Method::POST, &format!("/ping/{path}"))
            .body(b.to_string()),
        None => s.anon(Method::GET, &format!("/ping/{path}")),
    };
    let r = req.send().await.expect("ping");
    assert_eq!(r.status(), 200, "ping {path}");
}

async fn page(web: &WebSession<'_>, uuid: &str) -> String {
    let (code, page) = web.get(&format!("/checks/{uuid}/")).await;
    assert_eq!(code, 200, "{page}");
    page
}

#[tokio::test]
async fn the_page_shows_urls_snippets_fires_pings_and_flips() {
    let s = TestServer::start().await;
    let check = s
        .create(
            json!({"name": "nightly", "slug": "nightly-db", "schedule": "30 2 * * *",
                       "tz": "Europe/Riga", "grace": 600}),
        )
        .await;
    let uuid = check["uuid"].as_str().unwrap();
    ping(&s, &format!("{uuid}/start"), None).await;
    ping(&s, uuid, None).await;
    ping(
        &s,
        &format!("{uuid}/3"),
        Some("<script>alert(1)</script>\ndisk full"),
    )
    .await;
    let web = s.sign_in(&s.rw).await;
    let page = page(&web, uuid).await;
    let ping_url = format!("{}/ping/{uuid}", s.base);
    assert!(page.contains(&format!("<code id=\"ping-url\">{ping_url}</code>")));
    assert!(page.contains("data-copy=\"#ping-url\""));
    let slug_url = format!("{}/ping/{}/nightly-db", s.base, s.ping_key);
    assert!(page.contains(&slug_url), "slug URL");
    for snippet in [
        format!(
            "30 2 * * * /path/to/job &#38;&#38; curl -fsS -m 10 --retry 5 -o /dev/null {ping_url}"
        ),
        format!("/path/to/job; curl -fsS -m 10 --retry 5 -o /dev/null {ping_url}/$?"),
        format!(
            "RID=$(uuidgen)\ncurl -fsS -m 10 --retry 5 -o /dev/null &#34;{ping_url}/start?rid=$RID&#34;"
        ),
    ] {
        assert!(page.contains(&snippet), "snippet {snippet}");
    }
    for id in ["snippet-cron", "snippet-exit", "snippet-rid"] {
        assert!(
            page.contains(&format!("<pre id=\"{id}\" tabindex=\"0\">")),
            "{id}"
        );
        assert!(page.contains(&format!("data-copy=\"#{id}\"")), "{id}");
    }
    assert!(page.contains("Down: the next success ping brings it back up."));
    // Down since the failure: the status and when it changed.
    assert!(page.contains(
        "<span class=\"icon\" aria-hidden=\"true\"></span>down</span> since <time datetime="
    ));
    // Five fire times, local and UTC, in a table headed by the zone.
    let table = &page[page.find("fires-table").expect("fires table")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<time datetime=").count(), 5, "{table}");
    assert!(
        table.contains("Europe/Riga") && table.contains(" UTC</td>"),
        "{table}"
    );
    assert!(table.contains(" 02:30 EE"), "{table}");
    // The ping log, newest first, with kinds and the escaped body.
    let log = &page[page.find("<table class=\"pings").expect("ping log")..];
    let at = |needle: &str| {
        log.find(needle)
            .unwrap_or_else(|| panic!("{needle} in {log}"))
    };
    assert!(at("exit status 3") < at(">success<") && at(">success<") < at(">start<"));
    assert!(log.contains("class=\"ping-kind k-fail\""));
    assert!(log.contains("HTTP from 127.0.0.1"));
    assert!(log.contains("<summary>&#60;script&#62;alert(1)&#60;/script&#62; disk full</summary>"));
    assert!(log.contains(
        "<pre tabindex=\"0\">&#60;script&#62;alert(1)&#60;/script&#62;\ndisk full</pre>"
    ));
    assert!(!page.contains("<script>alert"), "a body is never markup");
    let body_link = format!("/checks/{uuid}/pings/3/body/");
    assert!(log.contains(&body_link));
    // The duration of the start/success run.
    assert!(log.contains("data-label=\"Duration\">") && log.contains(" s</td>"));
    // Flips: new -> up, up -> down.
    let flips = &page[page.find("<ul class=\"flips\">").expect("flips")..];
    assert!(flips.contains(">up</span> → <span class=\"status st-down\">down</span> <span class=\"muted\">(a failure ping)"), "{flips}");
    assert!(
        flips.contains(">new</span> → <span class=\"status st-up\">up</span>"),
        "{flips}"
    );
    // The timeline: the three pings of the same second merge into one tick showing the
    // failure, and the picture counts them.
    let svg = &page[page.find("<svg class=\"timeline\"").expect("timeline")..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    assert!(
        svg.contains("aria-label=\"24 hours: 3 pings, 1 failures"),
        "{svg}"
    );
    assert!(svg.contains("class=\"tick fail\""), "{svg}");
    assert!(svg.contains("<title>3 pings from "), "{svg}");
    assert!(
        !svg.contains("<script"),
        "nothing from users in the picture"
    );
    // The span switcher marks the span shown.
    let (_, week) = web.get(&format!("/checks/{uuid}/?span=week")).await;
    assert!(week.contains("<a href=\"?span=week\" aria-current=\"page\">7 d</a>"));
    assert!(week.contains("<a href=\"?span=day\">24 h</a>"));
    // The whole body, as text.
    let r = s
        .browser()
        .get(s.url(&body_link))
        .header("cookie", &web.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    assert_eq!(
        r.text().await.unwrap(),
        "<script>alert(1)</script>\ndisk full"
    );
    s.stop().await;
}

#[tokio::test]
async fn a_simple_check_shows_when_the_next_ping_is_due_and_pages_its_log() {
    let s = TestServer::start().await;
    let check = s.create(json!({"name": "busy", "timeout": 3600})).await;
    let uuid = check["uuid"].as_str().unwrap();
    for _ in 0..57 {
        ping(&s, uuid, None).await;
    }
    let web = s.sign_in(&s.rw).await;
    let first = page(&web, uuid).await;
    assert!(first.contains("Next ping expected <time datetime="));
    assert!(first.contains("in 1 hour</time>"), "due in an hour");
    assert!(
        first.contains("0 * * * * /path/to/job"),
        "the hourly crontab line"
    );
    assert!(
        !first.contains("fires-table"),
        "a simple check has no fire times"
    );
    assert_eq!(first.matches("<td data-label=\"#\">").count(), 50);
    assert!(first.contains("<td data-label=\"#\">57</td>"));
    assert!(!first.contains("<td data-label=\"#\">7</td>"));
    assert!(first.contains("href=\"?span=day&amp;page=2#h-pings\" rel=\"next\""));
    let (_, second) = web.get(&format!("/checks/{uuid}/?page=2")).await;
    assert_eq!(second.matches("<td data-label=\"#\">").count(), 7);
    assert!(second.contains("<td data-label=\"#\">7</td>"));
    assert!(second.contains("rel=\"prev\"") && !second.contains("rel=\"next\""));
    let (code, far) = web.get(&format!("/checks/{uuid}/?page=99999999999")).await;
    assert_eq!(code, 200);
    assert!(far.contains("No pings on this page."));
    s.stop().await;
}

#[tokio::test]
async fn pause_resume_and_delete_need_the_token_and_delete_its_box() {
    let s = TestServer::start().await;
    let uuid = s.create(json!({"name": "db"})).await["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let web = s.sign_in(&s.rw).await;
    let page = page(&web, &uuid).await;
    let csrf = csrf_of(&page).expect("token on the check page");
    assert_eq!(csrf, web.csrf);
    let pause = format!("/checks/{uuid}/pause/");
    assert_eq!(web.post_raw(&pause, &[]).await.status(), 403);
    assert_eq!(s.get_check(&uuid).await["status"], "new");
    let r = web.post_raw(&pause, &[("csrf", &csrf)]).await;
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], format!("/checks/{uuid}/").as_str());
    assert_eq!(s.get_check(&uuid).await["status"], "paused");
    let paused = self::page(&web, &uuid).await;
    assert!(paused.contains(&format!("action=\"/checks/{uuid}/resume/\"")));
    let resume = format!("/checks/{uuid}/resume/");
    assert_eq!(web.post_raw(&resume, &[]).await.status(), 403);
    assert_eq!(web.post(&resume, &[]).await.status(), 303);
    assert_eq!(s.get_check(&uuid).await["status"], "new");
    let delete = format!("/checks/{uuid}/delete/");
    assert!(page.contains("name=\"confirm\" value=\"yes\" required"));
    assert_eq!(
        web.post_raw(&delete, &[("confirm", "yes")]).await.status(),
        403
    );
    let r = web.post(&delete, &[]).await;
    assert_eq!(r.status(), 400, "unconfirmed");
    assert!(r.text().await.unwrap().contains("nothing was deleted"));
    assert_eq!(s.list().await.len(), 1);
    let r = web.post(&delete, &[("confirm", "yes")]).await;
    assert_eq!(r.status(), 303);
    assert!(s.list().await.is_empty());
    let (code, _) = web.get(&format!("/checks/{uuid}/")).await;
    assert_eq!(code, 404);
    s.stop().await;
}

#[tokio::test]
async fn a_read_only_session_gets_no_uuid_no_ping_url_and_no_controls() {
    let s = TestServer::start().await;
    let check = s
        .create(json!({"name": "backup", "slug": "backup", "schedule": "0 3 * * *"}))
        .await;
    let uuid = check["uuid"].as_str().unwrap().to_string();
    ping(&s, &uuid, Some("hello")).await;
    let key = s.service.read(|st| {
        st.check(&uuid.parse().unwrap())
            .map(overdue::model::Check::unique_key)
            .unwrap()
    });
    let web = s.sign_in(&s.ro).await;
    for path in [format!("/checks/{key}/"), format!("/checks/{uuid}/")] {
        let (code, page) = web.get(&path).await;
        assert_eq!(code, 200, "{path}");
        assert!(page.contains("backup"));
        assert!(page.contains("hello"), "the ping log is there");
        assert!(!page.contains(&uuid), "{path}: no UUID");
        assert!(!page.contains("/ping/"), "{path}: no ping URL");
        assert!(!page.contains(&s.ping_key), "{path}: no ping key");
        for control in [
            "data-copy",
            "/pause/",
            "/delete/",
            "/edit/",
            "/preview/",
            "curl",
        ] {
            assert!(!page.contains(control), "{path}: {control}");
        }
        assert!(page.contains(&format!("/checks/{key}/pings/1/body/")));
    }
    let (code, body) = web.get(&format!("/checks/{key}/pings/1/body/")).await;
    assert_eq!((code, body.as_str()), (200, "hello"));
    for (path, fields) in [
        (format!("/checks/{uuid}/pause/"), vec![]),
        (format!("/checks/{uuid}/delete/"), vec![("confirm", "yes")]),
        (format!("/checks/{uuid}/edit/"), vec![("name", "owned")]),
    ] {
        let r = web.post(&path, &fields).await;
        assert_eq!(r.status(), 403, "{path}");
    }
    let (code, _) = web
        .get(&format!("/checks/{uuid}/preview/?schedule=*+*+*+*+*"))
        .await;
    assert_eq!(code, 403, "the preview belongs to the edit form");
    let after = s.get_check(&uuid).await;
    assert_eq!(after["name"], "backup");
    assert_eq!(after["status"], "up");
    s.stop().await;
}

#[tokio::test]
async fn the_edit_form_saves_every_field_and_shows_the_apis_message() {
    let s = TestServer::start().await;
    let mail = s.mail_channel().await;
    let uuid = s.create(json!({"name": "db"})).await["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let web = s.sign_in(&s.rw).await;
    let page = page(&web, &uuid).await;
    for field in [
        "name",
        "slug",
        "tags",
        "desc",
        "kind",
        "timeout",
        "grace",
        "schedule",
        "tz",
        "methods",
        "start_kw",
        "success_kw",
        "failure_kw",
        "filter_subject",
        "filter_body",
        "filter_http_body",
        "filter_default_fail",
        "manual_resume",
        "channels_listed",
    ] {
        assert!(page.contains(&format!("name=\"{field}\"")), "field {field}");
    }
    assert!(
        page.contains("<option value=\"Europe/Riga\">"),
        "the zone list"
    );
    assert!(page.contains(&format!("name=\"channel\" value=\"{}\"", mail.uuid)));
    let edit = format!("/checks/{uuid}/edit/");
    // An invalid cron expression: the API's message, the typed values kept, nothing changed.
    let (code, api) = s
        .call(
            Method::POST,
            &format!("/api/v3/checks/{uuid}"),
            Some(&json!({"schedule": "61 * * * *"})),
        )
        .await;
    assert_eq!(code, 400);
    let message = api["error"].as_str().unwrap().to_string();
    let r = web
        .post(
            &edit,
            &[
                ("name", "changed <b>"),
                ("kind", "schedule"),
                ("schedule", "61 * * * *"),
                ("tz", "UTC"),
                ("timeout", "86400"),
                ("grace", "3600"),
            ],
        )
        .await;
    assert_eq!(r.status(), 400);
    let page = r.text().await.unwrap();
    assert!(
        page.contains(&format!("id=\"edit-error\">{}</p>", escaped(&message))),
        "{message}"
    );
    assert!(
        page.contains("value=\"changed &#60;b&#62;\""),
        "typed name kept, escaped"
    );
    assert!(page.contains("value=\"61 * * * *\""), "typed schedule kept");
    assert!(page.contains("id=\"f-kind-schedule\" name=\"kind\" value=\"schedule\" checked"));
    assert_eq!(s.get_check(&uuid).await["name"], "db");
    // Without the token nothing is read.
    let r = web.post_raw(&edit, &[("name", "x")]).await;
    assert_eq!(r.status(), 403);
    // Every field at once.
    let channel = mail.uuid.to_string();
    let r = web
        .post(
            &edit,
            &[
                ("name", "Nightly dump"),
                ("slug", "nightly-dump"),
                ("tags", "prod db"),
                ("desc", "pg_dump to s3"),
                ("kind", "schedule"),
                ("timeout", "86400"),
                ("schedule", "30 2 * * *"),
                ("tz", "Europe/Riga"),
                ("grace", "900"),
                ("methods", "POST"),
                ("start_kw", "begin"),
                ("success_kw", "ok"),
                ("failure_kw", "error"),
                ("filter_subject", "0"),
                ("filter_body", "0"),
                ("filter_body", "1"),
                ("filter_http_body", "0"),
                ("filter_http_body", "1"),
                ("filter_default_fail", "0"),
                ("manual_resume", "0"),
                ("manual_resume", "1"),
                ("fail_threshold", "3"),
                ("max_duration", "7200"),
                ("min_duration", "60"),
                ("quiet_schedule", "Sun 02:00"),
                ("quiet_tz", "Europe/Riga"),
                ("quiet_duration", "7200"),
                ("channels_listed", "1"),
                ("channel", &channel),
            ],
        )
        .await;
    assert_eq!(r.status(), 303);
    let c = s.get_check(&uuid).await;
    assert_eq!(c["name"], "Nightly dump");
    assert_eq!(c["slug"], "nightly-dump");
    assert_eq!(c["tags"], "prod db");
    assert_eq!(c["desc"], "pg_dump to s3");
    assert_eq!(c["schedule"], "30 2 * * *");
    assert_eq!(c["tz"], "Europe/Riga");
    assert_eq!(c["grace"], 900);
    assert_eq!(c["methods"], "POST");
    assert_eq!(c["start_kw"], "begin");
    assert_eq!(c["success_kw"], "ok");
    assert_eq!(c["failure_kw"], "error");
    assert_eq!(c["filter_body"], true);
    assert_eq!(c["filter_http_body"], true);
    assert_eq!(c["filter_subject"], false);
    assert_eq!(c["manual_resume"], true);
    assert_eq!(c["channels"], channel.as_str());
    assert_eq!(
        (&c["fail_threshold"], &c["max_duration"], &c["min_duration"]),
        (&json!(3), &json!(7200), &json!(60))
    );
    assert_eq!(
        (&c["quiet_schedule"], &c["quiet_tz"], &c["quiet_duration"]),
        (&json!("Sun 02:00"), &json!("Europe/Riga"), &json!(7200))
    );
    let (_, page) = web.get(&format!("/checks/{uuid}/")).await;
    assert!(page.contains(r#"name="max_duration" value="7200""#));
    assert!(page.contains(r#"name="quiet_schedule" value="Sun 02:00""#));
    // The rules' own check, in the API's words.
    let r = web
        .post(&edit, &[("max_duration", "30"), ("min_duration", "60")])
        .await;
    assert_eq!(r.status(), 400);
    let page = r.text().await.unwrap();
    assert!(
        page.contains("min_duration must be less than max_duration"),
        "{page}"
    );
    assert_eq!(s.get_check(&uuid).await["max_duration"], 7200);
    // Back to simple, and no integrations.
    let r = web
        .post(
            &edit,
            &[
                ("kind", "simple"),
                ("timeout", "3600"),
                ("schedule", "30 2 * * *"),
                ("grace", "60"),
                ("channels_listed", "1"),
            ],
        )
        .await;
    assert_eq!(r.status(), 303);
    let c = s.get_check(&uuid).await;
    assert_eq!(c["timeout"], 3600);
    assert!(c.get("schedule").is_none(), "{c}");
    assert_eq!(c["channels"], "");
    let page = self::page(&web, &uuid).await;
    assert!(page.contains("id=\"f-kind-simple\" name=\"kind\" value=\"simple\" checked"));
    assert!(page.contains("value=\"Nightly dump\""));
    s.stop().await;
}

#[tokio::test]
async fn the_schedule_preview_lists_fire_times_or_the_apis_message() {
    let s = TestServer::start().await;
    let uuid = s.create(json!({"name": "db"})).await["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let web = s.sign_in(&s.rw).await;
    let preview = format!("/checks/{uuid}/preview/");
    let (code, html) = web
        .get(&format!("{preview}?schedule=0+3+*+*+*&tz=Europe%2FRiga"))
        .await;
    assert_eq!(code, 200);
    assert_eq!(html.matches("<li><time datetime=").count(), 5, "{html}");
    assert!(
        html.contains(" 03:00 EE") && html.contains("Europe/Riga"),
        "{html}"
    );
    let (code, api) = s
        .call(
            Method::POST,
            &format!("/api/v3/checks/{uuid}"),
            Some(&json!({"schedule": "* * * * * * *"})),
        )
        .await;
    assert_eq!(code, 400);
    let message = api["error"].as_str().unwrap();
    let (code, html) = web
        .get(&format!("{preview}?schedule=*+*+*+*+*+*+*&tz=UTC"))
        .await;
    assert_eq!(code, 200);
    assert!(html.contains(&escaped(message)), "{message} in {html}");
    assert!(!html.contains("<li>"));
    let (_, html) = web
        .get(&format!("{preview}?schedule=%3Cscript%3E&tz=UTC"))
        .await;
    assert!(!html.contains("<script>"), "{html}");
    s.stop().await;
}

#[tokio::test]
async fn snooze_from_the_check_page_and_end_it() {
    let s = TestServer::start().await;
    let uuid = s.create(json!({"name": "db"})).await["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let web = s.sign_in(&s.rw).await;
    let page_path = format!("/checks/{uuid}/");
    let (_, page) = web.get(&page_path).await;
    assert!(page.contains("Snooze alerts</button>"));
    let snooze = format!("/checks/{uuid}/snooze/");
    let r = web.post(&snooze, &[("seconds", "14400")]).await;
    assert_eq!(r.status(), 303);
    let until: jiff::Timestamp = s.get_check(&uuid).await["snoozed_until"]
        .as_str()
        .expect("snoozed")
        .parse()
        .unwrap();
    let ahead = until.duration_since(jiff::Timestamp::now()).as_secs();
    assert!((14_300..=14_400).contains(&ahead), "{ahead}");
    let (_, page) = web.get(&page_path).await;
    assert!(page.contains("Alerts snoozed until"), "{page}");
    assert!(page.contains("End snooze</button>"));
    // A value the API refuses: its message, nothing changed.
    let r = web.post(&snooze, &[("seconds", "-5")]).await;
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("seconds is too small"));
    let r = web.post(&snooze, &[("seconds", "0")]).await;
    assert_eq!(r.status(), 303);
    assert_eq!(s.get_check(&uuid).await["snoozed_until"], Value::Null);
    // A read-only session may not.
    let ro = s.sign_in(&s.ro).await;
    let r = ro.post(&snooze, &[("seconds", "3600")]).await;
    assert_eq!(r.status(), 403);
    assert_eq!(s.get_check(&uuid).await["snoozed_until"], Value::Null);
    s.stop().await;
}

#[tokio::test]
async fn the_edit_form_sets_and_clears_parents() {
    let s = TestServer::start().await;
    let router = s.create(json!({"name": "router"})).await["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let nas = s.create(json!({"name": "nas"})).await["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let web = s.sign_in(&s.rw).await;
    let (_, page) = web.get(&format!("/checks/{nas}/")).await;
    assert!(page.contains(&format!(r#"<option value="{router}">router</option>"#)));
    let edit = format!("/checks/{nas}/edit/");
    let r = web
        .post(&edit, &[("parents_listed", "1"), ("parent", &router)])
        .await;
    assert_eq!(r.status(), 303);
    assert_eq!(s.get_check(&nas).await["parents"], router.as_str());
    let (_, page) = web.get(&format!("/checks/{nas}/")).await;
    assert!(page.contains(&format!(
        r#"<option value="{router}" selected>router</option>"#
    )));
    // A cycle is refused with the API's message.
    let r = web
        .post(
            &format!("/checks/{router}/edit/"),
            &[("parents_listed", "1"), ("parent", &nas)],
        )
        .await;
    assert_eq!(r.status(), 400);
    assert!(
        r.text()
            .await
            .unwrap()
            .contains("parents would form a cycle")
    );
    let r = web.post(&edit, &[("parents_listed", "1")]).await;
    assert_eq!(r.status(), 303);
    assert_eq!(s.get_check(&nas).await["parents"], "");
    s.stop().await;
}

#[tokio::test]
async fn the_edit_form_chooses_what_each_integration_sends() {
    let s = TestServer::start().await;
    let mail = s.mail_channel().await.uuid.to_string();
    let uuid = s.create(json!({"name": "db", "channels": "*"})).await["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let web = s.sign_in(&s.rw).await;
    let (_, page) = web.get(&format!("/checks/{uuid}/")).await;
    let boxes = format!(r#"name="events-{mail}""#);
    assert!(page.contains(&format!(
        r#"<input type="checkbox" {boxes} value="down" checked>"#
    )));
    assert!(page.contains(&format!(r#"<input type="checkbox" {boxes} value="late">"#)));
    let listed = format!("events_listed-{mail}");
    let events = format!("events-{mail}");
    let edit = format!("/checks/{uuid}/edit/");
    let choose = |ticked: [&'static str; 2]| {
        let mut fields = vec![
            ("channels_listed", "1"),
            ("channel", mail.as_str()),
            (listed.as_str(), "1"),
        ];
        fields.extend(ticked.map(|e| (events.as_str(), e)));
        fields
    };
    let r = web.post(&edit, &choose(["down", "late"])).await;
    assert_eq!(r.status(), 303);
    assert_eq!(
        s.get_check(&uuid).await["channel_events"],
        json!({ &mail: "down,late" })
    );
    let (_, page) = web.get(&format!("/checks/{uuid}/")).await;
    assert!(page.contains(&format!(
        r#"<input type="checkbox" {boxes} value="late" checked>"#
    )));
    assert!(page.contains(&format!(r#"<input type="checkbox" {boxes} value="up">"#)));
    // Back to the integration's own events: no choice is kept.
    let r = web.post(&edit, &choose(["down", "up"])).await;
    assert_eq!(r.status(), 303);
    assert_eq!(s.get_check(&uuid).await["channel_events"], json!({}));
    s.stop().await;
}
