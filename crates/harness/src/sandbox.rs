//! Isolation of PR code with bubblewrap: a build or run sees the whole filesystem read-only,
//! can write only its own worktree and a private `/tmp`, and finds the agent's files (work dir,
//! config, token) and the other side's worktree replaced by empty read-only directories.
//!
//! bwrap is the measured child, so `wait4` still reports the benchmark's CPU time and peak RSS
//! (bwrap waits for it); bwrap's own start-up is the same on both sides and is documented in
//! docs/performance.md.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Parts of `/proc` a process running as root could write to reach the host kernel (sysctls,
/// IRQ affinity, bus devices); bound read-only over the sandbox's own `/proc`. Only the ones
/// that exist on this host are bound, since bwrap refuses a missing source.
const PROC_READ_ONLY: [&str; 4] = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"];

/// pid 1 of a warm-up run ([`Sandbox::run_argv`]): runs the command, then counts what is still
/// running in the sandbox's PID namespace, with builtins only so that it counts nothing of its
/// own, and says so last on stderr; the kernel kills them when this pid 1 exits.
const REPORT_LEFTOVERS: &str = r#""$@"
status=$?
n=0
for d in /proc/[0-9]*; do
  [ "$d" = /proc/1 ] && continue
  { read -r line < "$d/stat"; } 2>/dev/null || continue
  case "${line##*) }" in Z*|X*) continue ;; esac
  n=$((n + 1))
done
[ "$n" -gt 0 ] && echo "benchgate: left $n process(es) running after it ended; they were killed" >&2
exit $status"#;

/// The line [`REPORT_LEFTOVERS`] starts with.
const LEFTOVERS_PREFIX: &str = "benchgate: left ";

/// What a run in [`Sandbox::run_argv`] left running (killed when it ended), in words, read from
/// the last line of its stderr; `None` when it left nothing.
pub fn left_running(stderr: &str) -> Option<String> {
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty())?.trim();
    last.starts_with(LEFTOVERS_PREFIX)
        .then(|| last.trim_start_matches("benchgate: ").to_owned())
}

/// Why the sandbox cannot be used on this host.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("bwrap is not on PATH (Debian: apt-get install bubblewrap)")]
    NotFound,
    #[error("cannot prepare the probe: {0}")]
    Prepare(std::io::Error),
    #[error("cannot start {bwrap}: {source}")]
    Spawn {
        bwrap: String,
        source: std::io::Error,
    },
    #[error("bwrap does not work on this host ({status}): {stderr}")]
    Refused { status: String, stderr: String },
}

/// The isolation policy shared by both sides of a job: which paths to hide and whether the
/// network is shared. [`Sandbox::argv`] applies it to one side's writable directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    bwrap: PathBuf,
    hidden: Vec<PathBuf>,
    shown: Vec<PathBuf>,
    network: bool,
    /// Size of the private `/tmp` (a tmpfs), `None`: the kernel's default (half the memory).
    tmp_bytes: Option<u64>,
}

impl Sandbox {
    /// A policy that runs commands through the `bwrap` binary at `bwrap`, network shared and
    /// nothing hidden yet beyond `/tmp`.
    pub fn new(bwrap: impl Into<PathBuf>) -> Self {
        Sandbox {
            bwrap: bwrap.into(),
            hidden: Vec::new(),
            shown: Vec::new(),
            network: true,
            tmp_bytes: None,
        }
    }

    /// The policy with `bwrap` looked up on `PATH`.
    pub fn from_path() -> Result<Self, SandboxError> {
        find_on_path("bwrap")
            .map(Sandbox::new)
            .ok_or(SandboxError::NotFound)
    }

    /// Also hides `path` (a directory becomes an empty read-only one, a file reads as empty).
    /// A path that does not exist is skipped when a command is wrapped. Symlinks are resolved
    /// now, because bwrap mounts over the target.
    pub fn hide(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if !self.hidden.contains(&path) {
            self.hidden.push(path);
        }
        self
    }

    /// Keeps `path` visible, read-only, even where the private `/tmp` or a hidden directory
    /// covers it: the agent's own binary, which a benchmark may run (`benchgate spin`) from
    /// wherever it is installed. Nothing secret belongs here.
    pub fn show(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if !self.shown.contains(&path) {
            self.shown.push(path);
        }
        self
    }

    /// Gives sandboxed processes a network namespace of their own (loopback only).
    pub fn without_network(mut self) -> Self {
        self.network = false;
        self
    }

    /// Caps the private `/tmp` at `bytes` (`None`: the kernel's default), so a run that fills it
    /// gets "No space left on device" instead of taking the machine's memory.
    pub fn with_tmp_size(mut self, bytes: Option<u64>) -> Self {
        self.tmp_bytes = bytes;
        self
    }

    /// The hidden paths, for the agent's start-up log.
    pub fn hidden(&self) -> &[PathBuf] {
        &self.hidden
    }

    /// Whether sandboxed processes share the host's network.
    pub fn shares_network(&self) -> bool {
        self.network
    }

    /// `command` wrapped so that it runs in `writable` (its worktree) with only that directory
    /// and a private `/tmp` writable, and the hidden paths empty.
    pub fn argv(&self, writable: &Path, command: &[String]) -> Vec<String> {
        let writable = std::fs::canonicalize(writable).unwrap_or_else(|_| writable.to_path_buf());
        let w = writable.to_string_lossy().into_owned();
        let mut argv: Vec<String> = vec![self.bwrap.to_string_lossy().into_owned()];
        let mut push = |args: &[&str]| argv.extend(args.iter().map(|a| (*a).to_owned()));
        push(&[
            "--die-with-parent",
            // setsid: sandboxed code cannot push input into a terminal the agent may have.
            "--new-session",
            "--unshare-pid",
            // The command itself is pid 1, so bwrap reaps it and its CPU time and peak RSS
            // reach our wait4. With bwrap's own init as pid 1, bwrap exits on an event fd
            // without reaping that init, and wait4 would report bwrap alone (~3 MiB, 0 CPU).
            "--as-pid-1",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            // As root, bwrap would otherwise keep every capability (mount, ptrace, …).
            "--cap-drop",
            "ALL",
        ]);
        if !self.network {
            push(&["--unshare-net"]);
        }
        push(&["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
        for part in PROC_READ_ONLY {
            if Path::new(part).exists() {
                push(&["--ro-bind", part, part]);
            }
        }
        if let Some(bytes) = self.tmp_bytes {
            push(&["--size", &bytes.to_string()]);
        }
        push(&["--tmpfs", "/tmp"]);
        let mut hidden_dirs = Vec::new();
        for path in &self.hidden {
            let p = path.to_string_lossy().into_owned();
            if path.is_dir() {
                push(&["--tmpfs", &p]);
                hidden_dirs.push(p);
            } else if path.exists() {
                push(&["--ro-bind", "/dev/null", &p]);
            }
        }
        for path in self.shown.iter().filter(|p| p.exists()) {
            let p = path.to_string_lossy().into_owned();
            push(&["--ro-bind", &p, &p]);
        }
        // After the hiding mounts, so a worktree inside a hidden directory shows through.
        push(&["--bind", &w, &w]);
        for dir in &hidden_dirs {
            // Not recursive: the worktree bound inside stays writable, the rest of the empty
            // directory does not, so a write there fails instead of vanishing silently.
            push(&["--remount-ro", dir]);
        }
        push(&["--setenv", "TMPDIR", "/tmp", "--chdir", &w, "--"]);
        argv.extend(command.iter().cloned());
        argv
    }

    /// [`Sandbox::argv`] for a run that is not timed (a warm-up): a small `sh` is pid 1 and reports
    /// on stderr what the command left running ([`left_running`] reads it), so a daemon is not
    /// killed silently. Timed runs go without: its wake-up would be timed (docs/performance.md).
    pub fn run_argv(&self, writable: &Path, command: &[String]) -> Vec<String> {
        let mut wrapped = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            REPORT_LEFTOVERS.to_owned(),
            "benchgate-run".to_owned(),
        ];
        wrapped.extend(command.iter().cloned());
        self.argv(writable, &wrapped)
    }

    /// Runs `true` in the sandbox once, with a scratch directory as its worktree; `Ok` means
    /// bwrap works on this host with this policy.
    pub fn probe(&self) -> Result<(), SandboxError> {
        // Unique per call: probes of one process run concurrently (tests, two agents' jobs).
        static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let scratch =
            std::env::temp_dir().join(format!("benchgate-probe-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&scratch).map_err(SandboxError::Prepare)?;
        let argv = self.argv(&scratch, &["true".to_owned()]);
        let output = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .output();
        let _ = std::fs::remove_dir_all(&scratch);
        let output = output.map_err(|source| SandboxError::Spawn {
            bwrap: self.bwrap.display().to_string(),
            source,
        })?;
        if output.status.success() {
            Ok(())
        } else {
            Err(SandboxError::Refused {
                status: output.status.to_string(),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            })
        }
    }
}

/// How PR code is isolated, as the job log, the fingerprint and the PR comment name it.
pub fn isolation_name(sandbox: Option<&Sandbox>) -> &'static str {
    match sandbox {
        Some(_) => "bwrap",
        None => "none",
    }
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worktree_is_bound_after_the_hiding_and_hidden_dirs_are_read_only() {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        let side = work.join("repo/head");
        std::fs::create_dir_all(&side).unwrap();
        let token = tmp.path().join("token");
        std::fs::write(&token, "t").unwrap();
        let sandbox = Sandbox::new("/usr/bin/bwrap")
            .hide(&work)
            .hide(&token)
            .hide(tmp.path().join("missing"))
            .without_network();
        let argv = sandbox.argv(&side, &["sh".into(), "-c".into(), "make".into()]);
        let at = |needle: &[&str]| {
            argv.windows(needle.len())
                .position(|w| w.iter().zip(needle).all(|(a, b)| a == b))
                .unwrap_or_else(|| panic!("{needle:?} not in {argv:?}"))
        };
        let (work, side) = (work.to_str().unwrap(), side.to_str().unwrap());
        assert!(at(&["--tmpfs", work]) < at(&["--bind", side, side]));
        assert!(at(&["--bind", side, side]) < at(&["--remount-ro", work]));
        at(&["--ro-bind", "/dev/null", token.to_str().unwrap()]);
        at(&["--unshare-net"]);
        at(&["--cap-drop", "ALL"]);
        assert!(!argv.iter().any(|a| a.contains("missing")), "{argv:?}");
        assert_eq!(&argv[argv.len() - 4..], ["--", "sh", "-c", "make"]);
    }
}
