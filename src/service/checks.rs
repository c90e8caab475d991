//! Check operations of the Management API: create (with upsert), update, pause, resume and
//! delete, and the channel resolution they share (reference-behavior §2.2-§2.11); the
//! project's default channels that checks created by people get; and the count of checks
//! that alert nobody.

use std::collections::BTreeSet;

use uuid::Uuid;

use crate::model::events::Events;
use crate::model::ping::set_status;
use crate::model::spec::{self, CheckSpec, UniqueField};
use crate::model::{ApiVersion, Check, StoredStatus};
use crate::service::flips::record_flip;
use crate::service::{Service, ServiceError, State, WriteCtx};

/// Resolves a `channels` value (§2.3) to the sorted set of channel UUIDs it names.
pub(crate) fn resolve_channels(
    state: &State,
    project: &Uuid,
    value: &str,
) -> Result<Vec<Uuid>, ServiceError> {
    let all = state.channels_of(project);
    if value == "*" {
        let mut ids: Vec<Uuid> = all.iter().map(|c| c.uuid).collect();
        ids.sort();
        return Ok(ids);
    }
    if value.is_empty() {
        return Ok(Vec::new());
    }
    let mut chosen = BTreeSet::new();
    for item in value.split(',') {
        if item.is_empty() {
            return Err(ServiceError::BadRequest("empty channel identifier".into()));
        }
        let mut matches = all
            .iter()
            .filter(|c| c.uuid.to_string() == item || c.name == item);
        match (matches.next(), matches.next()) {
            (None, _) => {
                return Err(ServiceError::BadRequest(format!(
                    "invalid channel identifier: {item}"
                )));
            }
            (Some(_), Some(_)) => {
                return Err(ServiceError::BadRequest(format!(
                    "non-unique channel identifier: {item}"
                )));
            }
            (Some(c), None) => {
                chosen.insert(c.uuid);
            }
        }
    }
    Ok(chosen.into_iter().collect())
}

/// The project's default channels ([`crate::model::Channel::default_for_new`]), sorted: what a
/// check created by a person (the CLI, later the dashboard) gets when it names no channels.
pub(crate) fn default_channels(state: &State, project: &Uuid) -> Vec<Uuid> {
    let mut ids: Vec<Uuid> = state
        .channels_of(project)
        .into_iter()
        .filter(|c| c.default_for_new)
        .map(|c| c.uuid)
        .collect();
    ids.sort();
    ids
}

/// Checks (of every project) with no channel assigned: when they go down nobody hears of it.
/// The startup log and `doctor` report this number.
pub(crate) fn count_checks_without_channels(state: &State) -> usize {
    state.all_checks().filter(|c| c.channels.is_empty()).count()
}

/// The first check of the project matching every `unique` field of the body (§2.5), if the
/// body names them all.
fn find_upsert_target(state: &State, project: &Uuid, spec: &CheckSpec) -> Option<Uuid> {
    let fields = spec.unique.as_deref().filter(|f| !f.is_empty())?;
    let named = |f: &UniqueField| match f {
        UniqueField::Name => spec.name.is_some(),
        UniqueField::Slug => spec.slug.is_some(),
        UniqueField::Tags => spec.tags.is_some(),
        UniqueField::Timeout => spec.timeout.is_some(),
        UniqueField::Grace => spec.grace.is_some(),
    };
    if !fields.iter().all(named) {
        return None;
    }
    let matches = |c: &Check| {
        fields.iter().all(|f| match f {
            UniqueField::Name => spec.name.as_ref() == Some(&c.name),
            UniqueField::Slug => spec.slug.as_ref() == Some(&c.slug),
            UniqueField::Tags => spec.tags.as_ref() == Some(&c.tags),
            UniqueField::Timeout => spec.timeout == Some(c.timeout),
            UniqueField::Grace => spec.grace == Some(c.grace),
        })
    };
    state
        .checks_of(project)
        .find(|c| matches(c))
        .map(|c| c.uuid)
}

/// The check `uuid` if it belongs to `project`.
fn owned<'a>(state: &'a State, project: &Uuid, uuid: &Uuid) -> Result<&'a Check, ServiceError> {
    let check = state.check(uuid).ok_or(ServiceError::NotFound)?;
    if check.project != *project {
        return Err(ServiceError::Forbidden);
    }
    Ok(check)
}

/// Which channels a new check without `channels` in its spec gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unnamed {
    /// None: the Management API's contract.
    NoChannels,
    /// The project's default channels: checks created by people.
    Defaults,
}

/// Applies `spec` to a copy of `current`, then stores it. Nothing is written when the spec
/// or its channels do not apply.
fn store_updated(
    ctx: &mut WriteCtx<'_>,
    current: &Check,
    is_new: bool,
    spec: &CheckSpec,
    version: ApiVersion,
    unnamed: Unnamed,
) -> Result<Check, ServiceError> {
    let channels = match &spec.channels {
        Some(value) => Some(resolve_channels(ctx.state, &current.project, value)?),
        None if is_new && unnamed == Unnamed::Defaults => {
            Some(default_channels(ctx.state, &current.project))
        }
        None => None,
    };
    let parents = match &spec.parents {
        Some(value) => Some(resolve_parents(ctx.state, current, value)?),
        None => None,
    };
    let mut check = current.clone();
    spec::apply(&mut check, spec, version)?;
    if let Some(channels) = channels {
        check.channels = channels;
    }
    check.channel_events = resolve_channel_events(ctx.state, &check, spec)?;
    if let Some(parents) = parents {
        check.parents = parents;
    }
    ctx.txn
        .put_check(&check, (!is_new).then_some(current.slug.as_str()))?;
    if is_new || check.channels != current.channels {
        ctx.txn.set_links(check.uuid, &check.channels)?;
    }
    ctx.state.put_check(check.clone());
    if check.held.is_some() && check.parents != current.parents {
        // A parent it waited for may be gone from the list.
        crate::service::flips::release_held(ctx, &check.uuid)?;
    }
    ctx.touch(check.uuid);
    Ok(ctx.state.check(&check.uuid).cloned().unwrap_or(check))
}

/// The events `check` (its channels already set) chooses for its channels: those of `spec`
/// when it names them, else the ones it had for channels it keeps. A choice equal to the
/// channel's own set is not kept, so the check follows the channel's later changes.
fn resolve_channel_events(
    state: &State,
    check: &Check,
    spec: &CheckSpec,
) -> Result<Vec<(Uuid, Events)>, ServiceError> {
    let chosen = match &spec.channel_events {
        None => check.channel_events.clone(),
        Some(items) => {
            let mut chosen = Vec::with_capacity(items.len());
            for (ident, events) in items {
                let bad = || {
                    ServiceError::BadRequest(format!(
                        "channel_events: {ident} is not one of the check's channels"
                    ))
                };
                let uuid = match resolve_channels(state, &check.project, ident) {
                    Ok(found) if found.len() == 1 => found[0],
                    Ok(_) => return Err(bad()),
                    Err(ServiceError::BadRequest(e)) => {
                        return Err(ServiceError::BadRequest(format!("channel_events: {e}")));
                    }
                    Err(e) => return Err(e),
                };
                if !check.channels.contains(&uuid) {
                    return Err(bad());
                }
                chosen.push((uuid, *events));
            }
            chosen
        }
    };
    let mut kept: Vec<(Uuid, Events)> = chosen
        .into_iter()
        .filter(|(c, e)| {
            check.channels.contains(c)
                && state.channel(c).is_some_and(|channel| channel.events != *e)
        })
        .collect();
    kept.sort_by_key(|(c, _)| *c);
    kept.dedup_by_key(|(c, _)| *c);
    Ok(kept)
}

/// The parents `value` names for `check` (comma-separated UUIDs, `""` for none): checks of
/// its project other than itself, and none that has `check` among its own ancestors.
pub(super) fn resolve_parents(
    state: &State,
    check: &Check,
    value: &str,
) -> Result<Vec<Uuid>, ServiceError> {
    let mut chosen = BTreeSet::new();
    for item in value.split(',').filter(|s| !s.is_empty()) {
        let parent = Uuid::parse_str(item.trim())
            .ok()
            .and_then(|u| state.check(&u))
            .filter(|p| p.project == check.project)
            .ok_or_else(|| ServiceError::BadRequest(format!("invalid parent: {item}")))?;
        if parent.uuid == check.uuid {
            return Err(ServiceError::BadRequest(
                "a check cannot be its own parent".into(),
            ));
        }
        // Walk up from the parent: meeting `check` would make a cycle.
        let mut seen = BTreeSet::new();
        let mut todo = vec![parent.uuid];
        while let Some(at) = todo.pop() {
            if at == check.uuid {
                return Err(ServiceError::BadRequest(format!(
                    "parents would form a cycle: {item}"
                )));
            }
            if seen.insert(at) {
                todo.extend(
                    state
                        .check(&at)
                        .map(|c| c.parents.clone())
                        .unwrap_or_default(),
                );
            }
        }
        chosen.insert(parent.uuid);
    }
    Ok(chosen.into_iter().collect())
}

/// Pause and resume: a new stored status with its (silent) flip; a running start is dropped.
fn change_status(
    ctx: &mut WriteCtx<'_>,
    mut check: Check,
    status: StoredStatus,
) -> Result<Check, ServiceError> {
    let flip = set_status(&mut check, status, ctx.now);
    ctx.txn.put_check(&check, Some(&check.slug))?;
    ctx.state.put_check(check.clone());
    record_flip(ctx, &flip)?;
    ctx.touch(check.uuid);
    Ok(check)
}

impl Service {
    /// Creates a check, or updates the one `unique` finds. The flag says whether it was created.
    /// Without `channels` a new check gets none (the Management API's contract).
    pub async fn create_check(
        &self,
        project: Uuid,
        spec: CheckSpec,
        version: ApiVersion,
    ) -> Result<(Check, bool), ServiceError> {
        self.create(project, spec, version, Unnamed::NoChannels)
            .await
    }

    /// [`Service::create_check`] for checks created by people (the CLI's `check add`, later
    /// the dashboard): without `channels` a new check gets the project's
    /// [`default_channels`], so its alerts reach someone.
    pub(crate) async fn create_check_with_defaults(
        &self,
        project: Uuid,
        spec: CheckSpec,
    ) -> Result<(Check, bool), ServiceError> {
        self.create(project, spec, ApiVersion::V3, Unnamed::Defaults)
            .await
    }

    async fn create(
        &self,
        project: Uuid,
        spec: CheckSpec,
        version: ApiVersion,
        unnamed: Unnamed,
    ) -> Result<(Check, bool), ServiceError> {
        let uuid = Uuid::new_v4();
        let badge_key = Uuid::new_v4();
        self.write(move |ctx| {
            if ctx.state.project(&project).is_none() {
                return Err(ServiceError::NotFound);
            }
            if let Some(target) = find_upsert_target(ctx.state, &project, &spec) {
                let current = owned(ctx.state, &project, &target)?.clone();
                let check = store_updated(ctx, &current, false, &spec, version, unnamed)?;
                return Ok((check, false));
            }
            let seq = ctx.state.next_seq();
            let fresh = Check::new(uuid, project, seq, ctx.now, badge_key);
            Ok((
                store_updated(ctx, &fresh, true, &spec, version, unnamed)?,
                true,
            ))
        })
        .await
    }

    /// Updates a check (§2.8); `unique` is ignored.
    pub(crate) async fn update_check(
        &self,
        project: Uuid,
        uuid: Uuid,
        spec: CheckSpec,
        version: ApiVersion,
    ) -> Result<Check, ServiceError> {
        self.write(move |ctx| {
            let current = owned(ctx.state, &project, &uuid)?.clone();
            store_updated(ctx, &current, false, &spec, version, Unnamed::NoChannels)
        })
        .await
    }

    /// Pauses a check (§2.10); pausing a paused check changes nothing.
    pub async fn pause_check(&self, project: Uuid, uuid: Uuid) -> Result<Check, ServiceError> {
        self.write(move |ctx| {
            let current = owned(ctx.state, &project, &uuid)?;
            if current.status == StoredStatus::Paused {
                return Ok(current.clone());
            }
            let check = current.clone();
            change_status(ctx, check, StoredStatus::Paused)
        })
        .await
    }

    /// Resumes a paused check (§2.11): it becomes `new` and waits for its first ping.
    pub async fn resume_check(&self, project: Uuid, uuid: Uuid) -> Result<Check, ServiceError> {
        self.write(move |ctx| {
            let current = owned(ctx.state, &project, &uuid)?;
            if current.status != StoredStatus::Paused {
                return Err(ServiceError::NotPaused);
            }
            let mut check = current.clone();
            check.last_ping = None;
            change_status(ctx, check, StoredStatus::New)
        })
        .await
    }

    /// Deletes a check with its pings, flips and links; returns it as it was, without channels.
    pub async fn delete_check(&self, project: Uuid, uuid: Uuid) -> Result<Check, ServiceError> {
        self.write(move |ctx| {
            let check = owned(ctx.state, &project, &uuid)?.clone();
            // Journaled pings must not outlive their check.
            crate::service::journal::drop_check(ctx, &uuid)?;
            // Its children no longer wait for it.
            let children: Vec<Uuid> = ctx
                .state
                .checks_of(&project)
                .filter(|c| c.parents.contains(&uuid))
                .map(|c| c.uuid)
                .collect();
            for child in &children {
                if let Some(c) = ctx.state.check_mut(child) {
                    c.parents.retain(|p| *p != uuid);
                    ctx.txn.put_check(c, Some(&c.slug))?;
                }
            }
            ctx.txn.delete_check(&check)?;
            ctx.state.remove_check(&uuid);
            for child in &children {
                crate::service::flips::release_held(ctx, child)?;
                ctx.touch(*child);
            }
            ctx.touch(uuid);
            let mut gone = check;
            gone.channels.clear();
            Ok(gone)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Channel, ChannelConfig};

    #[test]
    fn default_channels_and_checks_that_alert_nobody() {
        let t = jiff::Timestamp::UNIX_EPOCH;
        let (p, other) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let mut s = State::default();
        for (n, project, default_for_new) in [
            (30, p, true),
            (20, p, false),
            (10, p, true),
            (40, other, true),
        ] {
            s.put_channel(Channel {
                uuid: Uuid::from_u128(n),
                project,
                seq: n as u64,
                name: format!("c{n}"),
                config: ChannelConfig::webhook("http://127.0.0.1:9/"),
                created: t,
                repeat: None,
                default_for_new,
                events: crate::model::events::Events::default(),
            });
        }
        assert_eq!(
            default_channels(&s, &p),
            vec![Uuid::from_u128(10), Uuid::from_u128(30)]
        );
        assert_eq!(count_checks_without_channels(&s), 0);
        let mut heard = Check::new(Uuid::from_u128(100), p, 1, t, Uuid::nil());
        heard.channels = vec![Uuid::from_u128(20)];
        s.put_check(heard);
        s.put_check(Check::new(Uuid::from_u128(101), p, 2, t, Uuid::nil()));
        s.put_check(Check::new(Uuid::from_u128(102), other, 3, t, Uuid::nil()));
        assert_eq!(count_checks_without_channels(&s), 2);
    }
}
