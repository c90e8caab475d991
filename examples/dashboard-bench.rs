//! The dashboard's checks page at scale (docs/benchmarks.md, "Dashboard").
//!
//! `cargo run --release --example dashboard-bench -- [CHECKS] [RENDERS]` starts the server in a
//! temporary directory with CHECKS checks (1,000) shaped like a real project (most up and
//! pinged, some cron, late, down, paused or new; tags; two integrations each), signs in through
//! the form, GETs the checks page RENDERS
//! times (200) over HTTP on loopback one after another and prints the p50/p99 of the round
//! trip (the server's time plus loopback), then the page's size, gzip-compressed as served and
//! uncompressed, with the stylesheet and script beside it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::SignedDuration;
use overdue::api::{ApiConfig, App};
use overdue::model::{ChannelConfig, Check, Kind, StoredStatus};
use overdue::schedule::Schedule;
use overdue::service::{Clock, Service, ServiceConfig};
use tokio::net::TcpListener;
use uuid::Uuid;

const TAGS: &[&str] = &[
    "prod", "staging", "db", "backup", "web", "batch", "eu", "us",
];

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Creates `n` checks in `project`, assigned to `channels`.
async fn populate(service: &Service, project: Uuid, n: usize, channels: Vec<Uuid>) {
    let nightly = Arc::new(Schedule::parse("30 2 * * *", "Europe/Riga").expect("cron"));
    service
        .write(move |ctx| {
            let now = ctx.now;
            for i in 0..n {
                let seq = ctx.state.next_seq();
                let mut c = Check::new(Uuid::new_v4(), project, seq, now, Uuid::new_v4());
                c.name = format!("{} job {i}", TAGS[i % TAGS.len()]);
                c.slug = format!("job-{i}");
                c.tags = format!("{} {}", TAGS[i % TAGS.len()], TAGS[(i / 3) % TAGS.len()]);
                c.channels.clone_from(&channels);
                c.timeout = 3600;
                c.grace = 300;
                c.status = StoredStatus::Up;
                let ago = |secs: i64| now - SignedDuration::from_secs(secs);
                c.last_ping = Some(ago(60 + (i as i64 * 7) % 3000));
                c.n_pings = 100;
                match i % 20 {
                    0 | 1 => {
                        c.kind = Kind::Cron;
                        c.schedule = "30 2 * * *".into();
                        c.tz = "Europe/Riga".into();
                        c.compiled = Some(nightly.clone());
                    }
                    2 => c.last_ping = Some(ago(3700)), // late
                    3 => c.status = StoredStatus::Down,
                    4 => c.status = StoredStatus::Paused,
                    5 => {
                        c.status = StoredStatus::New;
                        c.last_ping = None;
                        c.n_pings = 0;
                    }
                    _ => {}
                }
                ctx.txn.put_check(&c, None)?;
                ctx.state.put_check(c);
            }
            Ok(())
        })
        .await
        .expect("populate");
}

async fn get(
    http: &reqwest::Client,
    url: &str,
    cookie: &str,
    gzip: bool,
) -> (Duration, usize, bool) {
    let started = Instant::now();
    let mut req = http.get(url).header("cookie", cookie);
    if gzip {
        req = req.header("accept-encoding", "gzip");
    }
    let r = req.send().await.expect("get");
    assert!(r.status().is_success(), "{url}: {}", r.status());
    let encoded = r.headers().contains_key("content-encoding");
    let len = r.bytes().await.expect("body").len();
    (started.elapsed(), len, encoded)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let renders: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(200);
    overdue::tls::install_provider();
    let dir = tempfile::tempdir().expect("dir");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let config = ServiceConfig {
        site_root: Some(base.clone()),
        ..ServiceConfig::default()
    };
    let service = Arc::new(Service::open(dir.path(), config, Clock::System).expect("open"));
    let (project, rw, _) = service
        .ensure_default_project()
        .await
        .expect("project")
        .expect("a new store");
    let mut channels = Vec::new();
    for (name, config) in [
        (
            "ops mail",
            ChannelConfig::Email {
                address: "ops@example.org".into(),
            },
        ),
        (
            "chat hook",
            ChannelConfig::webhook("https://chat.example/hook"),
        ),
    ] {
        let ch = service
            .add_channel("default", name, config)
            .await
            .expect("channel");
        channels.push(ch.uuid);
    }
    populate(&service, project.uuid, n, channels).await;
    let app = Arc::new(App::new(service.clone(), ApiConfig::default()));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(overdue::server::run(
        listener,
        app,
        overdue::server::Limits::default(),
        async move {
            let _ = stopped.await;
        },
        Duration::from_secs(5),
    ));

    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    // Signs in through the form, as a browser does.
    let signed = http
        .post(format!("{base}/signin/"))
        .form(&[("key", rw.plaintext.as_str())])
        .send()
        .await
        .expect("sign in");
    let cookie = signed
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("a session cookie")
        .to_string();
    let page = format!("{base}/projects/{}/checks/", project.uuid);
    for _ in 0..10 {
        get(&http, &page, &cookie, true).await;
    }
    let mut times = Vec::with_capacity(renders);
    let mut compressed = 0;
    for _ in 0..renders {
        let (t, len, encoded) = get(&http, &page, &cookie, true).await;
        assert!(encoded, "the page is served gzip-compressed");
        times.push(t.as_secs_f64() * 1000.0);
        compressed = len;
    }
    times.sort_by(f64::total_cmp);
    let (_, plain, _) = get(&http, &page, &cookie, false).await;
    let mut assets = Vec::new();
    for name in ["dashboard.css", "dashboard.js"] {
        let url = format!("{base}/static/{name}");
        let (_, gz, _) = get(&http, &url, &cookie, true).await;
        let (_, raw, _) = get(&http, &url, &cookie, false).await;
        assets.push((name, gz, raw));
    }
    let rows = format!("{base}/projects/{}/checks/rows/", project.uuid);
    let mut frag_times = Vec::with_capacity(renders);
    let mut frag = 0;
    for _ in 0..renders {
        let (t, len, _) = get(&http, &rows, &cookie, true).await;
        frag_times.push(t.as_secs_f64() * 1000.0);
        frag = len;
    }
    frag_times.sort_by(f64::total_cmp);

    println!("checks page, {n} checks, {renders} renders over HTTP (loopback), gzip:");
    println!(
        "  time per page: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times[times.len() - 1]
    );
    let kib = |b: usize| b as f64 / 1024.0;
    println!(
        "  page: {:.1} KiB gzip, {:.1} KiB uncompressed",
        kib(compressed),
        kib(plain)
    );
    let mut total = compressed;
    for (name, gz, raw) in &assets {
        println!(
            "  {name}: {:.1} KiB gzip, {:.1} KiB uncompressed",
            kib(*gz),
            kib(*raw)
        );
        total += gz;
    }
    println!("  HTML + CSS + JS: {:.1} KiB gzip", kib(total));
    println!(
        "rows fragment (live updates): p50 {:.2} ms, p99 {:.2} ms, {:.1} KiB gzip",
        percentile(&frag_times, 0.5),
        percentile(&frag_times, 0.99),
        kib(frag)
    );
    let _ = stop.send(());
    let _ = server.await;
}
