//! The in-memory picture of the store: every project, key, check and channel, with the
//! indexes the hot paths need (check by UUID, by project and slug, by `unique_key`; project by
//! ping key), and the dashboard's sessions. It is rebuilt from the file at start and after a failed commit; the file is the
//! truth.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use smallvec::SmallVec;
use uuid::Uuid;

use crate::model::check::unique_key_digest;
use crate::model::ping::record;
use crate::model::session::Session;
use crate::model::{ApiKey, Channel, Check, Kind, Ping, Project};
use crate::schedule::Schedule;
use crate::service::journal::Unfolded;
use crate::store::{Snapshot, Store, StoreError};

/// Everything the service answers from memory.
#[derive(Debug, Default)]
pub struct State {
    projects: HashMap<Uuid, Project>,
    project_by_ping_key: HashMap<String, Uuid>,
    api_keys: HashMap<String, ApiKey>,
    /// Boxed: the table then holds 24 bytes per slot, not a whole check, so its spare
    /// capacity costs little (it matters at a million checks).
    checks: HashMap<Uuid, Box<Check>>,
    /// Checks of each project in creation order.
    checks_by_project: HashMap<Uuid, BTreeMap<u64, Uuid>>,
    /// Non-empty slugs only (the slug route never matches an empty one), keyed by a hash of
    /// (project, slug) so the slug is not stored twice; lookups compare the real slug.
    /// Nearly every slug names one check: held inline, without an allocation per check.
    checks_by_slug: HashMap<u64, SmallVec<[Uuid; 1]>>,
    checks_by_unique_key: HashMap<[u8; 20], Uuid>,
    channels: HashMap<Uuid, Channel>,
    next_seq: u64,
    next_outbox_seq: u64,
    next_journal_seq: u64,
    /// Journaled pings waiting to be folded into the pings table.
    unfolded: Unfolded,
    /// Dashboard sessions by SHA-256 of their token. Expired ones may linger until a write
    /// removes them, so every lookup checks expiry.
    sessions: HashMap<[u8; 32], Session>,
    /// Sessions dropped from memory at start that the file still holds: the next sessions
    /// write deletes them.
    sessions_to_delete: Vec<[u8; 32]>,
}

/// The 20 bytes behind a 40-digit hex `unique_key`.
pub(crate) fn unique_key_bytes(hex: &str) -> Option<[u8; 20]> {
    if hex.len() != 40 {
        return None;
    }
    let mut out = [0u8; 20];
    for (i, chunk) in hex.as_bytes().chunks(2).enumerate() {
        let s = std::str::from_utf8(chunk).ok()?;
        out[i] = u8::from_str_radix(s, 16).ok()?;
    }
    Some(out)
}

/// The slug index key: a hash of (project, slug). Collisions only cost a comparison.
fn slug_hash(project: &Uuid, slug: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    project.hash(&mut h);
    slug.hash(&mut h);
    h.finish()
}

/// Compiles the schedule of a cron or OnCalendar check loaded from the file.
pub(crate) fn compile(check: &mut Check) {
    check.compiled = match check.kind {
        Kind::Simple => None,
        Kind::Cron | Kind::OnCalendar => Schedule::parse(&check.schedule, &check.tz)
            .ok()
            .map(Arc::new),
    };
}

impl State {
    /// Reads the whole state from the file.
    pub(crate) fn load(store: &Store) -> Result<State, StoreError> {
        let mut state = State::default();
        let n = usize::try_from(store.check_count()?).unwrap_or(0);
        state.checks.reserve(n);
        state.checks_by_unique_key.reserve(n);
        state.checks_by_slug.reserve(n);
        let mut max_seq = 0;
        // Checks arrive in UUID order; per-project creation order is built once, sorted,
        // rather than by a million scattered tree inserts.
        let mut by_project: HashMap<Uuid, Vec<(u64, Uuid)>> = HashMap::new();
        let snap = store.load_streaming(&mut |mut c| {
            max_seq = max_seq.max(c.seq);
            compile(&mut c);
            by_project
                .entry(c.project)
                .or_default()
                .push((c.seq, c.uuid));
            state.index_check(c);
        })?;
        for (project, mut list) in by_project {
            list.sort_unstable();
            state
                .checks_by_project
                .insert(project, list.into_iter().collect());
        }
        state.add_snapshot(snap);
        state.next_seq = state.next_seq.max(max_seq + 1);
        state.unfolded = Unfolded::starting_at(state.next_journal_seq);
        let mut first = true;
        store.for_each_journaled(&mut |seq, ping| {
            if std::mem::take(&mut first) {
                state.unfolded = Unfolded::starting_at(seq);
            }
            state.replay(seq, &ping);
        })?;
        Ok(state)
    }

    /// Notes a journaled ping of a live check as unfolded, and applies it if its check record
    /// does not reflect it yet (numbered above the record's `n_pings`). Replaying a ping is the
    /// same pure step that recorded it, so the state comes out as it was acknowledged.
    fn replay(&mut self, seq: u64, ping: &Ping) {
        let Some(check) = self.check_mut(&ping.check) else {
            return;
        };
        if ping.n > check.n_pings {
            let (_, n, _) = record(check, ping.kind, ping.rid, ping.created);
            if n != ping.n {
                tracing::warn!(check = %ping.check, "journal replay numbered ping {} as {n}", ping.n);
                check.n_pings = ping.n;
            }
        }
        self.unfolded.push(ping.check, seq);
    }

    /// Adds the projects, keys and channels of a snapshot (its checks were streamed in).
    fn add_snapshot(&mut self, snap: Snapshot) {
        for p in snap.projects {
            self.next_seq = self.next_seq.max(p.seq + 1);
            self.put_project(p);
        }
        for k in snap.api_keys {
            self.api_keys.insert(k.id.clone(), k);
        }
        for c in snap.channels {
            self.next_seq = self.next_seq.max(c.seq + 1);
            self.channels.insert(c.uuid, c);
        }
        self.sessions.extend(snap.sessions);
        self.next_seq = self.next_seq.max(1);
        self.next_outbox_seq = snap.next_outbox_seq.max(1);
        self.next_journal_seq = snap.next_journal_seq.max(1);
    }

    /// A fresh sequence number for a new record (creation order).
    pub fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// A fresh outbox sequence number.
    pub(crate) fn next_outbox_seq(&mut self) -> u64 {
        let seq = self.next_outbox_seq;
        self.next_outbox_seq += 1;
        seq
    }

    /// A fresh journal sequence number, for a ping about to be journaled for `check`.
    pub(crate) fn journal_ping(&mut self, check: Uuid) -> u64 {
        let seq = self.next_journal_seq;
        self.next_journal_seq += 1;
        self.unfolded.push(check, seq);
        seq
    }

    /// The number the next journal entry gets.
    pub(crate) fn next_journal_seq(&self) -> u64 {
        self.next_journal_seq
    }

    /// Pings waiting in the journal.
    pub fn journal_len(&self) -> usize {
        self.unfolded.len()
    }

    pub(crate) fn unfolded(&self) -> &Unfolded {
        &self.unfolded
    }

    pub(crate) fn unfolded_mut(&mut self) -> &mut Unfolded {
        &mut self.unfolded
    }

    // ----- projects -----

    pub(crate) fn project(&self, uuid: &Uuid) -> Option<&Project> {
        self.projects.get(uuid)
    }

    pub fn project_by_name(&self, name: &str) -> Option<&Project> {
        self.projects.values().find(|p| p.name == name)
    }

    pub(crate) fn project_by_ping_key(&self, ping_key: &str) -> Option<&Project> {
        self.project_by_ping_key
            .get(ping_key)
            .and_then(|u| self.projects.get(u))
    }

    /// Projects in creation order.
    pub fn projects(&self) -> Vec<&Project> {
        let mut all: Vec<&Project> = self.projects.values().collect();
        all.sort_by_key(|p| p.seq);
        all
    }

    pub(crate) fn put_project(&mut self, project: Project) {
        if let Some(old) = self.projects.get(&project.uuid) {
            self.project_by_ping_key.remove(&old.ping_key);
        }
        self.project_by_ping_key
            .insert(project.ping_key.clone(), project.uuid);
        self.projects.insert(project.uuid, project);
    }

    pub(crate) fn remove_project(&mut self, uuid: &Uuid) -> Option<Project> {
        let project = self.projects.remove(uuid)?;
        self.project_by_ping_key.remove(&project.ping_key);
        self.checks_by_project.remove(uuid);
        Some(project)
    }

    // ----- API keys -----

    pub(crate) fn api_key(&self, id: &str) -> Option<&ApiKey> {
        self.api_keys.get(id)
    }

    /// Keys of a project, oldest first.
    pub(crate) fn api_keys_of(&self, project: &Uuid) -> Vec<&ApiKey> {
        let mut keys: Vec<&ApiKey> = self
            .api_keys
            .values()
            .filter(|k| k.project == *project)
            .collect();
        keys.sort_by(|a, b| a.created.cmp(&b.created).then(a.id.cmp(&b.id)));
        keys
    }

    pub(crate) fn put_api_key(&mut self, key: ApiKey) {
        self.api_keys.insert(key.id.clone(), key);
    }

    pub(crate) fn remove_api_key(&mut self, id: &str) -> Option<ApiKey> {
        self.api_keys.remove(id)
    }

    // ----- checks -----

    pub fn check(&self, uuid: &Uuid) -> Option<&Check> {
        self.checks.get(uuid).map(|c| &**c)
    }

    /// Every check, in no particular order.
    pub(crate) fn all_checks(&self) -> impl Iterator<Item = &Check> {
        self.checks.values().map(|c| &**c)
    }

    pub(crate) fn check_count(&self) -> usize {
        self.checks.len()
    }

    /// Checks of a project in creation order.
    pub(crate) fn checks_of(&self, project: &Uuid) -> impl Iterator<Item = &Check> {
        self.checks_by_project
            .get(project)
            .into_iter()
            .flat_map(|m| m.values())
            .filter_map(|u| self.checks.get(u).map(|c| &**c))
    }

    /// Checks of a project created after sequence number `after`, in creation order.
    pub(crate) fn checks_of_after(
        &self,
        project: &Uuid,
        after: u64,
    ) -> impl Iterator<Item = &Check> {
        use std::ops::Bound::{Excluded, Unbounded};
        self.checks_by_project
            .get(project)
            .into_iter()
            .flat_map(move |m| m.range((Excluded(after), Unbounded)).map(|(_, u)| u))
            .filter_map(|u| self.checks.get(u).map(|c| &**c))
    }

    /// Checks of a project with this (non-empty) slug, in creation order.
    pub fn checks_by_slug(&self, project: &Uuid, slug: &str) -> Vec<&Check> {
        let Some(list) = self.checks_by_slug.get(&slug_hash(project, slug)) else {
            return Vec::new();
        };
        list.iter()
            .filter_map(|u| self.checks.get(u).map(|c| &**c))
            .filter(|c| c.project == *project && c.slug == slug)
            .collect()
    }

    pub(crate) fn check_by_unique_key(&self, project: &Uuid, unique_key: &str) -> Option<&Check> {
        let bytes = unique_key_bytes(unique_key)?;
        let check: &Check = self.checks.get(self.checks_by_unique_key.get(&bytes)?)?;
        (check.project == *project).then_some(check)
    }

    /// Inserts or replaces a check, keeping every index in step.
    pub fn put_check(&mut self, check: Check) {
        if let Some(old) = self.checks.get(&check.uuid) {
            let (project, slug, uuid) = (old.project, old.slug.clone(), old.uuid);
            self.unindex_slug(project, &slug, uuid);
        }
        self.checks_by_project
            .entry(check.project)
            .or_default()
            .insert(check.seq, check.uuid);
        self.index_check(check);
    }

    /// Stores a check and indexes it by slug and `unique_key` (not by project order).
    fn index_check(&mut self, check: Check) {
        let uuid = check.uuid;
        if !check.slug.is_empty() {
            let entry = self
                .checks_by_slug
                .entry(slug_hash(&check.project, &check.slug))
                .or_default();
            entry.push(uuid);
            let checks = &self.checks;
            entry.sort_by_key(|u| {
                if *u == uuid {
                    check.seq
                } else {
                    checks.get(u).map_or(0, |c| c.seq)
                }
            });
        }
        self.checks_by_unique_key
            .insert(unique_key_digest(&uuid), uuid);
        self.checks.insert(uuid, Box::new(check));
    }

    fn unindex_slug(&mut self, project: Uuid, slug: &str, uuid: Uuid) {
        if slug.is_empty() {
            return;
        }
        let key = slug_hash(&project, slug);
        if let Some(list) = self.checks_by_slug.get_mut(&key) {
            list.retain(|u| *u != uuid);
            if list.is_empty() {
                self.checks_by_slug.remove(&key);
            }
        }
    }

    pub(crate) fn remove_check(&mut self, uuid: &Uuid) -> Option<Check> {
        let check = *self.checks.remove(uuid)?;
        self.unindex_slug(check.project, &check.slug, check.uuid);
        if let Some(list) = self.checks_by_project.get_mut(&check.project) {
            list.remove(&check.seq);
        }
        self.checks_by_unique_key
            .remove(&unique_key_digest(&check.uuid));
        Some(check)
    }

    /// Mutable access for fields that no index depends on (status, pings, ...). Changing
    /// `slug`, `project` or `seq` through it would corrupt the indexes: use [`State::put_check`].
    pub(crate) fn check_mut(&mut self, uuid: &Uuid) -> Option<&mut Check> {
        self.checks.get_mut(uuid).map(|c| &mut **c)
    }

    // ----- channels -----

    pub(crate) fn channel(&self, uuid: &Uuid) -> Option<&Channel> {
        self.channels.get(uuid)
    }

    /// Channels of a project in creation order.
    pub fn channels_of(&self, project: &Uuid) -> Vec<&Channel> {
        let mut list: Vec<&Channel> = self
            .channels
            .values()
            .filter(|c| c.project == *project)
            .collect();
        list.sort_by_key(|c| c.seq);
        list
    }

    pub(crate) fn put_channel(&mut self, channel: Channel) {
        self.channels.insert(channel.uuid, channel);
    }

    pub(crate) fn remove_channel(&mut self, uuid: &Uuid) -> Option<Channel> {
        self.channels.remove(uuid)
    }

    // ----- dashboard sessions -----

    pub fn session(&self, id: &[u8; 32]) -> Option<&Session> {
        self.sessions.get(id)
    }

    pub fn put_session(&mut self, id: [u8; 32], session: Session) {
        self.sessions.insert(id, session);
    }

    pub fn remove_session(&mut self, id: &[u8; 32]) -> Option<Session> {
        self.sessions.remove(id)
    }

    /// Every session, in no particular order.
    pub fn sessions(&self) -> impl Iterator<Item = (&[u8; 32], &Session)> {
        self.sessions.iter()
    }

    /// Forgets the sessions expired at `now` (at start); they are listed for the next write,
    /// which deletes them from the file ([`State::take_sessions_to_delete`]).
    pub fn drop_expired_sessions(&mut self, now: jiff::Timestamp) {
        let to_delete = &mut self.sessions_to_delete;
        self.sessions.retain(|id, s| {
            let keep = !s.expired(now);
            if !keep {
                to_delete.push(*id);
            }
            keep
        });
    }

    /// The sessions [`State::drop_expired_sessions`] left in the file, once.
    pub fn take_sessions_to_delete(&mut self) -> Vec<[u8; 32]> {
        std::mem::take(&mut self.sessions_to_delete)
    }
}
