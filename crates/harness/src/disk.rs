//! The disk a build or run takes from its worktree's filesystem: many small files pass any
//! per-file limit, so the free space itself is watched (`statvfs`, every [`EVERY`]) and the
//! process tree is killed at the disk limit, or earlier when the disk is nearly full.
//!
//! The figure is filesystem-wide: another writer on the same disk counts too. That errs on the
//! side of stopping, and a runner's work dir is its own disk or directory in practice.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often a running build or run has its disk checked: one `statvfs` call.
pub const EVERY: Duration = Duration::from_millis(250);

/// Part of the stop reason when the disk limit was reached: the PR's fault, the job fails.
pub const DISK_STOP: &str = "stopped at the disk limit";
/// Part of the stop reason when the disk was nearly full: the runner's fault (another job,
/// the operator), so the attempt is interrupted and runs again.
pub const DISK_NEARLY_FULL: &str = "stopped with its worktree's disk nearly full";

/// Kept free whatever the limit: 1 GiB, or an eighth of a small filesystem.
const RESERVE_MAX: u64 = 1 << 30;

/// Watches the free space of one worktree's filesystem while a process tree runs.
#[derive(Debug, Clone)]
pub struct DiskGuard {
    path: PathBuf,
    limit: Option<u64>,
    free_at_start: u64,
    reserve: u64,
}

/// Whether `path`'s disk is as full as a guard would stop a tree at: its free space at or below
/// the reserve. `false` when it cannot be read.
pub fn nearly_full(path: &Path) -> bool {
    space(path).is_some_and(|(free, total)| free <= RESERVE_MAX.min(total / 8))
}

/// Free bytes (for an unprivileged writer) and total bytes of the filesystem holding `path`.
fn space(path: &Path) -> Option<(u64, u64)> {
    let st = rustix::fs::statvfs(path).ok()?;
    Some((
        st.f_bavail.saturating_mul(st.f_frsize),
        st.f_blocks.saturating_mul(st.f_frsize),
    ))
}

impl DiskGuard {
    /// A guard of `path`'s filesystem from now on, stopping at `limit` bytes taken; `None` when
    /// the filesystem cannot be read (the run goes unwatched, as before there was a guard).
    pub fn new(path: &Path, limit: Option<u64>) -> Option<DiskGuard> {
        let (free, total) = space(path)?;
        Some(DiskGuard {
            path: path.to_path_buf(),
            limit,
            free_at_start: free,
            reserve: RESERVE_MAX.min(total / 8),
        })
    }

    /// Why the tree must stop now, in words, or `None` while it may go on.
    pub fn breach(&self) -> Option<String> {
        let (free, _) = space(&self.path)?;
        let taken = self.free_at_start.saturating_sub(free);
        if let Some(limit) = self.limit.filter(|l| taken >= *l) {
            return Some(format!(
                "{DISK_STOP} ({} taken from its worktree's disk, limit {})",
                bytes(taken),
                bytes(limit)
            ));
        }
        (free <= self.reserve).then(|| {
            format!(
                "{DISK_NEARLY_FULL} ({} kept free; {} taken while it ran)",
                bytes(self.reserve),
                bytes(taken)
            )
        })
    }
}

/// `8.0 GiB`, `512 MiB`; below a mebibyte `3.4 KiB` or `17 bytes`.
pub fn bytes(n: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    let x = n as f64;
    if x >= GIB {
        format!("{:.1} GiB", x / GIB)
    } else if x >= MIB {
        format!("{:.0} MiB", x / MIB)
    } else if n >= 1024 {
        format!("{:.1} KiB", x / 1024.0)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_with_room_left_lets_the_tree_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let guard = DiskGuard::new(dir.path(), Some(u64::MAX)).unwrap();
        // This machine's disk has more than 1 GiB free; nothing was written since.
        assert_eq!(guard.breach(), None);
        let none = DiskGuard::new(Path::new("/nonexistent/benchgate"), None);
        assert!(none.is_none());
        assert!(!nearly_full(dir.path()));
    }

    #[test]
    fn the_limit_counts_bytes_taken_since_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let mut guard = DiskGuard::new(dir.path(), Some(1 << 20)).unwrap();
        // As if 2 MiB had been taken since the start.
        guard.free_at_start += 2 << 20;
        let said = guard.breach().unwrap();
        assert!(said.starts_with(DISK_STOP), "{said}");
        assert!(said.contains("limit 1 MiB"), "{said}");
        guard.limit = None;
        guard.reserve = u64::MAX;
        let said = guard.breach().unwrap();
        assert!(said.starts_with(DISK_NEARLY_FULL), "{said}");
    }
}
