//! The dashboard's checks page over HTTP: rows with their schedule, times and integrations,
//! filters and sorts from the query string, counts, the title and icon's down count, the rows
//! fragment of live updates, the new-check form validated as the API validates, read-only
//! sessions, and escaping.

use serde_json::json;

use crate::common::{TestServer, WebSession};

fn project(s: &TestServer) -> String {
    s.service
        .read(|st| st.project_by_name("default").expect("default").uuid)
        .to_string()
}

async fn checks_page(web: &WebSession<'_>, project: &str, query: &str) -> String {
    let (status, body) = web
        .get(&format!("/projects/{project}/checks/{query}"))
        .await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The tbody's rows (`<tr class="st-...">`), each as its markup.
fn rows(page: &str) -> Vec<&str> {
    let body = page
        .split("<tbody id=\"rows\">")
        .nth(1)
        .and_then(|b| b.split("</tbody>").next())
        .expect("a tbody of rows");
    body.split("<tr class=\"st-").skip(1).collect()
}

/// The name link's text of each row, in order.
fn names(page: &str) -> Vec<String> {
    rows(page)
        .iter()
        .map(|r| {
            let at = r.find("/\">").expect("a name link") + 3;
            r[at..].split("</a>").next().unwrap_or("").to_string()
        })
        .collect()
}

async fn ping(s: &TestServer, uuid: &str, tail: &str) {
    let r = s
        .http
        .get(s.url(&format!("/ping/{uuid}{tail}")))
        .send()
        .await
        .expect("ping");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn rows_show_status_schedule_times_tags_and_integrations() {
    let s = TestServer::start().await;
    let mail = s.mail_channel().await;
    let backup = s
        .create(
            json!({"name": "backup", "slug": "backup", "tags": "prod db",
                       "timeout": 3600, "grace": 300, "channels": mail.uuid.to_string()}),
        )
        .await;
    s.create(json!({"name": "nightly", "schedule": "30 2 * * *", "tz": "Europe/Riga"}))
        .await;
    let uuid = backup["uuid"].as_str().expect("uuid");
    ping(&s, uuid, "").await;
    let web = s.sign_in(&s.rw).await;
    let page = checks_page(&web, &project(&s), "").await;
    assert!(page.contains("class=\"checks responsive\""));
    let rows = rows(&page);
    assert_eq!(rows.len(), 2);
    let b = rows[0];
    assert!(b.starts_with("up\""), "{b}");
    assert!(
        b.contains("<span class=\"icon\" aria-hidden=\"true\"></span>up</span>"),
        "{b}"
    );
    assert!(b.contains(&format!(
        "href=\"/checks/{uuid}/\">backup</a> <code>backup</code>"
    )));
    assert!(b.contains("every 1 hour, 5 min grace"), "{b}");
    assert!(b.contains("<time datetime=\"20"), "{b}");
    assert!(b.contains(">just now</time>"), "{b}");
    assert!(
        b.contains("due <time datetime=") && b.contains(">in 1 hour</time>"),
        "{b}"
    );
    assert!(b.contains("ops mail"), "{b}");
    assert!(b.contains("href=\"?tag=prod\">prod</a>"), "{b}");
    for label in [
        "Status",
        "Name",
        "Tags",
        "Schedule",
        "Last ping",
        "Next",
        "Integrations",
    ] {
        assert!(b.contains(&format!("data-label=\"{label}\"")), "{label}");
    }
    let n = rows[1];
    assert!(n.starts_with("new\""));
    assert!(n.contains("30 2 * * * Europe/Riga"), "{n}");
    assert!(n.contains("never") && n.contains("after the first ping") && n.contains("none"));
    s.stop().await;
}

#[tokio::test]
async fn filters_sorts_and_counts_come_from_the_query_string() {
    let s = TestServer::start().await;
    let a = s.create(json!({"name": "beta", "tags": "prod"})).await;
    let b = s.create(json!({"name": "Alpha", "tags": "prod web"})).await;
    s.create(json!({"name": "gamma", "tags": "dev"})).await;
    ping(&s, a["uuid"].as_str().expect("uuid"), "/fail").await;
    ping(&s, b["uuid"].as_str().expect("uuid"), "").await;
    let web = s.sign_in(&s.rw).await;
    let p = project(&s);

    let all = checks_page(&web, &p, "").await;
    assert_eq!(names(&all), ["beta", "Alpha", "gamma"]);
    for count in ["1 down", "0 late", "1 up", "1 new", "0 paused"] {
        assert!(all.contains(&format!("</span>{count}</a>")), "{count}");
    }
    assert!(all.contains("data-down=\"1\""));
    // The title and the icon say how many are down.
    assert!(
        all.contains("<title>(1 down) Checks · Overdue</title>"),
        "title"
    );
    assert!(all.contains("/static/icon-1.svg?v="), "icon");

    let prod = checks_page(&web, &p, "?tag=prod").await;
    assert_eq!(names(&prod), ["beta", "Alpha"]);
    assert!(
        prod.contains("aria-current=\"true\">prod</a>"),
        "the active tag is marked"
    );
    assert!(
        prod.contains("href=\"?\" class=\"clear\""),
        "and can be cleared"
    );
    assert!(prod.contains("<input type=\"hidden\" name=\"tag\" value=\"prod\">"));
    assert!(
        prod.contains("</span>1 down</a>"),
        "counts are of every check"
    );

    assert_eq!(names(&checks_page(&web, &p, "?q=ALP").await), ["Alpha"]);
    assert_eq!(
        names(&checks_page(&web, &p, "?q=web").await),
        ["Alpha"],
        "tags too"
    );
    assert_eq!(
        names(&checks_page(&web, &p, "?tag=prod&q=bet").await),
        ["beta"]
    );
    assert_eq!(
        names(&checks_page(&web, &p, "?status=new").await),
        ["gamma"]
    );
    let down = checks_page(&web, &p, "?status=down").await;
    assert_eq!(names(&down), ["beta"]);
    assert!(
        down.contains("href=\"?\" aria-current=\"true\""),
        "the count toggles off"
    );

    let by_name = checks_page(&web, &p, "?sort=name").await;
    assert_eq!(names(&by_name), ["Alpha", "beta", "gamma"]);
    assert!(by_name.contains("<option value=\"name\" selected>"));
    assert_eq!(
        names(&checks_page(&web, &p, "?sort=status").await),
        ["beta", "gamma", "Alpha"]
    );
    assert_eq!(
        names(&checks_page(&web, &p, "?sort=last_ping").await),
        ["Alpha", "beta", "gamma"],
        "the newest ping first, never pinged last"
    );
    let none = checks_page(&web, &p, "?tag=nothing").await;
    assert!(names(&none).is_empty());
    assert!(none.contains("No checks match these filters."));
    s.stop().await;
}

#[tokio::test]
async fn the_rows_fragment_is_the_live_part_alone_with_the_same_filters() {
    let s = TestServer::start().await;
    let a = s.create(json!({"name": "one", "tags": "x"})).await;
    s.create(json!({"name": "two"})).await;
    let web = s.sign_in(&s.rw).await;
    let p = project(&s);
    let (status, frag) = web.get(&format!("/projects/{p}/checks/rows/?tag=x")).await;
    assert_eq!(status, 200);
    assert!(!frag.contains("<html") && !frag.contains("<form"), "{frag}");
    assert!(frag.contains("id=\"counts\" data-down=\"0\""));
    assert_eq!(names(&frag), ["one"]);
    // The page's rows and the fragment's come from one template.
    let page = checks_page(&web, &p, "?tag=x").await;
    let trimmed = |page: &str| {
        rows(page)
            .iter()
            .map(|r| r.trim().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(trimmed(&page), trimmed(&frag));
    ping(&s, a["uuid"].as_str().expect("uuid"), "/fail").await;
    let (_, frag) = web.get(&format!("/projects/{p}/checks/rows/")).await;
    assert!(frag.contains("data-down=\"1\""));
    assert_eq!(names(&frag), ["one", "two"]);
    assert!(rows(&frag)[0].starts_with("down\""));
    // Signed out: no rows.
    let r = s
        .browser()
        .get(s.url(&format!("/projects/{p}/checks/rows/")))
        .send()
        .await
        .expect("get");
    assert_eq!(r.status(), 404);
    s.stop().await;
}

#[tokio::test]
async fn the_new_check_form_creates_or_shows_the_apis_message_with_what_was_typed() {
    let s = TestServer::start().await;
    let web = s.sign_in(&s.rw).await;
    let p = project(&s);
    let page = checks_page(&web, &p, "").await;
    for field in [
        "name=\"name\"",
        "name=\"slug\"",
        "name=\"tags\"",
        "name=\"kind\"",
        "name=\"timeout\"",
        "name=\"grace\"",
        "name=\"schedule\"",
        "name=\"tz\"",
    ] {
        assert!(page.contains(field), "{field}");
    }
    assert!(
        page.contains("<datalist id=\"zones\">") && page.contains("<option value=\"Europe/Riga\">")
    );
    let add = format!("/projects/{p}/add_check/");

    let r = web
        .post(
            &add,
            &[
                ("name", "nightly"),
                ("slug", "nightly"),
                ("tags", "prod"),
                ("kind", "cron"),
                ("timeout", "86400"),
                ("grace", "600"),
                ("schedule", "30 2 * * *"),
                ("tz", "Europe/Riga"),
            ],
        )
        .await;
    assert_eq!(r.status(), 303);
    let to = r.headers()["location"]
        .to_str()
        .expect("location")
        .to_string();
    let uuid = to.trim_start_matches("/checks/").trim_end_matches('/');
    let made = s.get_check(uuid).await;
    assert_eq!(made["schedule"], "30 2 * * *");
    assert_eq!(made["tz"], "Europe/Riga");
    assert_eq!(made["grace"], 600);
    assert_eq!(made["tags"], "prod");

    let r = web
        .post(
            &add,
            &[
                ("name", "simple one"),
                ("kind", "simple"),
                ("timeout", "3600"),
                ("grace", "60"),
                ("schedule", "ignored"),
                ("tz", "UTC"),
            ],
        )
        .await;
    assert_eq!(r.status(), 303, "a simple check ignores the schedule field");

    // What the API says about the same mistake.
    let api = s
        .rw(reqwest::Method::POST, "/api/v3/checks/")
        .json(&json!({"name": "bad", "schedule": "61 * * * *"}))
        .send()
        .await
        .expect("api");
    assert_eq!(api.status(), 400);
    let api_error = api.json::<serde_json::Value>().await.expect("json")["error"]
        .as_str()
        .expect("message")
        .to_string();
    let r = web
        .post(
            &add,
            &[
                ("name", "bad <one>"),
                ("kind", "cron"),
                ("timeout", "86400"),
                ("grace", "3600"),
                ("schedule", "61 * * * *"),
                ("tz", "UTC"),
            ],
        )
        .await;
    assert_eq!(r.status(), 400);
    let body = r.text().await.expect("body");
    let shown = api_error.replace('"', "&#34;");
    assert!(
        body.contains(&format!("id=\"new-error\">{shown}</p>")),
        "{api_error} in {body}"
    );
    assert!(body.contains("role=\"alert\""));
    assert!(
        body.contains("value=\"bad &#60;one&#62;\""),
        "the name typed is kept, escaped"
    );
    assert!(
        body.contains("value=\"61 * * * *\""),
        "the schedule typed is kept"
    );
    assert!(
        body.contains("value=\"cron\" checked"),
        "the kind chosen is kept"
    );

    let r = web
        .post(
            &add,
            &[("name", "x"), ("kind", "simple"), ("timeout", "soon")],
        )
        .await;
    assert_eq!(r.status(), 400);
    assert!(r.text().await.expect("body").contains("timeout"));
    assert_eq!(s.list().await.len(), 2, "mistakes create nothing");
    s.stop().await;
}

#[tokio::test]
async fn read_only_sessions_see_no_uuids_and_no_form_and_cannot_post() {
    let s = TestServer::start().await;
    let c = s.create(json!({"name": "db", "tags": "prod"})).await;
    let uuid = c["uuid"].as_str().expect("uuid");
    let ro = s.sign_in(&s.ro).await;
    let p = project(&s);
    let page = checks_page(&ro, &p, "").await;
    assert!(!page.contains(uuid), "no check UUID");
    assert!(
        !page.contains("add_check") && !page.contains("name=\"timeout\""),
        "no form"
    );
    assert_eq!(names(&page), ["db"]);
    let (_, frag) = ro.get(&format!("/projects/{p}/checks/rows/")).await;
    assert!(!frag.contains(uuid));
    let r = ro
        .post(
            &format!("/projects/{p}/add_check/"),
            &[("name", "forged"), ("kind", "simple")],
        )
        .await;
    assert_eq!(r.status(), 403);
    assert_eq!(s.list().await.len(), 1, "nothing created");
    s.stop().await;
}

#[tokio::test]
async fn names_and_tags_render_as_text() {
    let s = TestServer::start().await;
    s.create(json!({"name": "<script>alert(1)</script>", "tags": "<b> ok"}))
        .await;
    let web = s.sign_in(&s.rw).await;
    let p = project(&s);
    for path in [
        format!("/projects/{p}/checks/"),
        format!("/projects/{p}/checks/rows/"),
    ] {
        let (_, page) = web.get(&path).await;
        assert!(!page.contains("<script>alert"), "{path}");
        assert!(!page.contains("<b>"), "{path}");
        assert!(page.contains("alert(1)"), "the name is shown");
        assert!(page.contains("?tag=%3Cb%3E"), "the tag's link is encoded");
    }
    s.stop().await;
}
