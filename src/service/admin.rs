//! Administration: projects, API keys and channels. The admin CLI calls these, in-process
//! when the service is stopped and through the control socket while it runs.

use uuid::Uuid;

use crate::model::project::{generate_api_key, generate_ping_key};
use crate::model::{ApiKey, Channel, ChannelConfig, Project};
use crate::service::auth::hash_key;
use crate::service::{Service, ServiceError, State, WriteCtx};

/// A key as created: the plaintext is shown once and never stored.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub key: ApiKey,
    pub plaintext: String,
}

/// What removing a project took with it.
#[derive(Debug, Clone, Default)]
pub struct Removed {
    pub checks: usize,
    pub channels: usize,
    pub keys: usize,
}

/// The project named `name`, or `NoSuchProject`.
pub fn project_named(state: &State, name: &str) -> Result<Project, ServiceError> {
    state
        .project_by_name(name)
        .cloned()
        .ok_or_else(|| ServiceError::NoSuchProject(name.to_string()))
}

/// The channel of `project` named by UUID or by (unique) name.
pub fn channel_named(state: &State, project: &str, ident: &str) -> Result<Channel, ServiceError> {
    let p = project_named(state, project)?;
    let candidates: Vec<&Channel> = state
        .channels_of(&p.uuid)
        .into_iter()
        .filter(|c| c.uuid.to_string() == ident || c.name == ident)
        .collect();
    match candidates.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(ServiceError::NoSuchChannel {
            project: project.to_string(),
            channel: ident.to_string(),
        }),
        _ => Err(ServiceError::Usage(format!(
            "several channels are named {ident:?}; use the id"
        ))),
    }
}

/// Name of the project the first `serve` creates.
pub const DEFAULT_PROJECT: &str = "default";

impl Service {
    /// Creates a project with fresh ping and badge keys.
    pub async fn add_project(&self, name: &str) -> Result<Project, ServiceError> {
        let name = name.trim().to_string();
        if name.is_empty() {
            return Err(ServiceError::Usage(
                "a project needs a non-empty name".into(),
            ));
        }
        let uuid = Uuid::new_v4();
        let ping_key = generate_ping_key()?;
        let badge_key = Uuid::new_v4().to_string();
        self.write(move |ctx| {
            if ctx.state.project_by_name(&name).is_some() {
                return Err(ServiceError::ProjectExists(name));
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
            };
            ctx.txn.put_project(&project)?;
            ctx.state.put_project(project.clone());
            Ok(project)
        })
        .await
    }

    /// Removes a project with all its checks (and their pings and flips), channels and keys.
    pub async fn remove_project(&self, name: &str) -> Result<Removed, ServiceError> {
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

    /// Removes a key by its identifier (as `key ls` shows it). It stops working at once.
    pub async fn remove_key(&self, project: &str, id: &str) -> Result<ApiKey, ServiceError> {
        let (project, id) = (project.to_string(), id.to_string());
        let removed = self
            .write(move |ctx| {
                let p = project_named(ctx.state, &project)?;
                match ctx.state.api_key(&id) {
                    Some(k) if k.project == p.uuid => {}
                    _ => return Err(ServiceError::NoSuchKey { project, key: id }),
                }
                ctx.txn.delete_api_key(&id)?;
                ctx.state.remove_api_key(&id).ok_or(ServiceError::NotFound)
            })
            .await?;
        self.forget_key(&removed.id);
        Ok(removed)
    }

    /// Adds a channel to a project (no repeat alerts).
    pub async fn add_channel(
        &self,
        project: &str,
        name: &str,
        config: ChannelConfig,
    ) -> Result<Channel, ServiceError> {
        self.add_channel_repeating(project, name, config, None)
            .await
    }

    /// Adds a channel that repeats down alerts every `repeat` while a check stays down.
    pub async fn add_channel_repeating(
        &self,
        project: &str,
        name: &str,
        config: ChannelConfig,
        repeat: Option<jiff::SignedDuration>,
    ) -> Result<Channel, ServiceError> {
        let (project, name) = (project.to_string(), name.to_string());
        let uuid = Uuid::new_v4();
        self.write(move |ctx| {
            let p = project_named(ctx.state, &project)?;
            let channel = Channel {
                uuid,
                project: p.uuid,
                seq: ctx.state.next_seq(),
                name,
                config,
                created: ctx.now,
                repeat,
            };
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
                    name: DEFAULT_PROJECT.to_string(),
                    ping_key,
                    badge_key: Uuid::new_v4().to_string(),
                    created: ctx.now,
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
