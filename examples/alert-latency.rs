//! Alert latency: from a fail ping sent over HTTP to a webhook receiver getting the alert.
//! Everything runs in this process on 127.0.0.1: the real service on a temporary data
//! directory (real fsyncs), the real HTTP server, the delivery worker, and a warp server as
//! the webhook receiver. Alerts are sent one at a time (latency, not throughput): for each of
//! N checks, the clock starts before the fail ping is sent and stops when the receiver has
//! the request for that check.
//!
//! ```sh
//! cargo run --release --example alert-latency -- 100
//! RULES=1 cargo run --release --example alert-latency -- 100   # a quiet window and a parent each
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use overdue::api::{ApiConfig, App};
use overdue::model::ChannelConfig;
use overdue::model::channel::{HookSpec, WebhookConfig};
use overdue::service::{Clock, Service, ServiceConfig};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use warp::Filter;

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let alerts: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(100);

    // The webhook receiver: reports each request's path the moment it arrives.
    let (tx, mut rx) = mpsc::unbounded_channel::<(String, Instant)>();
    let receiver = warp::path::full().map(move |p: warp::path::FullPath| {
        let _ = tx.send((p.as_str().to_string(), Instant::now()));
        "ok"
    });
    let hook_listener = TcpListener::bind("127.0.0.1:0").await?;
    let hook_base = format!("http://{}", hook_listener.local_addr()?);
    tokio::spawn(warp::serve(receiver).incoming(hook_listener).run());

    // The service, its HTTP server and the delivery worker.
    let dir = tempfile::tempdir()?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let config = ServiceConfig {
        site_root: Some(base.clone()),
        ..ServiceConfig::default()
    };
    let service = Arc::new(Service::open(dir.path(), config, Clock::System)?);
    service.ensure_default_project().await?;
    let _monitor = overdue::monitor::start(service.clone());
    let _worker = overdue::notify::worker::start(service.clone())?;
    let app = Arc::new(App::new(
        service.clone(),
        ApiConfig {
            api_rate_limit: 0,
            ..Default::default()
        },
    ));
    tokio::spawn(overdue::server::run(
        listener,
        app,
        overdue::server::Limits::default(),
        std::future::pending(),
        Duration::from_secs(1),
    ));
    service
        .add_channel(
            "default",
            "hook",
            ChannelConfig::Webhook(WebhookConfig {
                down: Some(HookSpec::new(&format!("{hook_base}/$CODE"), "")),
                up: None,
            }),
        )
        .await?;
    let project = service.read(|s| s.project_by_name("default").map(|p| p.uuid));
    let project = project.ok_or("no default project")?;
    let mut checks = Vec::new();
    let create = |body: serde_json::Value| {
        let service = service.clone();
        async move {
            let body = body.as_object().ok_or("not an object")?.clone();
            let spec = overdue::model::spec::parse_spec(&body)?;
            let (check, _) = service
                .create_check(project, spec, overdue::model::ApiVersion::V3)
                .await?;
            Ok::<_, Box<dyn std::error::Error>>(check.uuid)
        }
    };
    // A parent that stays new (never down): every alert asks whether it is down.
    let parent = create(serde_json::json!({"name": "parent"})).await?;
    for i in 0..alerts {
        let mut body = serde_json::json!({"name": format!("check {i}"), "channels": "*"});
        if rules() {
            // Closed all run long (New Year's Day), but every alert asks whether it is open.
            body["quiet_schedule"] = "0 3 1 1 *".into();
            body["quiet_duration"] = 3600.into();
            body["parents"] = parent.to_string().into();
        }
        checks.push(create(body).await?);
    }

    overdue::tls::install_provider();
    let http = reqwest::Client::new();
    let mut latencies = Vec::with_capacity(alerts);
    for uuid in &checks {
        let started = Instant::now();
        let r = http.post(format!("{base}/ping/{uuid}/fail")).send().await?;
        if !r.status().is_success() {
            return Err(format!("ping answered {}", r.status()).into());
        }
        let want = format!("/{uuid}");
        loop {
            let (path, at) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await?
                .ok_or("receiver stopped")?;
            if path == want {
                latencies.push(at - started);
                break;
            }
        }
    }
    latencies.sort();
    let pct = |p: f64| {
        // Nearest rank.
        let rank = ((p / 100.0) * latencies.len() as f64).ceil() as usize;
        latencies[rank.clamp(1, latencies.len()) - 1]
    };
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "alerts: {}  median: {:.2} ms  p99: {:.2} ms  min: {:.2} ms  max: {:.2} ms",
        latencies.len(),
        ms(pct(50.0)),
        ms(pct(99.0)),
        ms(latencies[0]),
        ms(latencies[latencies.len() - 1])
    );
    Ok(())
}

/// `RULES=1`: every check carries a quiet window (closed during the run) and a parent (that
/// is never down), to measure what the rules cost on the alert path.
fn rules() -> bool {
    std::env::var("RULES").is_ok_and(|v| v == "1")
}
