//! `--limit-*`: what one side's build or benchmark run may use, so a hostile or buggy PR stops
//! itself and not the runner. Defaults suit a benchmark machine: most of its memory, thousands
//! of processes, an hour of CPU, 16 GiB per file and 32 GiB of disk, a 4 GiB private `/tmp`.

use benchgate_harness::limits::{Containment, Limits};
use bytesize::ByteSize;

/// The agent's limit flags.
#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Memory of one build or run with everything it starts (a hard limit: the kernel stops
    /// the PR's process, not the agent). `auto`: three quarters of this machine's memory;
    /// `none`: unlimited; else a size such as `8GiB`.
    #[arg(long = "limit-memory", env = "BENCHGATE_LIMIT_MEMORY", default_value = "auto", value_parser = parse_memory)]
    pub memory: MemoryLimit,

    /// Processes and threads one build or run may have at once (a fork bomb stops here);
    /// 0: unlimited.
    #[arg(
        long = "limit-processes",
        env = "BENCHGATE_LIMIT_PROCESSES",
        default_value_t = 4096
    )]
    pub processes: u64,

    /// CPU seconds of each process of a build or run; 0: unlimited. The wall-time limit of a
    /// run is `--run-timeout-secs`.
    #[arg(
        long = "limit-cpu-secs",
        env = "BENCHGATE_LIMIT_CPU_SECS",
        default_value_t = 3600
    )]
    pub cpu_secs: u64,

    /// The largest file a build or run may write, e.g. `16GiB`; `none`: unlimited.
    #[arg(long = "limit-file-size", env = "BENCHGATE_LIMIT_FILE_SIZE", default_value = "16GiB", value_parser = parse_size)]
    pub file_size: Size,

    /// Disk one build or run may take from its worktree's filesystem, many files or one, e.g.
    /// `32GiB`; `none`: unlimited. Whatever the limit, a build or run is stopped when that disk
    /// is nearly full (1 GiB or an eighth of it kept free), and the attempt runs again later.
    #[arg(long = "limit-disk", env = "BENCHGATE_LIMIT_DISK", default_value = "32GiB", value_parser = parse_size)]
    pub disk: Size,

    /// Size of the private `/tmp` of a sandboxed build or run (memory-backed), e.g. `4GiB`.
    #[arg(long = "limit-tmp", env = "BENCHGATE_LIMIT_TMP", default_value = "4GiB", value_parser = parse_size)]
    pub tmp: Size,
}

/// A size in bytes, `None` for `none` (unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub Option<u64>);

/// `--limit-memory`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryLimit {
    Auto,
    Bytes(Option<u64>),
}

fn parse_memory(s: &str) -> Result<MemoryLimit, String> {
    match s.trim() {
        "auto" => Ok(MemoryLimit::Auto),
        other => parse_size(other).map(|s| MemoryLimit::Bytes(s.0)),
    }
}

/// A size (`512MiB`, `8GiB`, `1000000`) or `none`.
fn parse_size(s: &str) -> Result<Size, String> {
    let s = s.trim();
    if s == "none" {
        return Ok(Size(None));
    }
    let size: ByteSize = s
        .parse()
        .map_err(|e| format!("{s:?} is not a size such as 512MiB or 8GiB, nor none: {e}"))?;
    match size.as_u64() {
        0 => Err("a size of 0 would stop everything; use none for no limit".into()),
        n => Ok(Size(Some(n))),
    }
}

impl LimitArgs {
    /// The limits, with `auto` memory read from this machine (`total_memory` bytes).
    pub fn limits(&self, total_memory: u64) -> Limits {
        Limits {
            memory_bytes: match self.memory {
                MemoryLimit::Auto => (total_memory > 0).then_some(total_memory / 4 * 3),
                MemoryLimit::Bytes(b) => b,
            },
            processes: (self.processes > 0).then_some(self.processes),
            cpu_seconds: (self.cpu_secs > 0).then_some(self.cpu_secs),
            file_bytes: self.file_size.0,
            disk_bytes: self.disk.0,
        }
    }
}

/// How this agent enforces `args`: cgroup v2 or v1 where it may create groups, rlimits otherwise;
/// logged once at start.
pub fn resolve(args: &LimitArgs, total_memory: u64) -> Containment {
    let mut containment = Containment::detect(args.limits(total_memory));
    if containment.mechanism() == "rlimits" && args.memory == MemoryLimit::Auto {
        // Per process, memory can only be capped as address space, which runtimes that reserve
        // much more than they use (JITs, wasm engines, sanitizers) would fail under.
        containment = Containment::rlimits(Limits {
            memory_bytes: None,
            ..*containment.limits()
        });
        tracing::warn!(
            "no memory limit: without cgroups it would cap address space; --limit-memory SIZE sets one anyway"
        );
    }
    if containment.mechanism() == "rlimits" {
        tracing::warn!(
            limits = %containment.describe(),
            "resource limits per process only (rlimits): to limit each build and run as a whole, run the agent as root on a host whose cgroups (v2, or v1) have the memory and pids controllers, or delegate a cgroup v2 to it (systemd: Delegate=memory pids, as deploy/systemd/benchgate-agent.service does)"
        );
    } else {
        tracing::info!(limits = %containment.describe(), "resource limits of each build and run");
    }
    containment
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: LimitArgs,
    }

    #[test]
    fn defaults_suit_a_benchmark_machine_and_sizes_read_as_written() {
        let cli = Cli::try_parse_from(["agent"]).unwrap();
        let gib = 1u64 << 30;
        let l = cli.args.limits(24 * gib);
        assert_eq!(l.memory_bytes, Some(18 * gib));
        assert_eq!(l.processes, Some(4096));
        assert_eq!(l.cpu_seconds, Some(3600));
        assert_eq!(l.file_bytes, Some(16 * gib));
        assert_eq!(l.disk_bytes, Some(32 * gib));
        assert_eq!(cli.args.tmp, Size(Some(4 * gib)));

        let cli = Cli::try_parse_from([
            "agent",
            "--limit-memory",
            "512MiB",
            "--limit-processes",
            "0",
            "--limit-file-size",
            "none",
            "--limit-disk",
            "128MiB",
        ])
        .unwrap();
        let l = cli.args.limits(24 * gib);
        assert_eq!(l.memory_bytes, Some(512 << 20));
        assert_eq!((l.processes, l.file_bytes), (None, None));
        assert_eq!(l.disk_bytes, Some(128 << 20));

        let wrong = Cli::try_parse_from(["agent", "--limit-memory", "lots"])
            .err()
            .unwrap();
        assert!(wrong.to_string().contains("not a size"), "{wrong}");
        assert!(Cli::try_parse_from(["agent", "--limit-tmp", "0"]).is_err());
    }
}
