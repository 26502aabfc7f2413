//! Every integration test of the `benchgate` binary, built as one test binary: each file beside
//! this one is a module, and `support` and the fake GitHub are compiled once for all of them.
//! Run one file's tests with `cargo test -p benchgate --test integration faults::`.

/// A fake GitHub as strict as github.com, for the App's end-to-end tests.
mod github;
/// The strict fake GitLab of crates/gitlab, shared with that crate's own tests.
#[allow(dead_code)]
#[path = "../crates/gitlab/tests/fake/mod.rs"]
mod gitlab_fake;
mod support;

mod agent_api;
mod agent_drain;
mod agent_e2e;
mod agent_sandbox;
mod agent_token;
mod cli_counts;
mod cli_local;
mod cli_modes;
mod config_check;
mod dashboard_browser;
mod dashboard_http;
mod demo;
mod faults;
mod github_e2e;
mod github_setup;
mod gitlab_check;
mod gitlab_e2e;
mod hostile_pr;
mod house;
mod logs;
mod module_map;
mod serve;
mod webhook_strangers;
