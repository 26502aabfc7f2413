//! Instruction counts of whole processes, the exact tier: `perf stat -e instructions:u` where
//! the machine has a PMU, Valgrind's cachegrind (instructions only, no cache simulation) where
//! it does not. The two count differently (Valgrind replaces memcpy and friends, perf counts
//! what the CPU retired), so a runner's rows name the counter and are never mixed with
//! another's. A counted run is never timed: Valgrind runs 20–50× slower.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::perf::parse_instructions;

/// A counter this machine has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// The CPU's own counter through `perf stat -e instructions:u`.
    Perf,
    /// Valgrind's cachegrind: a simulated CPU, the same count on any machine.
    Valgrind,
}

/// Programs whose own instructions are not the benchmark's: launchers that a run command may
/// start the benchmark through. Their processes are left out of a Valgrind count (their work
/// depends on caches and file times, not on the code measured), and the compilers they may
/// call are not traced at all.
const LAUNCHERS: [&str; 3] = ["cargo", "rustup", "rustc"];

/// Most processes one counted run may leave counts for; more is a fork bomb, not a benchmark.
const MAX_PROCESSES: usize = 4096;

impl Counter {
    /// The counter of this machine: perf where it counts instructions here, else Valgrind
    /// where it is installed (checked once). `BENCHGATE_COUNTER=valgrind` (or `perf`) picks one
    /// where both work, to compare them.
    pub fn detect() -> Result<Counter, String> {
        static FOUND: OnceLock<Result<Counter, String>> = OnceLock::new();
        FOUND
            .get_or_init(|| {
                let wanted = std::env::var("BENCHGATE_COUNTER").ok();
                let perf = perf_counts();
                let valgrind = valgrind_version();
                let found = match (wanted.as_deref(), &perf, &valgrind) {
                    (Some("valgrind"), _, Ok(_)) | (None | Some(""), Err(_), Ok(_)) => {
                        Ok(Counter::Valgrind)
                    }
                    (Some("perf"), Ok(()), _) | (None | Some(""), Ok(()), _) => Ok(Counter::Perf),
                    (Some(w), _, _) if !matches!(w, "perf" | "valgrind" | "") => Err(format!(
                        "BENCHGATE_COUNTER={w:?}: write \"perf\" or \"valgrind\""
                    )),
                    _ => Err(format!(
                        "no instruction counter on this machine: perf: {}; valgrind: {} \
                         (install valgrind, or give the runner a PMU)",
                        perf.as_ref().err().map_or("not asked for", String::as_str),
                        valgrind
                            .as_ref()
                            .err()
                            .map_or("not asked for", String::as_str),
                    )),
                };
                tracing::debug!(?found, "instruction counter");
                found
            })
            .clone()
    }

    /// How reports name it: `perf instructions:u` or `valgrind cachegrind`.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Perf => "perf instructions:u",
            Counter::Valgrind => "valgrind cachegrind",
        }
    }

    /// Wraps `argv` (a side's command, already sandboxed for perf, bare for Valgrind, which
    /// runs inside the sandbox) so the count lands in a fresh directory under `scratch`.
    pub fn wrap(self, argv: &[String], scratch: &Path) -> std::io::Result<CountedRun> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = scratch.join(format!(
            ".benchgate-count-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)?;
        let at = |name: &str| dir.join(name).to_string_lossy().into_owned();
        let mut wrapped: Vec<String> = match self {
            Counter::Perf => vec![
                "perf".into(),
                "stat".into(),
                "-x,".into(),
                "-e".into(),
                "instructions:u".into(),
                "-o".into(),
                at("perf.csv"),
                "--".into(),
            ],
            Counter::Valgrind => vec![
                "valgrind".into(),
                "--tool=cachegrind".into(),
                "--cache-sim=no".into(),
                "--branch-sim=no".into(),
                "--trace-children=yes".into(),
                format!(
                    "--trace-children-skip={}",
                    LAUNCHERS.map(|l| format!("*/{l}")).join(",")
                ),
                format!("--cachegrind-out-file={}", at("cg.%p")),
                // Valgrind's own words go to a file: the benchmark's stderr stays its own.
                format!("--log-file={}", at("valgrind.%p.log")),
                "--".into(),
            ],
        };
        wrapped.extend(argv.iter().cloned());
        Ok(CountedRun {
            counter: self,
            argv: wrapped,
            dir,
        })
    }
}

/// One run under a counter; [`CountedRun::count`] reads its count and removes its files.
#[derive(Debug)]
pub struct CountedRun {
    counter: Counter,
    /// The argv to run instead of the original.
    pub argv: Vec<String>,
    dir: PathBuf,
}

impl CountedRun {
    /// The run's instruction count: every process's but the launchers'.
    pub fn count(self) -> Result<u64, String> {
        let counted = match self.counter {
            Counter::Perf => std::fs::read_to_string(self.dir.join("perf.csv"))
                .map_err(|e| format!("perf wrote no count: {e}"))
                .and_then(|csv| {
                    parse_instructions(&csv)
                        .ok_or_else(|| "perf could not count instructions".to_owned())
                }),
            Counter::Valgrind => valgrind_count(&self.dir),
        };
        let _ = std::fs::remove_dir_all(&self.dir);
        counted
    }
}

/// The sum of the `summary:` lines of the cachegrind files in `dir`, one per process, leaving
/// out the launchers. Only each file's head (its `cmd:`) and tail (its summary) are read: the
/// files are the counted program's to write too, and may be large.
fn valgrind_count(dir: &Path) -> Result<u64, String> {
    // The directory sits in the side's tree, where the counted code may write: it may have
    // swapped the directory or a file for a symlink to something only the agent can read.
    // Nothing here follows one, so no such file's text reaches a count or an error.
    let real_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_dir());
    if !real_dir {
        return Err("the count directory was replaced during the run; not counted".into());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading Valgrind's counts: {e}"))?;
    let mut total: u64 = 0;
    let mut processes = 0;
    let mut logs = Vec::new();
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("valgrind.") {
            logs.push(entry.path());
            continue;
        }
        if !name.starts_with("cg.") {
            continue;
        }
        processes += 1;
        if processes > MAX_PROCESSES {
            return Err(format!(
                "the run started over {MAX_PROCESSES} processes; not counted"
            ));
        }
        let (cmd, summary) = head_and_summary(&entry.path())?;
        let program = cmd.split_whitespace().next().unwrap_or_default();
        let base = program.rsplit('/').next().unwrap_or(program);
        if LAUNCHERS.contains(&base) {
            tracing::debug!(%cmd, summary, "a launcher's instructions are not counted");
            continue;
        }
        total = total.saturating_add(summary);
    }
    if processes == 0 {
        let tail = logs
            .iter()
            .filter_map(|p| {
                let mut text = String::new();
                open_no_follow(p)
                    .ok()?
                    .take(4096)
                    .read_to_string(&mut text)
                    .ok()?;
                Some(text)
            })
            .flat_map(|t| {
                t.lines()
                    .rev()
                    .take(5)
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
            .join(" | ");
        return Err(format!("Valgrind wrote no count: {tail}"));
    }
    Ok(total)
}

/// A cachegrind file's `cmd:` line and its `summary:` count.
fn head_and_summary(path: &Path) -> Result<(String, u64), String> {
    let bad = |what: &str| format!("{}: {what}", path.display());
    let mut file = open_no_follow(path).map_err(|e| bad(&e.to_string()))?;
    let mut head = vec![0; 4096];
    let n = file.read(&mut head).map_err(|e| bad(&e.to_string()))?;
    let head = String::from_utf8_lossy(&head[..n]);
    let cmd = head
        .lines()
        .find_map(|l| l.strip_prefix("cmd:"))
        .unwrap_or_default()
        .trim()
        .to_owned();
    let len = file
        .seek(SeekFrom::End(0))
        .map_err(|e| bad(&e.to_string()))?;
    file.seek(SeekFrom::Start(len.saturating_sub(4096)))
        .map_err(|e| bad(&e.to_string()))?;
    let mut tail = String::new();
    file.take(4096)
        .read_to_string(&mut tail)
        .map_err(|e| bad(&e.to_string()))?;
    let summary = tail
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("summary:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .ok_or_else(|| bad("no `summary:` line (the process did not end normally?)"))?;
    Ok((cmd, summary))
}

/// Opens a regular file without following a symlink (one swapped in after the listing too).
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

fn perf_counts() -> Result<(), String> {
    let out = Command::new("perf")
        .args(["stat", "-x,", "-e", "instructions:u", "--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run perf ({e})"))?;
    let text = String::from_utf8_lossy(&out.stderr);
    match parse_instructions(&text) {
        Some(_) if out.status.success() => Ok(()),
        _ => Err(format!(
            "no instruction counter here ({})",
            text.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("perf failed")
                .trim()
        )),
    }
}

fn valgrind_version() -> Result<String, String> {
    let out = Command::new("valgrind")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run valgrind ({e})"))?;
    if !out.status.success() {
        return Err("valgrind --version failed".into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cachegrind_file_gives_its_command_and_summary() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cg.42");
        let body = format!(
            "desc: I1 cache: x\ncmd: /usr/bin/ls /\nevents: Ir\n{}summary: 570821\n",
            "fl=/x.c\n0 437\n".repeat(2000)
        );
        std::fs::write(&file, body).unwrap();
        assert_eq!(
            head_and_summary(&file).unwrap(),
            ("/usr/bin/ls /".to_owned(), 570821)
        );
        std::fs::write(
            dir.path().join("cg.43"),
            "cmd: /root/.cargo/bin/cargo bench\nsummary: 99\n",
        )
        .unwrap();
        assert_eq!(
            valgrind_count(dir.path()),
            Ok(570821),
            "the launcher is left out"
        );
        std::fs::write(dir.path().join("cg.44"), "cmd: ./bench\nevents: Ir\n").unwrap();
        assert!(
            valgrind_count(dir.path())
                .unwrap_err()
                .contains("no `summary:`")
        );
    }

    /// The counted code writes where Valgrind does: a symlink it plants to a file only the
    /// agent can read is neither counted nor quoted in the error a PR's check shows.
    #[test]
    fn symlinks_the_counted_code_plants_are_never_followed() {
        let secret_dir = tempfile::tempdir().unwrap();
        let secret = secret_dir.path().join("token");
        std::fs::write(&secret, "cmd: ./bench\nsummary: 1\nTOKEN-abc123\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&secret, dir.path().join("cg.7")).unwrap();
        std::os::unix::fs::symlink(&secret, dir.path().join("valgrind.7.log")).unwrap();
        let err = valgrind_count(dir.path()).unwrap_err();
        assert!(!err.contains("TOKEN"), "{err}");
        std::fs::write(dir.path().join("cg.8"), "cmd: ./bench\nsummary: 40\n").unwrap();
        assert_eq!(
            valgrind_count(dir.path()),
            Ok(40),
            "the planted count is not added"
        );
        // The whole directory swapped for a symlink to one holding a count.
        let planted = tempfile::tempdir().unwrap();
        std::fs::write(planted.path().join("cg.1"), "cmd: ./b\nsummary: 1\n").unwrap();
        let swapped = dir.path().join("swapped");
        std::os::unix::fs::symlink(planted.path(), &swapped).unwrap();
        assert!(valgrind_count(&swapped).unwrap_err().contains("replaced"));
    }
}
