//! Ending a job on the server as the run ended: completed, failed, given back when the
//! machine (not the code) failed, or walked away from when the lease is lost.

use benchgate_api::agent::{ClaimedJob, CompleteRequest, JobOutcome, ReleaseRequest};

use super::{Stop, within_drain};
use crate::checkout::Checkout;
use crate::client::{ClientError, with_retry};
use crate::{AgentContext, JobEnd};

/// Free space below which the agent's work dir counts as full.
const WORK_DIR_FULL_BELOW: u64 = 64 * 1024 * 1024;

/// Whether the filesystem of the work dir has (almost) no room left now: under 64 MiB free, or
/// as full as the disk guard would stop a build or run at.
pub(crate) fn work_dir_full(work_dir: &std::path::Path) -> bool {
    rustix::fs::statvfs(work_dir)
        .is_ok_and(|s| s.f_bavail.saturating_mul(s.f_frsize) < WORK_DIR_FULL_BELOW)
        || benchgate_harness::disk::nearly_full(work_dir)
}

/// A failure as the server should take it, decided from what the agent measured itself, never
/// from what the failing code printed: when the work dir's disk is full (or as full as the disk
/// guard stops a tree at) after the failure, the machine is at fault and the attempt is given
/// back to be run again (until the job's attempts run out); anything else fails the job. A run
/// that fills its private `/tmp` or reaches the disk limit (its tree is then discarded) fails.
pub(super) fn failure_outcome(reason: String, log_tail: String, work_dir_full: bool) -> JobOutcome {
    if work_dir_full {
        JobOutcome::Interrupted { reason, log_tail }
    } else {
        JobOutcome::Failed { reason, log_tail }
    }
}

/// Ends the job on the server as `stop` says, retrying while the server is unreachable (during
/// a stop, only until the drain ends).
pub(super) async fn finish(ctx: &AgentContext, claim: &ClaimedJob, stop: Stop) -> JobEnd {
    let max = ctx.args.max_backoff();
    let lease_token = claim.lease_token.clone();
    let total = ctx.drain().total;
    let (end, result) = match stop {
        Stop::LeaseLost => {
            tracing::warn!("lease lost; leaving the job to its new holder");
            return JobEnd::LeaseLost;
        }
        done @ (Stop::Done { .. } | Stop::IdenticalBuild(_)) => {
            let outcome = match done {
                Stop::IdenticalBuild(build) => {
                    tracing::info!(files = build.files.len(), sha256 = %build.sha256, "identical build; completing the job unmeasured");
                    JobOutcome::IdenticalBuild { build }
                }
                Stop::Done { rounds } => {
                    tracing::info!(rounds, "all rounds uploaded; completing the job");
                    JobOutcome::Succeeded { log_tail: None }
                }
                _ => unreachable!("matched above"),
            };
            let req = CompleteRequest {
                lease_token,
                outcome,
            };
            let r = within_drain(
                ctx,
                total,
                with_retry("complete", max, || ctx.client.complete(claim.job_id, &req)),
            )
            .await;
            (JobEnd::Succeeded, r)
        }
        Stop::Failed { reason, log_tail } => {
            let disk = benchgate_harness::disk::DISK_STOP;
            if reason.contains(disk) || log_tail.contains(disk) {
                // What the tree wrote stays until its worktrees go: it would fill the disk again.
                let repo = Checkout::new(&ctx.args.work_dir, &claim.repository.clone_url);
                match repo.discard_worktrees() {
                    Ok(()) => tracing::info!("the worktrees stopped at the disk limit are removed"),
                    Err(e) => {
                        tracing::error!(error = %e, "cannot remove the worktrees stopped at the disk limit")
                    }
                }
            }
            let outcome = failure_outcome(reason, log_tail, work_dir_full(&ctx.args.work_dir));
            match &outcome {
                JobOutcome::Interrupted { reason, .. } => {
                    tracing::warn!(%reason, "job interrupted: the disk is full; it will be run again");
                }
                _ => tracing::warn!("job failed"),
            }
            let req = CompleteRequest {
                lease_token,
                outcome,
            };
            let r = within_drain(
                ctx,
                total,
                with_retry("complete", max, || ctx.client.complete(claim.job_id, &req)),
            )
            .await;
            (JobEnd::Failed, r)
        }
        // The server ends a released job cancelled when it was cancelled, else requeues it.
        Stop::Cancelled | Stop::Shutdown => {
            let end = if matches!(stop, Stop::Cancelled) {
                JobEnd::Cancelled
            } else {
                JobEnd::Released
            };
            tracing::info!(?end, "releasing the job");
            let req = ReleaseRequest { lease_token };
            let r = within_drain(
                ctx,
                total,
                with_retry("release", max, || ctx.client.release(claim.job_id, &req)),
            )
            .await;
            (end, r)
        }
    };
    match result {
        Some(Ok(())) => end,
        None => {
            tracing::warn!(
                job = claim.job_id,
                attempt = claim.attempt,
                "the drain ended before the server answered; the job is left to its lease expiry"
            );
            JobEnd::Abandoned
        }
        Some(Err(ClientError::LeaseLost)) => {
            tracing::warn!("lease lost before the job could be ended");
            JobEnd::LeaseLost
        }
        Some(Err(e)) => {
            tracing::error!(error = %e, "cannot end the job; its lease will expire");
            JobEnd::LeaseLost
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_agents_own_probe_of_the_disk_makes_a_failure_the_machines() {
        let tail = "fatal: cannot write: No space left on device".to_owned();
        let reason = "build failed (exit status 1)".to_owned();
        let full = failure_outcome(reason.clone(), tail.clone(), true);
        assert!(matches!(full, JobOutcome::Interrupted { .. }), "{full:?}");
        // The run filled its own /tmp; the work dir has room: the code's fault.
        let own = failure_outcome(reason.clone(), tail, false);
        assert!(matches!(own, JobOutcome::Failed { .. }), "{own:?}");
        // Code that prints the disk guard's words, or the kernel's, is not believed.
        for words in [
            benchgate_harness::disk::DISK_NEARLY_FULL,
            benchgate_api::agent::DISK_FULL,
        ] {
            let said = format!("run 3 of head: {words} (1.0 GiB kept free)");
            let forged = failure_outcome(said.clone(), said, false);
            assert!(matches!(forged, JobOutcome::Failed { .. }), "{forged:?}");
        }
        assert!(!work_dir_full(std::path::Path::new("/")));
    }
}
