//! Profiled runs of one side for "why is it slower": the side's command under `perf record -g`
//! (perf outside the sandbox, as `perf stat` is in perf.rs), its stacks folded with `perf
//! script` and benchgate-profile, merged over the runs and capped. Which profiler the machine
//! offers is probed once per process.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use benchgate_profile::{Folded, Limits, ProfileError, collapse_perf_script_from};

use crate::command::BenchCommand;
use crate::process::{Exit, RunError, again_while_busy, is_busy, run_process};
use crate::rounds::{NoSandboxDir, RunnerConfig};

/// The fields `perf script` prints: what inferno's perf collapser reads (the event line's
/// command, pid/tid, time and event; each frame's address, symbol and DSO) and nothing it would
/// have to skip, so a large profile is read quickly.
pub const PERF_SCRIPT_FIELDS: &str = "comm,pid,tid,time,event,ip,sym,dso";

/// Which profiler this machine offers, found once per process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Profiler {
    /// `perf record -e <event> -g` works; `event` is "cycles" when hardware counters work,
    /// else "cpu-clock".
    Perf { event: String },
    /// No profile can be taken here; `reason` is one line for a PR comment.
    Unavailable { reason: String },
}

/// The profiler of this machine, with perf looked up on `PATH` (probed on the first call).
pub fn profiler() -> &'static Profiler {
    static PROFILER: OnceLock<Profiler> = OnceLock::new();
    PROFILER.get_or_init(|| {
        let found = probe_on_path(&std::env::var_os("PATH").unwrap_or_default());
        tracing::debug!(?found, "profiler");
        found
    })
}

/// The profiler with perf looked up in `path` (a `PATH`-style list of directories).
pub fn probe_on_path(path: &OsStr) -> Profiler {
    match std::env::split_paths(path)
        .map(|dir| dir.join("perf"))
        .find(|candidate| candidate.is_file())
    {
        Some(perf) => probe(&perf),
        None => Profiler::Unavailable {
            reason: "perf is not on PATH (Debian: apt-get install linux-perf)".to_owned(),
        },
    }
}

/// Records `true` with the `perf` at `perf`: `cycles` first, then `cpu-clock`. perf quietly
/// records `cpu-clock` when asked for `cycles` on a machine without hardware counters (a VM),
/// so the recorded event is read back rather than trusted.
pub fn probe(perf: &Path) -> Profiler {
    let mut last_error = String::new();
    for event in ["cycles", "cpu-clock"] {
        let data = PerfData::new(&std::env::temp_dir(), "probe");
        let mut record = Command::new(perf);
        record
            .args(["record", "-q", "-e", event, "-g", "-o"])
            .arg(&data.path)
            .args(["--", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        let recorded = again_while_busy(|| record.output(), is_busy);
        let output = match recorded {
            Ok(output) => output,
            Err(e) => {
                return Profiler::Unavailable {
                    reason: format!("cannot run {}: {e}", perf.display()),
                };
            }
        };
        if !output.status.success() {
            last_error = last_line(&String::from_utf8_lossy(&output.stderr));
            continue;
        }
        let events = Command::new(perf)
            .args(["evlist", "-i"])
            .arg(&data.path)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        let recorded_event = events
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
        if recorded_event.is_some_and(|e| e.starts_with(event)) {
            return Profiler::Perf {
                event: event.to_owned(),
            };
        }
    }
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|text| text.trim().parse().ok());
    Profiler::Unavailable {
        reason: unavailable_reason(paranoid, &last_error),
    }
}

/// Why perf records nothing, in one line: the kernel's `perf_event_paranoid` when it forbids
/// profiling, else perf's own last line.
pub fn unavailable_reason(paranoid: Option<i32>, perf_stderr_line: &str) -> String {
    match paranoid {
        Some(level) if level > 2 => format!(
            "the kernel refuses perf (kernel.perf_event_paranoid = {level}); set it to 2 or lower"
        ),
        _ if perf_stderr_line.is_empty() => "perf record fails on this machine".to_owned(),
        _ => format!("perf record fails on this machine: {perf_stderr_line}"),
    }
}

/// What one side's profiled runs produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideProfile {
    /// Every run's stacks merged, then capped.
    pub folded: Folded,
    pub runs: u32,
    /// Whether capping cut frames off some stacks (deeper than the limit).
    pub dropped_frames: bool,
    /// How many stacks capping folded into `[other stacks]`.
    pub merged_stacks: u64,
}

/// A profiled run that produced no stacks.
#[derive(Debug, thiserror::Error)]
pub enum ProfileRunError {
    #[error("`{command}`: {source}")]
    Unsandboxable {
        command: String,
        source: NoSandboxDir,
    },
    #[error("cannot run `{command}` to profile it: {source}")]
    Start { command: String, source: RunError },
    #[error("`{command}` failed under perf ({exit}); last lines of its stderr:\n{stderr_tail}")]
    RunFailed {
        command: String,
        exit: Exit,
        stderr_tail: String,
    },
    #[error(
        "perf record wrote no profile of `{command}` ({exit}); last lines of its stderr:\n{stderr_tail}"
    )]
    PerfFailed {
        command: String,
        exit: Exit,
        stderr_tail: String,
    },
    #[error("perf script could not read the profile of `{command}`: {reason}")]
    ScriptFailed { command: String, reason: String },
    #[error("no callgrind profile of `{command}`: {reason}")]
    Callgrind { command: String, reason: String },
    #[error("the profile of `{command}`: {source}")]
    Collapse {
        command: String,
        source: ProfileError,
    },
}

/// Runs `command` `runs` times under `perf record -e <event> -g` (perf outside the sandbox, as
/// perf.rs does, its data file in the agent's temp dir), folds each run's stacks with `perf
/// script` + collapse_perf_script, merges them, and caps the result with `limits`.
///
/// Runs are made exactly as [`crate::rounds::RoundRunner`] makes them (environment, timeout,
/// directory, quieting, sandbox) but are never samples: perf slows them down.
pub fn profile_side(
    command: &BenchCommand,
    config: &RunnerConfig,
    event: &str,
    runs: u32,
    limits: Limits,
) -> Result<SideProfile, ProfileRunError> {
    let display = command.display();
    let argv = sandboxed(command, config)?;
    let mut folded = Folded::default();
    for _ in 0..runs {
        let data = PerfData::new(&std::env::temp_dir(), "record");
        let mut wrapped: Vec<String> = ["perf", "record", "-q", "-e", event, "-g", "-o"]
            .map(String::from)
            .into();
        wrapped.push(data.path.to_string_lossy().into_owned());
        wrapped.push("--".into());
        wrapped.extend(argv.iter().cloned());
        let run = run_quietly(command, config, wrapped)?;
        // perf exits with its workload's status, so only a missing data file says perf failed.
        if !data.path.is_file() {
            return Err(ProfileRunError::PerfFailed {
                command: display,
                exit: run.exit,
                stderr_tail: run.stderr.tail_lines(20),
            });
        }
        if !run.exit.success() {
            return Err(ProfileRunError::RunFailed {
                command: display,
                exit: run.exit,
                stderr_tail: run.stderr.tail_lines(20),
            });
        }
        let stacks = perf_stacks(&data.path)
            .map_err(|reason| ProfileRunError::ScriptFailed {
                command: display.clone(),
                reason,
            })?
            .map_err(|source| ProfileRunError::Collapse {
                command: display.clone(),
                source,
            })?;
        folded.merge(&stacks);
    }
    let capped = folded.capped(limits);
    Ok(SideProfile {
        folded: capped.folded,
        runs,
        dropped_frames: capped.dropped_frames,
        merged_stacks: capped.merged_stacks,
    })
}

/// Where gungraun (and iai-callgrind before it) leave callgrind output, under a side's directory.
pub const CALLGRIND_DIRS: [&str; 2] = ["target/gungraun", "target/iai"];

/// What a callgrind-based profile is called in the report: exact counts, not samples.
pub const CALLGRIND_EVENT: &str = "callgrind Ir (exact)";

/// A gungraun side's profile from the callgrind output its own run leaves: the command runs
/// once (as in a round, sandboxed), and every `callgrind.*.out` written under
/// [`CALLGRIND_DIRS`] since is folded under its benchmark's directory, exactly.
pub fn callgrind_side(
    command: &BenchCommand,
    config: &RunnerConfig,
    limits: Limits,
) -> Result<SideProfile, ProfileRunError> {
    let display = command.display();
    let argv = sandboxed(command, config)?;
    // File times may be coarse: anything written from a second before the run counts.
    let started = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
    let run = run_quietly(command, config, argv)?;
    if !run.exit.success() {
        return Err(ProfileRunError::RunFailed {
            command: display,
            exit: run.exit,
            stderr_tail: run.stderr.tail_lines(20),
        });
    }
    let dir = command.cwd.clone().unwrap_or_default();
    let mut folded = Folded::default();
    let mut files = 0;
    for base in CALLGRIND_DIRS.map(|d| dir.join(d)) {
        for file in callgrind_files(&base, started) {
            let text = std::fs::read_to_string(&file).map_err(|e| ProfileRunError::Callgrind {
                command: display.clone(),
                reason: format!("{}: {e}", file.display()),
            })?;
            let root = file
                .parent()
                .and_then(|p| p.strip_prefix(&base).ok())
                .map(|p| p.to_string_lossy().into_owned())
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "benchmark".to_owned());
            let stacks = benchgate_profile::collapse_callgrind(&text, &root).map_err(|source| {
                ProfileRunError::Collapse {
                    command: display.clone(),
                    source,
                }
            })?;
            folded.merge(&stacks);
            files += 1;
        }
    }
    if files == 0 {
        return Err(ProfileRunError::Callgrind {
            command: display,
            reason: format!(
                "it wrote no callgrind output under {}",
                CALLGRIND_DIRS.join(" or ")
            ),
        });
    }
    let capped = folded.capped(limits);
    Ok(SideProfile {
        folded: capped.folded,
        runs: 1,
        dropped_frames: capped.dropped_frames,
        merged_stacks: capped.merged_stacks,
    })
}

/// The side's argv inside the sandbox (when there is one), or why it cannot be sandboxed.
fn sandboxed(
    command: &BenchCommand,
    config: &RunnerConfig,
) -> Result<Vec<String>, ProfileRunError> {
    config
        .sandboxed_argv(command)
        .map_err(|source| ProfileRunError::Unsandboxable {
            command: command.display(),
            source,
        })
}

/// Runs `argv` (the side's, perhaps wrapped) as the session runs `command`, its stdout not
/// kept: a profiled run is never parsed for samples.
fn run_quietly(
    command: &BenchCommand,
    config: &RunnerConfig,
    argv: Vec<String>,
) -> Result<crate::process::ProcessMeasurement, ProfileRunError> {
    let spec = crate::process::RunSpec {
        capture_stdout: false,
        ..config.run_spec(command, argv)
    };
    run_process(&spec).map_err(|source| ProfileRunError::Start {
        command: command.display(),
        source,
    })
}

/// `callgrind*.out` files under `dir` (recursively) modified at or after `since`; `.old` copies
/// of earlier runs are not theirs.
fn callgrind_files(dir: &Path, since: std::time::SystemTime) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            out.extend(callgrind_files(&path, since));
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let fresh = meta.modified().is_ok_and(|m| m >= since);
        if fresh && name.starts_with("callgrind.") && name.ends_with(".out") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The stacks of the recording at `data`, collapsed from `perf script` as it prints them (its
/// text holds the PR's symbol names, so it is never held whole), or perf's last error line.
fn perf_stacks(data: &Path) -> Result<Result<Folded, ProfileError>, String> {
    use crate::capture::{Capture, Keep, drain};
    let mut child = Command::new("perf")
        .args(["script", "-F", PERF_SCRIPT_FIELDS, "-i"])
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run perf: {e}"))?;
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let (stacks, stderr) = std::thread::scope(|scope| {
        let err = scope.spawn(|| stderr.map(|p| drain(p, Capture::new(16 << 10, Keep::Tail))));
        let stacks = stdout.map(|p| collapse_perf_script_from(std::io::BufReader::new(p)));
        (stacks, err.join().ok().flatten().unwrap_or_default())
    });
    let status = child.wait().map_err(|e| format!("waiting for perf: {e}"))?;
    if !status.success() {
        return Err(format!("{status}: {}", last_line(&stderr.text())));
    }
    stacks.ok_or_else(|| "perf script gave no output".to_owned())
}

fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default()
        .to_owned()
}

/// A perf data file of this process, removed when dropped (on error paths too).
struct PerfData {
    path: PathBuf,
}

impl PerfData {
    fn new(dir: &Path, purpose: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        PerfData {
            path: dir.join(format!(
                "benchgate-{purpose}-{}-{}.perf.data",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            )),
        }
    }
}

impl Drop for PerfData {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        // perf renames an existing file to `<name>.old` before writing.
        let _ = std::fs::remove_file(self.path.with_extension("data.old"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_names_the_paranoid_setting_or_perfs_own_words() {
        assert_eq!(
            unavailable_reason(Some(3), "Error: Access to performance monitoring"),
            "the kernel refuses perf (kernel.perf_event_paranoid = 3); set it to 2 or lower"
        );
        assert_eq!(
            unavailable_reason(Some(2), "perf: not found for kernel 6.1"),
            "perf record fails on this machine: perf: not found for kernel 6.1"
        );
        assert_eq!(
            unavailable_reason(None, ""),
            "perf record fails on this machine"
        );
    }
}
