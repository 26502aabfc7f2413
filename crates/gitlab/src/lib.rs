//! benchgate-gitlab: what a GitLab delivery says, read without I/O, and the calls made back. The `X-Gitlab-Token`
//! check ([`HookTokens`]), the delivery's identity (`X-Gitlab-Event-UUID`, the instance) and
//! the events benchgate acts on (merge requests, their notes, pushes, pipelines), parsed from
//! GitLab's own payloads (REST v4 webhook events); and [`client`], the REST v4 calls benchgate
//! makes.
//!
//! Only the fields benchgate acts on are read, so a field GitLab adds, drops or reformats
//! elsewhere in a payload cannot make a delivery fail.

pub mod check;
pub mod client;
pub mod events;
pub mod token;

pub use client::{GitlabClient, GitlabError, MergeRequestInfo, StatusState, StatusUpdate};
pub use events::{
    Delivery, DeliveryError, GitlabEvent, Headers, Ignored, MergeRequestAction, MergeRequestEvent,
    MrNoteEvent, PipelineEvent, ProjectRef, PushEvent, UserRef, parse_delivery, parse_event,
};
pub use token::{HookTokens, TokenError};
