//! Running one process and measuring it: monotonic wall time, the child's own CPU time and peak
//! RSS from `wait4`, its exit, and its output up to a cap. A run that passes its timeout has its
//! whole process group killed, so a benchmark that forks cannot leave work running.

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};
use rustix::thread::CpuSet;
use serde::{Deserialize, Serialize};

use crate::capture::{Capture, Captured, Keep};
use crate::clock::{monotonic_now, received_exec_moment, send_exec_moment};
use crate::env::ScrubbedEnv;
use crate::limits::{ChildSetup, Containment, Entered};
use crate::program::find_program;
use crate::watch::{Stream, watch};

/// Everything needed to start one measured process.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Program and arguments; the program is looked up in the scrubbed `PATH`.
    pub argv: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub env: ScrubbedEnv,
    /// Kill the process group after this long; `None` waits forever.
    pub timeout: Option<Duration>,
    /// Pipe stdout to the harness; `false`: the child's stdout is /dev/null and comes back empty,
    /// for runs whose output nobody reads (no pipe to fill, nothing to read while it runs).
    pub capture_stdout: bool,
    pub stdout_cap: usize,
    pub stderr_cap: usize,
    /// Logical CPUs to pin the process to; empty: no pinning.
    pub cpus: Vec<usize>,
    /// Start the process with address-space randomisation disabled.
    pub disable_aslr: bool,
    /// Resource limits of the process and everything it starts; `None`: unlimited.
    pub containment: Option<Containment>,
}

impl RunSpec {
    /// A spec with the given argv, a scrubbed environment from the parent, no timeout, stdout
    /// captured, and 16 MiB / 64 KiB caps for stdout / stderr.
    pub fn new(argv: Vec<String>) -> Self {
        RunSpec {
            argv,
            cwd: None,
            env: ScrubbedEnv::from_parent(&[]).unwrap_or_default(),
            timeout: None,
            capture_stdout: true,
            stdout_cap: 16 << 20,
            stderr_cap: 64 << 10,
            cpus: Vec::new(),
            disable_aslr: false,
            containment: None,
        }
    }
}

/// How a measured process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// Killed by the harness when the timeout passed, or its output was still held open then by
    /// a process that left its group.
    TimedOut,
}

impl Exit {
    /// Whether the run counts as a sample: exit code 0.
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exit code {code}"),
            Exit::Signal(sig) => write!(f, "killed by signal {sig}"),
            Exit::TimedOut => write!(f, "timed out"),
        }
    }
}

/// What one run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessMeasurement {
    /// From right before the child's exec (read by the child) until the harness sees its exit,
    /// on CLOCK_MONOTONIC: the harness's fork of it is not included (clock.rs).
    pub wall: Duration,
    pub user_cpu: Duration,
    pub sys_cpu: Duration,
    /// Largest resident set of the child or any descendant it waited for. Never below what the
    /// child shared with the harness when it was forked (the harness's resident anonymous
    /// memory, counted in the child's copy until it execs).
    pub peak_rss_bytes: u64,
    pub exit: Exit,
    pub stdout: Captured,
    pub stderr: Captured,
    /// The resource limit that stopped it, or the processes it left running (killed), in words.
    /// A run with one measures nothing, whatever its exit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contained: Option<String>,
}

/// A process that could not be started or waited for (a run that ran and failed is not this).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("empty command")]
    EmptyCommand,
    #[error("CPU {cpu} cannot be pinned: this system supports CPUs below {max}")]
    CpuOutOfRange { cpu: usize, max: usize },
    #[error("cannot start {program:?}: {source}")]
    Spawn { program: String, source: io::Error },
    #[error("waiting for {program:?} failed: {source}")]
    Wait { program: String, source: io::Error },
    #[error("cannot set up the resource limits: {source}")]
    Limits { source: io::Error },
}

/// Tries `start` again while the kernel refuses the executable as busy (ETXTBSY). A file written
/// a moment ago stays open for writing in every child any thread forked meanwhile, until that
/// child execs: milliseconds, but a just-built benchmark or a script written by the caller can
/// land in that window (rust-lang/rust#114554). About 1.3 s in all before the refusal stands.
pub fn again_while_busy<T, E>(
    mut start: impl FnMut() -> Result<T, E>,
    busy: impl Fn(&E) -> bool,
) -> Result<T, E> {
    let mut wait = Duration::from_millis(5);
    for _ in 0..8 {
        match start() {
            Err(e) if busy(&e) => std::thread::sleep(wait),
            done => return done,
        }
        wait *= 2;
    }
    start()
}

/// Whether `e` is the kernel's "Text file busy".
pub fn is_busy(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::ExecutableFileBusy
}

/// Runs one process to its end and measures it, watching it from the calling thread.
pub fn run_process(spec: &RunSpec) -> Result<ProcessMeasurement, RunError> {
    again_while_busy(
        || run_process_once(spec),
        |e| matches!(e, RunError::Spawn { source, .. } if is_busy(source)),
    )
}

fn run_process_once(spec: &RunSpec) -> Result<ProcessMeasurement, RunError> {
    let program = spec.argv.first().ok_or(RunError::EmptyCommand)?.clone();
    let spawn_err = |source| RunError::Spawn {
        program: program.clone(),
        source,
    };
    let found = find_program(&program, spec.env.get("PATH"));
    let mut cmd = Command::new(found.as_deref().unwrap_or(Path::new(&program)));
    cmd.arg0(&program)
        .args(&spec.argv[1..])
        .env_clear()
        .envs(spec.env.vars())
        .stdin(Stdio::null())
        .process_group(0);
    // Pipes are made before the clock starts; a stdout nobody reads goes to /dev/null.
    let stdout = if spec.capture_stdout {
        let (reader, writer) = io::pipe().map_err(spawn_err)?;
        cmd.stdout(writer);
        Some(reader)
    } else {
        cmd.stdout(Stdio::null());
        None
    };
    let (stderr, writer) = io::pipe().map_err(spawn_err)?;
    cmd.stderr(writer);
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    let (exec_moment, writer) = io::pipe().map_err(spawn_err)?;
    let entered = match &spec.containment {
        Some(c) => Some(c.enter().map_err(|source| RunError::Limits { source })?),
        None => None,
    };
    let setup = entered.as_ref().map(Entered::child_setup);
    install_pre_exec(&mut cmd, &spec.cpus, spec.disable_aslr, setup, writer)?;

    let guard = spec.containment.as_ref().and_then(|c| {
        let dir = spec.cwd.clone().or_else(|| std::env::current_dir().ok())?;
        c.disk_guard(&dir)
    });
    let deadline = spec.timeout.map(|t| Instant::now() + t);
    let before_spawn = monotonic_now();
    let child = cmd.spawn().map_err(spawn_err)?;
    // The command holds the pipes' write ends: only the child may keep them open.
    drop(cmd);
    let started = received_exec_moment(exec_moment).unwrap_or(before_spawn);
    let raw_pid = child.id() as i32;
    let pid = Pid::from_raw(raw_pid).expect("a spawned child has a positive pid");
    let streams = [
        Stream::new(stdout, Capture::new(spec.stdout_cap, Keep::Head)),
        Stream::new(Some(stderr), Capture::new(spec.stderr_cap, Keep::Tail)),
    ];

    let wait_err = |source| RunError::Wait {
        program: program.clone(),
        source,
    };
    let watched = watch(pid, deadline, guard.as_ref(), streams).map_err(|e| {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        let _ = reap_with_rusage(raw_pid);
        wait_err(e)
    })?;
    let (status, usage) = reap_with_rusage(raw_pid).map_err(wait_err)?;

    let exit = if watched.timed_out {
        Exit::TimedOut
    } else if libc::WIFEXITED(status) {
        Exit::Code(libc::WEXITSTATUS(status))
    } else {
        Exit::Signal(libc::WTERMSIG(status))
    };
    let signal = match exit {
        Exit::Signal(sig) => Some(sig),
        // A shell reports a child killed by a signal as 128 + its number.
        Exit::Code(code) if code > 128 => Some(code - 128),
        _ => None,
    };
    let ended = entered.and_then(|e| e.end(signal));
    let contained = watched
        .disk_stop
        .or(ended)
        .or_else(|| crate::sandbox::left_running(&watched.streams[1].tail_lines(3)));
    let [stdout, stderr] = watched.streams;
    Ok(ProcessMeasurement {
        wall: watched.exited_at.saturating_sub(started),
        user_cpu: timeval(usage.ru_utime),
        sys_cpu: timeval(usage.ru_stime),
        // Linux reports ru_maxrss in kibibytes.
        peak_rss_bytes: (usage.ru_maxrss.max(0) as u64) * 1024,
        exit,
        stdout,
        stderr,
        contained,
    })
}

/// Between fork and exec, in the child: pins it, disables ASLR when asked, joins its cgroup and
/// sets its rlimits, then sends the
/// clock's start through `exec_moment`. The closure also keeps std on fork instead of vfork
/// (`posix_spawn`): a vfork child execs from the harness's own memory, and exec folds that
/// memory's high-water mark into the child's `ru_maxrss` (Linux `exec_mmap`), so every benchmark
/// would report at least the harness's peak RSS (`true`: 4 MiB instead of 1 MiB under
/// `compare`); a forked child counts only the pages it shares with the harness when forked.
fn install_pre_exec(
    cmd: &mut Command,
    cpus: &[usize],
    disable_aslr: bool,
    limits: Option<ChildSetup>,
    exec_moment: io::PipeWriter,
) -> Result<(), RunError> {
    let cpuset = if cpus.is_empty() {
        None
    } else {
        let mut set = CpuSet::new();
        for &cpu in cpus {
            if cpu >= CpuSet::MAX_CPU {
                return Err(RunError::CpuOutOfRange {
                    cpu,
                    max: CpuSet::MAX_CPU,
                });
            }
            set.set(cpu);
        }
        Some(set)
    };
    // SAFETY: the closure runs between fork and exec and makes at most five system calls; it
    // does not allocate or take locks.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(set) = &cpuset {
                rustix::thread::sched_setaffinity(None, set)?;
            }
            if let Some(limits) = &limits {
                limits.apply()?;
            }
            if disable_aslr {
                // 0xffffffff queries the current persona without changing it.
                let current = libc::personality(0xffff_ffff);
                if current == -1
                    || libc::personality(
                        current as libc::c_ulong | libc::ADDR_NO_RANDOMIZE as libc::c_ulong,
                    ) == -1
                {
                    return Err(io::Error::last_os_error());
                }
            }
            // Last, so that only the exec itself lies between this moment and the benchmark.
            send_exec_moment(exec_moment.as_raw_fd());
            Ok(())
        });
    }
    Ok(())
}

fn reap_with_rusage(pid: i32) -> io::Result<(i32, libc::rusage)> {
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain data that wait4 fills in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointers to locals; wait4 on our own child, which has exited.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            return Ok((status, usage));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec.max(0) as u64) + Duration::from_micros(tv.tv_usec.max(0) as u64)
}
