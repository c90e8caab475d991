//! Administration: projects, API keys and channels. The admin CLI calls these, in-process
//! when the service is stopped and through the control socket while it runs.

use jiff::SignedDuration;
use uuid::Uuid;

use crate::model::events::Events;
use crate::model::project::{generate_api_key, generate_ping_key};
use crate::model::{ApiKey, Channel, ChannelConfig, Check, Project};
use crate::service::auth::hash_key;
use crate::service::sessions::forget_key_in_sessions;
use crate::service::{AdminError, Service, ServiceError, State, WriteCtx};

/// A key as created: the plaintext is shown once and never stored.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub key: ApiKey,
    pub plaintext: String,
}

/// What removing a project takes with it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Removed {
    pub checks: usize,
    pub channels: usize,
    pub(crate) keys: usize,
}

/// What removing the project `name` would remove (nothing is changed).
pub(crate) fn project_contents(state: &State, name: &str) -> Result<Removed, AdminError> {
    let p = project_named(state, name)?;
    Ok(Removed {
        checks: state.checks_of(&p.uuid).count(),
        channels: state.channels_of(&p.uuid).len(),
        keys: state.api_keys_of(&p.uuid).len(),
    })
}

/// The project named `name`, or `NoSuchProject`.
pub(crate) fn project_named(state: &State, name: &str) -> Result<Project, AdminError> {
    state
        .project_by_name(name)
        .cloned()
        .ok_or_else(|| AdminError::NoSuchProject(name.to_string()))
}

/// The project an admin command names or, when it names none, the only project there is.
/// With several projects it does not guess: the error lists them.
pub(crate) fn project_or_only(state: &State, name: Option<&str>) -> Result<Project, AdminError> {
    if let Some(name) = name {
        return project_named(state, name);
    }
    match state.projects().as_slice() {
        [only] => Ok((*only).clone()),
        [] => Err(AdminError::Usage(
            "there is no project yet; create one with `overdue project add NAME`".into(),
        )),
        several => Err(AdminError::ProjectNeeded(
            several.iter().map(|p| p.name.clone()).collect(),
        )),
    }
}

/// A check named by UUID (then no project is needed), or by slug or else by name within the
/// project `project_or_only` picks. A slug or name that several checks share is refused.
pub(crate) fn check_named(
    state: &State,
    project: Option<&str>,
    ident: &str,
) -> Result<Check, AdminError> {
    let by_uuid = Uuid::parse_str(ident).ok().and_then(|u| state.check(&u));
    if let Some(check) = by_uuid {
        match project {
            Some(name) if project_named(state, name)?.uuid != check.project => {}
            _ => return Ok(check.clone()),
        }
    }
    let p = project_or_only(state, project)?;
    let mut found: Vec<&Check> = state.checks_by_slug(&p.uuid, ident);
    if found.is_empty() {
        found = state
            .checks_of(&p.uuid)
            .filter(|c| c.name == ident)
            .collect();
    }
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(AdminError::NoSuchCheck {
            project: p.name,
            check: ident.to_string(),
        }),
        several => Err(AdminError::Usage(format!(
            "several checks of project {:?} are called {ident:?}; use the UUID: {}",
            p.name,
            several
                .iter()
                .map(|c| c.uuid.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The channel of `project` named by UUID or by (unique) name.
pub(crate) fn channel_named(
    state: &State,
    project: &str,
    ident: &str,
) -> Result<Channel, AdminError> {
    let p = project_named(state, project)?;
    let candidates: Vec<&Channel> = state
        .channels_of(&p.uuid)
        .into_iter()
        .filter(|c| c.uuid.to_string() == ident || c.name == ident)
        .collect();
    match candidates.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(AdminError::NoSuchChannel {
            project: project.to_string(),
            channel: ident.to_string(),
        }),
        _ => Err(AdminError::Usage(format!(
            "several channels are named {ident:?}; use the id"
        ))),
    }
}

/// How a new channel joins its project.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NewChannel {
    /// Repeat a down alert this often while a check stays down (off when None).
    pub repeat: Option<SignedDuration>,
    /// Give the channel to checks created later without naming their channels
    /// ([`Channel::default_for_new`]).
    pub(crate) default_for_new: bool,
    /// Assign the channel to every check the project has now.
    pub(crate) assign_existing: bool,
    /// The events it sends for checks that choose none of their own.
    pub(crate) events: Events,
    /// Refuse a name the project already uses (`channel add` does: checks name their channels
    /// by it). Imported data may hold duplicates; the API then reports the name as a
    /// non-unique channel identifier.
    pub(crate) unique_name: bool,
}

/// A channel as added, and how many existing checks it was assigned to.
#[derive(Debug, Clone)]
pub(crate) struct AddedChannel {
    pub(crate) channel: Channel,
    pub(crate) assigned: usize,
}

/// Name of the project the first `serve` creates.
pub(crate) const DEFAULT_PROJECT: &str = "default";

impl Service {
    /// Creates a project with fresh ping and badge keys.
    pub async fn add_project(&self, name: &str) -> Result<Project, ServiceError> {
        let name = name.trim().to_string();
        if name.is_empty() {
            return Err(ServiceError::usage("a project needs a non-empty name"));
        }
        let uuid = Uuid::new_v4();
        let ping_key = generate_ping_key()?;
        let badge_key = Uuid::new_v4().to_string();
        self.write(move |ctx| {
            if ctx.state.project_by_name(&name).is_some() {
                return Err(AdminError::ProjectExists(name).into());
            }
            if ctx.state.project_by_ping_key(&ping_key).is_some() {
                return Err(ServiceError::Random("ping key collision, try again".into()));
            }
            let project = Project {
                uuid,
                seq: ctx.state.next_seq(),
                name,
                ping_key,
                badge_key,
                created: ctx.now,
                quiet: None,
            };
            ctx.txn.put_project(&project)?;
            ctx.state.put_project(project.clone());
            Ok(project)
        })
        .await
    }

    /// Removes a project with all its checks (and their pings and flips), channels and keys.
    pub(crate) async fn remove_project(&self, name: &str) -> Result<Removed, ServiceError> {
        let name = name.to_string();
        let removed = self
            .write(move |ctx| {
                let project = project_named(ctx.state, &name)?;
                let checks: Vec<_> = ctx.state.checks_of(&project.uuid).cloned().collect();
                let channels: Vec<Uuid> = ctx
                    .state
                    .channels_of(&project.uuid)
                    .iter()
                    .map(|c| c.uuid)
                    .collect();
                let keys: Vec<String> = ctx
                    .state
                    .api_keys_of(&project.uuid)
                    .iter()
                    .map(|k| k.id.clone())
                    .collect();
                for check in &checks {
                    crate::service::journal::drop_check(ctx, &check.uuid)?;
                    ctx.txn.delete_check(check)?;
                    ctx.state.remove_check(&check.uuid);
                    ctx.touch(check.uuid);
                }
                for channel in &channels {
                    ctx.txn.delete_channel(*channel)?;
                    ctx.state.remove_channel(channel);
                }
                for id in &keys {
                    forget_key_in_sessions(ctx, id)?;
                    ctx.txn.delete_api_key(id)?;
                    ctx.state.remove_api_key(id);
                }
                ctx.txn.delete_project(project.uuid)?;
                ctx.state.remove_project(&project.uuid);
                Ok((
                    Removed {
                        checks: checks.len(),
                        channels: channels.len(),
                        keys: keys.len(),
                    },
                    keys,
                ))
            })
            .await?;
        for id in &removed.1 {
            self.forget_key(id);
        }
        Ok(removed.0)
    }

    /// Creates an API key for a project; the plaintext is in the result and nowhere else.
    pub async fn add_key(
        &self,
        project: &str,
        read_only: bool,
        label: &str,
    ) -> Result<NewKey, ServiceError> {
        let project_uuid = self.read(|s| project_named(s, project).map(|p| p.uuid))?;
        loop {
            let new = self.prepare_key(project_uuid, read_only, label).await?;
            let stored = new.key.clone();
            let inserted = self
                .write(move |ctx| {
                    if ctx.state.project(&stored.project).is_none() {
                        return Err(ServiceError::NotFound);
                    }
                    insert_key(ctx, stored)
                })
                .await?;
            if inserted {
                return Ok(new);
            }
        }
    }

    /// A fresh key and its hash (the slow part, on the blocking pool); not stored yet.
    async fn prepare_key(
        &self,
        project: Uuid,
        read_only: bool,
        label: &str,
    ) -> Result<NewKey, ServiceError> {
        let plaintext = generate_api_key(read_only)?;
        let to_hash = plaintext.clone();
        let hash = tokio::task::spawn_blocking(move || hash_key(&to_hash))
            .await
            .map_err(|e| ServiceError::Random(e.to_string()))??;
        let key = ApiKey {
            id: plaintext[..crate::model::limits::API_KEY_ID_LEN].to_string(),
            project,
            read_only,
            label: label.to_string(),
            hash,
            created: self.now(),
        };
        Ok(NewKey { key, plaintext })
    }

    /// Removes a key by its identifier (as `key ls` shows it). It stops working at once, in
    /// the API and in every dashboard session signed in with it.
    pub async fn remove_key(&self, project: &str, id: &str) -> Result<ApiKey, ServiceError> {
        let (project, id) = (project.to_string(), id.to_string());
        let removed = self
            .write(move |ctx| {
                let p = project_named(ctx.state, &project)?;
                match ctx.state.api_key(&id) {
                    Some(k) if k.project == p.uuid => {}
                    _ => return Err(AdminError::NoSuchKey { project, key: id }.into()),
                }
                forget_key_in_sessions(ctx, &id)?;
                ctx.txn.delete_api_key(&id)?;
                ctx.state.remove_api_key(&id).ok_or(ServiceError::NotFound)
            })
            .await?;
        self.forget_key(&removed.id);
        Ok(removed)
    }

    /// Adds a channel to a project that no check uses yet and no new check gets, whatever its
    /// name (no repeat alerts).
    pub async fn add_channel(
        &self,
        project: &str,
        name: &str,
        config: ChannelConfig,
    ) -> Result<Channel, ServiceError> {
        self.add_channel_repeating(project, name, config, None)
            .await
    }

    /// Like [`Service::add_channel`], repeating down alerts every `repeat` while a check stays
    /// down.
    pub async fn add_channel_repeating(
        &self,
        project: &str,
        name: &str,
        config: ChannelConfig,
        repeat: Option<SignedDuration>,
    ) -> Result<Channel, ServiceError> {
        let options = NewChannel {
            repeat,
            ..NewChannel::default()
        };
        Ok(self
            .add_channel_with(project, name, config, options)
            .await?
            .channel)
    }

    /// Adds a channel to a project, assigned to its existing checks, marked a default for new
    /// ones and with a name of its own as `options` say.
    pub(crate) async fn add_channel_with(
        &self,
        project: &str,
        name: &str,
        config: ChannelConfig,
        options: NewChannel,
    ) -> Result<AddedChannel, ServiceError> {
        let (project, name) = (project.to_string(), name.to_string());
        let uuid = Uuid::new_v4();
        self.write(move |ctx| {
            let p = project_named(ctx.state, &project)?;
            let taken = ctx
                .state
                .channels_of(&p.uuid)
                .iter()
                .any(|c| c.name == name);
            if options.unique_name && taken {
                return Err(AdminError::ChannelExists {
                    project,
                    channel: name,
                }
                .into());
            }
            let channel = Channel {
                uuid,
                project: p.uuid,
                seq: ctx.state.next_seq(),
                name,
                config,
                created: ctx.now,
                repeat: options.repeat,
                default_for_new: options.default_for_new,
                events: options.events,
            };
            ctx.txn.put_channel(&channel)?;
            ctx.state.put_channel(channel.clone());
            let checks: Vec<Uuid> = if options.assign_existing {
                ctx.state.checks_of(&p.uuid).map(|c| c.uuid).collect()
            } else {
                Vec::new()
            };
            for check in &checks {
                ctx.txn.put_link(*check, uuid)?;
                if let Some(c) = ctx.state.check_mut(check) {
                    c.channels.push(uuid);
                    c.channels.sort();
                }
            }
            Ok(AddedChannel {
                channel,
                assigned: checks.len(),
            })
        })
        .await
    }

    /// Marks a channel (by UUID or name) as a default for new checks, or not. Checks that
    /// already exist keep their channels.
    pub(crate) async fn set_channel_default(
        &self,
        project: &str,
        id_or_name: &str,
        default_for_new: bool,
    ) -> Result<Channel, ServiceError> {
        let (project, ident) = (project.to_string(), id_or_name.to_string());
        self.write(move |ctx| {
            let mut channel = channel_named(ctx.state, &project, &ident)?;
            channel.default_for_new = default_for_new;
            ctx.txn.put_channel(&channel)?;
            ctx.state.put_channel(channel.clone());
            Ok(channel)
        })
        .await
    }

    /// Removes a channel, named by UUID or by (unique) name, and unassigns it from every check.
    pub async fn remove_channel(
        &self,
        project: &str,
        id_or_name: &str,
    ) -> Result<Channel, ServiceError> {
        let (project, ident) = (project.to_string(), id_or_name.to_string());
        self.write(move |ctx| {
            let uuid = channel_named(ctx.state, &project, &ident)?.uuid;
            let p = project_named(ctx.state, &project)?;
            let linked: Vec<Uuid> = ctx
                .state
                .checks_of(&p.uuid)
                .filter(|c| c.channels.contains(&uuid))
                .map(|c| c.uuid)
                .collect();
            for check in linked {
                ctx.txn.delete_link(check, uuid)?;
                if let Some(c) = ctx.state.check_mut(&check) {
                    c.channels.retain(|ch| *ch != uuid);
                    if c.channel_events.iter().any(|(ch, _)| *ch == uuid) {
                        c.channel_events.retain(|(ch, _)| *ch != uuid);
                        ctx.txn.put_check(c, Some(&c.slug))?;
                    }
                }
            }
            ctx.txn.delete_channel(uuid)?;
            ctx.state
                .remove_channel(&uuid)
                .ok_or(ServiceError::NotFound)
        })
        .await
    }

    /// On an empty store, creates the `default` project with a read-write and a read-only key.
    pub async fn ensure_default_project(
        &self,
    ) -> Result<Option<(Project, NewKey, NewKey)>, ServiceError> {
        self.ensure_first_project(DEFAULT_PROJECT).await
    }

    /// On an empty store, creates the project `name` with a read-write and a read-only key
    /// (what a first start does, and an import into an empty data directory).
    pub(crate) async fn ensure_first_project(
        &self,
        name: &str,
    ) -> Result<Option<(Project, NewKey, NewKey)>, ServiceError> {
        let name = name.trim().to_string();
        if name.is_empty() {
            return Err(ServiceError::usage("a project needs a non-empty name"));
        }
        if self.read(|s| !s.projects().is_empty()) {
            return Ok(None);
        }
        let uuid = Uuid::new_v4();
        let ping_key = generate_ping_key()?;
        let label = "created at first start";
        // Two argon2 hashes: side by side they cost one on a machine with two cores.
        let (rw, ro) = tokio::join!(
            self.prepare_key(uuid, false, label),
            self.prepare_key(uuid, true, label)
        );
        let (rw, ro) = (rw?, ro?);
        let keys = [rw.key.clone(), ro.key.clone()];
        let project = self
            .write(move |ctx| {
                // Everything or nothing: a first start that dies halfway leaves an empty store.
                if !ctx.state.projects().is_empty() {
                    return Ok(None);
                }
                let project = Project {
                    uuid,
                    seq: ctx.state.next_seq(),
                    name,
                    ping_key,
                    badge_key: Uuid::new_v4().to_string(),
                    created: ctx.now,
                    quiet: None,
                };
                ctx.txn.put_project(&project)?;
                ctx.state.put_project(project.clone());
                for key in keys {
                    insert_key(ctx, key)?;
                }
                Ok(Some(project))
            })
            .await?;
        Ok(project.map(|p| (p, rw, ro)))
    }
}

/// Stores a key unless its identifier is taken (then false: draw another key).
fn insert_key(ctx: &mut WriteCtx<'_>, key: ApiKey) -> Result<bool, ServiceError> {
    // Identifiers must be unique; a collision (1 in 62^8) draws a new key.
    if ctx.state.api_key(&key.id).is_some() {
        return Ok(false);
    }
    ctx.txn.put_api_key(&key)?;
    ctx.state.put_api_key(key);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> jiff::Timestamp {
        jiff::Timestamp::UNIX_EPOCH
    }

    fn project(n: u128, name: &str) -> Project {
        Project {
            uuid: Uuid::from_u128(n),
            seq: n as u64,
            name: name.into(),
            ping_key: format!("key{n}"),
            badge_key: String::new(),
            created: at(),
            quiet: None,
        }
    }

    fn check(n: u128, project: &Project, name: &str, slug: &str) -> Check {
        let mut c = Check::new(
            Uuid::from_u128(n),
            project.uuid,
            n as u64,
            at(),
            Uuid::nil(),
        );
        c.name = name.into();
        c.slug = slug.into();
        c
    }

    #[test]
    fn the_only_project_is_the_default_and_several_are_listed() {
        let mut s = State::default();
        let err = project_or_only(&s, None).expect_err("none yet");
        assert!(err.to_string().contains("project add"), "{err}");
        s.put_project(project(1, "ops"));
        assert_eq!(project_or_only(&s, None).expect("only").name, "ops");
        s.put_project(project(2, "dev"));
        match project_or_only(&s, None) {
            Err(e @ AdminError::ProjectNeeded(_)) => {
                assert_eq!(
                    e.to_string(),
                    "there are 2 projects, name one of them: ops, dev"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(project_or_only(&s, Some("dev")).expect("named").name, "dev");
        assert!(matches!(
            project_or_only(&s, Some("nope")),
            Err(AdminError::NoSuchProject(_))
        ));
    }

    #[test]
    fn a_check_is_named_by_uuid_slug_or_name() {
        let mut s = State::default();
        let (ops, dev) = (project(1, "ops"), project(2, "dev"));
        s.put_project(ops.clone());
        s.put_project(dev.clone());
        s.put_check(check(10, &ops, "Backup", "backup"));
        s.put_check(check(11, &ops, "twin", "a"));
        s.put_check(check(12, &ops, "twin", "b"));
        s.put_check(check(13, &dev, "Backup", "backup"));
        let uuid = Uuid::from_u128(10).to_string();
        // A UUID needs no project, even with several.
        assert_eq!(check_named(&s, None, &uuid).expect("uuid").name, "Backup");
        assert!(matches!(
            check_named(&s, Some("dev"), &uuid),
            Err(AdminError::NoSuchCheck { .. })
        ));
        let by = |project, ident| check_named(&s, Some(project), ident).map(|c| c.uuid);
        assert_eq!(by("ops", "backup").expect("slug"), Uuid::from_u128(10));
        assert_eq!(by("dev", "Backup").expect("name"), Uuid::from_u128(13));
        assert_eq!(by("ops", "b").expect("slug"), Uuid::from_u128(12));
        let err = by("ops", "twin").expect_err("ambiguous");
        assert!(
            err.to_string().contains(&Uuid::from_u128(11).to_string()),
            "{err}"
        );
        assert!(matches!(
            check_named(&s, None, "backup"),
            Err(AdminError::ProjectNeeded(_))
        ));
    }
}
