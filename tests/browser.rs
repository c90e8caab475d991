//! The dashboard in a real headless Chromium (Debian's `chromium` and `chromium-driver`),
//! driven over `WebDriver` by fantoccini: signing in, creating a check, watching a ping turn it
//! up without a reload, filtering by tag, pausing and resuming, editing with a bad schedule,
//! the timeline, dark mode; every page checked by axe-core (zero serious or critical
//! violations) and photographed in light and dark, desktop and phone width, into
//! `target/screenshots/` for people to look at.
//!
//! Without `chromedriver` these tests say so and pass, unless `CI` is set (as `.ci/run` does),
//! which demands them. axe-core comes from npm
//! (`npm ci --prefix tests/browser`).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use overdue::service::Clock;

use crate::common::{Options, TestServer};

/// Desktop and phone window sizes.
pub const DESKTOP: (u32, u32) = (1280, 900);
pub const PHONE: (u32, u32) = (360, 780);

/// A Chromium session and the chromedriver serving it.
pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// In CI (`CI` set, as `.ci/run` does) a missing browser or axe-core is a failure.
fn required() -> bool {
    std::env::var_os("CI").is_some()
}

fn find_driver() -> Option<PathBuf> {
    ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// A fresh headless Chromium in a dark or light system theme, or None when there is none and
/// the tests were not asked for.
pub async fn browser(dark: bool) -> Option<Browser> {
    let Some(driver_path) = find_driver() else {
        assert!(
            !required(),
            "CI is set but chromedriver is missing: apt-get install chromium chromium-driver"
        );
        eprintln!("skipping a browser test: no chromedriver (apt-get install chromium-driver)");
        return None;
    };
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
        l.local_addr().expect("addr").port()
    };
    let driver = Command::new(driver_path)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let profile = tempfile::tempdir().expect("profile dir");
    let mut args = vec![
        "--headless=new".to_string(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-dev-shm-usage".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--hide-scrollbars".into(),
        format!("--user-data-dir={}", profile.path().display()),
        format!("--window-size={},{}", DESKTOP.0, DESKTOP.1),
    ];
    if dark {
        args.push("--blink-settings=preferredColorScheme=0".into());
        args.push("--force-dark-mode".into());
    } else {
        args.push("--blink-settings=preferredColorScheme=1".into());
    }
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"binary": "/usr/bin/chromium", "args": args}),
    );
    let url = format!("http://127.0.0.1:{port}");
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let mut last = None;
    for _ in 0..50 {
        match ClientBuilder::new(connector.clone())
            .capabilities(caps.clone())
            .connect(&url)
            .await
        {
            Ok(client) => {
                return Some(Browser {
                    client,
                    driver,
                    _profile: profile,
                });
            }
            Err(e) => last = Some(e.to_string()),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not start a session: {last:?}");
}

impl Browser {
    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.expect("goto");
    }

    pub async fn text(&self, css: &str) -> String {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .text()
            .await
            .expect("text")
    }

    pub async fn count(&self, css: &str) -> usize {
        self.client
            .find_all(Locator::Css(css))
            .await
            .expect("find_all")
            .len()
    }

    pub async fn click(&self, css: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .click()
            .await
            .expect("click");
    }

    pub async fn fill(&self, css: &str, text: &str) {
        let field = self
            .client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"));
        field.clear().await.expect("clear");
        field.send_keys(text).await.expect("type");
    }

    pub async fn url(&self) -> String {
        self.client.current_url().await.expect("url").to_string()
    }

    pub async fn eval(&self, script: &str) -> Value {
        self.client.execute(script, vec![]).await.expect("script")
    }

    /// Waits up to 15 s for `cond` (a JavaScript expression) to be true.
    pub async fn wait_for(&self, cond: &str) {
        for _ in 0..150 {
            if self.eval(&format!("return !!({cond});")).await == json!(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("waited 15 s for {cond}");
    }

    /// Signs in through the form.
    pub async fn sign_in(&self, server: &TestServer, key: &str) {
        self.goto(&server.url("/")).await;
        self.fill("#key", key).await;
        self.click("form[action$='/signin/'] button[type=submit]")
            .await;
        self.wait_for("location.pathname.endsWith('/checks/')")
            .await;
    }

    /// Runs axe-core on the page and fails on any serious or critical violation.
    pub async fn axe(&self, page: &str) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/browser/node_modules/axe-core/axe.min.js");
        let Ok(source) = std::fs::read_to_string(&path) else {
            assert!(
                !required(),
                "axe-core is missing: npm ci --prefix tests/browser"
            );
            eprintln!("skipping axe on {page}: npm ci --prefix tests/browser");
            return;
        };
        self.client
            .execute(&source, vec![])
            .await
            .expect("inject axe");
        let script = "const done = arguments[arguments.length - 1];
            axe.run(document, {resultTypes: ['violations']}).then(r => done(
              r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
                .map(v => v.id + ' (' + v.impact + '): ' + v.help + ' at ' +
                     v.nodes.map(n => n.target.join(' ')).join(', '))));";
        let found = self
            .client
            .execute_async(script, vec![])
            .await
            .expect("axe run");
        assert_eq!(found, json!([]), "axe on {page}");
    }

    /// Saves a screenshot of the element `css` as `target/screenshots/<name>.png`.
    pub async fn element_screenshot(&self, css: &str, name: &str) {
        let selector = serde_json::to_string(css).expect("json");
        self.eval(&format!(
            "document.querySelector({selector}).scrollIntoView({{block: 'center'}}); return 0;"
        ))
        .await;
        let png = self
            .client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .screenshot()
            .await
            .expect("element screenshot");
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        std::fs::write(dir.join(format!("{name}.png")), png).expect("write screenshot");
    }

    /// Saves a screenshot of the whole page as `target/screenshots/<name>.png`.
    pub async fn screenshot(&self, name: &str, size: (u32, u32)) {
        self.client
            .set_window_size(size.0, size.1)
            .await
            .expect("window size");
        // Full height: the window grows to the document.
        let height = self
            .eval("return Math.ceil(document.documentElement.scrollHeight);")
            .await
            .as_u64()
            .unwrap_or(u64::from(size.1));
        let height = u32::try_from(height).unwrap_or(size.1).clamp(size.1, 4000);
        self.client
            .set_window_size(size.0, height)
            .await
            .expect("window size");
        let png = self.client.screenshot().await.expect("screenshot");
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        std::fs::write(dir.join(format!("{name}.png")), png).expect("write screenshot");
        self.client
            .set_window_size(DESKTOP.0, DESKTOP.1)
            .await
            .expect("window size");
    }

    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }
}

async fn ping(server: &TestServer, uuid: &str, tail: &str) {
    let r = server
        .http
        .get(server.url(&format!("/ping/{uuid}{tail}")))
        .send()
        .await
        .expect("ping");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn sign_in_create_a_check_and_see_its_ping_arrive_without_reloading() {
    let Some(b) = browser(false).await else {
        return;
    };
    let s = TestServer::start().await;
    b.sign_in(&s, &s.rw).await;
    b.axe("checks (empty)").await;
    b.fill("#new-name", "nightly backup").await;
    b.click("form[action$='/add_check/'] button[type=submit]")
        .await;
    b.wait_for("/\\/checks\\/[0-9a-f-]{36}\\/$/.test(location.pathname)")
        .await;
    let uuid = b
        .url()
        .await
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .expect("uuid")
        .to_string();
    assert_eq!(s.get_check(&uuid).await["name"], "nightly backup");
    b.click("a[href$='/checks/']").await;
    b.wait_for("document.querySelector('#rows') !== null").await;
    assert_eq!(b.text("#rows .status").await.trim(), "new");
    // Marks this page: a reload would lose the mark.
    b.eval("window.overdueMark = 42; return null;").await;
    ping(&s, &uuid, "").await;
    b.wait_for("document.querySelector('#rows .status').textContent.trim() === 'up'")
        .await;
    assert_eq!(b.eval("return window.overdueMark;").await, json!(42));
    b.close().await;
    s.stop().await;
}

#[tokio::test]
async fn filter_by_tag_then_pause_and_resume() {
    let Some(b) = browser(false).await else {
        return;
    };
    let s = TestServer::start().await;
    let prod = s.create(json!({"name": "db dump", "tags": "prod"})).await;
    s.create(json!({"name": "scratch", "tags": "dev"})).await;
    b.sign_in(&s, &s.rw).await;
    assert_eq!(b.count("#rows tr").await, 2);
    b.click("#rows a.tag[href*='tag=prod']").await;
    b.wait_for("location.search.includes('tag=prod')").await;
    assert_eq!(b.count("#rows tr").await, 1);
    assert!(b.text("#rows").await.contains("db dump"));
    let uuid = prod["uuid"].as_str().expect("uuid");
    b.goto(&s.url(&format!("/checks/{uuid}/"))).await;
    b.click("form[action$='/pause/'] button").await;
    b.wait_for("document.querySelector(\"form[action$='/resume/']\") !== null")
        .await;
    assert_eq!(s.get_check(uuid).await["status"], "paused");
    b.click("form[action$='/resume/'] button").await;
    b.wait_for("document.querySelector(\"form[action$='/pause/']\") !== null")
        .await;
    assert_ne!(s.get_check(uuid).await["status"], "paused");
    b.close().await;
    s.stop().await;
}

#[tokio::test]
async fn dark_mode_follows_the_system() {
    let Some(b) = browser(true).await else { return };
    let s = TestServer::start().await;
    b.goto(&s.url("/")).await;
    assert_eq!(
        b.eval("return matchMedia('(prefers-color-scheme: dark)').matches;")
            .await,
        json!(true)
    );
    let bg = b
        .eval("return getComputedStyle(document.body).backgroundColor;")
        .await;
    assert_eq!(bg, json!("rgb(13, 17, 23)"));
    b.close().await;
    s.stop().await;
}

/// Every page, light and dark, desktop and phone: axe on each, and a screenshot to look at.
#[tokio::test]
async fn every_page_passes_axe_and_is_photographed() {
    for dark in [false, true] {
        let Some(b) = browser(dark).await else { return };
        let s = TestServer::start().await;
        let job = s
            .create(
                json!({"name": "nightly backup", "tags": "prod db", "schedule": "30 2 * * *",
                           "tz": "Europe/Riga", "grace": 3600}),
            )
            .await;
        s.create(json!({"name": "hourly sync", "tags": "prod", "timeout": 3600, "grace": 300}))
            .await;
        let uuid = job["uuid"].as_str().expect("uuid").to_string();
        for tail in ["/start", "", "/start", "/fail", "/log"] {
            ping(&s, &uuid, tail).await;
        }
        let project = s
            .service
            .read(|st| st.project_by_name("default").expect("default").uuid);
        // The project's quiet time, shown on its page.
        let (code, _) = s
            .call(
                reqwest::Method::POST,
                "/api/v3/project/",
                Some(
                    &json!({"quiet_schedule": "Sun 02:00", "quiet_tz": "Europe/Riga",
                             "quiet_duration": 7200}),
                ),
            )
            .await;
        assert_eq!(code, 200);
        let theme = if dark { "dark" } else { "light" };
        b.goto(&s.url("/")).await;
        b.axe("sign-in").await;
        b.screenshot(&format!("signin-{theme}-desktop"), DESKTOP)
            .await;
        b.sign_in(&s, &s.rw).await;
        let pages = [
            ("checks", format!("/projects/{project}/checks/")),
            ("check", format!("/checks/{uuid}/")),
            ("integrations", format!("/projects/{project}/integrations/")),
            ("project", format!("/projects/{project}/settings/")),
        ];
        for (name, path) in &pages {
            b.goto(&s.url(path)).await;
            b.axe(&format!("{name} ({theme})")).await;
            b.screenshot(&format!("{name}-{theme}-desktop"), DESKTOP)
                .await;
            b.screenshot(&format!("{name}-{theme}-phone"), PHONE).await;
        }
        b.close().await;
        s.stop().await;
    }
}

/// The edit form in a browser: the schedule preview follows what is typed, and saving an
/// invalid cron expression shows the API's own message for it and changes nothing.
#[tokio::test]
async fn an_invalid_cron_expression_shows_the_apis_message_in_the_form() {
    let Some(b) = browser(false).await else {
        return;
    };
    let s = TestServer::start().await;
    let check = s.create(json!({"name": "nightly", "timeout": 3600})).await;
    let uuid = check["uuid"].as_str().expect("uuid");
    let r = s
        .rw(reqwest::Method::POST, &format!("/api/v3/checks/{uuid}"))
        .json(&json!({"schedule": "61 * * * *"}))
        .send()
        .await
        .expect("api");
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.expect("json");
    let message = body["error"].as_str().expect("message").to_string();
    b.sign_in(&s, &s.rw).await;
    b.goto(&s.url(&format!("/checks/{uuid}/"))).await;
    b.click("#f-kind-schedule").await;
    b.fill("#f-schedule", "0 3 * * *").await;
    b.wait_for("document.querySelectorAll('#schedule-preview li').length === 5")
        .await;
    b.fill("#f-schedule", "61 * * * *").await;
    let shown = serde_json::to_string(&message).expect("js string");
    b.wait_for(&format!(
        "document.querySelector('#schedule-preview').textContent.includes({shown})"
    ))
    .await;
    b.click("form.edit-check button[type=submit]").await;
    b.wait_for("document.querySelector('#edit-error') !== null")
        .await;
    assert_eq!(b.text("#edit-error").await, message);
    assert_eq!(
        b.eval("return document.querySelector('#f-schedule').value;")
            .await,
        json!("61 * * * *"),
        "what was typed stays in the form"
    );
    let after = s.get_check(uuid).await;
    assert_eq!(after["timeout"], 3600, "nothing changed");
    assert!(after.get("schedule").is_none(), "{after}");
    b.close().await;
    s.stop().await;
}

/// Pings recorded hours apart (the service's clock set back while they arrive) show in the
/// check page's timeline as one tick each, coloured by kind, with a bar per finished run.
#[tokio::test]
async fn the_timeline_shows_the_pings() {
    let Some(b) = browser(false).await else {
        return;
    };
    let now = jiff::Timestamp::now();
    let mut dir = None;
    let mut uuid = String::new();
    for (hours_ago, last) in [(6, ""), (4, "/fail"), (2, "")] {
        let s = TestServer::start_with(Options {
            dir,
            clock: Some(Clock::tokio_at(
                now - jiff::SignedDuration::from_hours(hours_ago),
            )),
            ..Options::default()
        })
        .await;
        if uuid.is_empty() {
            let c = s.create(json!({"name": "nightly", "timeout": 86400})).await;
            uuid = c["uuid"].as_str().expect("uuid").to_string();
        }
        ping(&s, &uuid, "/start").await;
        ping(&s, &uuid, last).await;
        dir = Some(s.shutdown().await);
    }
    let s = TestServer::start_with(Options {
        dir,
        ..Options::default()
    })
    .await;
    ping(&s, &uuid, "/log").await;
    b.sign_in(&s, &s.rw).await;
    b.goto(&s.url(&format!("/checks/{uuid}/"))).await;
    // A start and its end land in one tick at this scale; the tick shows the end's kind.
    let kinds = b
        .eval(
            "return Array.from(document.querySelectorAll('svg.timeline rect.tick'))
                .map(t => t.getAttribute('class'));",
        )
        .await;
    assert_eq!(
        kinds,
        json!(["tick success", "tick fail", "tick success", "tick log"])
    );
    assert_eq!(b.count("svg.timeline rect.run").await, 3, "three runs");
    assert_eq!(b.count("svg.timeline rect.run.failed").await, 1);
    b.screenshot("timeline-light-desktop", DESKTOP).await;
    b.close().await;
    s.stop().await;
}

/// What an integration sends for one check, chosen with the boxes under it in the edit form;
/// the page passes axe with them.
#[tokio::test]
async fn the_events_an_integration_sends_are_ticked_in_the_edit_form() {
    let Some(b) = browser(false).await else {
        return;
    };
    let s = TestServer::start().await;
    let pager = s.mail_channel().await.uuid;
    let made = s
        .create(json!({"name": "nightly", "timeout": 3600, "channels": "*"}))
        .await;
    let uuid = made["uuid"].as_str().expect("uuid");
    b.sign_in(&s, &s.rw).await;
    b.goto(&s.url(&format!("/checks/{uuid}/"))).await;
    b.axe("check with integrations").await;
    let late = format!("input[name='events-{pager}'][value='late']");
    let up = format!("input[name='events-{pager}'][value='up']");
    b.click(&late).await;
    b.click(&up).await;
    b.element_screenshot("form.edit-check fieldset:last-of-type", "check-edit-events")
        .await;
    // The page after the save is a new document: the mark set here is gone from it.
    b.eval("window.beforeSave = true; return 0;").await;
    b.click("form.edit-check button[type='submit']").await;
    b.wait_for("window.beforeSave === undefined && document.readyState === 'complete'")
        .await;
    assert_eq!(
        s.get_check(uuid).await["channel_events"],
        json!({ pager.to_string(): "down,late" })
    );
    // The add form of a kind offers the channel's own set, down and up ticked.
    let project = s
        .service
        .read(|st| st.project_by_name("default").expect("default").uuid);
    b.goto(&s.url(&format!("/projects/{project}/integrations/")))
        .await;
    b.click("details.kind-form:nth-of-type(2) summary").await;
    let ticked = "details.kind-form:nth-of-type(2) fieldset.events input:checked";
    assert_eq!(b.count(ticked).await, 2);
    b.axe("integrations with a form open").await;
    b.element_screenshot(
        "details.kind-form:nth-of-type(2) fieldset.events",
        "integration-add-events",
    )
    .await;
    b.close().await;
    s.stop().await;
}
