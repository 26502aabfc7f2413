//! The value types of `.benchgate.toml`: each refuses a bad value with a message that names
//! the valid choices, and toml places that message at the value.

use std::fmt;

use serde::Deserialize;

use super::ROUNDS;

pub use benchgate_api::paths::PathGlobs;

/// A percentage written as `"1%"` or `"0.5%"`; kept as a fraction (0.01).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub struct Percent(pub(super) f64);

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

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.0 * 100.0)
    }
}

/// `[gate] tolerance`: a percentage above zero (`"5%"`), or `"off"` for a gate that waits for
/// equivalence within ±M as before; 5% when the file names none.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub struct Tolerance(pub(super) Option<f64>);

impl Tolerance {
    /// As a fraction (`"5%"` is 0.05); `None` for `"off"`.
    pub fn fraction(self) -> Option<f64> {
        self.0
    }
}

impl Default for Tolerance {
    fn default() -> Self {
        Self(Some(benchgate_api::agent::DEFAULT_TOLERANCE))
    }
}

impl TryFrom<String> for Tolerance {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if s.trim() == "off" {
            return Ok(Self(None));
        }
        let bad = || {
            format!(
                "expected a slowdown to tolerate such as \"5%\" (above 0%, below 100%) or \
                 \"off\", got {s:?}"
            )
        };
        let p = Percent::try_from(s.clone()).map_err(|_| bad())?;
        if p.fraction() <= 0.0 {
            return Err(bad());
        }
        Ok(Self(Some(p.fraction())))
    }
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(t) => write!(f, "{}%", t * 100.0),
            None => f.write_str("off"),
        }
    }
}

/// `[gate] rare_slow_runs`: the rarest slow mode of head's runs a pass must have had the runs
/// to see, as `"1 in 20"` or a share `"5%"` (above 0%, at most 50%), or `"off"`; 1 in 20 when
/// the file names none.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub struct RareSlowRuns(pub(super) Option<f64>);

impl RareSlowRuns {
    /// As a share of runs (`"1 in 20"` is 0.05); `None` for `"off"`.
    pub fn share(self) -> Option<f64> {
        self.0
    }
}

impl Default for RareSlowRuns {
    fn default() -> Self {
        Self(Some(benchgate_api::agent::DEFAULT_RARE_SLOW_RUNS))
    }
}

impl TryFrom<String> for RareSlowRuns {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        benchgate_api::agent::parse_rare_slow_runs(&s).map(Self)
    }
}

impl fmt::Display for RareSlowRuns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(p) if (1.0 / p - (1.0 / p).round()).abs() < 1e-9 => {
                write!(f, "1 in {}", (1.0 / p).round())
            }
            Some(p) => write!(f, "{}%", p * 100.0),
            None => f.write_str("off"),
        }
    }
}

/// `[benchmark] budget`: the most time a job may measure, written `"10m"`, `"90s"`, `"1h"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Budget(pub(super) u64);

impl Budget {
    /// In seconds.
    pub fn secs(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            s if s % 3600 == 0 => write!(f, "{} h", s / 3600),
            s if s % 60 == 0 => write!(f, "{} min", s / 60),
            s => write!(f, "{s} s"),
        }
    }
}

impl TryFrom<String> for Budget {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        benchgate_api::agent::parse_budget(&s).map(Self)
    }
}

/// `[benchmark] measure`: how long each run measures a benchmark, written `"0.5s"`, `"300ms"`,
/// or `"auto"`: the service chooses per runner from its A/A sessions of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub enum RunLength {
    Fixed(f64),
    Auto,
}

impl RunLength {
    /// In seconds: the fixed length, or the length `auto` starts from and calibrates at.
    pub fn secs(self) -> f64 {
        match self {
            RunLength::Fixed(secs) => secs,
            RunLength::Auto => benchgate_api::agent::AUTO_MEASURE_SECS,
        }
    }

    pub fn is_auto(self) -> bool {
        self == RunLength::Auto
    }
}

impl fmt::Display for RunLength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunLength::Fixed(secs) => {
                write!(f, "{} s", benchgate_api::agent::measure_text(*secs))
            }
            RunLength::Auto => write!(
                f,
                "auto (chosen per runner from its A/A sessions; {} s until it has them)",
                benchgate_api::agent::measure_text(self.secs())
            ),
        }
    }
}

impl TryFrom<String> for RunLength {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if s.trim() == "auto" {
            return Ok(RunLength::Auto);
        }
        benchgate_api::agent::parse_measure(&s)
            .map(Self::Fixed)
            .map_err(|e| format!("{e}; or \"auto\""))
    }
}

/// Rounds within [`ROUNDS`]: one pair proves nothing, so at least two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct Rounds(pub(super) u32);

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
pub struct NonEmpty(pub(super) String);

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

/// A suite's name: it appears in check-run names and comment markers, so letters, digits,
/// `-`, `_` and `.` only.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct SuiteName(pub(super) String);

impl SuiteName {
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for SuiteName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        if s.is_empty() || !s.chars().all(valid) {
            return Err(format!(
                "a suite name uses letters, digits, `-`, `_` and `.` only, got {s:?}"
            ));
        }
        Ok(Self(s))
    }
}

/// `runner`: one label (`"linux-x86"`) or a list (`["linux-x86", "linux-arm64"]`); each label
/// is its own comparison, since results of two machines are never pooled.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "OneOrMany")]
pub struct Labels(pub(super) Vec<NonEmpty>);

impl Labels {
    /// The labels, in the order written.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(NonEmpty::as_str)
    }
}

impl Default for Labels {
    fn default() -> Self {
        Self(vec![NonEmpty("default".to_owned())])
    }
}

/// What `runner` may be written as.
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "expected a runner label such as \"linux-x86\" or a list of labels"
)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl TryFrom<OneOrMany> for Labels {
    type Error = String;
    fn try_from(value: OneOrMany) -> Result<Self, String> {
        let labels = match value {
            OneOrMany::One(label) => vec![label],
            OneOrMany::Many(labels) => labels,
        };
        if labels.is_empty() {
            return Err("list at least one runner label".to_owned());
        }
        let labels = labels
            .into_iter()
            .map(|l| {
                NonEmpty::try_from(l).map_err(|_| "a runner label must not be empty".to_owned())
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (i, label) in labels.iter().enumerate() {
            if labels[..i].contains(label) {
                return Err(format!("runner label {:?} is listed twice", label.as_str()));
            }
        }
        Ok(Self(labels))
    }
}

/// A rule's `match`: a glob on benchmark names, compiled where the gate compiles it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct NameGlob(pub(super) String);

impl NameGlob {
    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for NameGlob {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        benchgate_api::rules::compile_pattern(&s)?;
        Ok(Self(s))
    }
}

/// `layout_salt`: `env-padding` or `NAME=value` with `{salt}` in the value.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct LayoutSalt(pub(super) String);

impl LayoutSalt {
    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for LayoutSalt {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        benchgate_api::agent::check_layout_salt(&s)?;
        Ok(Self(s))
    }
}
