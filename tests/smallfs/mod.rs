//! A small real filesystem for the storage-failure tests: an ext4 image on a loop device,
//! mounted on a temporary directory, so that a test can fill it to the last block or make a
//! file on it immutable (tmpfs ignores `chattr +i` for open files; ext4 refuses their writes).
//! Needs root, `mount` with loop devices and e2fsprogs; [`SmallFs::ext4`] answers `None` where
//! that is not possible, and the callers fail instead of skipping when `CI` is set.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A mounted ext4 filesystem of a few MiB; unmounted when dropped.
pub struct SmallFs {
    pub root: PathBuf,
    image_dir: tempfile::TempDir,
    mount_dir: tempfile::TempDir,
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl SmallFs {
    /// Makes and mounts an ext4 filesystem of `mib` MiB without reserved blocks (so root
    /// fills it too). `Err` says why it could not be done here.
    pub fn ext4(mib: u64) -> Result<SmallFs, String> {
        let image_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mount_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let image = image_dir.path().join("fs.img");
        let file = std::fs::File::create(&image).map_err(|e| e.to_string())?;
        file.set_len(mib << 20).map_err(|e| e.to_string())?;
        drop(file);
        run(Command::new("mkfs.ext4")
            .args(["-q", "-F", "-m", "0"])
            .arg(&image))?;
        run(Command::new("mount")
            .args(["-o", "loop"])
            .arg(&image)
            .arg(mount_dir.path()))?;
        Ok(SmallFs {
            root: mount_dir.path().to_path_buf(),
            image_dir,
            mount_dir,
        })
    }

    /// Like [`SmallFs::ext4`], but outside CI a missing privilege or tool skips the test
    /// (`None`, with a line on stderr saying so); under `CI` it fails.
    pub fn ext4_or_skip(mib: u64, test: &str) -> Option<SmallFs> {
        match SmallFs::ext4(mib) {
            Ok(fs) => Some(fs),
            Err(why) => {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "CI must be able to mount a loop-device ext4 filesystem as root: {why}"
                );
                eprintln!("SKIPPED {test}: cannot mount a small ext4 filesystem ({why})");
                None
            }
        }
    }

    /// Writes a file until the filesystem has no block left; its path.
    pub fn fill(&self) -> PathBuf {
        let path = self.root.join("filler");
        let mut file = std::fs::File::create(&path).expect("create the filler");
        for size in [1 << 20, 64 << 10, 4 << 10, 512, 1] {
            let chunk = vec![0xa5u8; size];
            while file
                .write_all(&chunk)
                .and_then(|()| file.sync_data())
                .is_ok()
            {}
        }
        path
    }

    /// Frees what [`SmallFs::fill`] took.
    pub fn free(filler: &Path) {
        std::fs::remove_file(filler).expect("remove the filler");
        let _ = Command::new("sync").status();
    }

    /// `chattr +i` (true) or `chattr -i` (false) on `path`.
    pub fn immutable(path: &Path, on: bool) {
        run(Command::new("chattr")
            .arg(if on { "+i" } else { "-i" })
            .arg(path))
        .expect("chattr");
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        // Lazy: a process of the test that still holds a file must not keep the mount (and
        // the loop device) forever.
        let _ = Command::new("umount").arg("-l").arg(&self.root).status();
        let _ = (&self.image_dir, &self.mount_dir);
    }
}
