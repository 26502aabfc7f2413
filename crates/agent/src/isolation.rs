//! Which sandbox PR code runs in on this agent, decided once at start. It fails closed: `auto`
//! (the default) and `bwrap` use bubblewrap and refuse to start when a probe shows it does not
//! work here; only an explicit `--sandbox none` runs PR code unsandboxed (and is warned).

use std::path::{Path, PathBuf};

use benchgate_harness::sandbox::{Sandbox, SandboxError};

/// Directories hidden from PR code besides the work dir and `--sandbox-hide`: where the
/// packaged agent keeps its settings and token (deploy/).
const DEFAULT_HIDDEN: [&str; 1] = ["/etc/benchgate"];

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

    /// More paths PR code must not read (comma-separated), besides the work dir,
    /// /etc/benchgate and $CREDENTIALS_DIRECTORY, e.g. a token file kept elsewhere.
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
pub fn resolve(args: &SandboxArgs, work_dir: &Path) -> Result<Option<Sandbox>, SandboxRequired> {
    if args.mode == SandboxMode::None {
        tracing::warn!(
            "--sandbox none: PR builds and runs can read the agent's files and write the other side's worktree"
        );
        return Ok(None);
    }
    let probed = Sandbox::from_path()
        .map(|s| policy(s, args, work_dir))
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
/// systemd's credentials directory and the operator's `--sandbox-hide` paths.
fn policy(sandbox: Sandbox, args: &SandboxArgs, work_dir: &Path) -> Sandbox {
    let credentials = std::env::var_os("CREDENTIALS_DIRECTORY").map(PathBuf::from);
    let mut sandbox = DEFAULT_HIDDEN
        .iter()
        .map(PathBuf::from)
        .chain(credentials)
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
        assert_eq!(resolve(&cli.args, Path::new("/w")).unwrap(), None);
        assert!(Cli::try_parse_from(["agent", "--sandbox", "maybe"]).is_err());
    }

    #[test]
    fn the_policy_hides_the_work_dir_and_the_operators_paths() {
        let cli = Cli::try_parse_from([
            "agent",
            "--sandbox-hide",
            "/srv/secrets,/opt/token",
            "--sandbox-no-network",
        ])
        .unwrap();
        let sandbox = policy(Sandbox::new("/usr/bin/bwrap"), &cli.args, Path::new("/w"));
        for path in ["/etc/benchgate", "/srv/secrets", "/opt/token", "/w"] {
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
