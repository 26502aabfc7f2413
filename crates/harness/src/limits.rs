//! Resource limits of one side's build or benchmark run, so a hostile or buggy PR stops itself,
//! not the runner: memory (hard, so the kernel's OOM killer takes the PR's process and not the
//! agent), processes (a fork bomb), CPU seconds and the largest file a process may write.
//!
//! Where the agent may create cgroups with the `memory` and `pids` controllers (v2 where the
//! unified hierarchy has both, else v1; as root), each process tree gets a cgroup of its own:
//! the limits hold for the whole tree, what stopped it is read back from the cgroup's events,
//! and whatever it left running is killed when it ends.
//! Elsewhere rlimits are the fallback: per process, and a process limit does not bind root.
//! CPU seconds and file size are rlimits either way.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::disk::bytes;

/// What one build or run may use; `None`: unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// Memory of the whole process tree (cgroup), or address space per process (rlimits).
    pub memory_bytes: Option<u64>,
    /// Processes and threads alive at once.
    pub processes: Option<u64>,
    /// CPU seconds of each process (`RLIMIT_CPU`).
    pub cpu_seconds: Option<u64>,
    /// The largest file a process may write (`RLIMIT_FSIZE`).
    pub file_bytes: Option<u64>,
    /// Disk the whole tree may take from its worktree's filesystem ([`crate::disk::DiskGuard`]).
    pub disk_bytes: Option<u64>,
}

/// How limits are enforced on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Enforcement {
    /// cgroup v2: the group benchgate creates groups in, `memory` and `pids` enabled for them.
    CgroupV2 {
        parent: PathBuf,
    },
    /// cgroup v1: the `memory` and `pids` hierarchies' directories benchgate creates groups in.
    CgroupV1 {
        memory: PathBuf,
        pids: PathBuf,
    },
    Rlimits,
}

/// The limits and how this host enforces them; decided once, used for every build and run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Containment {
    limits: Limits,
    enforcement: Enforcement,
}

/// Where cgroup v1 controllers are mounted on Linux.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";
/// The directory under each controller that holds benchgate's groups.
const PARENT: &str = "benchgate";

impl Containment {
    /// cgroup v2 when the unified hierarchy (`/sys/fs/cgroup`, or `unified` under it on a hybrid
    /// host) has the `memory` and `pids` controllers and benchgate may enable them for its
    /// groups; else cgroup v1 when both are mounted there and writable; rlimits otherwise.
    pub fn detect(limits: Limits) -> Containment {
        Self::detect_at(Path::new(CGROUP_ROOT), limits)
    }

    fn detect_at(root: &Path, limits: Limits) -> Containment {
        if let Some(parent) = v2_parent(root, own_cgroup().as_deref()) {
            return Containment {
                limits,
                enforcement: Enforcement::CgroupV2 { parent },
            };
        }
        let parent = |controller: &str| -> Option<PathBuf> {
            let dir = root.join(controller);
            // A v1 hierarchy of this controller has its own files at its root.
            let marker = match controller {
                "memory" => "memory.limit_in_bytes",
                _ => "pids.max",
            };
            if !dir.join("cgroup.procs").exists() {
                return None;
            }
            let parent = dir.join(PARENT);
            std::fs::create_dir_all(&parent).ok()?;
            sweep_stale(&parent);
            (parent.join(marker).exists() && can_make_groups(&parent)).then_some(parent)
        };
        let enforcement = match (parent("memory"), parent("pids")) {
            (Some(memory), Some(pids)) => Enforcement::CgroupV1 { memory, pids },
            _ => Enforcement::Rlimits,
        };
        Containment {
            limits,
            enforcement,
        }
    }

    /// The limits enforced with rlimits only.
    pub fn rlimits(limits: Limits) -> Containment {
        Containment {
            limits,
            enforcement: Enforcement::Rlimits,
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// `cgroup v2`, `cgroup v1` or `rlimits`, for the job log and the runner's fingerprint.
    pub fn mechanism(&self) -> &'static str {
        match self.enforcement {
            Enforcement::CgroupV2 { .. } => "cgroup v2",
            Enforcement::CgroupV1 { .. } => "cgroup v1",
            Enforcement::Rlimits => "rlimits",
        }
    }

    /// The limits in words: `cgroup v1: memory 8.0 GiB, 4096 processes; 3600 s CPU, 16.0 GiB
    /// files per process`.
    pub fn describe(&self) -> String {
        let l = &self.limits;
        let mut tree = Vec::new();
        if let Some(m) = l.memory_bytes {
            tree.push(format!("memory {}", bytes(m)));
        }
        if let Some(p) = l.processes {
            tree.push(format!("{p} processes"));
        }
        if let Some(d) = l.disk_bytes {
            tree.push(format!("disk {}", bytes(d)));
        }
        let mut each = Vec::new();
        if let Some(c) = l.cpu_seconds {
            each.push(format!("{c} s CPU"));
        }
        if let Some(f) = l.file_bytes {
            each.push(format!("{} files", bytes(f)));
        }
        let each = if each.is_empty() {
            String::new()
        } else {
            format!("; {} per process", each.join(", "))
        };
        let tree = if tree.is_empty() {
            "none".to_owned()
        } else {
            tree.join(", ")
        };
        format!("{}: {tree}{each}", self.mechanism())
    }

    /// The guard of the disk a tree started in `dir` takes: the disk limit, and the reserve kept
    /// free whatever the limit. `None` when `dir`'s filesystem cannot be read.
    pub fn disk_guard(&self, dir: &Path) -> Option<crate::disk::DiskGuard> {
        crate::disk::DiskGuard::new(dir, self.limits.disk_bytes)
    }

    /// Prepares the limits of one process tree about to start: its cgroup (if any) made and
    /// opened, the rlimits to set in the child.
    pub fn enter(&self) -> io::Result<Entered> {
        static GROUPS: AtomicU64 = AtomicU64::new(0);
        let l = &self.limits;
        let mut rlimits = Vec::new();
        if let Some(c) = l.cpu_seconds {
            rlimits.push((libc::RLIMIT_CPU, c));
        }
        if let Some(f) = l.file_bytes {
            rlimits.push((libc::RLIMIT_FSIZE, f));
        }
        let name = || {
            format!(
                "{}-{}",
                std::process::id(),
                GROUPS.fetch_add(1, Ordering::Relaxed)
            )
        };
        let group = match &self.enforcement {
            Enforcement::CgroupV2 { parent } => Some(Group::create_v2(parent, &name(), l)?),
            Enforcement::CgroupV1 { memory, pids } => {
                Some(Group::create(memory, pids, &name(), l)?)
            }
            Enforcement::Rlimits => {
                if let Some(m) = l.memory_bytes {
                    rlimits.push((libc::RLIMIT_AS, m));
                }
                if let Some(p) = l.processes {
                    rlimits.push((libc::RLIMIT_NPROC, p));
                }
                None
            }
        };
        Ok(Entered {
            limits: *l,
            mechanism: self.mechanism(),
            group,
            rlimits,
        })
    }
}

/// One process tree's limits, from just before it starts until it ended.
#[derive(Debug)]
pub struct Entered {
    limits: Limits,
    mechanism: &'static str,
    group: Option<Group>,
    rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
}

/// What the child does between fork and exec: join the cgroup, set the rlimits. Plain data, so
/// the pre-exec closure can own it.
#[derive(Debug, Clone)]
pub struct ChildSetup {
    procs: Vec<RawFd>,
    rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
}

impl ChildSetup {
    /// In the child, between fork and exec: async-signal-safe (no allocation, no locks).
    pub fn apply(&self) -> io::Result<()> {
        let pid = rustix::process::getpid().as_raw_nonzero().get();
        let mut digits = [0u8; 12];
        let text = decimal(pid as u64, &mut digits);
        for &fd in &self.procs {
            // SAFETY: `fd` stays open in the parent until the child has exec'd or failed.
            let fd = unsafe { rustix::fd::BorrowedFd::borrow_raw(fd) };
            rustix::io::write(fd, text)?;
        }
        for &(resource, value) in &self.rlimits {
            let limit = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            // SAFETY: a plain system call on a local value.
            if unsafe { libc::setrlimit(resource, &limit) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// `n` in decimal, written into the end of `buf`.
fn decimal(mut n: u64, buf: &mut [u8; 12]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

/// Which limit stopped a process tree, and what it left behind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Ended {
    /// The tree reached its memory limit and the kernel killed a process of it.
    memory_limit: bool,
    /// A fork failed at the process limit.
    process_limit: bool,
    /// Processes still running after the first one ended; killed.
    left_running: usize,
}

impl Entered {
    /// What the child must do before it execs.
    pub fn child_setup(&self) -> ChildSetup {
        ChildSetup {
            procs: self
                .group
                .as_ref()
                .map(|g| g.procs.iter().map(AsRawFd::as_raw_fd).collect())
                .unwrap_or_default(),
            rlimits: self.rlimits.clone(),
        }
    }

    /// After the first process ended (killed by `signal`, if it was): kills what it left
    /// running, removes its cgroup, and says which limit stopped it, or what it left running,
    /// in words; `None` when no limit was reached and nothing was left.
    pub fn end(mut self, signal: Option<i32>) -> Option<String> {
        let ended = match self.group.take() {
            Some(group) => group.end(),
            None => Ended::default(),
        };
        self.reason(&ended, signal)
    }

    fn reason(&self, ended: &Ended, signal: Option<i32>) -> Option<String> {
        let l = &self.limits;
        let at = self.mechanism;
        if ended.memory_limit {
            return Some(format!(
                "stopped at the memory limit ({}, {at})",
                l.memory_bytes.map(bytes).unwrap_or_default()
            ));
        }
        if ended.process_limit {
            return Some(format!(
                "reached the process limit ({}, {at}): a fork failed",
                l.processes.unwrap_or_default()
            ));
        }
        match signal {
            Some(libc::SIGXCPU) => {
                return Some(format!(
                    "stopped at the CPU time limit ({} s per process)",
                    l.cpu_seconds.unwrap_or_default()
                ));
            }
            Some(libc::SIGXFSZ) => {
                return Some(format!(
                    "stopped at the file size limit ({} per file)",
                    l.file_bytes.map(bytes).unwrap_or_default()
                ));
            }
            _ => {}
        }
        (ended.left_running > 0).then(|| {
            format!(
                "left {} process(es) running after it ended; they were killed",
                ended.left_running
            )
        })
    }
}

/// One process tree's cgroups: v1's memory and pids groups, or one v2 group.
#[derive(Debug)]
struct Group {
    /// v1: `[memory, pids]`; v2: `[group]`.
    dirs: Vec<PathBuf>,
    /// `cgroup.procs` of each, open for the child to write its pid into.
    procs: Vec<OwnedFd>,
}

impl Group {
    /// The groups in `dirs`, made, with their `cgroup.procs` open.
    fn open(dirs: Vec<PathBuf>) -> io::Result<Group> {
        for dir in &dirs {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Group {
            procs: dirs
                .iter()
                .map(|d| {
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open(d.join("cgroup.procs"))
                        .map(OwnedFd::from)
                })
                .collect::<io::Result<_>>()?,
            dirs,
        })
    }

    fn create_v2(parent: &Path, name: &str, l: &Limits) -> io::Result<Group> {
        let group = Group::open(vec![parent.join(name)])?;
        let dir = &group.dirs[0];
        if let Some(m) = l.memory_bytes {
            std::fs::write(dir.join("memory.max"), m.to_string())?;
            // No escape into swap, where the kernel has swap accounting.
            let swap = dir.join("memory.swap.max");
            if swap.exists() {
                let _ = std::fs::write(swap, "0");
            }
        }
        if let Some(p) = l.processes {
            std::fs::write(dir.join("pids.max"), p.to_string())?;
        }
        Ok(group)
    }

    fn create(memory: &Path, pids: &Path, name: &str, l: &Limits) -> io::Result<Group> {
        let group = Group::open(vec![memory.join(name), pids.join(name)])?;
        if let Some(m) = l.memory_bytes {
            std::fs::write(group.dirs[0].join("memory.limit_in_bytes"), m.to_string())?;
            // With swap accounting, swap counts too: no escape into swap.
            let memsw = group.dirs[0].join("memory.memsw.limit_in_bytes");
            if memsw.exists() {
                let _ = std::fs::write(memsw, m.to_string());
            }
        }
        if let Some(p) = l.processes {
            std::fs::write(group.dirs[1].join("pids.max"), p.to_string())?;
        }
        Ok(group)
    }

    fn end(self) -> Ended {
        let read =
            |dir: &Path, file: &str| std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        let field = |text: &str, key: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
                .unwrap_or(0)
        };
        // The pids group holds every process of the tree (v1's second; v2's only group).
        let pids = self.dirs.last().expect("a group has a directory");
        let left_running = kill_all(pids);
        let memory_limit = if self.dirs.len() == 1 {
            field(&read(pids, "memory.events"), "oom_kill ") > 0
        } else {
            let oom = read(&self.dirs[0], "memory.oom_control");
            field(&oom, "oom_kill ") > 0
                || (!oom.contains("oom_kill ")
                    && field(&read(&self.dirs[0], "memory.failcnt"), "") > 0)
        };
        let process_limit = field(&read(pids, "pids.events"), "max ") > 0;
        drop(self.procs);
        for dir in &self.dirs {
            remove_group(dir);
        }
        Ended {
            memory_limit,
            process_limit,
            left_running,
        }
    }
}

/// The group benchgate makes its v2 groups in, `memory` and `pids` enabled for them: under the
/// unified hierarchy at `root` or `root/unified` when the agent may write there (root, a
/// container), else under the agent's own cgroup `own` when it was delegated to it (systemd's
/// `Delegate=`, a non-root agent). `None` without that hierarchy, without both controllers, or
/// when they cannot be enabled (a cgroup namespace whose root holds processes).
fn v2_parent(root: &Path, own: Option<&Path>) -> Option<PathBuf> {
    let mount = [root.to_path_buf(), root.join("unified")]
        .into_iter()
        .find(|d| d.join("cgroup.controllers").exists())?;
    if !both_controllers(&mount.join("cgroup.controllers")) {
        return None;
    }
    root_parent(&mount).or_else(|| {
        let own = own?.strip_prefix("/").ok()?;
        (!own.as_os_str().is_empty())
            .then(|| delegated_parent(&mount.join(own)))
            .flatten()
    })
}

/// Whether a controller list (`cgroup.controllers`, `cgroup.subtree_control`) has both.
fn both_controllers(file: &Path) -> bool {
    std::fs::read_to_string(file).is_ok_and(|t| {
        let words: Vec<&str> = t.split_whitespace().collect();
        words.contains(&"memory") && words.contains(&"pids")
    })
}

/// Enables `memory` and `pids` for the children of `dir` unless they are already.
fn enable_controllers(dir: &Path) -> bool {
    both_controllers(&dir.join("cgroup.subtree_control"))
        || std::fs::write(dir.join("cgroup.subtree_control"), "+memory +pids").is_ok()
}

/// benchgate's parent group at the hierarchy's root.
fn root_parent(mount: &Path) -> Option<PathBuf> {
    if !enable_controllers(mount) {
        return None;
    }
    let parent = mount.join(PARENT);
    std::fs::create_dir_all(&parent).ok()?;
    sweep_stale(&parent);
    (enable_controllers(&parent) && can_make_groups(&parent)).then_some(parent)
}

/// Whether a group can be made in `parent`: a directory another user (root, an earlier agent)
/// made is there, but only its owner may make groups in it. Without this check a non-root agent
/// would claim cgroups and then fail every build at its first group.
fn can_make_groups(parent: &Path) -> bool {
    let probe = parent.join(format!("probe-{}", std::process::id()));
    std::fs::create_dir(&probe).is_ok() && std::fs::remove_dir(&probe).is_ok()
}

/// benchgate's parent group inside the agent's own, delegated cgroup `own`. cgroup v2 lets a
/// group give controllers to its children only while it holds no process itself, so the agent
/// first moves itself into a leaf beside the groups it makes (`own/agent`).
fn delegated_parent(own: &Path) -> Option<PathBuf> {
    if !both_controllers(&own.join("cgroup.controllers")) {
        return None;
    }
    let leaf = own.join("agent");
    std::fs::create_dir_all(&leaf).ok()?;
    std::fs::write(leaf.join("cgroup.procs"), std::process::id().to_string()).ok()?;
    if !enable_controllers(own) {
        return None;
    }
    let parent = own.join(PARENT);
    std::fs::create_dir_all(&parent).ok()?;
    sweep_stale(&parent);
    let parent = (enable_controllers(&parent) && can_make_groups(&parent)).then_some(parent)?;
    tracing::info!(group = %parent.display(), "cgroup v2 delegated to the agent: per-run groups go under its own cgroup");
    Some(parent)
}

/// The agent's own cgroup v2 path (`/system.slice/benchgate-agent.service`), from
/// `/proc/self/cgroup`'s `0::` line.
fn own_cgroup() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    unified_path(&text)
}

fn unified_path(proc_cgroup: &str) -> Option<PathBuf> {
    proc_cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| PathBuf::from(p.trim()))
}

/// Removes the groups of agents that died mid-run (named `PID-N` after an agent no longer
/// running), killing whatever is left in them.
fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, _)) = name.to_str().and_then(|n| n.split_once('-')) else {
            continue;
        };
        let dead = pid.parse::<u32>().is_ok_and(|pid| {
            pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
        });
        if dead && entry.path().is_dir() {
            let killed = kill_all(&entry.path());
            remove_group(&entry.path());
            tracing::info!(group = %entry.path().display(), killed, "removed the cgroup of an agent that died mid-run");
        }
    }
}

/// Kills every process of the group in `dir` until none is left; how many there were.
fn kill_all(dir: &Path) -> usize {
    let listed = |dir: &Path| -> Vec<i32> {
        std::fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    };
    let first = listed(dir);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut left = first.clone();
    while !left.is_empty() && Instant::now() < deadline {
        for pid in &left {
            if let Some(pid) = rustix::process::Pid::from_raw(*pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
        left = listed(dir);
    }
    first.len()
}

/// Removes an emptied group; a group whose last process is still being reaped refuses for a
/// moment.
fn remove_group(dir: &Path) {
    for _ in 0..100 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    tracing::warn!(group = %dir.display(), "a finished run's cgroup could not be removed");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_are_written_in_decimal_without_allocating() {
        let mut buf = [0u8; 12];
        assert_eq!(decimal(0, &mut buf), b"0");
        assert_eq!(decimal(4_194_304, &mut buf), b"4194304");
    }

    /// A unified hierarchy with both controllers (files as the kernel shows them) is used as v2;
    /// one without `memory` and `pids` (this machine's hybrid `unified`: `hugetlb` only) is not.
    #[test]
    fn a_unified_hierarchy_with_both_controllers_is_cgroup_v2() {
        let root = tempfile::tempdir().unwrap();
        let unified = root.path().join("unified");
        std::fs::create_dir(&unified).unwrap();
        std::fs::write(unified.join("cgroup.controllers"), "hugetlb\n").unwrap();
        let limits = Limits {
            memory_bytes: Some(512 << 20),
            processes: Some(256),
            ..Limits::default()
        };
        assert_eq!(
            Containment::detect_at(root.path(), limits).mechanism(),
            "rlimits"
        );
        std::fs::write(
            unified.join("cgroup.controllers"),
            "cpuset cpu io memory hugetlb pids rdma misc\n",
        )
        .unwrap();
        std::fs::write(unified.join("cgroup.subtree_control"), "cpu memory pids\n").unwrap();
        let c = Containment::detect_at(root.path(), limits);
        assert_eq!(c.mechanism(), "cgroup v2");
        assert_eq!(c.describe(), "cgroup v2: memory 512 MiB, 256 processes");
        // benchgate's parent group had both controllers enabled for its groups.
        let enabled = std::fs::read_to_string(unified.join("benchgate/cgroup.subtree_control"));
        assert_eq!(enabled.unwrap(), "+memory +pids");
        // No rlimit stands in for the tree's memory or processes.
        let entered = Entered {
            limits,
            mechanism: c.mechanism(),
            group: None,
            rlimits: Vec::new(),
        };
        let ended = Ended {
            memory_limit: true,
            ..Ended::default()
        };
        assert_eq!(
            entered.reason(&ended, Some(libc::SIGKILL)).unwrap(),
            "stopped at the memory limit (512 MiB, cgroup v2)"
        );
    }

    /// Under systemd with `Delegate=`, a non-root agent may not write the hierarchy's root but
    /// owns its unit's cgroup: it moves itself into a leaf there and makes its groups beside it.
    #[test]
    fn a_delegated_cgroup_holds_the_agent_s_groups() {
        let mount = tempfile::tempdir().unwrap();
        let own = mount.path().join("system.slice/benchgate-agent.service");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("cgroup.controllers"), "memory pids\n").unwrap();
        std::fs::write(own.join("cgroup.subtree_control"), "").unwrap();
        std::fs::create_dir_all(own.join("agent")).unwrap();
        std::fs::create_dir_all(own.join(PARENT)).unwrap();
        std::fs::write(own.join(PARENT).join("cgroup.subtree_control"), "").unwrap();
        let parent = delegated_parent(&own).unwrap();
        assert_eq!(parent, own.join(PARENT));
        let moved = std::fs::read_to_string(own.join("agent/cgroup.procs")).unwrap();
        assert_eq!(
            moved,
            std::process::id().to_string(),
            "the agent left the group it delegates"
        );
        assert_eq!(
            std::fs::read_to_string(own.join("cgroup.subtree_control")).unwrap(),
            "+memory +pids"
        );
        // Without both controllers delegated (`Delegate=` missing), no group is made there.
        let bare = mount.path().join("user.slice");
        std::fs::create_dir_all(&bare).unwrap();
        std::fs::write(bare.join("cgroup.controllers"), "cpu\n").unwrap();
        assert_eq!(delegated_parent(&bare), None);
        assert!(!bare.join("agent").exists());
        assert_eq!(
            unified_path("12:pids:/x\n0::/system.slice/benchgate-agent.service\n"),
            Some(PathBuf::from("/system.slice/benchgate-agent.service"))
        );
        assert_eq!(unified_path("4:memory:/\n"), None, "cgroup v1 only");
    }

    /// What a v2 group's event files say when the tree met its limits.
    #[test]
    fn a_v2_groups_events_say_which_limit_stopped_it() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("1-0");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("cgroup.procs"), "").unwrap();
        std::fs::write(
            dir.join("memory.events"),
            "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n",
        )
        .unwrap();
        std::fs::write(dir.join("pids.events"), "max 3\n").unwrap();
        let group = Group {
            dirs: vec![dir.clone()],
            procs: Vec::new(),
        };
        let ended = group.end();
        assert!(ended.memory_limit && ended.process_limit, "{ended:?}");
        assert_eq!(ended.left_running, 0);
    }

    #[test]
    fn a_host_without_writable_controllers_falls_back_to_rlimits() {
        let root = tempfile::tempdir().unwrap();
        let limits = Limits {
            memory_bytes: Some(512 << 20),
            processes: Some(256),
            cpu_seconds: Some(60),
            file_bytes: Some(1 << 30),
            disk_bytes: Some(2 << 30),
        };
        let c = Containment::detect_at(root.path(), limits);
        assert_eq!(c.mechanism(), "rlimits");
        assert_eq!(
            c.describe(),
            "rlimits: memory 512 MiB, 256 processes, disk 2.0 GiB; 60 s CPU, 1.0 GiB files per process"
        );
        let entered = c.enter().unwrap();
        let resources: Vec<_> = entered.rlimits.iter().map(|r| r.0).collect();
        assert_eq!(
            resources,
            [
                libc::RLIMIT_CPU,
                libc::RLIMIT_FSIZE,
                libc::RLIMIT_AS,
                libc::RLIMIT_NPROC
            ]
        );
        let ended = Ended::default();
        assert_eq!(
            entered.reason(&ended, Some(libc::SIGXFSZ)).unwrap(),
            "stopped at the file size limit (1.0 GiB per file)"
        );
        assert_eq!(entered.reason(&ended, Some(libc::SIGKILL)), None);
    }
}
