//! benchgate-agent: the runner daemon. Claims jobs from the server, checks out and builds both
//! sides, runs the rounds through the harness and uploads each round as it finishes.
//!
//! Failure behaviour: an unreachable server is retried with backoff while finished rounds wait
//! in memory; `409` (lease lost) stops the job at once without completing it; `401` ends the
//! agent; SIGTERM starts a bounded drain (`--drain-secs`): the current round may finish, pending
//! uploads are retried and the lease released until the drain ends, then the agent exits 0;
//! rounds it could not upload are named in the log and left to the lease expiry.

pub mod checkout;
pub mod client;
pub mod config;
pub mod heartbeat;
pub mod isolation;
mod job;
pub mod limits;
mod profile;
pub mod round_upload;
pub mod settings;
pub mod shutdown;
pub mod spin;
pub mod token;
pub mod upload;

use benchgate_api::agent::FingerprintRequest;
use benchgate_harness::fingerprint::{self, MachineFingerprint};
use benchgate_harness::sandbox::isolation_name;

pub use client::{Client, ClientError};
pub use config::AgentArgs;
pub use shutdown::{Drain, Shutdown, ShutdownTrigger};
pub use spin::SpinArgs;

/// Why the agent stopped other than by a requested shutdown.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("cannot create the work dir {path}: {source}")]
    WorkDir {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("cannot listen for signals: {0}")]
    Signals(std::io::Error),
    #[error(transparent)]
    Sandbox(#[from] isolation::SandboxRequired),
    /// No usable runner token: a configuration error, exit code 2.
    #[error(transparent)]
    Token(#[from] token::TokenError),
}

impl AgentError {
    /// The process exit code: 2 for a configuration the operator must fix (as for a bad flag),
    /// 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            AgentError::Token(_) | AgentError::Sandbox(_) => 2,
            _ => 1,
        }
    }
}

/// How one job ended, from this agent's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEnd {
    /// Completed with every round uploaded.
    Succeeded,
    /// Completed as failed (build or run failure).
    Failed,
    /// Cancelled by the server and released.
    Cancelled,
    /// Released because the agent is shutting down.
    Released,
    /// Another holder has it; this agent wrote nothing more.
    LeaseLost,
    /// The drain ended before the server answered; the lease expiry requeues the job.
    Abandoned,
}

/// What every job of this agent shares.
#[derive(Debug, Clone)]
pub struct AgentContext {
    pub args: AgentArgs,
    pub client: Client,
    pub shutdown: Shutdown,
    /// The sandbox of every build and run; `None`: unsandboxed (`--sandbox none`, or `auto`
    /// on a host where bubblewrap does not work).
    pub sandbox: Option<benchgate_harness::sandbox::Sandbox>,
    /// The resource limits of every build and run, and how this host enforces them.
    pub containment: benchgate_harness::limits::Containment,
    /// The instruction counter of `counts` suites, or why this runner has none.
    pub counter: Result<benchgate_harness::counter::Counter, String>,
}

impl AgentContext {
    /// How a requested stop's time is spent.
    pub fn drain(&self) -> Drain {
        Drain::new(self.args.drain())
    }
}

/// Runs the agent until SIGTERM/SIGINT (then `Ok`) or until the token is rejected.
pub async fn run(args: AgentArgs) -> Result<(), AgentError> {
    let shutdown = Shutdown::install().map_err(AgentError::Signals)?;
    run_until(args, shutdown).await
}

/// Runs the agent until `shutdown` is requested; one job at a time.
pub async fn run_until(args: AgentArgs, shutdown: Shutdown) -> Result<(), AgentError> {
    let token = token::load(&args.token_source()?)?;
    // Builds and benchmarks run PR code as this same user: without this, they could read the
    // token from /proc/<agent>/environ or cmdline. Not dumpable makes those root-only.
    if let Err(e) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        tracing::warn!(error = %e, "cannot make the agent non-dumpable; its token is readable by the benchmarks' user");
    }
    std::fs::create_dir_all(&args.work_dir).map_err(|source| AgentError::WorkDir {
        path: args.work_dir.clone(),
        source,
    })?;
    let secrets = isolation::agent_secrets(
        args.token_file.as_deref(),
        std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .as_deref(),
    );
    let sandbox = isolation::resolve(&args.sandbox, &args.work_dir, &secrets)?
        .map(|s| s.with_tmp_size(args.limits.tmp.0));
    let containment = limits::resolve(&args.limits, fingerprint::current().memory_bytes);
    let client = Client::new(&args.server, token.expose())?;
    drop(token);
    tracing::info!(server = %args.server, work_dir = %args.work_dir.display(), labels = ?args.labels, drain_secs = args.drain_secs, "agent starting");
    let counter = benchgate_harness::counter::Counter::detect();
    match &counter {
        Ok(c) => tracing::info!(counter = c.name(), "instruction counter"),
        Err(why) => tracing::info!(%why, "no instruction counter: suites with `counts` fail here"),
    }
    let ctx = AgentContext {
        args,
        client,
        shutdown,
        sandbox,
        containment,
        counter,
    };
    send_fingerprint(&ctx).await?;

    let mut idle_backoff = client::Backoff::new(ctx.args.max_backoff());
    let mut disk_full = false;
    while !ctx.shutdown.requested() {
        // A job taken with a full disk fails at once and is given back; taking it again and
        // again would use up its attempts in seconds. Jobs wait for a runner with room.
        if job::work_dir_full(&ctx.args.work_dir) {
            if !disk_full {
                tracing::warn!(work_dir = %ctx.args.work_dir.display(), "the work dir's disk is full; not taking jobs until it has room");
                disk_full = true;
            }
            tokio::select! {
                () = tokio::time::sleep(DISK_FULL_RECHECK) => {}
                () = ctx.shutdown.wait() => break,
            }
            continue;
        }
        if disk_full {
            tracing::info!("the work dir's disk has room again; taking jobs");
            disk_full = false;
        }
        let claimed = tokio::select! {
            r = client::with_retry("claim", ctx.args.max_backoff(), || ctx.client.claim(&ctx.args.labels)) => r,
            // Dropping an in-flight long poll: if the server handed out a job just then, its
            // lease expires and the reaper requeues it.
            () = ctx.shutdown.wait() => break,
        };
        match claimed {
            Ok(Some(claim)) => {
                idle_backoff = client::Backoff::new(ctx.args.max_backoff());
                let end = job::run(&ctx, claim).await;
                tracing::info!(?end, "job ended");
            }
            Ok(None) => {}
            Err(ClientError::Unauthorized) => return Err(ClientError::Unauthorized.into()),
            Err(e) => {
                // A 4xx other than 401 (a server without the agent API, a bad request):
                // waiting is all the agent can do; an operator has to look.
                let delay = idle_backoff.next_delay();
                tracing::error!(error = %e, retry_in_ms = delay.as_millis() as u64, "claim refused");
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = ctx.shutdown.wait() => break,
                }
            }
        }
    }
    tracing::info!("agent stopped");
    Ok(())
}

/// How often an agent whose work dir's disk is full looks again.
const DISK_FULL_RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// Tells the server what machine this is (CPU, cores, kernel, governor…).
async fn send_fingerprint(ctx: &AgentContext) -> Result<(), AgentError> {
    let fingerprint = MachineFingerprint {
        isolation: Some(isolation_name(ctx.sandbox.as_ref()).to_owned()),
        limits: Some(ctx.containment.describe()),
        counter: Some(match &ctx.counter {
            Ok(c) => c.name().to_owned(),
            Err(_) => benchgate_api::fingerprint::NO_COUNTER.to_owned(),
        }),
        ..fingerprint::current()
    };
    tracing::info!(machine = %fingerprint.summary(), "machine fingerprint");
    let req = FingerprintRequest { fingerprint };
    let sent = tokio::select! {
        r = client::with_retry("fingerprint", ctx.args.max_backoff(), || ctx.client.fingerprint(&req)) => r,
        () = ctx.shutdown.wait() => return Ok(()),
    };
    match sent {
        Ok(()) => Ok(()),
        Err(ClientError::Unauthorized) => Err(ClientError::Unauthorized.into()),
        // The fingerprint is informative; a server that refuses it can still hand out jobs.
        Err(e) => {
            tracing::warn!(error = %e, "fingerprint not accepted");
            Ok(())
        }
    }
}
