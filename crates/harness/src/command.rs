//! A benchmark command as the user wrote it: split into words like a shell would, or handed to
//! `sh -c` whole, and the directory it runs in.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A command line that does not split into words (an unbalanced quote).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CommandError {
    #[error("cannot split {0:?} into words: unbalanced quote or trailing backslash")]
    Unsplittable(String),
    #[error("empty command")]
    Empty,
    #[error("environment entry {0:?} is not NAME=value")]
    BadEnv(String),
}

/// One side's benchmark command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchCommand {
    pub argv: Vec<String>,
    /// Working directory; `None`: the caller's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Variables this side's runs get beyond the session's environment (a canary's planted
    /// work, a layout salt's padding), set last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
}

impl BenchCommand {
    /// Splits `line` into words as a POSIX shell would (quotes and backslashes), without running
    /// a shell: no globbing, variables or pipes.
    pub fn from_words(line: &str) -> Result<Self, CommandError> {
        let argv = shlex::split(line).ok_or_else(|| CommandError::Unsplittable(line.to_owned()))?;
        Self::from_argv(argv)
    }

    /// Runs `line` through `sh -c`, for pipes, redirections and variables.
    pub fn shell(line: &str) -> Result<Self, CommandError> {
        if line.trim().is_empty() {
            return Err(CommandError::Empty);
        }
        Self::from_argv(vec!["sh".into(), "-c".into(), line.to_owned()])
    }

    /// A command from words that are already split.
    pub fn from_argv(argv: Vec<String>) -> Result<Self, CommandError> {
        if argv.is_empty() {
            return Err(CommandError::Empty);
        }
        Ok(BenchCommand {
            argv,
            cwd: None,
            env: Vec::new(),
        })
    }

    /// The same command run in `dir`.
    pub fn in_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// The same command with `NAME=value` entries added to its runs' environment; an entry
    /// without `=` is refused.
    pub fn with_env(mut self, entries: &[String]) -> Result<Self, CommandError> {
        for entry in entries {
            let (name, value) = entry
                .split_once('=')
                .filter(|(n, _)| !n.is_empty())
                .ok_or_else(|| CommandError::BadEnv(entry.clone()))?;
            self.env.push((name.to_owned(), value.to_owned()));
        }
        Ok(self)
    }

    /// The command as one line, quoted so it splits back into the same words.
    pub fn display(&self) -> String {
        shlex::try_join(self.argv.iter().map(String::as_str))
            .unwrap_or_else(|_| self.argv.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell() {
        let c = BenchCommand::from_words(r#"bench --name "a b" 'c d' e\ f"#).unwrap();
        assert_eq!(c.argv, ["bench", "--name", "a b", "c d", "e f"]);
        assert_eq!(c.display(), r#"bench --name 'a b' 'c d' 'e f'"#);
    }

    #[test]
    fn refuses_unbalanced_quotes_and_empty_lines() {
        assert!(matches!(
            BenchCommand::from_words("echo 'oops"),
            Err(CommandError::Unsplittable(_))
        ));
        assert_eq!(BenchCommand::from_words("  "), Err(CommandError::Empty));
        assert_eq!(BenchCommand::shell(""), Err(CommandError::Empty));
    }

    #[test]
    fn shell_mode_hands_the_line_to_sh() {
        let c = BenchCommand::shell("sleep 0.1 | cat").unwrap();
        assert_eq!(c.argv, ["sh", "-c", "sleep 0.1 | cat"]);
    }
}
