//! Where the agent's runner token comes from: a file (`--token-file`) or the environment
//! (`BENCHGATE_TOKEN`), never the command line, which every local user can read in
//! `/proc/PID/cmdline` and `ps`.

use std::path::{Path, PathBuf};

/// The environment variable that may carry the token itself.
pub const TOKEN_ENV: &str = "BENCHGATE_TOKEN";

pub use benchgate_api::RunnerToken;

/// Why the agent has no usable token. Each message says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// `--token` was given on the command line.
    #[error(
        "--token on the command line is refused: every local user can read it in /proc/PID/cmdline \
         and ps. Put the token in a file readable only by the agent's user and pass \
         --token-file PATH (or BENCHGATE_TOKEN_FILE=PATH), or set {TOKEN_ENV} in the agent's \
         environment. If the token was on a shared machine's command line, consider it seen: \
         `benchgate runner revoke` it and add the runner again"
    )]
    OnCommandLine,
    /// Neither a file nor the environment names a token.
    #[error(
        "no runner token: pass --token-file PATH (or BENCHGATE_TOKEN_FILE=PATH), or set {TOKEN_ENV}"
    )]
    Missing,
    /// Both a file and the environment name one, and the agent will not guess which is meant.
    #[error("both --token-file/BENCHGATE_TOKEN_FILE and {TOKEN_ENV} are set; keep one of them")]
    Ambiguous,
    /// The token file cannot be read.
    #[error("cannot read the token file {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The token file holds only whitespace.
    #[error("the token file {} is empty", path.display())]
    EmptyFile { path: PathBuf },
    /// `BENCHGATE_TOKEN` is set but empty.
    #[error("{TOKEN_ENV} is set but empty")]
    EmptyEnv,
}

/// Where the token is to be read from, as the flags and the environment say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// `--token-file PATH` or `BENCHGATE_TOKEN_FILE`.
    File(PathBuf),
    /// `BENCHGATE_TOKEN` (its value is read again when the token is loaded).
    Env,
}

/// Picks the token's source: `on_argv` is whether `--token` was given on the command line.
pub fn token_source(
    on_argv: bool,
    file: Option<&Path>,
    env_set: bool,
) -> Result<TokenSource, TokenError> {
    match (on_argv, file, env_set) {
        (true, _, _) => Err(TokenError::OnCommandLine),
        (false, Some(_), true) => Err(TokenError::Ambiguous),
        (false, Some(path), false) => Ok(TokenSource::File(path.to_owned())),
        (false, None, true) => Ok(TokenSource::Env),
        (false, None, false) => Err(TokenError::Missing),
    }
}

/// The token in a file's text: trimmed (editors add a newline), and not empty.
pub fn parse_token_file(text: &str, path: &Path) -> Result<RunnerToken, TokenError> {
    let token = text.trim();
    if token.is_empty() {
        return Err(TokenError::EmptyFile {
            path: path.to_owned(),
        });
    }
    Ok(RunnerToken::new(token.to_owned()))
}

/// The token in the environment's value: trimmed, and not empty.
pub fn parse_token_env(value: &str) -> Result<RunnerToken, TokenError> {
    let token = value.trim();
    if token.is_empty() {
        return Err(TokenError::EmptyEnv);
    }
    Ok(RunnerToken::new(token.to_owned()))
}

/// Whether a file with this mode is readable by someone besides its owner (and root).
pub fn readable_by_others(mode: u32) -> bool {
    mode & 0o077 != 0
}

/// Reads the token from its source; warns when the token file is open to group or others.
pub fn load(source: &TokenSource) -> Result<RunnerToken, TokenError> {
    match source {
        TokenSource::Env => parse_token_env(&std::env::var(TOKEN_ENV).unwrap_or_default()),
        TokenSource::File(path) => {
            use std::os::unix::fs::PermissionsExt;
            let unreadable = |source| TokenError::Unreadable {
                path: path.clone(),
                source,
            };
            let text = std::fs::read_to_string(path).map_err(unreadable)?;
            let mode = std::fs::metadata(path)
                .map_err(unreadable)?
                .permissions()
                .mode();
            if readable_by_others(mode) {
                tracing::warn!(
                    path = %path.display(),
                    mode = format_args!("{:o}", mode & 0o777),
                    "the token file is readable by group or others; `chmod 600` it"
                );
            }
            parse_token_file(&text, path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_is_a_file_or_the_environment_never_the_command_line() {
        let p = Path::new("/etc/benchgate/token");
        // (--token on argv, --token-file, BENCHGATE_TOKEN set) → the source or a word of the error.
        type Case<'a> = (
            bool,
            Option<&'a Path>,
            bool,
            Result<TokenSource, &'static str>,
        );
        let table: &[Case] = &[
            (false, Some(p), false, Ok(TokenSource::File(p.into()))),
            (false, None, true, Ok(TokenSource::Env)),
            (true, None, false, Err("refused")),
            (true, Some(p), true, Err("refused")),
            (false, Some(p), true, Err("keep one")),
            (false, None, false, Err("no runner token")),
        ];
        for (argv, file, env, want) in table {
            let got = token_source(*argv, *file, *env);
            match (got, want) {
                (Ok(got), Ok(want)) => assert_eq!(&got, want),
                (Err(e), Err(needle)) => {
                    let text = e.to_string();
                    assert!(text.contains(needle), "{text}");
                    assert!(
                        text.contains("--token-file") || text.contains("keep one"),
                        "{text}"
                    );
                }
                (got, want) => panic!("{argv} {file:?} {env}: {got:?}, wanted {want:?}"),
            }
        }
    }

    #[test]
    fn file_text_is_trimmed_and_must_not_be_empty() {
        let p = Path::new("/t");
        assert_eq!(parse_token_file("abc\n", p).unwrap().expose(), "abc");
        assert_eq!(parse_token_file("  abc \r\n", p).unwrap().expose(), "abc");
        let err = parse_token_file(" \n\t", p).unwrap_err().to_string();
        assert!(err.contains("/t") && err.contains("empty"), "{err}");
        assert!(parse_token_env("").is_err());
        assert_eq!(parse_token_env("x\n").unwrap().expose(), "x");
    }

    #[test]
    fn group_or_other_bits_are_too_open() {
        for (mode, open) in [
            (0o100600, false),
            (0o400, false),
            (0o640, true),
            (0o604, true),
            (0o644, true),
        ] {
            assert_eq!(readable_by_others(mode), open, "{mode:o}");
        }
    }

    #[test]
    fn an_unreadable_file_is_named_and_the_token_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let err = load(&TokenSource::File(missing.clone())).unwrap_err();
        assert!(
            err.to_string().contains(&*missing.to_string_lossy()),
            "{err}"
        );

        let file = dir.path().join("token");
        std::fs::write(&file, "tok-very-secret\n").unwrap();
        let token = load(&TokenSource::File(file)).unwrap();
        assert_eq!(token.expose(), "tok-very-secret");
        assert!(!format!("{token:?}").contains("tok-very-secret"));
    }
}
