//! The dump format ([`crate::transfer::dump`]) read and written in parts, so a dump of any size
//! passes through a bounded amount of memory: [`read_dump`] hands out the header, each project
//! (without its checks) and its checks in parts of a chosen size; [`DumpWriter`] writes the
//! same pieces. The text is the one `serde_json` pretty-prints for a whole [`Dump`], so files
//! written either way are the same and every earlier export reads.
//!
//! The reader needs the members of the export in the order the writer puts them (a project's
//! `checks` after its other members, `projects` last), which every export has; a file edited
//! into another order is refused with a message that says so.
//!
//! [`Dump`]: crate::transfer::dump::Dump

use std::fmt;
use std::io::{self, Read, Write};

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use uuid::Uuid;

use crate::transfer::dump::{
    DumpChannel, DumpCheck, DumpError, DumpKey, DumpProject, DumpQuiet, FORMAT, VERSION,
};

/// One piece of a dump, in file order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Piece {
    /// The members before `projects`.
    Begin {
        exported_at: String,
        badge_secret: String,
    },
    /// A project with everything but its checks (`checks` is empty).
    Project(Box<DumpProject>),
    /// Consecutive checks of the last project, at most the part size.
    Checks(Vec<DumpCheck>),
}

/// Why reading stopped: the dump is not one, or the receiver of the pieces said stop.
#[derive(Debug)]
pub(crate) enum ReadError<E> {
    Dump(DumpError),
    Stopped(E),
}

struct Ctx<'s, E> {
    sink: &'s mut dyn FnMut(Piece) -> Result<(), E>,
    part: usize,
    failed: Option<ReadError<E>>,
}

impl<E> Ctx<'_, E> {
    /// Records why reading stops; the serde error it gives only unwinds the parser.
    fn fail<Er: de::Error>(&mut self, why: ReadError<E>) -> Er {
        self.failed = Some(why);
        Er::custom("stopped")
    }

    fn damaged<Er: de::Error>(&mut self, why: impl fmt::Display) -> Er {
        self.fail(ReadError::Dump(DumpError(format!(
            "the export is damaged: {why}"
        ))))
    }

    fn give<Er: de::Error>(&mut self, piece: Piece) -> Result<(), Er> {
        match (self.sink)(piece) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.fail(ReadError::Stopped(e))),
        }
    }
}

fn not_ours() -> DumpError {
    DumpError(format!(
        "the file is not an overdue export (its \"format\" is not {FORMAT:?})"
    ))
}

/// Reads a dump from `reader`, giving its pieces to `sink` in file order with at most `part`
/// checks a piece. Checks are validated later, by whoever applies them; this only reads.
pub(crate) fn read_dump<R: Read, E>(
    reader: R,
    part: usize,
    mut sink: impl FnMut(Piece) -> Result<(), E>,
) -> Result<(), ReadError<E>> {
    let mut ctx = Ctx {
        sink: &mut sink,
        part: part.max(1),
        failed: None,
    };
    let mut de = serde_json::Deserializer::from_reader(io::BufReader::new(reader));
    let result = TopSeed { ctx: &mut ctx }
        .deserialize(&mut de)
        .and_then(|()| de.end());
    if let Some(why) = ctx.failed.take() {
        return Err(why);
    }
    result.map_err(|e| {
        use serde_json::error::Category;
        ReadError::Dump(DumpError(match e.classify() {
            Category::Io => format!("cannot read the export: {e}"),
            Category::Syntax => format!("the file is not JSON: {e}"),
            Category::Eof => format!("the export ends early (is it cut short?): {e}"),
            Category::Data => format!("the export is damaged: {e}"),
        }))
    })
}

struct TopSeed<'c, 's, E> {
    ctx: &'c mut Ctx<'s, E>,
}

impl<'de, E> DeserializeSeed<'de> for TopSeed<'_, '_, E> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, E> Visitor<'de> for TopSeed<'_, '_, E> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "an overdue export (a JSON object with \"format\": {FORMAT:?})"
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let ctx = self.ctx;
        let (mut format, mut version) = (false, false);
        let (mut exported_at, mut badge_secret): (Option<String>, Option<String>) = (None, None);
        let mut projects = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => {
                    let v: Value = map.next_value()?;
                    if v.as_str() != Some(FORMAT) {
                        return Err(ctx.fail(ReadError::Dump(not_ours())));
                    }
                    format = true;
                }
                "version" => {
                    let v: Value = map.next_value()?;
                    match v.as_u64() {
                        Some(v) if v == u64::from(VERSION) => version = true,
                        Some(v) => {
                            return Err(ctx.fail(ReadError::Dump(DumpError(format!(
                                "the export has version {v}; this release reads version \
                                 {VERSION} (upgrade overdue to import it)"
                            )))));
                        }
                        None => return Err(ctx.damaged("\"version\" is not a number")),
                    }
                }
                "exported_at" => exported_at = Some(map.next_value()?),
                "badge_secret" => badge_secret = Some(map.next_value()?),
                "projects" if format && version && !projects => {
                    let (Some(exported_at), Some(badge_secret)) =
                        (exported_at.clone(), badge_secret.clone())
                    else {
                        return Err(ctx.damaged(
                            "\"exported_at\" and \"badge_secret\" must come before \"projects\"",
                        ));
                    };
                    ctx.give(Piece::Begin {
                        exported_at,
                        badge_secret,
                    })?;
                    map.next_value_seed(ProjectsSeed { ctx: &mut *ctx })?;
                    projects = true;
                }
                _ if !format => return Err(ctx.fail(ReadError::Dump(not_ours()))),
                "projects" if !version => {
                    return Err(ctx.fail(ReadError::Dump(DumpError(
                        "the export has no \"version\" before its projects".into(),
                    ))));
                }
                other => return Err(ctx.damaged(format_args!("unexpected member {other:?}"))),
            }
        }
        if !format {
            return Err(ctx.fail(ReadError::Dump(not_ours())));
        }
        if !version {
            return Err(ctx.fail(ReadError::Dump(DumpError(
                "the export has no \"version\"".into(),
            ))));
        }
        if !projects {
            return Err(ctx.damaged("it has no \"projects\""));
        }
        Ok(())
    }
}

struct ProjectsSeed<'c, 's, E> {
    ctx: &'c mut Ctx<'s, E>,
}

impl<'de, E> DeserializeSeed<'de> for ProjectsSeed<'_, '_, E> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, E> Visitor<'de> for ProjectsSeed<'_, '_, E> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of projects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(ProjectSeed {
                ctx: &mut *self.ctx,
            })?
            .is_some()
        {}
        Ok(())
    }
}

struct ProjectSeed<'c, 's, E> {
    ctx: &'c mut Ctx<'s, E>,
}

impl<'de, E> DeserializeSeed<'de> for ProjectSeed<'_, '_, E> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

/// The members of a project before its checks.
#[derive(Default)]
struct Head {
    uuid: Option<Uuid>,
    name: Option<String>,
    ping_key: Option<String>,
    badge_key: Option<String>,
    created: Option<String>,
    quiet: Option<DumpQuiet>,
    api_keys: Option<Vec<DumpKey>>,
    channels: Option<Vec<DumpChannel>>,
}

impl Head {
    fn complete(self) -> Result<DumpProject, &'static str> {
        Ok(DumpProject {
            uuid: self.uuid.ok_or("uuid")?,
            name: self.name.ok_or("name")?,
            ping_key: self.ping_key.ok_or("ping_key")?,
            badge_key: self.badge_key.ok_or("badge_key")?,
            created: self.created.ok_or("created")?,
            quiet: self.quiet,
            api_keys: self.api_keys.ok_or("api_keys")?,
            channels: self.channels.ok_or("channels")?,
            checks: Vec::new(),
        })
    }
}

impl<'de, E> Visitor<'de> for ProjectSeed<'_, '_, E> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a project")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let ctx = self.ctx;
        let mut head = Head::default();
        let mut checks = false;
        while let Some(key) = map.next_key::<String>()? {
            if checks {
                return Err(ctx.damaged(format_args!(
                    "a project's {key:?} comes after its checks (they must come last)"
                )));
            }
            match key.as_str() {
                "uuid" => head.uuid = Some(map.next_value()?),
                "name" => head.name = Some(map.next_value()?),
                "ping_key" => head.ping_key = Some(map.next_value()?),
                "badge_key" => head.badge_key = Some(map.next_value()?),
                "created" => head.created = Some(map.next_value()?),
                "quiet" => head.quiet = Some(map.next_value()?),
                "api_keys" => head.api_keys = Some(map.next_value()?),
                "channels" => head.channels = Some(map.next_value()?),
                "checks" => {
                    let project = match std::mem::take(&mut head).complete() {
                        Ok(p) => p,
                        Err(missing) => {
                            return Err(ctx.damaged(format_args!(
                                "a project has no {missing:?} before its checks"
                            )));
                        }
                    };
                    ctx.give(Piece::Project(Box::new(project)))?;
                    map.next_value_seed(ChecksSeed { ctx: &mut *ctx })?;
                    checks = true;
                }
                other => {
                    return Err(ctx.damaged(format_args!("unknown project member {other:?}")));
                }
            }
        }
        if !checks {
            return Err(ctx.damaged("a project has no \"checks\""));
        }
        Ok(())
    }
}

struct ChecksSeed<'c, 's, E> {
    ctx: &'c mut Ctx<'s, E>,
}

impl<'de, E> DeserializeSeed<'de> for ChecksSeed<'_, '_, E> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, E> Visitor<'de> for ChecksSeed<'_, '_, E> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of checks")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let ctx = self.ctx;
        let mut part = Vec::with_capacity(ctx.part.min(1024));
        while let Some(check) = seq.next_element::<DumpCheck>()? {
            part.push(check);
            if part.len() >= ctx.part {
                ctx.give(Piece::Checks(std::mem::take(&mut part)))?;
            }
        }
        if !part.is_empty() {
            ctx.give(Piece::Checks(part))?;
        }
        Ok(())
    }
}

/// Writes a dump piece by piece: [`DumpWriter::begin`], then for each project
/// [`DumpWriter::project`] and its [`DumpWriter::check`]s, then [`DumpWriter::finish`].
pub struct DumpWriter<W: Write> {
    out: W,
    projects: usize,
    /// Checks written in the open project; None when no project is open.
    checks: Option<usize>,
}

fn pretty<T: serde::Serialize>(value: &T) -> io::Result<String> {
    serde_json::to_string_pretty(value).map_err(io::Error::other)
}

/// `text` with every line indented by `n` spaces, after a newline.
fn indented(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    let mut out = String::with_capacity(text.len() + n * 32);
    for line in text.lines() {
        out.push('\n');
        out.push_str(&pad);
        out.push_str(line);
    }
    out
}

impl<W: Write> DumpWriter<W> {
    pub fn begin(mut out: W, exported_at: &str, badge_secret: &str) -> io::Result<Self> {
        write!(
            out,
            "{{\n  \"format\": {},\n  \"version\": {VERSION},\n  \"exported_at\": {},\n  \
             \"badge_secret\": {},\n  \"projects\": [",
            pretty(&FORMAT)?,
            pretty(&exported_at)?,
            pretty(&badge_secret)?
        )?;
        Ok(DumpWriter {
            out,
            projects: 0,
            checks: None,
        })
    }

    /// Starts a project; its `checks` are ignored (write them with [`DumpWriter::check`]).
    pub fn project(&mut self, project: &DumpProject) -> io::Result<()> {
        self.close_project()?;
        let mut head = serde_json::to_value(project).map_err(io::Error::other)?;
        if let Some(members) = head.as_object_mut() {
            members.remove("checks");
        }
        let text = pretty(&head)?;
        // Everything up to the closing brace: the checks member follows.
        let open = text.strip_suffix("\n}").unwrap_or(&text);
        if self.projects > 0 {
            self.out.write_all(b",")?;
        }
        self.out.write_all(indented(open, 4).as_bytes())?;
        self.out.write_all(b",\n      \"checks\": [")?;
        self.projects += 1;
        self.checks = Some(0);
        Ok(())
    }

    pub fn check(&mut self, check: &DumpCheck) -> io::Result<()> {
        let n = self
            .checks
            .as_mut()
            .ok_or_else(|| io::Error::other("a check outside a project"))?;
        if *n > 0 {
            self.out.write_all(b",")?;
        }
        *n += 1;
        self.out.write_all(indented(&pretty(check)?, 8).as_bytes())
    }

    fn close_project(&mut self) -> io::Result<()> {
        match self.checks.take() {
            None => Ok(()),
            Some(0) => self.out.write_all(b"]\n    }"),
            Some(_) => self.out.write_all(b"\n      ]\n    }"),
        }
    }

    /// Closes the document (with a final newline) and flushes it.
    pub fn finish(mut self) -> io::Result<W> {
        self.close_project()?;
        if self.projects == 0 {
            self.out.write_all(b"]\n}\n")?;
        } else {
            self.out.write_all(b"\n  ]\n}\n")?;
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transfer::dump::Dump;

    fn check(n: u128) -> DumpCheck {
        DumpCheck {
            uuid: Uuid::from_u128(n),
            created: "2026-01-01T00:00:00Z".into(),
            name: format!("check \"{n}\"\nline"),
            slug: format!("c{n}"),
            tags: "a b".into(),
            desc: String::new(),
            kind: "simple".into(),
            timeout: 3600,
            grace: 60,
            schedule: "* * * * *".into(),
            tz: "UTC".into(),
            manual_resume: false,
            methods: String::new(),
            start_kw: String::new(),
            success_kw: String::new(),
            failure_kw: String::new(),
            filter_subject: false,
            filter_body: false,
            filter_http_body: false,
            filter_default_fail: false,
            badge_key: Uuid::from_u128(n + 1000),
            channels: vec![Uuid::from_u128(7)],
            status: "up".into(),
            n_pings: 3,
            last_ping: Some("2026-01-02T00:00:00Z".into()),
            last_start: None,
            last_start_rid: None,
            last_duration_us: Some(5),
            fail_threshold: 2,
            fails_in_row: 1,
            max_duration: 600,
            min_duration: 0,
            snoozed_until: None,
            quiet_schedule: String::new(),
            quiet_tz: "UTC".into(),
            quiet_duration: 0,
            parents: Vec::new(),
            held: None,
            channel_events: std::collections::BTreeMap::default(),
            late_seen: None,
        }
    }

    fn project(n: u128, checks: usize) -> DumpProject {
        DumpProject {
            uuid: Uuid::from_u128(n),
            name: format!("p{n}"),
            ping_key: "k".repeat(22),
            badge_key: "b".into(),
            created: "2026-01-01T00:00:00Z".into(),
            quiet: None,
            api_keys: vec![],
            channels: vec![DumpChannel {
                uuid: Uuid::from_u128(7),
                name: "ops".into(),
                kind: "email".into(),
                settings: vec![("address".into(), "a@example.org".into())],
                created: "2026-01-01T00:00:00Z".into(),
                default_for_new: false,
            }],
            checks: (0..checks as u128).map(|i| check(n * 100 + i)).collect(),
        }
    }

    fn dump(projects: Vec<DumpProject>) -> Dump {
        Dump {
            format: FORMAT.into(),
            version: VERSION,
            exported_at: "2026-01-03T00:00:00Z".into(),
            badge_secret: "00ff".into(),
            projects,
        }
    }

    fn written(d: &Dump) -> String {
        let mut w = DumpWriter::begin(Vec::new(), &d.exported_at, &d.badge_secret).expect("begin");
        for p in &d.projects {
            w.project(p).expect("project");
            for c in &p.checks {
                w.check(c).expect("check");
            }
        }
        String::from_utf8(w.finish().expect("finish")).expect("utf-8")
    }

    #[test]
    fn the_writer_writes_what_serde_writes_for_the_whole_dump() {
        for d in [
            dump(vec![]),
            dump(vec![project(1, 0)]),
            dump(vec![project(1, 3), project(2, 0), project(3, 1)]),
        ] {
            assert_eq!(written(&d), d.to_json());
        }
    }

    #[test]
    fn the_reader_gives_parts_of_the_chosen_size_in_order() {
        let d = dump(vec![project(1, 5), project(2, 0), project(3, 2)]);
        let mut pieces = Vec::new();
        read_dump(d.to_json().as_bytes(), 2, |p| {
            pieces.push(p);
            Ok::<(), ()>(())
        })
        .expect("reads");
        let sizes: Vec<String> = pieces
            .iter()
            .map(|p| match p {
                Piece::Begin { .. } => "begin".into(),
                Piece::Project(p) => {
                    assert!(p.checks.is_empty());
                    p.name.clone()
                }
                Piece::Checks(c) => c.len().to_string(),
            })
            .collect();
        assert_eq!(sizes, ["begin", "p1", "2", "2", "1", "p2", "p3", "2"]);
        assert_eq!(Dump::parse(&d.to_json()).expect("parses"), d);
    }

    #[test]
    fn a_receiver_stops_the_reader_and_bad_files_say_why() {
        let d = dump(vec![project(1, 5)]);
        let err = read_dump(d.to_json().as_bytes(), 1, |p| match p {
            Piece::Checks(_) => Err("enough"),
            _ => Ok(()),
        })
        .expect_err("stopped");
        assert!(matches!(err, ReadError::Stopped("enough")));
        let text = d.to_json();
        let cut = &text[..text.len() / 2];
        let ReadError::Dump(e) =
            read_dump(cut.as_bytes(), 1, |_| Ok::<(), ()>(())).expect_err("cut")
        else {
            panic!("a dump error")
        };
        assert!(e.0.contains("ends early"), "{e}");
        let early = format!(
            r#"{{"format": "{FORMAT}", "version": 1, "exported_at": "x", "badge_secret": "00",
                "projects": [{{"checks": []}}]}}"#
        );
        let ReadError::Dump(e) =
            read_dump(early.as_bytes(), 1, |_| Ok::<(), ()>(())).expect_err("out of order")
        else {
            panic!("a dump error")
        };
        assert!(e.0.contains("has no \"uuid\" before its checks"), "{e}");
    }
}
