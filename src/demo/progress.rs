//! Progress bars while the demo's agent works: the A/A calibration, then the comparison with
//! its live interval and verdict.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::bail;
use benchgate_api::agent::ComparisonStatus;
use benchgate_store::Store;
use benchgate_store::model::{JobId, JobState};
use indicatif::{ProgressBar, ProgressStyle};
use tokio::task::JoinHandle;

const POLL: Duration = Duration::from_millis(300);

fn bar(len: u32, prefix: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(u64::from(len));
    bar.set_style(
        ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} rounds  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(prefix);
    bar
}

fn agent_alive<T>(agent: &JoinHandle<T>) -> anyhow::Result<()> {
    if agent.is_finished() {
        bail!("the demo's agent stopped unexpectedly; run with RUST_LOG=info to see why");
    }
    Ok(())
}

/// Waits until the A/A job ends, showing the rounds uploaded.
pub async fn wait_for_calibration<T>(
    store: &dyn Store,
    job: JobId,
    rounds: u32,
    agent: &JoinHandle<T>,
) -> anyhow::Result<()> {
    let bar = bar(rounds, "A/A");
    bar.set_message("measuring this machine's noise floor");
    loop {
        let samples = store.job_samples(job).await?;
        let done: BTreeSet<i64> = samples
            .iter()
            .flat_map(|s| s.samples.iter().map(|x| x.round))
            .collect();
        bar.set_position(done.len() as u64);
        let state = store.job(job).await?.map(|j| (j.state, j.last_error));
        match state {
            Some((JobState::Done, _)) => break,
            Some((s, error)) if super::finished(s) => {
                bar.abandon();
                bail!(
                    "the A/A calibration ended {}: {}",
                    s.as_str(),
                    error.unwrap_or_default()
                );
            }
            _ => {}
        }
        agent_alive(agent)?;
        tokio::time::sleep(POLL).await;
    }
    bar.finish_with_message("done");
    Ok(())
}

/// Waits until the comparison ends, showing the headline runner's rounds and verdict.
pub async fn wait_for_comparison<T>(
    http: &reqwest::Client,
    url: &str,
    admin_token: &str,
    rounds: u32,
    agent: &JoinHandle<T>,
) -> anyhow::Result<ComparisonStatus> {
    let bar = bar(rounds, "comparison");
    loop {
        let status: ComparisonStatus = http
            .get(url)
            .bearer_auth(admin_token)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        if let Some(row) = status
            .runners
            .first()
            .and_then(|r| r.report.benchmarks.iter().find(|b| b.metric == "wall_time"))
        {
            bar.set_position(row.n as u64);
            // The row as `benchgate compare`'s live display words it.
            bar.set_message(benchgate_harness::cli::render::live_line(row));
        }
        if !matches!(status.state.as_str(), "queued" | "running") {
            bar.finish();
            return Ok(status);
        }
        agent_alive(agent)?;
        tokio::time::sleep(POLL).await;
    }
}
