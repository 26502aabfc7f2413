//! Which sandbox PR code runs in on this agent, decided once at start. It fails closed: `auto`
//! (the default) and `bwrap` use bubblewrap and refuse to start when a probe shows it does not
//! work here; only an explicit `--sandbox none` runs PR code unsandboxed (and is warned).

use std::path::{Path, PathBuf};

use benchgate_harness::sandbox::{Sandbox, SandboxError};

/// Directories hidden from PR code besides the work dir and `--sandbox-hide`: where the
/// packaged agent keeps its settings and token (deploy/).
const DEFAULT_HIDDEN: [&str; 1] = ["/etc/benchgate"];

/// Where tools keep credentials under the agent's home: keys, git and registry tokens,
/// passwords. PR code runs as the agent's user, so each is hidden whether or not it exists now.
const HOME_CREDENTIALS: [&str; 11] = [
    ".ssh",
    ".git-credentials",
    ".gitconfig",
    ".config/git",
    ".netrc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".docker",
    ".pgpass",
    ".aws",
    ".config/gh",
];

/// The agent's own secrets that PR code must not read, besides the work dir: its token file
/// and the credentials under `home`.
pub fn agent_secrets(token_file: Option<&Path>, home: Option<&Path>) -> Vec<PathBuf> {
    let home_files = home
        .into_iter()
        .flat_map(|h| HOME_CREDENTIALS.iter().map(move |c| h.join(c)));
    token_file
        .map(Path::to_path_buf)
        .into_iter()
        .chain(home_files)
        .collect()
}

/// `--sandbox`: how builds and benchmark runs are isolated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SandboxMode {
    /// bubblewrap; the agent refuses to start when it does not work here (as `bwrap`).
    #[default]
    Auto,
    /// bubblewrap, required: the agent refuses to start without it.
    Bwrap,
    /// No sandbox: PR code can read the agent's files and write the other side's worktree.
    None,
}

/// The agent's sandbox flags.
#[derive(Debug, Clone, clap::Args)]
pub struct SandboxArgs {
    /// Isolation of PR builds and runs: `auto` or `bwrap` (bubblewrap; the agent refuses to
    /// start when it does not work here) or `none` (no isolation, said explicitly; warned).
    #[arg(
        long = "sandbox",
        env = "BENCHGATE_SANDBOX",
        value_enum,
        default_value_t = SandboxMode::Auto
    )]
    pub mode: SandboxMode,

    /// More paths PR code must not read (comma-separated), besides those always hidden: the
    /// work dir, /etc/benchgate, $CREDENTIALS_DIRECTORY, the --token-file, and credentials
    /// under $HOME (.ssh, .git-credentials, .gitconfig, .config/git, .netrc, .cargo/credentials,
    /// .docker, .pgpass, .aws, .config/gh).
    #[arg(
        long = "sandbox-hide",
        env = "BENCHGATE_SANDBOX_HIDE",
        value_delimiter = ','
    )]
    pub hide: Vec<PathBuf>,

    /// Give sandboxed builds and runs no network (loopback only); builds then need their
    /// dependencies already fetched or vendored.
    #[arg(long = "sandbox-no-network", env = "BENCHGATE_SANDBOX_NO_NETWORK")]
    pub no_network: bool,
}

/// A sandbox asked for (`auto` or `bwrap`) on a host where bubblewrap does not work: the agent
/// does not start, so PR code never runs unconfined by accident.
#[derive(Debug, thiserror::Error)]
#[error(
    "--sandbox {mode}: {source}. PR code never runs unsandboxed unless you say so: install \
     bubblewrap (`apt-get install bubblewrap`) where unprivileged user namespaces are allowed \
     (sysctl kernel.unprivileged_userns_clone=1; in a container, a seccomp profile that permits \
     them), or opt out explicitly with --sandbox none"
)]
pub struct SandboxRequired {
    mode: &'static str,
    source: SandboxError,
}

/// Decides the sandbox of every job: `Some` runs PR code in bubblewrap, `None` unsandboxed.
/// `secrets` ([`agent_secrets`]) are hidden besides the work dir and the operator's paths.
pub fn resolve(
    args: &SandboxArgs,
    work_dir: &Path,
    secrets: &[PathBuf],
) -> Result<Option<Sandbox>, SandboxRequired> {
    if args.mode == SandboxMode::None {
        tracing::warn!(
            "--sandbox none: PR builds and runs can read the agent's files and write the other side's worktree"
        );
        return Ok(None);
    }
    let probed = Sandbox::from_path()
        .map(|s| policy(s, args, work_dir, secrets))
        .and_then(|s| {
            s.probe()?;
            Ok(s)
        });
    match (probed, args.mode) {
        (Ok(sandbox), _) => {
            tracing::info!(
                isolation = "bwrap",
                hidden = ?sandbox.hidden(),
                network = sandbox.shares_network(),
                "PR builds and runs are sandboxed"
            );
            Ok(Some(sandbox))
        }
        (Err(source), mode) => Err(SandboxRequired {
            mode: if mode == SandboxMode::Bwrap {
                "bwrap"
            } else {
                "auto"
            },
            source,
        }),
    }
}

/// The sandbox of a job's benchmark runs: the builds' without the network unless the suite
/// asked for it (`network = true`), so a run cannot reach other hosts or local services.
pub fn for_runs(sandbox: Option<&Sandbox>, network: bool) -> Option<Sandbox> {
    sandbox.map(|s| {
        if network {
            s.clone()
        } else {
            s.clone().without_network()
        }
    })
}

/// The hiding rules: the work dir (clones, both worktrees), the packaged config directory,
/// systemd's credentials directory, the agent's `secrets` and the operator's `--sandbox-hide`
/// paths.
fn policy(sandbox: Sandbox, args: &SandboxArgs, work_dir: &Path, secrets: &[PathBuf]) -> Sandbox {
    let credentials = std::env::var_os("CREDENTIALS_DIRECTORY").map(PathBuf::from);
    let mut sandbox = DEFAULT_HIDDEN
        .iter()
        .map(PathBuf::from)
        .chain(credentials)
        .chain(secrets.iter().cloned())
        .chain(args.hide.iter().cloned())
        .chain(std::iter::once(work_dir.to_path_buf()))
        .fold(sandbox, Sandbox::hide);
    if args.no_network {
        sandbox = sandbox.without_network();
    }
    // The agent's binary stays runnable inside even when it lives under /tmp or the work dir.
    if let Ok(exe) = std::env::current_exe() {
        sandbox = sandbox.show(exe);
    }
    sandbox
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: SandboxArgs,
    }

    #[test]
    fn auto_is_the_default_and_none_is_an_explicit_opt_out() {
        let cli = Cli::try_parse_from(["agent"]).unwrap();
        assert_eq!(cli.args.mode, SandboxMode::Auto);
        let cli = Cli::try_parse_from(["agent", "--sandbox", "none"]).unwrap();
        assert_eq!(resolve(&cli.args, Path::new("/w"), &[]).unwrap(), None);
        assert!(Cli::try_parse_from(["agent", "--sandbox", "maybe"]).is_err());
    }

    #[test]
    fn the_policy_hides_the_work_dir_the_agents_secrets_and_the_operators_paths() {
        let cli = Cli::try_parse_from([
            "agent",
            "--sandbox-hide",
            "/srv/secrets,/opt/token",
            "--sandbox-no-network",
        ])
        .unwrap();
        let secrets = agent_secrets(
            Some(Path::new("/run/agent.token")),
            Some(Path::new("/home/b")),
        );
        let sandbox = policy(
            Sandbox::new("/usr/bin/bwrap"),
            &cli.args,
            Path::new("/w"),
            &secrets,
        );
        for path in [
            "/etc/benchgate",
            "/srv/secrets",
            "/opt/token",
            "/w",
            "/run/agent.token",
            "/home/b/.ssh",
            "/home/b/.git-credentials",
            "/home/b/.cargo/credentials.toml",
        ] {
            assert!(
                sandbox.hidden().contains(&PathBuf::from(path)),
                "{path} not in {:?}",
                sandbox.hidden()
            );
        }
        assert!(!sandbox.shares_network());
    }

    #[test]
    fn runs_lose_the_network_unless_the_suite_asks_for_it() {
        let builds = Sandbox::new("/usr/bin/bwrap");
        assert!(builds.shares_network());
        let runs = for_runs(Some(&builds), false).unwrap();
        assert!(!runs.shares_network());
        assert!(for_runs(Some(&builds), true).unwrap().shares_network());
        assert_eq!(for_runs(None, false), None, "no sandbox, nothing to change");
    }
}
