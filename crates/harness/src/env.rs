//! The environment a benchmarked process gets: a short allow-list taken from the parent plus the
//! variables the user names, and nothing else — a runner token or any other secret of the parent
//! never reaches the benchmark.

use std::ffi::OsString;

use serde::{Deserialize, Serialize};

/// Variables every benchmark gets from the parent when the parent has them.
pub const ALWAYS_KEPT: [&str; 4] = ["PATH", "HOME", "LANG", "TMPDIR"];

/// The complete environment of a benchmarked process.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScrubbedEnv {
    vars: Vec<(String, String)>,
}

/// A `--env` entry that is neither `NAME` nor `NAME=VALUE`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid environment entry {0:?}: expected NAME or NAME=VALUE")]
pub struct InvalidEnvEntry(pub String);

impl ScrubbedEnv {
    /// Builds the environment from the current process: [`ALWAYS_KEPT`] plus `extra`, where each
    /// entry is `NAME` (copied from the parent when set) or `NAME=VALUE` (set as given).
    pub fn from_parent(extra: &[String]) -> Result<Self, InvalidEnvEntry> {
        Self::from_lookup(extra, |name| std::env::var_os(name))
    }

    /// Like [`ScrubbedEnv::from_parent`] with an explicit lookup, so the rule is testable.
    pub fn from_lookup(
        extra: &[String],
        lookup: impl Fn(&str) -> Option<OsString>,
    ) -> Result<Self, InvalidEnvEntry> {
        let mut env = ScrubbedEnv::default();
        for name in ALWAYS_KEPT {
            if let Some(value) = lookup(name).and_then(|v| v.into_string().ok()) {
                env.set(name, value);
            }
        }
        for entry in extra {
            let (name, value) = match entry.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (entry.as_str(), None),
            };
            if name.is_empty() || name.contains('\0') {
                return Err(InvalidEnvEntry(entry.clone()));
            }
            match value.or_else(|| lookup(name).and_then(|v| v.into_string().ok())) {
                Some(value) => env.set(name, value),
                None => tracing::debug!(name, "listed variable not set in the parent; skipped"),
            }
        }
        Ok(env)
    }

    /// Sets or replaces one variable.
    pub fn set(&mut self, name: &str, value: String) {
        self.vars.retain(|(n, _)| n != name);
        self.vars.push((name.to_owned(), value));
    }

    /// The variables in the order they were set.
    pub fn vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// The value of one variable.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The variable names, which are safe to record (values may not be).
    pub fn names(&self) -> Vec<String> {
        self.vars.iter().map(|(n, _)| n.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent(name: &str) -> Option<OsString> {
        match name {
            "PATH" => Some("/usr/bin".into()),
            "HOME" => Some("/home/u".into()),
            "RUST_LOG" => Some("debug".into()),
            "BENCHGATE_RUNNER_TOKEN" => Some("secret".into()),
            _ => None,
        }
    }

    #[test]
    fn keeps_only_the_allow_list_and_listed_names() {
        let env =
            ScrubbedEnv::from_lookup(&["RUST_LOG".into(), "MODE=fast".into()], parent).unwrap();
        let vars: Vec<_> = env.vars().collect();
        assert_eq!(
            vars,
            vec![
                ("PATH", "/usr/bin"),
                ("HOME", "/home/u"),
                ("RUST_LOG", "debug"),
                ("MODE", "fast")
            ]
        );
    }

    #[test]
    fn rejects_an_entry_without_a_name() {
        assert_eq!(
            ScrubbedEnv::from_lookup(&["=x".into()], parent),
            Err(InvalidEnvEntry("=x".into()))
        );
    }
}
