//! Permission refusals on the data directory, the data file and the control socket, as one
//! error that names the path, whose it is and what to do. The usual cause is an admin command
//! run as another user than the service's (the packaged service's directory is private to its
//! own user), and the operating system's "Permission denied" alone says neither whose the
//! path is nor how to get in.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A user as the refusal message names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct User {
    pub(crate) uid: u32,
    /// From /etc/passwd; `None` for a user without an entry (a systemd dynamic user).
    pub name: Option<String>,
}

impl User {
    /// The user with `uid`, named from /etc/passwd when it has an entry there.
    pub(crate) fn from_uid(uid: u32) -> User {
        let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
        User {
            uid,
            name: name_in_passwd(&passwd, uid),
        }
    }

    /// The user this process runs as (its effective uid).
    pub(crate) fn current() -> User {
        // SAFETY: geteuid has no preconditions and cannot fail.
        User::from_uid(unsafe { libc::geteuid() })
    }
}

impl std::fmt::Display for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.name {
            Some(name) => write!(f, "{name}"),
            None => write!(f, "uid {}", self.uid),
        }
    }
}

/// The name of `uid` in the text of /etc/passwd (`name:x:uid:gid:...` lines).
pub(crate) fn name_in_passwd(passwd: &str, uid: u32) -> Option<String> {
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let id = fields.nth(1)?.parse::<u32>().ok()?;
        (id == uid && !name.is_empty()).then(|| name.to_string())
    })
}

/// The path whose permissions refuse: its owner, its mode and whether it is a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Holder {
    pub(crate) path: PathBuf,
    pub(crate) owner: User,
    /// Permission bits (`0o700`).
    pub(crate) mode: u32,
    pub(crate) is_dir: bool,
}

/// Access to `path` was refused (EACCES or EPERM).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessDenied {
    /// What the process tried to open or create.
    pub(crate) path: PathBuf,
    /// The operating system's words.
    pub reason: String,
    /// The nearest of `path` and its parents whose owner could be read: `path` itself when it
    /// exists and can be looked at, else the directory that hides or refuses it.
    pub(crate) holder: Option<Holder>,
    /// Who this process runs as.
    pub(crate) me: User,
}

impl AccessDenied {
    /// The refusal behind `error`, if it is one, with the facts about `path` gathered now.
    pub(crate) fn from_io(path: &Path, error: &std::io::Error) -> Option<AccessDenied> {
        if error.kind() != std::io::ErrorKind::PermissionDenied {
            return None;
        }
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        Some(AccessDenied {
            holder: holder_of(&path),
            path,
            reason: error.to_string(),
            me: User::current(),
        })
    }
}

/// The nearest of `path` and its ancestors that can be looked at.
fn holder_of(path: &Path) -> Option<Holder> {
    path.ancestors().find_map(|p| {
        let meta = std::fs::metadata(p).ok()?;
        Some(Holder {
            path: p.to_path_buf(),
            owner: User::from_uid(meta.uid()),
            mode: meta.mode() & 0o7777,
            is_dir: meta.is_dir(),
        })
    })
}

/// What to do about a refusal: run as the holder's owner, with sudo, or fix the mode when the
/// owner itself is refused.
pub(crate) fn advice(holder: Option<&Holder>, me: &User) -> String {
    let Some(h) = holder else {
        return "run the command as the data directory's owner, or with sudo".into();
    };
    if me.uid == 0 {
        return format!(
            "even root is refused, so it is not a matter of users: {} may be immutable \
             (`lsattr`), or on a read-only filesystem or a network filesystem that maps root \
             to another user",
            h.path.display()
        );
    }
    if h.owner.uid == me.uid {
        let mode = if h.is_dir { "700" } else { "600" };
        return format!(
            "it is yours but its mode does not let you in: `chmod {mode} {}`",
            h.path.display()
        );
    }
    match (&h.owner.name, h.owner.uid) {
        (_, 0) => "run the command with sudo (`sudo overdue ...`)".into(),
        (Some(name), _) => format!(
            "run the command as the service's user (`sudo -u {name} overdue ...`), or with \
             sudo"
        ),
        (None, uid) => {
            format!("run the command with sudo, or as uid {uid} (`sudo -u '#{uid}' overdue ...`)")
        }
    }
}

impl std::fmt::Display for AccessDenied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot access {}: {}", self.path.display(), self.reason)?;
        if let Some(h) = &self.holder {
            write!(
                f,
                "; {} belongs to {} (mode {:04o}) and this command runs as {}",
                h.path.display(),
                h.owner,
                h.mode,
                self.me
            )?;
        }
        write!(f, "; {}", advice(self.holder.as_ref(), &self.me))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\n\
                          daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n\
                          # a comment\n\
                          broken line\n\
                          overdue:x:998:998::/var/lib/overdue:/usr/sbin/nologin\n";

    fn user(uid: u32, name: Option<&str>) -> User {
        User {
            uid,
            name: name.map(str::to_string),
        }
    }

    fn holder(owner: User, is_dir: bool) -> Holder {
        Holder {
            path: PathBuf::from("/var/lib/overdue"),
            owner,
            mode: 0o700,
            is_dir,
        }
    }

    #[test]
    fn names_come_from_passwd_lines() {
        assert_eq!(name_in_passwd(PASSWD, 0).as_deref(), Some("root"));
        assert_eq!(name_in_passwd(PASSWD, 998).as_deref(), Some("overdue"));
        assert_eq!(name_in_passwd(PASSWD, 61234), None);
        assert_eq!(name_in_passwd("", 0), None);
    }

    #[test]
    fn another_users_path_is_reached_as_that_user_or_with_sudo() {
        let me = user(1000, Some("ann"));
        let a = advice(Some(&holder(user(998, Some("overdue")), true)), &me);
        assert!(a.contains("sudo -u overdue overdue ..."), "{a}");
        let a = advice(Some(&holder(user(0, Some("root")), true)), &me);
        assert_eq!(a, "run the command with sudo (`sudo overdue ...`)");
        // A systemd dynamic user has no passwd entry.
        let a = advice(Some(&holder(user(61234, None), true)), &me);
        assert!(a.contains("sudo -u '#61234'"), "{a}");
    }

    #[test]
    fn the_owner_itself_refused_is_told_to_fix_the_mode() {
        let me = user(1000, Some("ann"));
        let a = advice(Some(&holder(me.clone(), true)), &me);
        assert!(a.contains("chmod 700 /var/lib/overdue"), "{a}");
        let a = advice(Some(&holder(me.clone(), false)), &me);
        assert!(a.contains("chmod 600 /var/lib/overdue"), "{a}");
    }

    #[test]
    fn root_refused_is_not_told_to_use_sudo() {
        let root = user(0, Some("root"));
        let a = advice(Some(&holder(user(998, None), false)), &root);
        assert!(!a.contains("sudo"), "{a}");
        assert!(a.contains("immutable"), "{a}");
    }

    #[test]
    fn the_message_names_path_owner_mode_user_and_fix_once() {
        let denied = AccessDenied {
            path: PathBuf::from("/var/lib/overdue/overdue.redb"),
            reason: "Permission denied (os error 13)".into(),
            holder: Some(holder(user(0, Some("root")), true)),
            me: user(65534, Some("nobody")),
        };
        assert_eq!(
            denied.to_string(),
            "cannot access /var/lib/overdue/overdue.redb: Permission denied (os error 13); \
             /var/lib/overdue belongs to root (mode 0700) and this command runs as nobody; \
             run the command with sudo (`sudo overdue ...`)"
        );
    }

    #[test]
    fn only_permission_errors_are_refusals() {
        let nf = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert!(AccessDenied::from_io(Path::new("/x"), &nf).is_none());
        for errno in [libc::EACCES, libc::EPERM] {
            let e = std::io::Error::from_raw_os_error(errno);
            let d = AccessDenied::from_io(Path::new("/"), &e).expect("a refusal");
            assert_eq!(d.holder.map(|h| h.path), Some(PathBuf::from("/")));
        }
    }
}
