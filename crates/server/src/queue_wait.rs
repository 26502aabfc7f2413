//! Where a queued comparison waits and for how long: its place in the claim order of its runner
//! label (`Store::queue_place`), the work ahead of it at each job's measured pace, handed to the
//! label's runners as the claims hand it out, and when its answer is expected.

use std::collections::{BTreeMap, HashMap};

use benchgate_store::{Comparison, Job, JobKind, RoundLanding, RunnerId, Store, StoreError};
use chrono::{DateTime, Utc};

use crate::runner_status::RunnerStatus;

/// Finished jobs looked at for a pace: the newest of the same suite usually is among them.
const PACE_JOBS_SEARCHED: i64 = 10;

/// A queued comparison's place and the time it waits.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueWait {
    /// 1 for the job a runner of the label claims next.
    pub place: usize,
    pub label: String,
    pub time: WaitTime,
}

/// How long a queued comparison waits, as far as the store can tell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WaitTime {
    /// No runner of the label was seen lately: nothing takes the work.
    NoRunner,
    /// A job ahead has no measured pace (nothing like it finished on the label yet).
    NoPace,
    /// Seconds until a runner takes it, and until its answer (`None`: its own rounds have no
    /// measured pace yet).
    Known {
        start_secs: f64,
        answer_secs: Option<f64>,
    },
}

/// What a job costs a runner: seconds from its claim to its first round landing (checkout,
/// builds, warm-up), then per round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    pub start: f64,
    pub per_round: f64,
}

/// The pace a finished job's landings show: the median gap between consecutive rounds of one
/// attempt, and its first attempt's first landing after `started_at`. `None` without two
/// rounds landed in one attempt or a first attempt that landed none.
pub fn pace_of(started_at: Option<DateTime<Utc>>, landings: &[RoundLanding]) -> Option<Pace> {
    let per_round = crate::run_length::landing_pace(landings)?;
    let first = landings
        .iter()
        .filter(|l| l.attempt == 1)
        .map(|l| l.at)
        .min()?;
    let start = (first - started_at?).num_milliseconds() as f64 / 1e3;
    Some(Pace {
        start: start.max(0.0),
        per_round,
    })
}

/// Where comparison `c` waits, or `None` when it does not (a job of it runs, none is queued).
pub async fn queue_wait(
    store: &dyn Store,
    c: &Comparison,
    now: DateTime<Utc>,
) -> Result<Option<QueueWait>, StoreError> {
    let Some(place) = store.queue_place(c.id).await? else {
        return Ok(None);
    };
    let label = place.job.runner_label.clone();
    let serving: Vec<RunnerId> = store
        .list_runners()
        .await?
        .into_iter()
        .filter(|r| r.labels.contains(&label))
        .filter(|r| {
            matches!(
                RunnerStatus::of(r, None, now),
                RunnerStatus::Online | RunnerStatus::Busy
            )
        })
        .map(|r| r.id)
        .collect();
    let wait = |time| {
        Ok(Some(QueueWait {
            place: place.ahead.len() + 1,
            label: label.clone(),
            time,
        }))
    };
    if serving.is_empty() {
        return wait(WaitTime::NoRunner);
    }
    let mut paces = PaceBook::default();
    let mut busy = Vec::new();
    for job in place
        .running
        .iter()
        .filter(|j| j.claimed_by.is_some_and(|r| serving.contains(&r)))
    {
        let Some(left) = time_left(store, &mut paces, job, now).await? else {
            return wait(WaitTime::NoPace);
        };
        busy.push((job.claimed_by.expect("filtered"), left));
    }
    let mut ahead = Vec::new();
    for job in &place.ahead {
        let Some(pace) = paces.of(store, job).await? else {
            return wait(WaitTime::NoPace);
        };
        ahead.push((
            job.pinned_runner_id,
            pace.start + job.rounds as f64 * pace.per_round,
        ));
    }
    let start_secs = start_after(&serving, &busy, &ahead);
    let rounds = c
        .planned_rounds
        .map_or(place.job.rounds, |n| n.min(place.job.rounds));
    let answer_secs = paces
        .of(store, &place.job)
        .await?
        .map(|p| start_secs + p.start + rounds as f64 * p.per_round);
    wait(WaitTime::Known {
        start_secs,
        answer_secs,
    })
}

/// Seconds a running job still needs: its rounds not yet landed in this attempt, at its own
/// pace once two of them landed, else at the pace of its kind.
async fn time_left(
    store: &dyn Store,
    paces: &mut PaceBook,
    job: &Job,
    now: DateTime<Utc>,
) -> Result<Option<f64>, StoreError> {
    let landings: Vec<RoundLanding> = store
        .round_landings(job.id)
        .await?
        .into_iter()
        .filter(|l| l.attempt == job.attempts)
        .collect();
    let left = (job.rounds - landings.len() as i64).max(0) as f64;
    if let Some(per_round) = crate::run_length::landing_pace(&landings) {
        return Ok(Some(left * per_round));
    }
    let Some(pace) = paces.of(store, job).await? else {
        return Ok(None);
    };
    let started = job
        .started_at
        .map_or(0.0, |t| (now - t).num_milliseconds() as f64 / 1e3);
    let start_left = if landings.is_empty() {
        (pace.start - started).max(0.0)
    } else {
        0.0
    };
    Ok(Some(start_left + left * pace.per_round))
}

/// When a runner takes the job after `ahead`, handing out work as claims do: each job ahead,
/// in claim order, to the runner free soonest (a pinned one to its own runner, or to none when
/// that runner is not among `serving`). `busy` holds each runner's running job's time left.
pub fn start_after(
    serving: &[RunnerId],
    busy: &[(RunnerId, f64)],
    ahead: &[(Option<RunnerId>, f64)],
) -> f64 {
    let mut free_at: BTreeMap<RunnerId, f64> = serving.iter().map(|r| (*r, 0.0)).collect();
    for (runner, left) in busy {
        if let Some(t) = free_at.get_mut(runner) {
            *t += left;
        }
    }
    for (pin, secs) in ahead {
        let runner = match pin {
            Some(r) => *r,
            None => match soonest(&free_at) {
                Some(r) => r,
                None => return f64::INFINITY,
            },
        };
        if let Some(t) = free_at.get_mut(&runner) {
            *t += secs;
        }
    }
    soonest(&free_at).map_or(f64::INFINITY, |r| free_at[&r])
}

/// The runner free soonest (the lowest id among equals).
fn soonest(free_at: &BTreeMap<RunnerId, f64>) -> Option<RunnerId> {
    free_at
        .iter()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(r, _)| *r)
}

/// What makes two jobs alike in pace: repository, label, kind, suite and profiling.
type PaceKey = (i64, String, JobKind, Option<String>, bool);

/// Paces looked up once per kind of job.
#[derive(Default)]
struct PaceBook {
    known: HashMap<PaceKey, Option<Pace>>,
}

impl PaceBook {
    /// The pace of the newest finished job like `job` on its label.
    async fn of(&mut self, store: &dyn Store, job: &Job) -> Result<Option<Pace>, StoreError> {
        let key: PaceKey = (
            job.repository_id.0,
            job.runner_label.clone(),
            job.kind,
            job.config.config.suite.clone(),
            job.profile.is_some(),
        );
        if let Some(p) = self.known.get(&key) {
            return Ok(*p);
        }
        let mut found = None;
        for done in store
            .finished_jobs(
                job.repository_id,
                &job.runner_label,
                job.kind,
                PACE_JOBS_SEARCHED,
            )
            .await?
        {
            if done.config.config.suite != key.3 || done.profile.is_some() != key.4 {
                continue;
            }
            let landings = store.round_landings(done.id).await?;
            if let Some(p) = pace_of(done.started_at, &landings) {
                found = Some(p);
                break;
            }
        }
        self.known.insert(key, found);
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runners, one busy for 100 s: jobs ahead go to whichever is free first, a pinned
    /// one waits for its own runner, and the job after them starts when the first runner
    /// frees up.
    #[test]
    fn work_ahead_goes_to_the_runner_free_soonest() {
        let (a, b) = (RunnerId(1), RunnerId(2));
        assert_eq!(
            start_after(&[a], &[], &[]),
            0.0,
            "a free runner takes it now"
        );
        assert_eq!(start_after(&[a], &[(a, 100.0)], &[(None, 60.0)]), 160.0);
        // b is free: it takes the first job ahead (60 s) and, free again before a (busy
        // until 100), the second (30 s); the next start is when b frees, at 90.
        assert_eq!(
            start_after(&[a, b], &[(a, 100.0)], &[(None, 60.0), (None, 30.0)]),
            90.0
        );
        // A calibration pinned to a waits for a; b stays free for this job.
        assert_eq!(start_after(&[a, b], &[(a, 100.0)], &[(Some(a), 50.0)]), 0.0);
        // Pinned to a runner that is not online: it delays nobody.
        assert_eq!(start_after(&[a], &[], &[(Some(b), 50.0)]), 0.0);
    }

    #[test]
    fn a_pace_needs_two_rounds_of_one_attempt_and_a_first_landing() {
        let t0 = chrono::DateTime::parse_from_rfc3339("2024-05-01T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let at = |attempt, round, secs| RoundLanding {
            attempt,
            round,
            at: t0 + chrono::TimeDelta::seconds(secs),
        };
        assert_eq!(pace_of(Some(t0), &[at(1, 0, 90)]), None);
        assert_eq!(
            pace_of(Some(t0), &[at(1, 0, 90), at(1, 1, 102), at(1, 2, 114)]),
            Some(Pace {
                start: 90.0,
                per_round: 12.0
            })
        );
        // The first attempt landed nothing: where its rounds began is unknown.
        assert_eq!(pace_of(Some(t0), &[at(2, 0, 300), at(2, 1, 312)]), None);
    }
}
