//! The store's tests, one binary: the contract, written once and run against SQLite (always)
//! and Postgres (when `BENCHGATE_TEST_POSTGRES_URL` is set; required when `CI` is set), and
//! opening a store from a URL, and the two migration directories.

mod broken_connections;
mod cases;
mod comparison_kind;
mod connect;
mod migrations;
mod support;
mod unchanged_rows;
mod unreadable_outcome;

/// Expands each case into one test per backend.
macro_rules! contract_tests {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    let db = crate::support::sqlite().await;
                    crate::cases::$name(db.store.clone()).await;
                }
            )*
        }
        mod on_postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    let Some(db) = crate::support::postgres().await else { return };
                    crate::cases::$name(db.store.clone()).await;
                }
            )*
        }
    };
}

contract_tests!(
    migrations_are_current,
    concurrent_claimers_take_each_job_once,
    claims_follow_priority_age_label_and_pin,
    a_queued_comparison_stands_where_the_claims_will_take_it,
    late_upload_after_reap_is_lease_lost,
    reupload_is_idempotent,
    an_identical_build_completes_the_job_unmeasured,
    reaper_requeues_then_fails_after_max_attempts,
    an_interrupted_attempt_is_run_again_until_attempts_run_out,
    live_leases_are_not_reaped,
    release_gives_the_job_back,
    new_head_supersedes_old_head,
    comparisons_are_found_by_repository_pr_runner_and_verdict,
    closing_a_pr_cancels_its_jobs,
    cancelling_one_comparison_leaves_the_others,
    rebench_adds_rounds,
    concurrent_completions_finish_the_comparison,
    every_state_change_of_a_pr_comparison_enqueues_its_report,
    redelivery_does_nothing_twice,
    failed_delivery_records_nothing,
    outbox_claims_leases_and_backs_off,
    outbox_rows_are_claimed_by_priority_then_in_order,
    outbox_replaced_payload_is_sent_again,
    outbox_replacement_takes_the_new_kind_and_outlives_a_failure,
    runner_tokens_authenticate_until_revoked,
    revoking_a_runner_cancels_its_pinned_jobs,
    a_first_calibration_is_enqueued_once_under_concurrent_claims,
    samples_stay_with_their_runner,
    noise_floors_keep_history,
    comparison_results_and_github_ids,
    saturated_results_read_back,
    replacing_results_drops_those_no_longer_computed,
    calibrations_without_session_are_found_again,
    outbox_release_gives_unsent_rows_back_at_once,
    a_stale_head_cannot_supersede_the_newest,
    check_runs_follow_rounds_generations,
    a_pr_context_takes_description_edits_and_comment_claims,
    acceptances_are_kept_revoked_and_listed,
    setup_states_are_single_use_and_expire,
    a_setup_state_is_accepted_once_under_concurrent_callbacks,
    github_app_credentials_are_kept_and_replaced,
    queued_steps_fold_into_the_newest_push,
    a_finished_step_enqueues_its_judgement,
    a_regression_episode_is_opened_once_and_closed_once,
    one_active_anchor_comparison_per_pair_of_commits,
    reading_since_marks_returns_each_upload_once,
    a_large_round_is_stored_whole,
    a_pull_request_delivery_records_its_rows,
    a_profile_job_leaves_the_comparison_alone,
    a_culprit_search_is_started_once_and_woken_by_its_comparisons,
    a_canary_is_pinned_to_its_runner_and_scored_once,
    forecasts_are_kept_once_and_settled_by_the_verdict,
);
