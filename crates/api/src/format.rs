//! The benchmark harness formats by name: `format = "…"` in `.benchgate.toml`, `--format` on the
//! command line and the agent's parser all use this one list.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A benchmark harness whose output benchgate understands (`format = "…"` in `.benchgate.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// Detect the format from the text (the harness crate's `formats::detect`).
    Auto,
    /// `cargo bench` with the built-in libtest harness (`… bench: 1,234 ns/iter (+/- 5)`).
    Libtest,
    /// criterion.rs console output (`time: [low estimate high]`).
    Criterion,
    /// `go test -bench` output, including `-benchmem` and custom units.
    Go,
    /// hyperfine `--export-json`.
    Hyperfine,
    /// Google Benchmark `--benchmark_format=json`.
    Google,
    /// pytest-benchmark `--benchmark-json`.
    Pytest,
    /// Catch2 console output or its XML reporter (`-r xml`).
    Catch2,
    /// BenchmarkDotNet JSON exporter.
    Dotnet,
    /// JMH `-rf json`, or its text result table (console or `-rf text`).
    Jmh,
    /// Bencher Metric Format JSON.
    Bmf,
    /// divan (Rust) console output: the `fastest │ slowest │ median │ mean` tree.
    Divan,
    /// pyperf / pyperformance JSON (`-o out.json`).
    Pyperf,
    /// gungraun (formerly iai-callgrind) console output: `Instructions: new|old (change)`.
    Gungraun,
    /// The whole process, measured by the runner (wall time, CPU time, peak RSS); no output
    /// parsed. The default of `.benchgate.toml`.
    #[default]
    Command,
    /// One number per line, optionally followed by a unit.
    Raw,
}

impl Format {
    /// Every format, in the order the documentation lists them.
    pub const ALL: [Format; 16] = [
        Format::Auto,
        Format::Libtest,
        Format::Criterion,
        Format::Go,
        Format::Hyperfine,
        Format::Google,
        Format::Pytest,
        Format::Catch2,
        Format::Dotnet,
        Format::Jmh,
        Format::Bmf,
        Format::Divan,
        Format::Pyperf,
        Format::Gungraun,
        Format::Command,
        Format::Raw,
    ];

    /// The name used in configuration and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Libtest => "libtest",
            Format::Criterion => "criterion",
            Format::Go => "go",
            Format::Hyperfine => "hyperfine",
            Format::Google => "google",
            Format::Pytest => "pytest",
            Format::Catch2 => "catch2",
            Format::Dotnet => "dotnet",
            Format::Jmh => "jmh",
            Format::Bmf => "bmf",
            Format::Divan => "divan",
            Format::Pyperf => "pyperf",
            Format::Gungraun => "gungraun",
            Format::Command => "command",
            Format::Raw => "raw",
        }
    }
}

impl Format {
    /// Former names still accepted: gungraun was called iai-callgrind until 2025.
    pub const ALIASES: [(&'static str, Format); 1] = [("iai-callgrind", Format::Gungraun)];

    /// What the format reads, in a few words (`--help` lists these).
    pub fn summary(self) -> &'static str {
        match self {
            Format::Auto => "recognise the harness from its output",
            Format::Libtest => "cargo bench with libtest (`bench: N ns/iter`)",
            Format::Criterion => "criterion.rs console output, or a target/criterion directory",
            Format::Go => "go test -bench output (-benchmem, custom units)",
            Format::Hyperfine => "hyperfine --export-json",
            Format::Google => "Google Benchmark --benchmark_format=json",
            Format::Pytest => "pytest-benchmark --benchmark-json",
            Format::Catch2 => "Catch2 console output or -r xml",
            Format::Dotnet => "BenchmarkDotNet JSON export",
            Format::Jmh => "JMH -rf json, or its text result table",
            Format::Bmf => "Bencher Metric Format JSON",
            Format::Divan => "divan console output",
            Format::Pyperf => "pyperf / pyperformance JSON",
            Format::Gungraun => "gungraun (iai-callgrind) console output",
            Format::Command => "the whole process: wall time, CPU time, peak RSS",
            Format::Raw => "one number per line, optionally with a unit",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a format name that benchgate does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = Format::ALL
            .iter()
            .map(|format| {
                let former: Vec<&str> = Format::ALIASES
                    .iter()
                    .filter(|(_, f)| f == format)
                    .map(|(name, _)| *name)
                    .collect();
                if former.is_empty() {
                    format.as_str().to_owned()
                } else {
                    format!("{} (or {})", format.as_str(), former.join(", "))
                }
            })
            .collect();
        write!(
            f,
            "unknown benchmark format `{}`; expected one of: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        // Configs written under a former name keep working.
        if let Some((_, f)) = Format::ALIASES.iter().find(|(name, _)| *name == wanted) {
            return Ok(*f);
        }
        Format::ALL
            .into_iter()
            .find(|f| f.as_str() == wanted)
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

impl Serialize for Format {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_round_trips_its_name_and_the_old_gungraun_name_still_works() {
        for f in Format::ALL {
            assert_eq!(f.as_str().parse::<Format>(), Ok(f));
            assert_eq!(serde_json::to_value(f).unwrap(), f.as_str());
        }
        assert_eq!("iai-callgrind".parse::<Format>(), Ok(Format::Gungraun));
        let err = "criterian".parse::<Format>().unwrap_err().to_string();
        assert!(
            err.contains("expected one of: auto, libtest, criterion")
                && err.contains("gungraun (or iai-callgrind)")
                && err.ends_with("command, raw"),
            "{err}"
        );
    }
}
