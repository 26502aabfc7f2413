//! The domain types the store reads and writes.

mod acceptance;
mod bisect;
mod comparison;
mod floor;
mod github_app;
mod ids;
mod job;
mod main;
mod outbox;
mod profile;
mod repository;
mod runner;
mod sample;
mod webhook;

pub use acceptance::{Acceptance, NewAcceptance, acceptance_row};
pub use bisect::{
    Bisection, BisectionProbe, BisectionState, NewBisection, OutcomeKind, ProbeEnd, ProbeState,
    RangeCommit, SearchOutcome, SkippedCommit,
};
pub use comparison::{
    CheckRunRecord, Comparison, ComparisonFilter, ComparisonKind, ComparisonState,
    CreatedComparison, MainInfo, MainKind, NewComparison, PullRequestEdit, PullRequestHead,
    StoredResult,
};
pub use floor::{AaSession, CanaryResult, FloorKey, Forecast, NoiseFloor, SlowModeTally};
pub use github_app::{GitHubAppCredentials, SetupState, SetupStateCheck};
pub use ids::{ComparisonId, JobId, LeaseToken, OutboxId, RepositoryId, RunnerId};
pub use job::{
    ClaimedJob, Heartbeat, Job, JobKind, JobOutcome, JobState, NewCalibration, NewJob, Priority,
    QueueDepth, QueuePlace, ReapedJob, RoundLanding,
};
pub use main::{MainSeries, NewRegression, Regression, RegressionKind};
pub use outbox::{
    MAIN_BISECT, MAIN_REPORT, NewOutboxMessage, OutboxMessage, REPORT_CHECK, REPORT_COMMENT,
    comparison_key,
};
pub use profile::{NewProfile, NewProfileJob, StoredProfile};
pub use repository::{Forge, Installation, NewRepository, Repository};
pub use runner::{NewRunner, Runner, RunnerToken};
pub use sample::{
    RoundUpload, RunnerSeries, Sample, SampleInput, SamplesSince, UploadMarks, UploadReceipt,
};
pub use webhook::{Delivery, DeliveryEffect, DeliveryRecord};
