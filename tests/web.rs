//! The dashboard's doors: signing in and out, wrong keys, sessions across projects and after
//! their key is removed, CSRF and origin checks, read-only sessions, the security headers,
//! the site root's path prefix, and `--dashboard off`.

use overdue::api::ApiConfig;
use overdue::service::Clock;

use crate::common::{Options, TestServer, csrf_of, session_cookie};

#[tokio::test]
async fn sign_in_sets_a_strict_http_only_cookie_and_opens_the_checks() {
    let s = TestServer::start().await;
    let r = s
        .browser()
        .post(s.url("/signin/"))
        .form(&[("key", s.rw.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let set = r.headers()["set-cookie"].to_str().unwrap().to_string();
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/;"] {
        assert!(set.contains(attr), "{set} lacks {attr}");
    }
    assert!(!set.contains("Secure"), "http site root: no Secure");
    let to = r.headers()["location"].to_str().unwrap().to_string();
    assert!(
        to.starts_with("/projects/") && to.ends_with("/checks/"),
        "{to}"
    );
    let cookie = session_cookie(&r).unwrap();
    let page = s
        .browser()
        .get(s.url(&to))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let body = page.text().await.unwrap();
    assert!(body.contains("<h1>Checks</h1>"));
    assert!(!body.contains(&s.rw), "the key never appears in a page");
    // Home goes to the same page once signed in.
    let home = s
        .browser()
        .get(s.url("/"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(home.status(), 303);
    assert_eq!(home.headers()["location"], to.as_str());
    s.stop().await;
}

#[tokio::test]
async fn a_wrong_key_says_so_and_too_many_are_refused_for_a_while() {
    let s = TestServer::start().await;
    let wrong = "hcw_0000000000000000000000000000";
    let r = s
        .browser()
        .post(s.url("/signin/"))
        .form(&[("key", wrong)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert!(session_cookie(&r).is_none());
    let body = r.text().await.unwrap();
    assert!(body.contains("not an API key of any project"), "{body}");
    assert!(!body.contains(wrong), "the key typed is not echoed back");
    let mut last = 0;
    for _ in 0..25 {
        let r = s
            .browser()
            .post(s.url("/signin/"))
            .form(&[("key", wrong)])
            .send()
            .await
            .unwrap();
        last = r.status().as_u16();
        if last == 429 {
            assert!(r.headers().contains_key("retry-after"));
            assert!(r.text().await.unwrap().contains("Too many wrong keys"));
            break;
        }
    }
    assert_eq!(last, 429, "wrong keys are limited per address");
    // The right key is refused too while the address is limited: nobody guesses on.
    let r = s
        .browser()
        .post(s.url("/signin/"))
        .form(&[("key", s.rw.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    s.stop().await;
}

#[tokio::test]
async fn posts_need_the_session_csrf_token_and_our_origin() {
    let s = TestServer::start().await;
    let check = s.create(serde_json::json!({"name": "db"})).await;
    let uuid = check["uuid"].as_str().unwrap();
    let web = s.sign_in(&s.rw).await;
    let pause = format!("/checks/{uuid}/pause/");
    let r = web.post_raw(&pause, &[]).await;
    assert_eq!(r.status(), 403, "no token");
    let r = web
        .post_raw(&pause, &[("csrf", "0123456789abcdef0123456789abcdef")])
        .await;
    assert_eq!(r.status(), 403, "another token");
    assert_eq!(s.get_check(uuid).await["status"], "new", "nothing changed");
    let r = s
        .browser()
        .post(s.url(&pause))
        .header("cookie", &web.cookie)
        .header("origin", "https://evil.example")
        .form(&[("csrf", web.csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403, "another site's form");
    let r = web.post(&pause, &[]).await;
    assert_eq!(r.status(), 303);
    assert_eq!(s.get_check(uuid).await["status"], "paused");
    // A GET never changes anything.
    let r = s
        .browser()
        .get(s.url(&format!("/checks/{uuid}/resume/")))
        .header("cookie", &web.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    s.stop().await;
}

#[tokio::test]
async fn a_read_only_session_sees_no_uuids_and_cannot_change_anything() {
    let s = TestServer::start().await;
    let check = s.create(serde_json::json!({"name": "backup"})).await;
    let uuid = check["uuid"].as_str().unwrap().to_string();
    let web = s.sign_in(&s.ro).await;
    let project = s
        .service
        .read(|st| st.project_by_name("default").unwrap().uuid);
    let (code, page) = web.get(&format!("/projects/{project}/checks/")).await;
    assert_eq!(code, 200);
    assert!(page.contains("backup"));
    assert!(
        !page.contains(&uuid),
        "a read-only page shows no check UUID"
    );
    assert!(!page.contains("add_check"), "no new-check form");
    for (path, fields) in [
        (format!("/checks/{uuid}/pause/"), vec![]),
        (format!("/checks/{uuid}/delete/"), vec![]),
        (
            format!("/projects/{project}/add_check/"),
            vec![("name", "x")],
        ),
    ] {
        let r = web.post(&path, &fields).await;
        assert_eq!(r.status(), 403, "{path}");
    }
    assert_eq!(s.list().await.len(), 1);
    assert_eq!(s.get_check(&uuid).await["status"], "new");
    s.stop().await;
}

#[tokio::test]
async fn a_second_projects_key_joins_the_session_and_a_removed_key_leaves_it_at_once() {
    let s = TestServer::start().await;
    s.service.add_project("lab").await.unwrap();
    let lab = s.service.add_key("lab", false, "").await.unwrap();
    let web = s.sign_in(&s.rw).await;
    let r = s
        .browser()
        .post(s.url("/signin/"))
        .header("cookie", &web.cookie)
        .form(&[("key", lab.plaintext.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let cookie = session_cookie(&r).expect("a fresh token at every sign-in");
    assert_ne!(cookie, web.cookie, "no session fixation");
    let get = |path: String| {
        let cookie = cookie.clone();
        let client = s.browser();
        let url = s.url(&path);
        async move {
            let r = client
                .get(url)
                .header("cookie", cookie)
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    let (default, lab_uuid) = s.service.read(|st| {
        (
            st.project_by_name("default").unwrap().uuid,
            st.project_by_name("lab").unwrap().uuid,
        )
    });
    let (code, page) = get(format!("/projects/{default}/checks/")).await;
    assert_eq!(code, 200);
    assert!(
        page.contains(&format!("/projects/{lab_uuid}/checks/")),
        "the switcher lists lab"
    );
    // `overdue key rm` while serving: the lab project is gone from the session at once.
    let lab_id = &lab.plaintext[..12];
    s.service.remove_key("lab", lab_id).await.unwrap();
    let (code, _) = get(format!("/projects/{lab_uuid}/checks/")).await;
    assert_eq!(code, 404);
    let (code, page) = get(format!("/projects/{default}/checks/")).await;
    assert_eq!(code, 200);
    assert!(!page.contains(&lab_uuid.to_string()));
    // The old token was replaced at the second sign-in.
    let (code, _) = web.get(&format!("/projects/{default}/checks/")).await;
    assert_eq!(code, 404);
    s.stop().await;
}

#[tokio::test]
async fn sign_out_ends_the_session() {
    let s = TestServer::start().await;
    let web = s.sign_in(&s.rw).await;
    let project = s
        .service
        .read(|st| st.project_by_name("default").unwrap().uuid);
    let path = format!("/projects/{project}/checks/");
    assert_eq!(web.get(&path).await.0, 200);
    let r = web.post("/signout/", &[]).await;
    assert_eq!(r.status(), 303);
    assert!(
        r.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(web.get(&path).await.0, 404, "the old cookie opens nothing");
    s.stop().await;
}

#[tokio::test]
async fn sessions_survive_a_restart() {
    let s = TestServer::start().await;
    let project = s
        .service
        .read(|st| st.project_by_name("default").unwrap().uuid);
    let web = s.sign_in(&s.rw).await;
    let cookie = web.cookie.clone();
    drop(web);
    let dir = s.shutdown().await;
    let s = TestServer::start_with(Options {
        dir: Some(dir),
        ..Options::default()
    })
    .await;
    let r = s
        .browser()
        .get(s.url(&format!("/projects/{project}/checks/")))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    s.stop().await;
}

/// Thirty days without use end a session; each use starts the thirty days again. Days pass
/// between restarts on a clock set ahead (the session lives in the data file).
#[tokio::test]
async fn a_session_ends_after_thirty_days_without_use_and_each_use_extends_it() {
    let s = TestServer::start().await;
    let project = s
        .service
        .read(|st| st.project_by_name("default").unwrap().uuid);
    let path = format!("/projects/{project}/checks/");
    let web = s.sign_in(&s.rw).await;
    let cookie = web.cookie.clone();
    drop(web);
    let mut dir = s.shutdown().await;
    let signed_in = jiff::Timestamp::now();
    // Day 58 is 29 days after the use on day 29; day 89 is 31 days after the use on day 58.
    for (day, opens) in [(29, true), (58, true), (89, false)] {
        let at = signed_in + jiff::SignedDuration::from_hours(24 * day);
        let s = TestServer::start_with(Options {
            dir: Some(dir),
            clock: Some(Clock::tokio_at(at)),
            ..Options::default()
        })
        .await;
        let r = s
            .browser()
            .get(s.url(&path))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap();
        let want = if opens { 200 } else { 404 };
        assert_eq!(r.status(), want, "day {day}");
        if !opens {
            let r = s
                .browser()
                .get(s.url("/"))
                .header("cookie", &cookie)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "day {day}: the sign-in form");
            assert!(r.text().await.unwrap().contains("name=\"key\""));
        }
        dir = s.shutdown().await;
    }
}

#[tokio::test]
async fn names_tags_and_messages_render_as_text() {
    let s = TestServer::start().await;
    s.create(serde_json::json!({"name": "<script>alert(1)</script>", "tags": "<b>bold</b>"}))
        .await;
    let web = s.sign_in(&s.rw).await;
    let project = s
        .service
        .read(|st| st.project_by_name("default").unwrap().uuid);
    let (_, page) = web.get(&format!("/projects/{project}/checks/")).await;
    assert!(!page.contains("<script>alert(1)</script>"));
    assert!(!page.contains("<b>bold</b>"));
    assert!(page.contains("alert(1)"), "the name is shown, escaped");
    s.stop().await;
}

#[tokio::test]
async fn every_dashboard_response_carries_the_security_headers() {
    let s = TestServer::start().await;
    for path in [
        "/",
        "/signin/",
        "/static/dashboard.css",
        "/no/such/page/",
        "/static/nope",
    ] {
        let r = s.browser().get(s.url(path)).send().await.unwrap();
        if path == "/no/such/page/" {
            // Not a dashboard path: the API's 404.
            assert_eq!(r.status(), 404);
            continue;
        }
        let csp = r.headers()["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"));
        assert!(!csp.contains("unsafe-inline"));
        assert_eq!(r.headers()["x-content-type-options"], "nosniff");
        assert_eq!(r.headers()["referrer-policy"], "same-origin");
    }
    let r = s
        .browser()
        .get(s.url("/static/dashboard.css"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-encoding"], "gzip");
    s.stop().await;
}

#[tokio::test]
async fn a_site_root_with_a_path_prefixes_every_link_and_the_cookie() {
    let s = TestServer::start_with(Options {
        site_path: "/overdue",
        ..Options::default()
    })
    .await;
    // A proxy may pass the prefix on or strip it: both reach the page.
    for path in ["/overdue/", "/overdue", "/"] {
        let r = s.browser().get(s.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let page = r.text().await.unwrap();
        assert!(
            page.contains("href=\"/overdue/static/dashboard.css"),
            "{page}"
        );
        assert!(page.contains("action=\"/overdue/signin/\""));
    }
    let r = s
        .browser()
        .post(s.url("/overdue/signin/"))
        .form(&[("key", s.rw.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert!(
        r.headers()["location"]
            .to_str()
            .unwrap()
            .starts_with("/overdue/projects/")
    );
    assert!(
        r.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Path=/overdue;")
    );
    // The APIs answer under the prefix too.
    let r = s
        .rw(reqwest::Method::GET, "/overdue/api/v3/checks/")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    s.stop().await;
}

#[tokio::test]
async fn with_the_dashboard_off_only_the_apis_answer() {
    let s = TestServer::start_with(Options {
        api: ApiConfig {
            api_rate_limit: 0,
            dashboard: false,
            ..ApiConfig::default()
        },
        ..Options::default()
    })
    .await;
    for path in ["/", "/signin/", "/static/dashboard.css"] {
        let r = s.browser().get(s.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 404, "{path}");
    }
    assert_eq!(s.list().await.len(), 0);
    s.stop().await;
}

#[test]
fn the_csrf_field_is_found_in_a_page() {
    let page = r#"<form><input type="hidden" name="csrf" value="abc123"></form>"#;
    assert_eq!(csrf_of(page).as_deref(), Some("abc123"));
    assert_eq!(csrf_of("<p>none</p>"), None);
}
