//! Repository path globs (`paths`, `bench_from_head` in `.benchgate.toml`): compiled once,
//! matched the same way by the config, the scheduler and the worktrees.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

/// Path globs, compiled. `*` stays within one directory; `**` crosses directories.
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

    /// Whether a change is covered whole: some globs, some paths, and every path matches one.
    /// A change of nothing, or no globs, is never covered.
    pub fn cover<'a, I>(&self, changed: I) -> bool
    where
        I: IntoIterator<Item = &'a str>,
    {
        let mut changed = changed.into_iter().peekable();
        !self.patterns.is_empty() && changed.peek().is_some() && changed.all(|p| self.matches(p))
    }

    /// The paths that match a glob, in the order given.
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
