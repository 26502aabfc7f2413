//! `.benchgate.toml`, read from the base branch: what to build and run, on which runner, and
//! when the check fails. Pure: the file's text in, a validated [`RepoConfig`] or an error that
//! names the line, column and field out (the server quotes it in the PR).

use std::fmt;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

/// The file's name at the repository root.
pub const FILE_NAME: &str = ".benchgate.toml";

/// Allowed `rounds` per comparison.
pub const ROUNDS: std::ops::RangeInclusive<u32> = 2..=200;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoConfig {
    /// `[benchmark]`: what to run.
    pub benchmark: BenchmarkConfig,
    /// `[gate]`: when the check run fails.
    #[serde(default)]
    pub gate: GateConfig,
}

/// `[benchmark]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchmarkConfig {
    /// Build command, run once per side before the rounds; none means nothing to build.
    #[serde(default)]
    pub build: Option<String>,
    /// The benchmark command; each round runs it once per side.
    pub run: NonEmpty,
    /// How to read the command's output.
    #[serde(default)]
    pub format: BenchFormat,
    /// Rounds per comparison (each round = one base run and one head run).
    #[serde(default = "default_rounds")]
    pub rounds: Rounds,
    /// Leading rounds discarded as warm-up.
    #[serde(default = "default_warmup")]
    pub warmup: u32,
    /// The runner label jobs go to.
    #[serde(default = "default_runner")]
    pub runner: NonEmpty,
    /// Globs of files that define the benchmarks; a PR touching them measures different work.
    #[serde(default)]
    pub paths: PathGlobs,
}

/// The harness output formats benchgate reads: the wire enum, so the config accepts exactly the
/// names the agent's parsers know.
pub use benchgate_api::Format as BenchFormat;

/// `[gate]`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    /// Which verdict fails the check run.
    #[serde(default)]
    pub fail_on: FailOn,
    /// The policy floor for the practical margin M.
    #[serde(default)]
    pub min_effect: Percent,
}

/// When the check run fails: the wire type, so the config, the stored comparison and the gate
/// name the same choices.
pub use benchgate_api::FailOn;

/// A percentage written as `"1%"` or `"0.5%"`; kept as a fraction (0.01).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub struct Percent(f64);

impl Percent {
    /// As a fraction: `"1%"` is 0.01.
    pub fn fraction(self) -> f64 {
        self.0
    }
}

impl Default for Percent {
    fn default() -> Self {
        Self(0.01)
    }
}

impl TryFrom<String> for Percent {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let bad =
            || format!("expected a percentage below 100 such as \"1%\" or \"0.5%\", got {s:?}");
        let number = s.trim().strip_suffix('%').ok_or_else(bad)?.trim();
        let value: f64 = number.parse().map_err(|_| bad())?;
        if !(0.0..100.0).contains(&value) {
            return Err(bad());
        }
        Ok(Self(value / 100.0))
    }
}

/// Rounds within [`ROUNDS`]: one pair proves nothing, so at least two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct Rounds(u32);

impl Rounds {
    /// The number.
    pub fn get(self) -> u32 {
        self.0
    }
}

impl TryFrom<i64> for Rounds {
    type Error = String;
    fn try_from(n: i64) -> Result<Self, String> {
        u32::try_from(n)
            .ok()
            .filter(|n| ROUNDS.contains(n))
            .map(Self)
            .ok_or_else(|| {
                format!(
                    "rounds must be between {} and {}, got {n}",
                    ROUNDS.start(),
                    ROUNDS.end()
                )
            })
    }
}

/// A string that is not blank.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct NonEmpty(String);

impl NonEmpty {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for NonEmpty {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if s.trim().is_empty() {
            Err("must not be empty".to_owned())
        } else {
            Ok(Self(s))
        }
    }
}

impl fmt::Display for NonEmpty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The `paths` globs, compiled. `*` stays within one directory; `**` crosses directories.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(try_from = "Vec<String>")]
pub struct PathGlobs {
    patterns: Vec<String>,
    set: GlobSet,
}

impl PathGlobs {
    /// The globs as written.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether a repository-relative path (as the changed-files API lists it) matches a glob.
    pub fn matches(&self, path: &str) -> bool {
        self.set.is_match(path.trim_start_matches("./"))
    }

    /// The changed paths that touch the benchmarks themselves, in the order given.
    pub fn touched<'a, I>(&self, changed: I) -> Vec<&'a str>
    where
        I: IntoIterator<Item = &'a str>,
    {
        changed.into_iter().filter(|p| self.matches(p)).collect()
    }
}

impl PartialEq for PathGlobs {
    fn eq(&self, other: &Self) -> bool {
        self.patterns == other.patterns
    }
}

impl TryFrom<Vec<String>> for PathGlobs {
    type Error = String;
    fn try_from(patterns: Vec<String>) -> Result<Self, String> {
        let mut builder = GlobSetBuilder::new();
        for pattern in &patterns {
            let glob = GlobBuilder::new(pattern.trim_start_matches("./"))
                .literal_separator(true)
                .build()
                .map_err(|e| format!("invalid glob {pattern:?}: {}", e.kind()))?;
            builder.add(glob);
        }
        let set = builder.build().map_err(|e| e.to_string())?;
        Ok(Self { patterns, set })
    }
}

fn default_rounds() -> Rounds {
    Rounds(10)
}
fn default_warmup() -> u32 {
    1
}
fn default_runner() -> NonEmpty {
    NonEmpty("default".to_owned())
}

/// Why a `.benchgate.toml` was refused, with where; `Display` is the line the PR comment quotes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{FILE_NAME}:{line}:{column}: {}{message}", field.as_deref().map(|f| format!("`{f}`: ")).unwrap_or_default())]
pub struct ConfigError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// Dotted key path such as `benchmark.rounds`, when the problem is a field's value or name.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// Parses and validates a `.benchgate.toml`.
pub fn parse_repo_config(text: &str) -> Result<RepoConfig, ConfigError> {
    let de = toml::Deserializer::parse(text).map_err(|e| error_at(text, None, &e))?;
    let config: RepoConfig = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let field = (path != ".").then_some(path);
        error_at(text, field, e.inner())
    })?;
    if config.benchmark.warmup >= config.benchmark.rounds.get() {
        return Err(ConfigError {
            field: Some("benchmark.warmup".to_owned()),
            message: format!(
                "warmup ({}) must be smaller than rounds ({}), or no round would count",
                config.benchmark.warmup,
                config.benchmark.rounds.get()
            ),
            ..position(text, key_offset(text, "warmup"))
        });
    }
    Ok(config)
}

fn error_at(text: &str, field: Option<String>, e: &toml::de::Error) -> ConfigError {
    ConfigError {
        field,
        message: e.message().trim().to_owned(),
        ..position(text, e.span().map_or(0, |s| s.start))
    }
}

/// Where `key = ...` starts (for checks that span two fields); 0 when not found.
fn key_offset(text: &str, key: &str) -> usize {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            return offset + (line.len() - trimmed.len());
        }
        offset += line.len();
    }
    0
}

/// Line and column of a byte offset (both 1-based), with no field or message yet.
fn position(text: &str, offset: usize) -> ConfigError {
    let before = &text[..offset.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    ConfigError {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
        field: None,
        message: String::new(),
    }
}

#[cfg(test)]
#[path = "repo_config_tests.rs"]
mod tests;
