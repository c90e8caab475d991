//! Recording a flip: the flip itself and, when it notifies, one outbox entry per channel
//! assigned to the check, all in the caller's transaction. Channels with a repeat interval
//! also get a `repeats` row while the check stays down; [`queue_repeats`] turns due rows
//! into outbox entries. Alerts that quiet time (a snooze, the check's or its project's quiet
//! window) or a down parent holds are kept and released here too. Every flip passes here,
//! so this is also where the one info-level log line per state change is written, and the
//! warning when a check goes down with no channel.

use std::sync::Arc;

use uuid::Uuid;

use crate::model::check::HeldAlert;
use crate::model::events::{self, Event, Events};
use crate::model::outbox::REPEAT_REASON;
use crate::model::ping::{time_out, turn_late};
use crate::model::quiet::QuietSpec;
use crate::model::snooze::{self, Around};
use crate::model::{Check, Flip, OutboxEntry, Project, StoredStatus};
use crate::service::{Service, ServiceError, WriteCtx};

/// Writes `flip` and queues its alerts. The check must already carry its new status.
pub(crate) fn record_flip(ctx: &mut WriteCtx<'_>, flip: &Flip) -> Result<(), ServiceError> {
    ctx.txn.put_flip(flip)?;
    if flip.old_status == StoredStatus::Down && flip.new_status != StoredStatus::Down {
        release_children(ctx, flip.check)?;
    }
    let (name, channels) = ctx
        .state
        .check(&flip.check)
        .map(|c| (c.name.clone(), c.channels.clone()))
        .unwrap_or_default();
    tracing::info!(
        check = %flip.check,
        name = %name,
        from = flip.old_status.as_str(),
        to = flip.new_status.as_str(),
        reason = %flip.reason,
        at = %flip.created,
        "check is {}",
        flip.new_status.as_str()
    );
    if !flip.notifies() {
        return Ok(());
    }
    let now = ctx.now;
    let around = ctx
        .state
        .check(&flip.check)
        .map(|c| around(ctx.state, c))
        .unwrap_or_default();
    if let Some(check) = ctx
        .state
        .check_mut(&flip.check)
        .filter(|c| snooze::holds(c, flip, now, &around))
    {
        snooze::hold(check, flip, now, &around);
        ctx.txn.put_check(check, Some(&check.slug))?;
        tracing::info!(
            check = %flip.check,
            name = %name,
            "check is quiet or a parent is down: its alert is held"
        );
        return Ok(());
    }
    queue_alert(ctx, flip, &name, channels)
}

/// Queues the alert of `flip` (or of a snooze's held alert, which has the same shape) to
/// each of `channels`, with repeat rows for channels that repeat.
fn queue_alert(
    ctx: &mut WriteCtx<'_>,
    flip: &Flip,
    name: &str,
    channels: Vec<Uuid>,
) -> Result<(), ServiceError> {
    if flip.new_status == StoredStatus::Down && channels.is_empty() {
        // The one place a silent failure can still be seen: nobody gets an alert.
        tracing::warn!(
            check = %flip.check,
            name = %name,
            "check is down and has no integrations: nobody is alerted \
             (assign one with the API's `channels` or `overdue channel add`)"
        );
    }
    ctx.alerts_queued();
    let event = match flip.new_status {
        StoredStatus::Down => Event::Down,
        _ => Event::Up,
    };
    for channel in channels {
        if !sends(ctx.state, flip.check, channel, event) {
            // Not this channel's event; a recovery still ends the repeats of a down alert.
            if event == Event::Up {
                ctx.txn.delete_repeat(flip.check, channel)?;
            }
            continue;
        }
        // Repeats (off unless the channel sets an interval) run from this alert while the
        // check stays down; recovery ends them.
        let repeat = ctx.state.channel(&channel).and_then(|c| c.repeat);
        match (flip.new_status, repeat) {
            (StoredStatus::Down, Some(every)) => {
                let due = ctx.now.checked_add(every).unwrap_or(ctx.now);
                ctx.txn
                    .put_repeat(flip.check, channel, due.as_microsecond())?;
            }
            _ => ctx.txn.delete_repeat(flip.check, channel)?,
        }
        put_entry(ctx, channel, flip)?;
    }
    Ok(())
}

/// Writes the outbox entry that tells `channel` about `flip` (or about a notice or a repeat,
/// which have a flip's shape).
fn put_entry(ctx: &mut WriteCtx<'_>, channel: Uuid, flip: &Flip) -> Result<(), ServiceError> {
    let entry = OutboxEntry {
        seq: ctx.state.next_outbox_seq(),
        channel,
        check: flip.check,
        flip_created: flip.created,
        old_status: flip.old_status,
        new_status: flip.new_status,
        reason: flip.reason.clone(),
        queued: ctx.now,
    };
    ctx.txn.put_outbox(&entry)?;
    Ok(())
}

/// Whether `channel` sends `event` for `check`: the check's choice for it, else the
/// channel's own set (`model::events`).
fn sends(state: &crate::service::state::State, check: Uuid, channel: Uuid, event: Event) -> bool {
    let default = state
        .channel(&channel)
        .map_or_else(Events::default, |c| c.events);
    let overrides = state
        .check(&check)
        .map_or(&[][..], |c| &c.channel_events[..]);
    events::for_channel(overrides, channel, default).contains(event)
}

/// Queues a `late` or `failure` notice about `check` (at `at`) to each of its channels that
/// sends that event; answers whether any channel sends it. Quiet time drops the notice (it
/// reports no change of state, so nothing is owed once the quiet time ends); a down parent
/// does not.
pub(crate) fn queue_notice(
    ctx: &mut WriteCtx<'_>,
    check: Uuid,
    event: Event,
    at: jiff::Timestamp,
) -> Result<bool, ServiceError> {
    let Some(c) = ctx.state.check(&check) else {
        return Ok(false);
    };
    let channels: Vec<Uuid> = c
        .channels
        .iter()
        .copied()
        .filter(|ch| sends(ctx.state, check, *ch, event))
        .collect();
    if channels.is_empty() {
        return Ok(false);
    }
    if snooze::is_quiet(c, &around(ctx.state, c), ctx.now) {
        return Ok(true);
    }
    tracing::info!(check = %check, name = %c.name, "check is {}: a notice is queued", event.as_str());
    ctx.alerts_queued();
    // Shaped as a flip that changes nothing, the event named by its reason.
    let notice = Flip {
        check,
        created: at,
        old_status: StoredStatus::Up,
        new_status: StoredStatus::Up,
        reason: event.as_str().to_string(),
    };
    for channel in channels {
        put_entry(ctx, channel, &notice)?;
    }
    Ok(true)
}

/// Queues a repeat alert for each due (check, channel) whose check is still down and still
/// assigned to the channel, and schedules the next; drops the others' repeat rows.
pub(crate) fn queue_repeats(
    ctx: &mut WriteCtx<'_>,
    due: &[(Uuid, Uuid)],
) -> Result<(), ServiceError> {
    let now_us = ctx.now.as_microsecond();
    for &(check, channel) in due {
        // Rescheduled meanwhile (a new down flip): not due any more.
        match ctx.txn.repeat_due(check, channel)? {
            Some(at) if at <= now_us => {}
            _ => continue,
        }
        let every = ctx.state.channel(&channel).and_then(|c| c.repeat);
        let (still_down, snoozed) = ctx.state.check(&check).map_or((false, false), |c| {
            (
                c.status == StoredStatus::Down
                    && c.channels.contains(&channel)
                    && sends(ctx.state, check, channel, Event::Down),
                snooze::is_quiet(c, &around(ctx.state, c), ctx.now),
            )
        });
        let Some(every) = every.filter(|_| still_down) else {
            ctx.txn.delete_repeat(check, channel)?;
            continue;
        };
        let next = ctx.now.checked_add(every).unwrap_or(ctx.now);
        if snoozed {
            // Held like every alert of a snoozed check; the schedule goes on.
            ctx.txn.put_repeat(check, channel, next.as_microsecond())?;
            continue;
        }
        let repeat = Flip {
            check,
            created: ctx.now,
            old_status: StoredStatus::Down,
            new_status: StoredStatus::Down,
            reason: REPEAT_REASON.to_string(),
        };
        put_entry(ctx, channel, &repeat)?;
        ctx.txn.put_repeat(check, channel, next.as_microsecond())?;
        ctx.alerts_queued();
    }
    Ok(())
}

impl Service {
    /// Takes each of `checks` down whose time has come (reference-behavior §5.2), with its
    /// flip and alerts, in one transaction. A check that is not down after all (pinged,
    /// rescheduled or paused meanwhile) is only rescheduled. Called by the deadline engine.
    pub(crate) async fn time_out(&self, checks: Vec<Uuid>) -> Result<(), ServiceError> {
        self.write(move |ctx| {
            let mut flips = Vec::new();
            let mut late = Vec::new();
            for uuid in &checks {
                ctx.touch(*uuid);
                let now = ctx.now;
                let Some(check) = ctx.state.check_mut(uuid) else {
                    continue;
                };
                if let Some(flip) = time_out(check, now) {
                    ctx.txn.put_check(check, Some(&check.slug))?;
                    flips.push(flip);
                } else if let Some(at) = turn_late(check, now) {
                    late.push((*uuid, at));
                }
            }
            for (uuid, at) in late {
                // Kept durably only when a channel wants the notice: otherwise a restart
                // merely looks at the check once more and finds nobody to tell again.
                if queue_notice(ctx, uuid, Event::Late, at)?
                    && let Some(check) = ctx.state.check(&uuid)
                {
                    ctx.txn.put_check(check, Some(&check.slug))?;
                }
            }
            // Every status first, then the flips' alerts: a child and its parent going down
            // in the same batch hold the child's alert whichever comes first.
            for flip in &flips {
                record_flip(ctx, flip)?;
            }
            for uuid in &checks {
                release_held(ctx, uuid)?;
            }
            Ok(())
        })
        .await
    }

    /// Snoozes a check of `project` until `until`, or ends its snooze (`None` or a past
    /// moment), which sends the alert it held if the check's state differs from what its
    /// receivers were last told.
    pub async fn snooze_check(
        &self,
        project: Uuid,
        uuid: Uuid,
        until: Option<jiff::Timestamp>,
    ) -> Result<Check, ServiceError> {
        self.write(move |ctx| {
            if ctx.state.check(&uuid).is_none_or(|c| c.project != project) {
                return Err(ServiceError::NotFound);
            }
            snooze_one(ctx, uuid, until)
        })
        .await
    }

    /// Snoozes, in one transaction, every check of `project` that has all of `tags` (every
    /// check when `tags` is empty), as [`Service::snooze_check`] does one; answers them in
    /// the order the project lists them.
    pub async fn snooze_checks(
        &self,
        project: Uuid,
        tags: Vec<String>,
        until: Option<jiff::Timestamp>,
    ) -> Result<Vec<Check>, ServiceError> {
        self.write(move |ctx| {
            let wanted: Vec<Uuid> = ctx
                .state
                .checks_of(&project)
                .filter(|c| tags.iter().all(|t| c.has_tag(t)))
                .map(|c| c.uuid)
                .collect();
            wanted
                .into_iter()
                .map(|uuid| snooze_one(ctx, uuid, until))
                .collect()
        })
        .await
    }
}

impl Service {
    /// Sets, changes or removes (`""` as the schedule) the quiet window of `project`, which
    /// holds the alerts of every check of the project as a check's own window does. Alerts
    /// held already wait for the new end of the quiet time, or go out now if it is over.
    pub async fn set_project_quiet(
        &self,
        project: Uuid,
        spec: QuietSpec,
    ) -> Result<Project, ServiceError> {
        self.write(move |ctx| {
            let mut p = ctx
                .state
                .project(&project)
                .cloned()
                .ok_or(ServiceError::NotFound)?;
            if !spec.is_empty() {
                p.quiet = spec.apply(p.quiet.as_deref())?.map(Arc::new);
            }
            ctx.txn.put_project(&p)?;
            ctx.state.put_project(p.clone());
            let held: Vec<Uuid> = ctx
                .state
                .checks_of(&project)
                .filter(|c| c.held.is_some())
                .map(|c| c.uuid)
                .collect();
            for uuid in held {
                release_held(ctx, &uuid)?;
                ctx.touch(uuid);
            }
            Ok(p)
        })
        .await
    }
}

/// Snoozes the check `uuid` (which exists) until `until`, or ends its snooze, sending the
/// alert an ended snooze held.
fn snooze_one(
    ctx: &mut WriteCtx<'_>,
    uuid: Uuid,
    until: Option<jiff::Timestamp>,
) -> Result<Check, ServiceError> {
    let now = ctx.now;
    let around = ctx
        .state
        .check(&uuid)
        .map(|c| around(ctx.state, c))
        .unwrap_or_default();
    let check = ctx.state.check_mut(&uuid).ok_or(ServiceError::NotFound)?;
    let released = snooze::snooze(check, until, now, &around);
    ctx.txn.put_check(check, Some(&check.slug))?;
    let check = check.clone();
    if let Some(held) = released {
        send_held(ctx, &check, held)?;
    }
    ctx.touch(uuid);
    Ok(check)
}

/// Sends what the quiet time of `uuid` held, if it has ended (called when its deadline
/// passes).
pub(crate) fn release_held(ctx: &mut WriteCtx<'_>, uuid: &Uuid) -> Result<(), ServiceError> {
    let now = ctx.now;
    let around = ctx
        .state
        .check(uuid)
        .map(|c| around(ctx.state, c))
        .unwrap_or_default();
    let Some(check) = ctx.state.check_mut(uuid) else {
        return Ok(());
    };
    if check.held.is_none() {
        return Ok(());
    }
    let released = snooze::release(check, now, &around);
    ctx.txn.put_check(check, Some(&check.slug))?;
    let check = check.clone();
    match released {
        Some(held) => send_held(ctx, &check, held),
        None => Ok(()),
    }
}

/// What holds `check`'s alerts besides its own settings: its project's quiet window, and
/// whether one of its parents is down (a removed parent is not).
fn around(state: &crate::service::state::State, check: &Check) -> Around {
    Around {
        project_quiet: state.project(&check.project).and_then(|p| p.quiet.clone()),
        parent_down: check.parents.iter().any(|p| {
            state
                .check(p)
                .is_some_and(|parent| parent.status == StoredStatus::Down)
        }),
    }
}

/// A parent is no longer down (it recovered, was paused or removed): its children's held
/// alerts go out if nothing else holds them.
pub(crate) fn release_children(ctx: &mut WriteCtx<'_>, parent: Uuid) -> Result<(), ServiceError> {
    let Some(project) = ctx.state.check(&parent).map(|c| c.project) else {
        return Ok(());
    };
    let children: Vec<Uuid> = ctx
        .state
        .checks_of(&project)
        .filter(|c| c.held.is_some() && c.parents.contains(&parent))
        .map(|c| c.uuid)
        .collect();
    for child in &children {
        release_held(ctx, child)?;
        ctx.touch(*child);
    }
    Ok(())
}

/// Queues a released alert as its flip's alert would have been.
fn send_held(ctx: &mut WriteCtx<'_>, check: &Check, held: HeldAlert) -> Result<(), ServiceError> {
    let flip = Flip {
        check: check.uuid,
        created: held.at,
        old_status: held.told,
        new_status: held.new,
        reason: held.reason,
    };
    tracing::info!(check = %check.uuid, name = %check.name, "quiet time ended: the alert it held is sent");
    queue_alert(ctx, &flip, &check.name, check.channels.clone())
}

impl Service {
    /// Deletes the flips of `checks` created before `before` (µs), in one transaction.
    pub(crate) async fn prune_flips(
        &self,
        checks: Vec<Uuid>,
        before: i64,
    ) -> Result<(), ServiceError> {
        self.write(move |ctx| {
            for check in &checks {
                ctx.txn.prune_flips(*check, before)?;
            }
            Ok(())
        })
        .await
    }
}
