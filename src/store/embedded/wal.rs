//! The write-ahead log: append-only, in `wal/` next to the data file, that makes
//! pings durable with one `write` and one `fdatasync` per batch, so that the data file itself
//! can take them without a sync (docs/design.md, "The write-ahead log").
//!
//! The log holds ping journal entries only (their sequence number and the journal record's
//! bytes): what a commit of pings alone adds to the data file. It is a row of segment files
//! named by their index. A segment is written full of zeros (and synced) before it is used,
//! on a thread of its own while the one before fills, so an append changes neither its size
//! nor its block map, the sync writes the appended pages alone, and no ping waits for a new
//! segment to be written. A segment's name also carries the id of the data file it belongs to
//! (`meta` key `file_id`), so the log of a data file that was since replaced by a backup is
//! never replayed into it. A record is
//!
//! ```text
//! len: u32 LE | crc: u32 LE (CRC-32 of seq and payload) | seq: u64 LE | payload: len bytes
//! ```
//!
//! and the first place where no whole record with a matching checksum starts (zeros, a record
//! cut short by a crash, damage) ends the segment: a torn record is ignored, never misread.
//! Whatever follows it in that segment was never acknowledged (appends are in order and each
//! batch is synced before it is acknowledged), so nothing acknowledged is behind it.
//!
//! Invariant: every record of a sequence number at or above the data file's durable
//! `journal_next` mark is in the log. Segments go only once a durable commit has covered all
//! their records ([`Wal::cut`]); at open, the records are read back ([`Wal::open`]) for the
//! store to redo, and once it has, the old segments are removed ([`Wal::clear`]).

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::store::embedded::crash_point::{self, Point};

/// Name of the log's directory inside the data directory.
pub(crate) const WAL_DIR: &str = "wal";
/// Bytes of a segment (a batch larger than this gets a segment of its own size).
pub(crate) const SEGMENT_BYTES: u64 = 4 << 20;
/// Bytes before each record's payload.
const HEADER: usize = 16;
const SUFFIX: &str = ".wal";

/// One segment file and the highest sequence number it holds.
#[derive(Debug)]
struct Segment {
    last: Option<u64>,
    path: PathBuf,
}

/// The open log: where the next batch goes.
#[derive(Debug)]
pub(crate) struct Wal {
    dir: PathBuf,
    /// Oldest first; the last one is the one appended to (when `file` is open).
    segments: Vec<Segment>,
    /// The current segment, its size and the offset of the next record.
    file: Option<File>,
    size: u64,
    offset: u64,
    /// Bytes appended since [`Wal::take_appended`] was last asked.
    appended: u64,
    /// The id of the data file this log belongs to (in every segment's name).
    file_id: u128,
    /// The index the next segment's name gets.
    next_index: u64,
    spare: Option<Spare>,
}

/// Where a batch went, so that a batch whose commit failed can be taken back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    segment: usize,
    offset: u64,
    len: u64,
}

/// One record read back.
pub(crate) type Record = (u64, Vec<u8>);

fn crc(seq: u64, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&seq.to_le_bytes());
    h.update(payload);
    h.finalize()
}

/// The bytes of `records`, one after another.
fn encode(records: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let total: usize = records.iter().map(|(_, p)| HEADER + p.len()).sum();
    let mut out = Vec::with_capacity(total);
    for (seq, payload) in records {
        // Journal records are far below 4 GiB (a ping body is at most a few MiB).
        let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&crc(*seq, payload).to_le_bytes());
        out.extend_from_slice(&seq.to_le_bytes());
        out.extend_from_slice(payload);
    }
    out
}

/// The whole records at the start of `bytes`, and the offset where they end.
fn decode(bytes: &[u8]) -> (Vec<Record>, usize) {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(header) = bytes.get(at..at + HEADER) {
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let sum = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let mut seq_bytes = [0u8; 8];
        seq_bytes.copy_from_slice(&header[8..16]);
        let seq = u64::from_le_bytes(seq_bytes);
        if len == 0 {
            break;
        }
        let Some(payload) = bytes.get(at + HEADER..at + HEADER + len) else {
            break;
        };
        if crc(seq, payload) != sum {
            break;
        }
        out.push((seq, payload.to_vec()));
        at += HEADER + len;
    }
    (out, at)
}

/// The file name of the `index`th segment of the data file `file`: sorted by name, one
/// file's segments are in log order.
fn segment_name(index: u64, file: u128) -> String {
    format!("{index:020}-{file:032x}{SUFFIX}")
}

/// (index, file id) from a segment's file name.
fn parse_name(name: &str) -> Option<(u64, u128)> {
    let (index, file) = name.strip_suffix(SUFFIX)?.split_once('-')?;
    Some((index.parse().ok()?, u128::from_str_radix(file, 16).ok()?))
}

/// Makes the segment file `path` of `size` bytes, written with zeros and synced with its
/// directory entry, so that nothing but the appended pages changes when it is appended to.
/// A page at a time: written in larger pieces, the page cache may hold the file in large
/// folios, and an append would then dirty (and its sync write) a whole folio (1 MiB on Linux
/// 6.18's ext4) instead of one page.
fn make_segment(dir: &Path, path: &Path, size: u64) -> std::io::Result<File> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    let zeros = [0u8; 4096];
    let mut left = size;
    let made = (|| {
        while left > 0 {
            let n = left.min(zeros.len() as u64);
            // `n` is at most the buffer's length.
            file.write_all(&zeros[..usize::try_from(n).unwrap_or(zeros.len())])?;
            left -= n;
        }
        file.sync_all()?;
        sync_dir(dir)
    })();
    if let Err(e) = made {
        // A segment cut short by a full disk would hold the space the next try needs.
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    Ok(file)
}

/// The next segment, being made on a thread of its own while the current one fills.
type Spare = std::thread::JoinHandle<std::io::Result<(File, PathBuf)>>;

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

impl Wal {
    /// Opens the log of the data file whose id is `file` in `dir` (creating the directory,
    /// mode 0700) and reads every record back, in log order. Segments of another file (the
    /// data file was replaced by a backup) are not read, only removed with the others by
    /// [`Wal::clear`]. Appends go to a new segment (the old ones stay until [`Wal::clear`] or
    /// [`Wal::cut`] removes them).
    pub(crate) fn open(dir: &Path, file: u128) -> std::io::Result<(Wal, Vec<Record>)> {
        if !dir.exists() {
            DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        }
        let mut found: Vec<(u64, PathBuf)> = Vec::new();
        let mut foreign = Vec::new();
        let mut next_index = 0;
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(parse_name);
            match name {
                Some((index, id)) if id == file => {
                    next_index = next_index.max(index + 1);
                    found.push((index, path));
                }
                Some(_) => foreign.push(Segment { last: None, path }),
                None => {}
            }
        }
        if !foreign.is_empty() {
            tracing::warn!(
                segments = foreign.len(),
                "the write-ahead log holds segments of another data file (was the file replaced \
                 by a backup?); they are not replayed and are removed"
            );
        }
        found.sort();
        let mut records = Vec::new();
        let mut segments = foreign;
        for (_, path) in found {
            let mut bytes = Vec::new();
            File::open(&path)?.read_to_end(&mut bytes)?;
            let (mut read, end) = decode(&bytes);
            if bytes[end..].iter().any(|b| *b != 0) {
                tracing::warn!(
                    segment = %path.display(),
                    "the write-ahead log ends in a record cut short (a crash while it was \
                     written): it was never acknowledged and is ignored"
                );
            }
            segments.push(Segment {
                last: read.iter().map(|(s, _)| *s).max(),
                path,
            });
            records.append(&mut read);
        }
        let wal = Wal {
            dir: dir.to_path_buf(),
            segments,
            file: None,
            size: 0,
            offset: 0,
            appended: 0,
            file_id: file,
            next_index,
            spare: None,
        };
        Ok((wal, records))
    }

    /// Removes every segment (their records are in the data file, durably).
    pub(crate) fn clear(&mut self) -> std::io::Result<()> {
        self.file = None;
        if let Some(Ok((_, path))) = self.spare.take().and_then(|s| s.join().ok()) {
            self.segments.push(Segment { last: None, path });
        }
        for segment in self.segments.drain(..) {
            std::fs::remove_file(&segment.path)?;
        }
        sync_dir(&self.dir)
    }

    /// A new segment of at least `need` bytes to append to: the spare made beside the last
    /// one when it fits (the ping that fills a segment does not wait for the next one to be
    /// written), otherwise one made now. Then the next spare is started.
    fn start_segment(&mut self, need: u64) -> std::io::Result<()> {
        let spare = match self.spare.take().map(std::thread::JoinHandle::join) {
            Some(Ok(Ok(spare))) if need <= SEGMENT_BYTES => Some(spare),
            Some(Ok(Ok((_, path)))) => {
                // Too small for this batch: an empty segment, removed with the others.
                self.segments.push(Segment { last: None, path });
                None
            }
            // Failed (a full disk): made again now, and that error is the answer.
            _ => None,
        };
        let (file, path, size) = if let Some((file, path)) = spare {
            (file, path, SEGMENT_BYTES)
        } else {
            let started = std::time::Instant::now();
            let size = SEGMENT_BYTES.max(need.next_multiple_of(4096));
            let path = self.dir.join(segment_name(self.next_index, self.file_id));
            self.next_index += 1;
            let file = make_segment(&self.dir, &path, size)?;
            tracing::debug!(
                ms = started.elapsed().as_secs_f64() * 1000.0,
                "made a write-ahead log segment while a batch waited"
            );
            (file, path, size)
        };
        self.segments.push(Segment { last: None, path });
        self.file = Some(file);
        self.size = size;
        self.offset = 0;
        let dir = self.dir.clone();
        let path = dir.join(segment_name(self.next_index, self.file_id));
        self.next_index += 1;
        self.spare = std::thread::Builder::new()
            .name("ping-log-segment".into())
            .spawn(move || {
                crate::store::embedded::background_priority();
                make_segment(&dir, &path, SEGMENT_BYTES).map(|file| (file, path))
            })
            .map_err(|e| {
                tracing::warn!("cannot start making the next write-ahead log segment: {e}");
            })
            .ok();
        Ok(())
    }

    /// Appends `records` (in sequence order) and syncs them: once this returns they survive
    /// a crash. The answer says where they went, for [`Wal::retract`].
    pub(crate) fn append(&mut self, records: &[(u64, Vec<u8>)]) -> std::io::Result<Mark> {
        let bytes = encode(records);
        let len = bytes.len() as u64;
        if self.file.is_none() || self.offset + len > self.size {
            self.start_segment(len)?;
        }
        let segment = self.segments.len() - 1;
        let Some(file) = self.file.as_ref() else {
            return Err(std::io::Error::other(
                "the write-ahead log has no open segment",
            ));
        };
        let offset = self.offset;
        if crash_point::fires(Point::LogAppendTorn) {
            // Everything but the second half of the last record.
            let last = records.last().map_or(0, |(_, p)| HEADER + p.len());
            file.write_all_at(&bytes[..bytes.len() - last / 2], offset)?;
            file.sync_data()?;
            crash_point::die();
        }
        file.write_all_at(&bytes, offset)?;
        file.sync_data()?;
        self.offset += len;
        self.appended += len;
        let last = records.iter().map(|(s, _)| *s).max();
        let seg = &mut self.segments[segment];
        seg.last = seg.last.max(last);
        Ok(Mark {
            segment,
            offset,
            len,
        })
    }

    /// Takes back the batch appended at `mark` (the last one) when its commit failed: its
    /// bytes become zeros again, so it is not redone at the next start.
    pub(crate) fn retract(&mut self, mark: Mark) -> std::io::Result<()> {
        if mark.segment + 1 != self.segments.len() || mark.offset + mark.len != self.offset {
            return Err(std::io::Error::other(
                "only the last batch can be taken back",
            ));
        }
        let Some(file) = self.file.as_ref() else {
            return Err(std::io::Error::other(
                "the write-ahead log has no open segment",
            ));
        };
        let len = usize::try_from(mark.len).map_err(std::io::Error::other)?;
        file.write_all_at(&vec![0u8; len], mark.offset)?;
        file.sync_data()?;
        self.offset = mark.offset;
        Ok(())
    }

    /// Removes the segments all of whose records are numbered below `below` (a durable commit
    /// of the data file holds them), except the one appended to.
    pub(crate) fn cut(&mut self, below: u64) -> std::io::Result<()> {
        let current = if self.file.is_some() {
            self.segments.len().saturating_sub(1)
        } else {
            self.segments.len()
        };
        let mut removed = false;
        let mut kept = Vec::with_capacity(self.segments.len());
        for (i, segment) in std::mem::take(&mut self.segments).into_iter().enumerate() {
            let covered = segment.last.is_none_or(|last| last < below);
            if i < current && covered {
                std::fs::remove_file(&segment.path)?;
                crash_point::reached(Point::LogCut);
                removed = true;
            } else {
                kept.push(segment);
            }
        }
        self.segments = kept;
        if removed {
            sync_dir(&self.dir)?;
        }
        Ok(())
    }

    /// Bytes appended since the last call (for the checkpoint's size trigger).
    pub(crate) fn take_appended(&mut self) -> u64 {
        std::mem::take(&mut self.appended)
    }

    /// How many segment files there are.
    #[cfg(test)]
    pub(crate) fn segment_count(&self) -> usize {
        self.segments.len()
    }
}

impl Drop for Wal {
    /// Waits for a spare being made, so that no file appears in the directory afterwards.
    fn drop(&mut self) {
        if let Some(spare) = self.spare.take() {
            let _ = spare.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(seq: u64, text: &str) -> (u64, Vec<u8>) {
        (seq, text.as_bytes().to_vec())
    }

    /// The segment appended to (the other file is the spare made beside it).
    fn first_segment(dir: &Path) -> PathBuf {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("dir")
            .map(|e| e.expect("entry").path())
            .collect();
        files.sort();
        assert_eq!(files.len(), 2, "{files:?}");
        files.remove(0)
    }

    #[test]
    fn records_come_back_in_order_after_a_reopen() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join(WAL_DIR);
        let (mut wal, none) = Wal::open(&dir, 7).expect("open");
        assert!(none.is_empty());
        wal.append(&[rec(1, "a"), rec(2, "bb")]).expect("append");
        wal.append(&[rec(3, "ccc")]).expect("append");
        drop(wal);
        let (_, back) = Wal::open(&dir, 7).expect("reopen");
        assert_eq!(back, vec![rec(1, "a"), rec(2, "bb"), rec(3, "ccc")]);
        let size = std::fs::metadata(first_segment(&dir)).expect("meta").len();
        assert_eq!(
            size, SEGMENT_BYTES,
            "made full size, so appends do not grow it"
        );
    }

    #[test]
    fn a_record_cut_short_or_damaged_ends_the_log_and_is_never_misread() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join(WAL_DIR);
        let (mut wal, _) = Wal::open(&dir, 7).expect("open");
        wal.append(&[rec(1, "first")]).expect("append");
        let mark = wal.append(&[rec(2, "second record")]).expect("append");
        drop(wal);
        let path = first_segment(&dir);
        let whole = std::fs::read(&path).expect("read");
        let start = usize::try_from(mark.offset).expect("small");
        let end = start + HEADER + "second record".len();
        // Cut anywhere inside the second record (as a crash mid-write leaves it: the rest is
        // still zeros): only the first comes back.
        for cut in [start + 1, start + HEADER - 1, start + HEADER + 3, end - 1] {
            let mut bytes = whole.clone();
            bytes[cut..end].fill(0);
            std::fs::write(&path, &bytes).expect("write");
            let (_, back) = Wal::open(&dir, 7).expect("open");
            assert_eq!(back, vec![rec(1, "first")], "cut at {cut}");
        }
        // A flipped bit in its payload: the checksum refuses it.
        let mut bytes = whole.clone();
        bytes[end - 2] ^= 0x20;
        std::fs::write(&path, &bytes).expect("write");
        let (_, back) = Wal::open(&dir, 7).expect("open");
        assert_eq!(back, vec![rec(1, "first")]);
        // A length that runs past the end of the file.
        let mut bytes = whole;
        bytes[start..start + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&path, &bytes).expect("write");
        let (_, back) = Wal::open(&dir, 7).expect("open");
        assert_eq!(back, vec![rec(1, "first")]);
    }

    #[test]
    fn a_retracted_batch_is_gone_and_the_next_one_takes_its_place() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join(WAL_DIR);
        let (mut wal, _) = Wal::open(&dir, 7).expect("open");
        wal.append(&[rec(1, "kept")]).expect("append");
        let mark = wal.append(&[rec(2, "failed commit")]).expect("append");
        wal.retract(mark).expect("retract");
        wal.append(&[rec(2, "again")]).expect("append");
        drop(wal);
        let (_, back) = Wal::open(&dir, 7).expect("reopen");
        assert_eq!(back, vec![rec(1, "kept"), rec(2, "again")]);
    }

    #[test]
    fn full_segments_roll_over_and_cut_removes_only_covered_ones() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join(WAL_DIR);
        let (mut wal, _) = Wal::open(&dir, 7).expect("open");
        // Three records of just over a third of a segment: the third starts a new one.
        let big = vec![7u8; usize::try_from(SEGMENT_BYTES / 3).expect("small")];
        for seq in 1..=3 {
            wal.append(&[(seq, big.clone())]).expect("append");
        }
        assert_eq!(wal.segment_count(), 2);
        // A batch bigger than a segment gets a segment of its own size.
        let huge = vec![1u8; usize::try_from(SEGMENT_BYTES + 10).expect("small")];
        wal.append(&[(4, huge)]).expect("append");
        // The spare made for it was too small: it stays, empty, until a cut.
        assert_eq!(wal.segment_count(), 4);
        wal.cut(3).expect("cut");
        assert_eq!(
            wal.segment_count(),
            2,
            "the first held 1 and 2 only, the spare nothing"
        );
        wal.cut(100).expect("cut");
        assert_eq!(wal.segment_count(), 1, "the current one stays");
        drop(wal);
        let (mut wal, back) = Wal::open(&dir, 7).expect("reopen");
        assert_eq!(back.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [4]);
        wal.clear().expect("clear");
        assert_eq!(std::fs::read_dir(&dir).expect("dir").count(), 0);
    }
}
