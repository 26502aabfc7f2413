//! Instruction counts from `perf stat -e instructions`, a deterministic counter that corroborates
//! timing claims. Support is detected once per process; where the machine cannot count (no perf,
//! a VM without a PMU, a paranoid kernel setting), the metric is absent, never zero.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether `perf stat -e instructions` yields a count on this machine (checked once, on `true`).
pub fn instructions_supported() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        let out = Command::new("perf")
            .args(["stat", "-x,", "-e", "instructions", "--", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .output();
        let supported = out
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| parse_instructions(&String::from_utf8_lossy(&o.stderr)))
            .is_some();
        tracing::debug!(supported, "perf instruction counting");
        supported
    })
}

/// A run wrapped in `perf stat`, whose count is read back from its own file.
#[derive(Debug)]
pub struct PerfWrapped {
    /// The argv to run instead of the original.
    pub argv: Vec<String>,
    output: PathBuf,
}

impl PerfWrapped {
    /// Wraps `argv` so perf writes its count to a fresh file in `dir` (not to stderr, which is the
    /// benchmark's own).
    pub fn new(argv: &[String], dir: &Path) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let output = dir.join(format!(
            "benchgate-perf-{}-{}.csv",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut wrapped: Vec<String> = ["perf", "stat", "-x,", "-e", "instructions", "-o"]
            .map(String::from)
            .into();
        wrapped.push(output.to_string_lossy().into_owned());
        wrapped.push("--".into());
        wrapped.extend(argv.iter().cloned());
        PerfWrapped {
            argv: wrapped,
            output,
        }
    }

    /// The instruction count of the finished run, if perf could count it; removes the file.
    pub fn instructions(self) -> Option<u64> {
        let text = std::fs::read_to_string(&self.output).ok();
        let _ = std::fs::remove_file(&self.output);
        parse_instructions(&text?)
    }
}

/// The count from `perf stat -x,` output: the first field of the `instructions` line, or `None`
/// when perf wrote `<not supported>` or `<not counted>`.
pub fn parse_instructions(csv: &str) -> Option<u64> {
    csv.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            let event = fields.get(2)?;
            event
                .starts_with("instructions")
                .then(|| fields[0].trim().parse::<u64>().ok())
                .flatten()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_count_and_refuses_unsupported() {
        assert_eq!(
            parse_instructions("# started on x\n\n1234567,,instructions:u,1000,100.00,,\n"),
            Some(1234567)
        );
        assert_eq!(
            parse_instructions("<not supported>,,instructions,0,100.00,,"),
            None
        );
        assert_eq!(parse_instructions(""), None);
    }
}
