//! Dashboard sessions: signing in with an API key (one more project per key), finding the
//! session of a cookie's token, recording its use, signing out, and forgetting a removed key.
//!
//! A session names its keys by identifier only; what they grant is looked up in the live state
//! on every call, so a removed key stops granting at once. Tokens are stored as their SHA-256
//! ([`session_id`]). Every write that changes sessions also deletes the ones that ended (idle
//! for [`crate::model::session::SESSION_IDLE`], or left without a key): there are few.

use crate::model::session::{KeyRights, Session, add_key, generate_token, is_token, session_id};
use crate::service::auth::Grant;
use crate::service::{Service, ServiceError, State, WriteCtx};

/// The keys a live session grants, resolved against the live state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionView {
    /// One per project, in the order the projects were signed in to.
    pub(crate) grants: Vec<Grant>,
    /// Whether the caller should record this use ([`Service::touch_session`]).
    pub(crate) needs_touch: bool,
}

/// What the key `id` grants now, if it still exists.
fn grant_of(state: &State, id: &str) -> Option<Grant> {
    state.api_key(id).map(|k| Grant {
        project: k.project,
        read_only: k.read_only,
        key_id: k.id.clone(),
    })
}

fn rights_of(state: &State, id: &str) -> Option<KeyRights> {
    state.api_key(id).map(|k| KeyRights {
        project: k.project,
        read_only: k.read_only,
    })
}

/// Deletes the sessions that ended: idle too long, or none of whose keys exists any more
/// (and those left in the file when they were dropped at start).
fn prune(ctx: &mut WriteCtx<'_>) -> Result<(), ServiceError> {
    let now = ctx.now;
    let mut ended = ctx.state.take_sessions_to_delete();
    let state = &*ctx.state;
    let dead: Vec<[u8; 32]> = state
        .sessions()
        .filter(|(_, s)| s.expired(now) || !s.keys.iter().any(|k| state.api_key(k).is_some()))
        .map(|(id, _)| *id)
        .collect();
    for id in dead {
        ctx.state.remove_session(&id);
        ended.push(id);
    }
    for id in &ended {
        ctx.txn.delete_session(id)?;
    }
    Ok(())
}

/// Takes the key `key_id` out of every session holding it, in the job that removes the key;
/// a session left without keys is deleted. (Lookups already ignore a removed key; this keeps
/// a later key that happened to get the same identifier from inheriting its sessions.)
pub(crate) fn forget_key_in_sessions(
    ctx: &mut WriteCtx<'_>,
    key_id: &str,
) -> Result<(), ServiceError> {
    let holding: Vec<[u8; 32]> = ctx
        .state
        .sessions()
        .filter(|(_, s)| s.keys.iter().any(|k| k == key_id))
        .map(|(id, _)| *id)
        .collect();
    for id in holding {
        let Some(mut session) = ctx.state.remove_session(&id) else {
            continue;
        };
        session.keys.retain(|k| k != key_id);
        if session.keys.is_empty() {
            ctx.txn.delete_session(&id)?;
        } else {
            ctx.txn.put_session(&id, &session)?;
            ctx.state.put_session(id, session);
        }
    }
    Ok(())
}

impl Service {
    /// Signs in with the key of `grant`: starts a session, or adds the key's project to the
    /// live session of the token `existing` (a malformed, unknown or ended one starts afresh).
    /// A read-write key replaces the key held for its project; a read-only key never
    /// downgrades a read-write one already held.
    ///
    /// Returns the token to set in the cookie. It is always a fresh one: a session carried
    /// over gets a new token and the old one stops working, so a token planted in a browser
    /// before sign-in (session fixation) never gains the signed-in rights.
    ///
    /// [`ServiceError::NotFound`] when the key of `grant` has been removed meanwhile.
    pub(crate) async fn sign_in(
        &self,
        existing: Option<&str>,
        grant: &Grant,
    ) -> Result<String, ServiceError> {
        let token = generate_token()?;
        let old = existing.filter(|t| is_token(t)).map(session_id);
        let (project, key_id) = (grant.project, grant.key_id.clone());
        let id = session_id(&token);
        self.write(move |ctx| {
            let rights = rights_of(ctx.state, &key_id)
                .filter(|r| r.project == project)
                .ok_or(ServiceError::NotFound)?;
            prune(ctx)?;
            let mut session = Session::new(ctx.now);
            if let Some(old) = old
                && let Some(carried) = ctx.state.remove_session(&old)
            {
                ctx.txn.delete_session(&old)?;
                session.created = carried.created;
                session.keys = carried.keys;
            }
            session.keys = add_key(&session.keys, &key_id, rights, |k| rights_of(ctx.state, k));
            ctx.txn.put_session(&id, &session)?;
            ctx.state.put_session(id, session);
            Ok(())
        })
        .await?;
        Ok(token)
    }

    /// The session of `token`: None when unknown, malformed, expired, or when none of its
    /// keys still exists (a removed key's grant disappears at once, because keys are looked up
    /// in the live state on every call).
    pub(crate) fn session(&self, token: &str) -> Option<SessionView> {
        if !is_token(token) {
            return None;
        }
        let id = session_id(token);
        let now = self.now();
        self.read(|state| {
            let session = state.session(&id).filter(|s| !s.expired(now))?;
            let grants: Vec<Grant> = session
                .keys
                .iter()
                .filter_map(|k| grant_of(state, k))
                .collect();
            (!grants.is_empty()).then(|| SessionView {
                grants,
                needs_touch: session.needs_touch(now),
            })
        })
    }

    /// Records use of the session now (writes only when it needs a touch; an unknown or ended
    /// session is left alone).
    pub(crate) async fn touch_session(&self, token: &str) -> Result<(), ServiceError> {
        if !is_token(token) {
            return Ok(());
        }
        let id = session_id(token);
        let now = self.now();
        let due = self.read(|s| {
            s.session(&id)
                .is_some_and(|s| !s.expired(now) && s.needs_touch(now))
        });
        if !due {
            return Ok(());
        }
        self.write(move |ctx| {
            prune(ctx)?;
            let now = ctx.now;
            if let Some(session) = ctx.state.session(&id).filter(|s| s.needs_touch(now)) {
                let mut session = session.clone();
                session.last_used = now;
                ctx.txn.put_session(&id, &session)?;
                ctx.state.put_session(id, session);
            }
            Ok(())
        })
        .await
    }

    /// Ends the session (no error when it does not exist).
    pub(crate) async fn sign_out(&self, token: &str) -> Result<(), ServiceError> {
        if !is_token(token) {
            return Ok(());
        }
        let id = session_id(token);
        if self.read(|s| s.session(&id).is_none()) {
            return Ok(());
        }
        self.write(move |ctx| {
            prune(ctx)?;
            if ctx.state.remove_session(&id).is_some() {
                ctx.txn.delete_session(&id)?;
            }
            Ok(())
        })
        .await
    }
}
