//! The delivery worker: reads the durable outbox, delivers each alert through its channel's
//! notifier, and records every attempt (status, error, duration) in the store. Success (or
//! the last failed try) removes the entry in the same transaction as its record, so an alert
//! that was delivered is never sent again after a restart; a failed try stores when to try
//! next (`outbox_tries`), so retries survive restarts too.
//!
//! It is woken right after the writer commits new alerts (no polling); timers only wait for
//! the next retry or repeat. At most `in_flight` deliveries run at once, and at most
//! [`DELIVERIES_IN_FLIGHT_PER_CHANNEL`] per channel, each with a deadline, so a slow or dead
//! channel never holds up the others.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use tokio::task::JoinSet;
use uuid::Uuid;

use crate::model::json::{Urls, check_json};
use crate::model::limits::DELIVERIES_IN_FLIGHT_PER_CHANNEL;
use crate::model::outbox::{REPEAT_REASON, retry_at};
use crate::model::{ApiVersion, Channel, Check, Delivery, Kind, OutboxEntry};
use crate::notify::message::{LastPing, Message, Notice};
use crate::notify::transport::{Attempt, TransportError};
use crate::notify::{NotifyError, Transports, notifier};
use crate::service::reads::PingWithBody;
use crate::service::{Service, ServiceError};

/// Longest sleep when nothing is scheduled: a stepped wall clock is noticed this often.
pub(crate) const MAX_SLEEP: Duration = Duration::from_secs(60);
/// Pings read back to find the last one at or before a flip.
const PINGS_SCANNED: usize = 64;
/// Name shown in messages.
pub(crate) const SITE_NAME: &str = "overdue";

/// Starts the worker on `service` (its transports are built from the service's settings).
pub fn start(service: Arc<Service>) -> Result<tokio::task::JoinHandle<()>, TransportError> {
    let worker = prepare(service)?;
    Ok(tokio::spawn(worker.run(std::future::pending())))
}

/// How long a stopping worker waits for the deliveries under way.
const STOP_DRAIN: Duration = Duration::from_secs(5);

/// A worker ready to run: its transports are built.
pub(crate) struct Worker {
    service: Arc<Service>,
    transports: Arc<Transports>,
}

/// Builds the worker's transports from the service's settings.
pub(crate) fn prepare(service: Arc<Service>) -> Result<Worker, TransportError> {
    let transports = Arc::new(Transports::new(&service.config().notify)?);
    Ok(Worker {
        service,
        transports,
    })
}

impl Worker {
    /// Delivers until `stop` resolves; then gives the deliveries under way up to
    /// [`STOP_DRAIN`] to finish and record their outcome, and cuts the rest short (an attempt
    /// cut short leaves its entry in the outbox, tried again at the next start: a receiver
    /// that had answered it hears it twice, so a clean stop avoids that where it can).
    pub(crate) async fn run(self, stop: impl std::future::Future<Output = ()>) {
        let mut stop = std::pin::pin!(stop);
        let mut running: JoinSet<(u64, Uuid)> = JoinSet::new();
        tokio::select! {
            () = run(self.service, self.transports, &mut running) => {}
            () = &mut stop => {}
        }
        let drain = async { while running.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(STOP_DRAIN, drain).await;
        running.shutdown().await;
    }
}

async fn run(
    service: Arc<Service>,
    transports: Arc<Transports>,
    running: &mut JoinSet<(u64, Uuid)>,
) {
    let limit = service.config().notify.in_flight.max(1);
    let mut in_flight: HashSet<u64> = HashSet::new();
    let mut per_channel: HashMap<Uuid, usize> = HashMap::new();
    loop {
        let now = service.now();
        let mut wake: Option<Timestamp> = None;
        if service.storage_health().is_failing() {
            // The writer logged why, and signals this loop once the file takes writes again.
            wake = Some(now + SignedDuration::from_secs(1));
        } else {
            queue_and_start(
                &service,
                &transports,
                now,
                &mut wake,
                (&mut *running, &mut in_flight, &mut per_channel),
                limit,
            )
            .await;
        }
        let sleep = wake.map_or(MAX_SLEEP, |at| {
            Duration::try_from(at.duration_since(now))
                .unwrap_or(Duration::ZERO)
                .min(MAX_SLEEP)
        });
        tokio::select! {
            () = service.alerts_signal().notified() => {}
            Some(done) = running.join_next(), if !running.is_empty() => {
                let mut finish = |r: Result<(u64, Uuid), tokio::task::JoinError>| match r {
                    Ok((seq, channel)) => {
                        in_flight.remove(&seq);
                        if let Some(n) = per_channel.get_mut(&channel) {
                            *n = n.saturating_sub(1);
                        }
                    }
                    // A panicked delivery is a bug; its entry stays queued, but the slot
                    // accounting cannot know which: start over from the store.
                    Err(e) => {
                        tracing::error!("a delivery task failed: {e}");
                    }
                };
                finish(done);
                while let Some(more) = running.try_join_next() {
                    finish(more);
                }
                if running.is_empty() {
                    in_flight.clear();
                    per_channel.clear();
                }
            }
            () = tokio::time::sleep(sleep) => {}
        }
    }
}

/// Slots of deliveries under way: the tasks, their outbox entries, and how many per channel.
type Running<'a> = (
    &'a mut JoinSet<(u64, Uuid)>,
    &'a mut HashSet<u64>,
    &'a mut HashMap<Uuid, usize>,
);

/// Queues due repeats and starts every due outbox entry there is a slot for; lowers `wake`
/// to when the next one is due.
async fn queue_and_start(
    service: &Arc<Service>,
    transports: &Arc<Transports>,
    now: Timestamp,
    wake: &mut Option<Timestamp>,
    (running, in_flight, per_channel): Running<'_>,
    limit: usize,
) {
    match queue_due_repeats(service, now).await {
        Ok(next) => *wake = earliest(*wake, next),
        Err(e) => tracing::error!("cannot queue repeat alerts: {e}"),
    }
    match service.outbox_pending() {
        Err(e) => {
            tracing::error!("cannot read the outbox: {e}");
            *wake = earliest(*wake, Some(now + SignedDuration::from_secs(1)));
        }
        Ok(pending) => {
            for (entry, tries) in pending {
                if in_flight.contains(&entry.seq) {
                    continue;
                }
                let due = tries.map_or(entry.queued, |t| t.next);
                if due > now {
                    *wake = earliest(*wake, Some(due));
                    continue;
                }
                let busy = per_channel.get(&entry.channel).copied().unwrap_or(0);
                // Full: a finishing delivery wakes the loop again.
                if running.len() >= limit || busy >= DELIVERIES_IN_FLIGHT_PER_CHANNEL {
                    continue;
                }
                in_flight.insert(entry.seq);
                *per_channel.entry(entry.channel).or_default() += 1;
                let (service, transports) = (service.clone(), transports.clone());
                let done = tries.map_or(0, |t| t.done);
                running.spawn(async move {
                    let key = (entry.seq, entry.channel);
                    deliver(&service, &transports, entry, done).await;
                    key
                });
            }
        }
    }
}

fn earliest(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Queues the repeat alerts that are due; answers when the next one is.
async fn queue_due_repeats(
    service: &Service,
    now: Timestamp,
) -> Result<Option<Timestamp>, ServiceError> {
    let repeats = service.repeats()?;
    let due: Vec<(Uuid, Uuid)> = repeats
        .iter()
        .filter(|r| r.due <= now)
        .map(|r| (r.check, r.channel))
        .collect();
    let next = repeats.iter().map(|r| r.due).filter(|&at| at > now).min();
    if !due.is_empty() {
        service.queue_repeats(due).await?;
    }
    Ok(next)
}

/// One attempt at one entry, recorded.
async fn deliver(service: &Service, transports: &Transports, entry: OutboxEntry, done: u32) {
    let seq = entry.seq;
    let Some((channel, message)) = prepare_message(service, &entry).await else {
        // The check or the channel was removed after the alert was queued.
        tracing::info!(seq, channel = %entry.channel, check = %entry.check, "alert dropped: its check or channel no longer exists");
        if let Err(e) = service.drop_alert(seq).await {
            tracing::error!(seq, "cannot drop the alert: {e}");
        }
        return;
    };
    let attempt_no = done + 1;
    let started = Instant::now();
    let attempt = match notifier(&channel.config).and_then(|n| n.prepare(&message)) {
        Ok(out) => transports.send(&out).await,
        Err(NotifyError::Skip) => {
            // Nothing to send for this direction (e.g. a webhook without an up URL).
            let _ = service.drop_alert(seq).await;
            return;
        }
        Err(e) => Attempt {
            code: None,
            error: e.to_string(),
        },
    };
    let duration = SignedDuration::try_from(started.elapsed()).unwrap_or(SignedDuration::MAX);
    let now = service.now();
    let delays = &service.config().notify.retry_delays;
    let next = (!attempt.is_ok())
        .then(|| retry_at(attempt_no, now, delays))
        .flatten();
    let delivery = Delivery {
        channel: channel.uuid,
        outbox_seq: seq,
        check: Some(entry.check),
        at: now,
        duration,
        attempt: attempt_no,
        code: attempt.code,
        error: attempt.error.clone(),
        gave_up: !attempt.is_ok() && next.is_none(),
    };
    log_delivery(&channel, &message, &delivery, next);
    service.metrics().record_delivery(delivery.ok());
    if let Err(e) = service.record_delivery(delivery, next).await {
        tracing::error!(seq, "cannot record a delivery attempt: {e}");
    }
}

fn log_delivery(channel: &Channel, msg: &Message, d: &Delivery, next: Option<Timestamp>) {
    let ms = d.duration.as_millis();
    if d.ok() {
        tracing::info!(
            channel = %channel.name, kind = channel.kind(), check = %msg.display_name(),
            event = msg.status(), attempt = d.attempt, code = d.code,
            "alert delivered in {ms} ms"
        );
    } else if let Some(next) = next {
        tracing::warn!(
            channel = %channel.name, kind = channel.kind(), check = %msg.display_name(),
            event = msg.status(), attempt = d.attempt, code = d.code,
            "alert delivery failed in {ms} ms: {}; next try at {next}", d.error
        );
    } else {
        tracing::error!(
            channel = %channel.name, kind = channel.kind(), check = %msg.display_name(),
            event = msg.status(), attempt = d.attempt, code = d.code,
            "alert delivery failed in {ms} ms: {}; giving up", d.error
        );
    }
}

/// The channel and the message of an entry; None when either is gone.
async fn prepare_message(service: &Service, entry: &OutboxEntry) -> Option<(Channel, Message)> {
    let (channel, check, project) = service.read(|s| {
        let channel = s.channel(&entry.channel)?.clone();
        let check = s.check(&entry.check)?.clone();
        let project = s
            .project(&check.project)
            .map(|p| p.name.clone())
            .unwrap_or_default();
        Some((channel, check, project))
    })?;
    let last_ping = match last_ping(service, &check, entry.flip_created).await {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(check = %check.uuid, "cannot read the last ping for an alert: {e}");
            None
        }
    };
    let notice = Notice::Alert(entry.event());
    let mut msg = message_for(service, &check, &project, notice, entry.flip_created);
    msg.id = entry.seq.to_string();
    msg.reason.clone_from(&entry.reason);
    msg.repeat = entry.reason == REPEAT_REASON;
    msg.last_ping = last_ping;
    Some((channel, msg))
}

/// The newest ping at or before `at`, with its body.
async fn last_ping(
    service: &Service,
    check: &Check,
    at: Timestamp,
) -> Result<Option<LastPing>, ServiceError> {
    if check.n_pings == 0 {
        return Ok(None);
    }
    let Some(PingWithBody { ping, body }) = service
        .ping_at_or_before(check.uuid, at, PINGS_SCANNED)
        .await?
    else {
        return Ok(None);
    };
    let body = String::from_utf8_lossy(&body).into_owned();
    Ok(Some(LastPing {
        at: ping.created,
        kind: ping.kind,
        exit_status: ping.exit_status,
        remote_addr: ping.remote_addr,
        body,
    }))
}

/// A message about `check` (without id, reason or last ping).
pub(crate) fn message_for(
    service: &Service,
    check: &Check,
    project: &str,
    notice: Notice,
    at: Timestamp,
) -> Message {
    let now = service.now();
    let urls = Urls {
        site_root: service.site_root(),
        version: ApiVersion::V3,
    };
    Message {
        id: String::new(),
        notice,
        repeat: false,
        reason: String::new(),
        at,
        now,
        site_name: SITE_NAME.to_string(),
        link: crate::model::outbox::check_link(
            service.site_root(),
            &check.uuid,
            service.config().notify.dashboard,
        ),
        project: project.to_string(),
        check: check.uuid,
        name: check.name.clone(),
        slug: check.slug.clone(),
        tags: check.tags.clone(),
        desc: check.desc.clone(),
        schedule: schedule_lines(check),
        n_pings: check.n_pings,
        check_created: check.created,
        last_ping: None,
        check_json: check_json(check, now, urls, false).to_string(),
    }
}

/// `Period: 1 day`, or the schedule and its time zone (§8.3 Details).
pub(crate) fn schedule_lines(check: &Check) -> Vec<String> {
    match check.kind {
        Kind::Simple => vec![format!("Period: {}", period(check.timeout))],
        Kind::Cron | Kind::OnCalendar => vec![
            format!("Schedule: {}", check.schedule),
            format!("Time zone: {}", check.tz),
        ],
    }
}

/// `1 day`, `2 hours 30 minutes`, `90 seconds`-style rendering of a period in seconds.
pub(crate) fn period(secs: i64) -> String {
    let mut parts = Vec::new();
    let mut rest = secs.max(0);
    for (unit, size) in [
        ("week", 604_800),
        ("day", 86_400),
        ("hour", 3_600),
        ("minute", 60),
    ] {
        let n = rest / size;
        if n > 0 {
            parts.push(format!("{n} {unit}{}", if n == 1 { "" } else { "s" }));
            rest %= size;
        }
    }
    if rest > 0 || parts.is_empty() {
        parts.push(format!("{rest} second{}", if rest == 1 { "" } else { "s" }));
    }
    parts.join(" ")
}

/// Sends a test notification through `channel` now (no outbox, no retries) and records the
/// attempt like any other.
pub(crate) async fn send_test(
    service: &Service,
    transports: &Transports,
    channel: &Channel,
) -> Result<Delivery, ServiceError> {
    let now = service.now();
    let mut check = Check::new(Uuid::nil(), channel.project, 0, now, Uuid::nil());
    check.name = "Test check".into();
    check.slug = "test-check".into();
    let project = service
        .read(|s| s.project(&channel.project).map(|p| p.name.clone()))
        .unwrap_or_default();
    let mut msg = message_for(service, &check, &project, Notice::Test, now);
    msg.id = format!("test-{}", now.as_microsecond());
    let started = Instant::now();
    let attempt = match notifier(&channel.config).and_then(|n| n.prepare(&msg)) {
        Ok(out) => transports.send(&out).await,
        Err(e) => Attempt {
            code: None,
            error: e.to_string(),
        },
    };
    let delivery = Delivery {
        channel: channel.uuid,
        outbox_seq: 0,
        check: None,
        at: service.now(),
        duration: SignedDuration::try_from(started.elapsed()).unwrap_or(SignedDuration::MAX),
        attempt: 1,
        code: attempt.code,
        error: attempt.error,
        gave_up: false,
    };
    log_delivery(channel, &msg, &delivery, None);
    service.record_test_delivery(delivery.clone()).await?;
    Ok(delivery)
}

#[cfg(test)]
mod tests {
    use super::period;

    #[test]
    fn periods_read_like_the_reference() {
        assert_eq!(period(86_400), "1 day");
        assert_eq!(period(9_000), "2 hours 30 minutes");
        assert_eq!(period(90), "1 minute 30 seconds");
        assert_eq!(period(1_209_600), "2 weeks");
        assert_eq!(period(0), "0 seconds");
    }
}
