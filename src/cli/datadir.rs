//! Which data directory a command uses, and what it says when that directory holds no data.
//!
//! `--data DIR` (or `OVERDUE_DATA`) wins. Without it, `./overdue-data` is used when it exists,
//! as a checkout or a hand-started service has it. Otherwise an admin command run on a machine
//! where the package is installed means the packaged service's data: `/var/lib/overdue` when
//! it holds a data file or a control socket. `serve` never picks it up by itself (the packaged
//! service names it explicitly), so a hand-started `serve` cannot take over the package's data.
//! Failing all that, `./overdue-data`.
//!
//! Only `serve` and `import` create a data file; any other command on a directory without one
//! (and without a running service's socket) exits 2 with [`no_data`], instead of creating an
//! empty database and printing an empty table as if that were the data.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::cli::control::SOCKET_FILE;
use crate::service::DB_FILE;

/// The default data directory, relative to the working directory.
pub(crate) const LOCAL: &str = "./overdue-data";
/// Where the packaged service keeps its data (its unit's `StateDirectory`).
pub(crate) const PACKAGED: &str = "/var/lib/overdue";
/// Replaces [`PACKAGED`]: only the tests set it, to try the rule without touching /var/lib.
pub(crate) const PACKAGED_ENV: &str = "OVERDUE_PACKAGED_DATA";

/// What the command does with its data directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// `serve`: never picks up the packaged directory by itself.
    Serve,
    /// Every other command.
    Admin,
}

/// What is on disk, as far as the rule cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Found {
    /// `./overdue-data` exists.
    pub(crate) local_exists: bool,
    /// The packaged directory holds a data file or a control socket.
    pub(crate) packaged_in_use: bool,
}

/// The data directory: `explicit` (`--data` or `OVERDUE_DATA`) if given, else by the rule in
/// the module's documentation.
pub(crate) fn resolve(
    explicit: Option<&Path>,
    purpose: Purpose,
    found: Found,
    packaged: &Path,
) -> PathBuf {
    if let Some(dir) = explicit {
        return dir.to_path_buf();
    }
    if !found.local_exists && purpose == Purpose::Admin && found.packaged_in_use {
        return packaged.to_path_buf();
    }
    PathBuf::from(LOCAL)
}

/// The packaged service's data directory ([`PACKAGED`] unless the tests moved it).
pub(crate) fn packaged() -> PathBuf {
    std::env::var_os(PACKAGED_ENV).map_or_else(|| PathBuf::from(PACKAGED), PathBuf::from)
}

/// Whether `dir` holds a data file or a control socket. A directory this user may not look
/// into counts as in use: the packaged one is private to the service's user, and naming it
/// (with the permission error's advice) helps more than an empty `./overdue-data`.
pub(crate) fn in_use(dir: &Path) -> bool {
    [DB_FILE, SOCKET_FILE]
        .iter()
        .any(|name| match dir.join(name).try_exists() {
            Ok(found) => found,
            Err(e) => e.kind() == ErrorKind::PermissionDenied,
        })
}

/// The data directory for a command, looking at the disk only when `explicit` is `None`.
/// Where a command finds the data: the data directory (the control socket, and the data
/// file unless a database is named) and the PostgreSQL database, if one is.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    pub(crate) dir: PathBuf,
    pub(crate) database: Option<crate::service::Database>,
}

pub(crate) fn choose(explicit: Option<&Path>, purpose: Purpose) -> PathBuf {
    if explicit.is_some() {
        return resolve(explicit, purpose, Found::default(), Path::new(PACKAGED));
    }
    let packaged = packaged();
    let local_exists = Path::new(LOCAL).exists();
    let found = Found {
        local_exists,
        packaged_in_use: !local_exists && purpose == Purpose::Admin && in_use(&packaged),
    };
    resolve(None, purpose, found, &packaged)
}

/// What a command that must not create a data file says about `dir` without one.
pub(crate) fn no_data(dir: &Path, packaged: &Path) -> String {
    let shown = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    format!(
        "no data in {}: it holds no data file ({DB_FILE}) and no running service's control \
         socket, and only `overdue serve` and `overdue import` create one. The packaged \
         service keeps its data in {} (`--data {}`); name another directory with --data DIR \
         or OVERDUE_DATA",
        shown.display(),
        packaged.display(),
        packaged.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PKG: &str = "/pkg/overdue";

    fn pick(explicit: Option<&str>, purpose: Purpose, local: bool, packaged: bool) -> PathBuf {
        let found = Found {
            local_exists: local,
            packaged_in_use: packaged,
        };
        resolve(explicit.map(Path::new), purpose, found, Path::new(PKG))
    }

    #[test]
    fn an_explicit_directory_always_wins() {
        for purpose in [Purpose::Serve, Purpose::Admin] {
            for (local, packaged) in [(false, false), (true, true), (false, true)] {
                assert_eq!(
                    pick(Some("/srv/x"), purpose, local, packaged),
                    PathBuf::from("/srv/x")
                );
            }
        }
    }

    #[test]
    fn an_existing_local_directory_comes_before_the_packaged_one() {
        for purpose in [Purpose::Serve, Purpose::Admin] {
            assert_eq!(pick(None, purpose, true, true), PathBuf::from(LOCAL));
        }
    }

    #[test]
    fn admin_commands_find_the_packaged_service_data() {
        assert_eq!(pick(None, Purpose::Admin, false, true), PathBuf::from(PKG));
        assert_eq!(
            pick(None, Purpose::Admin, false, false),
            PathBuf::from(LOCAL)
        );
    }

    #[test]
    fn serve_never_picks_up_the_packaged_directory_by_itself() {
        assert_eq!(
            pick(None, Purpose::Serve, false, true),
            PathBuf::from(LOCAL)
        );
        assert_eq!(
            pick(None, Purpose::Serve, false, false),
            PathBuf::from(LOCAL)
        );
    }

    #[test]
    fn a_directory_is_in_use_with_a_data_file_or_a_socket() {
        let tmp = tempfile::tempdir().expect("tmp");
        assert!(!in_use(tmp.path()));
        assert!(!in_use(&tmp.path().join("absent")));
        std::fs::write(tmp.path().join(SOCKET_FILE), b"").expect("socket stand-in");
        assert!(in_use(tmp.path()));
        std::fs::remove_file(tmp.path().join(SOCKET_FILE)).expect("rm");
        std::fs::write(tmp.path().join(DB_FILE), b"x").expect("file");
        assert!(in_use(tmp.path()));
    }

    #[test]
    fn the_message_names_the_directory_and_the_packaged_one() {
        let msg = no_data(Path::new("/home/ann/overdue-data"), Path::new(PACKAGED));
        assert!(
            msg.starts_with("no data in /home/ann/overdue-data: "),
            "{msg}"
        );
        assert!(msg.contains("/var/lib/overdue"), "{msg}");
        assert!(msg.contains("--data DIR"), "{msg}");
        assert!(msg.contains("OVERDUE_DATA"), "{msg}");
    }
}
