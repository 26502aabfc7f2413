//! The `Store` impl, written once: each method opens what it needs (pool, connection or
//! transaction) and calls the backend module's query functions.

use super::*;

#[async_trait::async_trait]
impl crate::Store for Backend {
    fn backend(&self) -> &'static str {
        BACKEND
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        MIGRATOR.run(&self.pool).await?;
        Ok(())
    }

    async fn readiness(&self) -> crate::Readiness {
        let reachable = sqlx::query("SELECT 1").execute(&self.pool).await.is_ok();
        // A missing table (fresh database) reads as "not current", not as an error.
        let applied: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = TRUE")
                .fetch_all(&self.pool)
                .await
                .unwrap_or_default();
        let migrations_current = reachable
            && MIGRATOR
                .iter()
                .filter(|m| m.migration_type.is_up_migration())
                .all(|m| applied.contains(&m.version));
        crate::Readiness {
            reachable,
            migrations_current,
        }
    }

    async fn upsert_installation(&self, i: &Installation) -> Result<(), StoreError> {
        repositories::upsert_installation(&mut *self.pool.acquire().await?, i).await
    }
    async fn remove_installation(&self, id: i64) -> Result<(), StoreError> {
        let mut tx = begin(&self.pool).await?;
        repositories::remove_installation(&mut tx, id).await?;
        Ok(tx.commit().await?)
    }
    async fn upsert_repository(&self, r: &NewRepository) -> Result<Repository, StoreError> {
        repositories::upsert(&mut *self.pool.acquire().await?, r).await
    }
    async fn repository(&self, id: RepositoryId) -> Result<Option<Repository>, StoreError> {
        repositories::by_id(&self.pool, id).await
    }
    async fn repository_by_name(&self, n: &str) -> Result<Option<Repository>, StoreError> {
        repositories::by_name(&self.pool, n).await
    }

    async fn add_runner(&self, name: &str, labels: &[String]) -> Result<NewRunner, StoreError> {
        runners::add(&self.pool, name, labels).await
    }
    async fn list_runners(&self) -> Result<Vec<Runner>, StoreError> {
        runners::list(&self.pool).await
    }
    async fn runner(&self, id: RunnerId) -> Result<Option<Runner>, StoreError> {
        runners::by_id(&self.pool, id).await
    }
    async fn runner_by_name(&self, name: &str) -> Result<Option<Runner>, StoreError> {
        runners::by_name(&self.pool, name).await
    }
    async fn revoke_runner(&self, name: &str) -> Result<(), StoreError> {
        runners::revoke(&self.pool, name).await
    }
    async fn authenticate_runner(&self, token: &str) -> Result<Option<Runner>, StoreError> {
        runners::authenticate(&self.pool, token).await
    }
    async fn touch_runner(
        &self,
        id: RunnerId,
        fingerprint: Option<&benchgate_api::MachineFingerprint>,
    ) -> Result<(), StoreError> {
        runners::touch(&self.pool, id, fingerprint).await
    }

    async fn create_comparison(
        &self,
        new: &NewComparison,
    ) -> Result<CreatedComparison, StoreError> {
        let mut tx = begin(&self.pool).await?;
        let created = comparisons::create(&mut tx, new).await?;
        tx.commit().await?;
        Ok(created)
    }
    async fn comparison(&self, id: ComparisonId) -> Result<Option<Comparison>, StoreError> {
        comparisons::by_id(&self.pool, id).await
    }
    async fn recent_comparisons(&self, limit: i64) -> Result<Vec<Comparison>, StoreError> {
        comparisons::find(&self.pool, &ComparisonFilter::default(), limit).await
    }
    async fn find_comparisons(
        &self,
        filter: &ComparisonFilter,
        limit: i64,
    ) -> Result<Vec<Comparison>, StoreError> {
        comparisons::find(&self.pool, filter, limit).await
    }
    async fn pull_request_comparisons(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
    ) -> Result<Vec<Comparison>, StoreError> {
        pull_requests::of_pull_request(&self.pool, repository_id, pr_number).await
    }
    async fn add_rounds(
        &self,
        comparison_id: ComparisonId,
        jobs: &[NewJob],
    ) -> Result<Vec<JobId>, StoreError> {
        let mut tx = begin(&self.pool).await?;
        let ids = comparisons::add_rounds(&mut tx, comparison_id, jobs).await?;
        tx.commit().await?;
        Ok(ids)
    }
    async fn request_profile(
        &self,
        comparison_id: ComparisonId,
        job: &NewProfileJob,
    ) -> Result<Option<JobId>, StoreError> {
        let mut tx = begin(&self.pool).await?;
        let id = profiles::request(&mut tx, comparison_id, job).await?;
        tx.commit().await?;
        Ok(id)
    }
    async fn record_profile(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        profile: &NewProfile,
    ) -> Result<(), StoreError> {
        profiles::record(&self.pool, job_id, lease, profile).await
    }
    async fn comparison_profiles(
        &self,
        comparison_id: ComparisonId,
    ) -> Result<Vec<StoredProfile>, StoreError> {
        profiles::of_comparison(&self.pool, comparison_id).await
    }
    async fn cancel_pull_request(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
    ) -> Result<u64, StoreError> {
        let mut tx = begin(&self.pool).await?;
        let n = comparisons::cancel_pull_request(&mut tx, repository_id, pr_number).await?;
        tx.commit().await?;
        Ok(n)
    }
    async fn cancel_comparison(&self, id: ComparisonId) -> Result<u64, StoreError> {
        let mut tx = begin(&self.pool).await?;
        let n = comparisons::cancel_comparison(&mut tx, id).await?;
        tx.commit().await?;
        Ok(n)
    }
    async fn record_check_run(
        &self,
        id: ComparisonId,
        run: CheckRunRecord,
    ) -> Result<(), StoreError> {
        pull_requests::record_check_run(&self.pool, id, run).await
    }
    async fn edit_pull_request_context(
        &self,
        id: ComparisonId,
        edit: &PullRequestEdit,
    ) -> Result<Option<benchgate_api::agent::PullRequestContext>, StoreError> {
        let mut tx = begin(&self.pool).await?;
        let context = pull_requests::edit_pull_request_context(&mut tx, id, edit).await?;
        tx.commit().await?;
        Ok(context)
    }
    async fn head_comparisons(
        &self,
        repository_id: RepositoryId,
        head_sha: &str,
    ) -> Result<Vec<Comparison>, StoreError> {
        pull_requests::of_head(&self.pool, repository_id, head_sha).await
    }
    async fn pull_request_head(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
    ) -> Result<Option<PullRequestHead>, StoreError> {
        pull_requests::head(&self.pool, repository_id, pr_number).await
    }
    async fn pull_request_comment_id(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
        runner_label: &str,
    ) -> Result<Option<i64>, StoreError> {
        pull_requests::comment_id(&self.pool, repository_id, pr_number, runner_label).await
    }
    async fn set_pull_request_comment_id(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
        runner_label: &str,
        comment_id: i64,
    ) -> Result<(), StoreError> {
        pull_requests::set_comment_id(
            &self.pool,
            repository_id,
            pr_number,
            runner_label,
            comment_id,
        )
        .await
    }
    async fn replace_comparison_results(
        &self,
        comparison_id: ComparisonId,
        runner_id: RunnerId,
        basis: i64,
        results: &[benchgate_api::BenchmarkResult],
    ) -> Result<bool, StoreError> {
        let mut tx = begin(&self.pool).await?;
        let replaced =
            results::replace_results(&mut tx, comparison_id, runner_id, basis, results).await?;
        tx.commit().await?;
        Ok(replaced)
    }
    async fn comparison_results(
        &self,
        comparison_id: ComparisonId,
    ) -> Result<Vec<StoredResult>, StoreError> {
        results::results(&self.pool, comparison_id).await
    }

    async fn enqueue_calibration(&self, new: &NewCalibration) -> Result<JobId, StoreError> {
        queue::enqueue_calibration(&mut *self.pool.acquire().await?, new).await
    }
    async fn enqueue_calibration_unless_since(
        &self,
        new: &NewCalibration,
        since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<Option<JobId>, StoreError> {
        queue::enqueue_calibration_unless_since(&self.pool, new, since).await
    }
    async fn finished_calibrations(
        &self,
        runner_id: RunnerId,
        repository_id: RepositoryId,
        before: chrono::DateTime<chrono::Utc>,
        limit: i64,
    ) -> Result<Vec<Job>, StoreError> {
        queue::finished_calibrations(&self.pool, runner_id, repository_id, before, limit).await
    }
    async fn latest_calibration(
        &self,
        runner_id: RunnerId,
        repository_id: RepositoryId,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, StoreError> {
        queue::latest_calibration(&self.pool, runner_id, repository_id).await
    }
    async fn claim_job(
        &self,
        runner_id: RunnerId,
        labels: &[String],
        lease: std::time::Duration,
    ) -> Result<Option<ClaimedJob>, StoreError> {
        dialect::claim_job(&self.pool, runner_id, labels, lease).await
    }
    async fn heartbeat(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        extend: std::time::Duration,
    ) -> Result<Heartbeat, StoreError> {
        queue::heartbeat(&self.pool, job_id, lease, extend).await
    }
    async fn complete_job(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        outcome: &JobOutcome,
    ) -> Result<(), StoreError> {
        queue::complete(&self.pool, job_id, lease, outcome).await
    }
    async fn calibrations_without_session(
        &self,
        finished_after: chrono::DateTime<chrono::Utc>,
        limit: i64,
    ) -> Result<Vec<Job>, StoreError> {
        queue::calibrations_without_session(&self.pool, finished_after, limit).await
    }
    async fn release_job(&self, job_id: JobId, lease: &LeaseToken) -> Result<(), StoreError> {
        queue::release(&self.pool, job_id, lease).await
    }
    async fn reap_expired_leases(
        &self,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<ReapedJob>, StoreError> {
        queue::reap(&self.pool, now).await
    }
    async fn job(&self, id: JobId) -> Result<Option<Job>, StoreError> {
        queue::by_id(&self.pool, id).await
    }
    async fn comparison_jobs(&self, comparison_id: ComparisonId) -> Result<Vec<Job>, StoreError> {
        queue::of_comparison(&self.pool, comparison_id).await
    }
    async fn active_jobs(&self) -> Result<Vec<Job>, StoreError> {
        queue::active(&self.pool).await
    }
    async fn queue_depth(&self) -> Result<QueueDepth, StoreError> {
        queue::depth(&self.pool).await
    }

    async fn upload_round(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        upload: &RoundUpload,
    ) -> Result<UploadReceipt, StoreError> {
        samples::upload_round(&self.pool, job_id, lease, upload).await
    }
    async fn comparison_samples(
        &self,
        comparison_id: ComparisonId,
    ) -> Result<Vec<RunnerSeries>, StoreError> {
        samples::of_comparison(&self.pool, comparison_id).await
    }
    async fn comparison_samples_since(
        &self,
        comparison_id: ComparisonId,
        seen: &UploadMarks,
    ) -> Result<SamplesSince, StoreError> {
        samples::of_comparison_since(&self.pool, comparison_id, seen).await
    }
    async fn job_samples(&self, job_id: JobId) -> Result<Vec<RunnerSeries>, StoreError> {
        samples::of_job(&self.pool, job_id).await
    }

    async fn record_aa_session(&self, session: &AaSession) -> Result<(), StoreError> {
        floors::record_session(&self.pool, session).await
    }
    async fn aa_sessions(&self, key: &FloorKey) -> Result<Vec<AaSession>, StoreError> {
        floors::sessions(&self.pool, key).await
    }
    async fn update_noise_floor(&self, floor: &NoiseFloor) -> Result<(), StoreError> {
        floors::update(&self.pool, floor).await
    }
    async fn noise_floor(&self, key: &FloorKey) -> Result<Option<NoiseFloor>, StoreError> {
        floors::current(&self.pool, key).await
    }
    async fn runner_noise_floors(
        &self,
        runner_id: RunnerId,
    ) -> Result<Vec<NoiseFloor>, StoreError> {
        floors::of_runner(&self.pool, runner_id).await
    }
    async fn noise_floor_history(&self, key: &FloorKey) -> Result<Vec<NoiseFloor>, StoreError> {
        floors::history(&self.pool, key).await
    }
    async fn reset_runner_audit(
        &self,
        runner_id: RunnerId,
        at: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), StoreError> {
        let done = sqlx::query("UPDATE runners SET audit_since = $2 WHERE id = $1")
            .bind(runner_id)
            .bind(at)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("runner {runner_id}")));
        }
        Ok(())
    }
    async fn record_canary_result(&self, result: &CanaryResult) -> Result<(), StoreError> {
        audit::record_canary_result(&self.pool, result).await
    }
    async fn canary_results(&self, runner_id: RunnerId) -> Result<Vec<CanaryResult>, StoreError> {
        audit::canary_results(&self.pool, runner_id).await
    }
    async fn unscored_canaries(
        &self,
        since: chrono::DateTime<chrono::Utc>,
        limit: i64,
    ) -> Result<Vec<Comparison>, StoreError> {
        audit::unscored_canaries(&self.pool, since, limit).await
    }
    async fn runner_canaries(
        &self,
        runner_id: RunnerId,
        limit: i64,
    ) -> Result<Vec<Comparison>, StoreError> {
        audit::canaries_of_runner(&self.pool, runner_id, limit).await
    }
    async fn record_forecasts(&self, forecasts: &[Forecast]) -> Result<(), StoreError> {
        audit::record_forecasts(&self.pool, forecasts).await
    }
    async fn settle_forecasts(&self, decided: &[Forecast]) -> Result<u64, StoreError> {
        audit::settle_forecasts(&self.pool, decided).await
    }
    async fn runner_forecasts(&self, runner_id: RunnerId) -> Result<Vec<Forecast>, StoreError> {
        audit::runner_forecasts(&self.pool, runner_id).await
    }

    async fn record_delivery(
        &self,
        delivery: &Delivery,
        effects: &[DeliveryEffect],
    ) -> Result<DeliveryRecord, StoreError> {
        // A connection that broke since its last use fails once and is dropped; the
        // delivery is tried again on another (it is idempotent on its delivery id,
        // so a retry after a commit whose answer was lost reports a duplicate).
        // Each try drops the broken connection it got, and a restart can break every
        // connection in the pool.
        let retries = self.pool.options().get_max_connections();
        let mut tries = 0;
        loop {
            match dialect::record_delivery(&self.pool, delivery, effects).await {
                Err(e) if e.is_broken_connection() && tries < retries => {
                    tries += 1;
                    tracing::info!(error = %e, tries, "database connection broke; recording the delivery again");
                }
                done => return done,
            }
        }
    }

    async fn enqueue_outbox(&self, message: &NewOutboxMessage) -> Result<OutboxId, StoreError> {
        outbox::insert(&mut *self.pool.acquire().await?, message).await
    }
    async fn claim_outbox(
        &self,
        limit: i64,
        lease: std::time::Duration,
    ) -> Result<Vec<OutboxMessage>, StoreError> {
        dialect::claim_outbox(&self.pool, limit, lease).await
    }
    async fn outbox_delivered(&self, id: OutboxId, lease: &LeaseToken) -> Result<(), StoreError> {
        outbox::delivered(&self.pool, id, lease).await
    }
    async fn outbox_failed(
        &self,
        id: OutboxId,
        lease: &LeaseToken,
        error: &str,
        retry_at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<(), StoreError> {
        outbox::failed(&self.pool, id, lease, error, retry_at).await
    }
    async fn release_outbox(
        &self,
        ids: &[OutboxId],
        lease: &LeaseToken,
    ) -> Result<u64, StoreError> {
        outbox::release(&self.pool, ids, lease).await
    }
    async fn outbox_backlog(&self) -> Result<i64, StoreError> {
        outbox::backlog(&self.pool).await
    }

    async fn create_setup_state(&self, ttl: std::time::Duration) -> Result<SetupState, StoreError> {
        github_app::create_state(&self.pool, ttl).await
    }
    async fn consume_setup_state(&self, state: &str) -> Result<SetupStateCheck, StoreError> {
        github_app::consume_state(&self.pool, state).await
    }
    async fn save_github_app_credentials(
        &self,
        credentials: &GitHubAppCredentials,
    ) -> Result<(), StoreError> {
        github_app::save_credentials(&self.pool, credentials).await
    }
    async fn github_app_credentials(&self) -> Result<Option<GitHubAppCredentials>, StoreError> {
        github_app::credentials(&self.pool).await
    }

    async fn accept(&self, new: &NewAcceptance) -> Result<Acceptance, StoreError> {
        acceptances::accept(&self.pool, new).await
    }
    async fn revoke_acceptance(
        &self,
        repository_id: RepositoryId,
        head_sha: &str,
        by: &str,
    ) -> Result<u64, StoreError> {
        acceptances::revoke(&self.pool, repository_id, head_sha, by).await
    }
    async fn active_acceptance(
        &self,
        repository_id: RepositoryId,
        head_sha: &str,
    ) -> Result<Option<Acceptance>, StoreError> {
        acceptances::active(&self.pool, repository_id, head_sha).await
    }
    async fn acceptances(&self, limit: i64) -> Result<Vec<Acceptance>, StoreError> {
        acceptances::recent(&self.pool, limit).await
    }

    async fn main_comparisons(
        &self,
        repository_id: RepositoryId,
        branch: &str,
    ) -> Result<Vec<Comparison>, StoreError> {
        main_history::comparisons(&self.pool, repository_id, branch).await
    }
    async fn main_series(&self) -> Result<Vec<MainSeries>, StoreError> {
        main_history::series(&self.pool).await
    }
    async fn open_regression(&self, new: &NewRegression) -> Result<Regression, StoreError> {
        main_history::open(&self.pool, new).await
    }
    async fn close_regression(&self, id: i64, by: ComparisonId) -> Result<bool, StoreError> {
        main_history::close(&self.pool, id, by).await
    }
    async fn set_regression_issue(&self, id: i64, number: i64) -> Result<(), StoreError> {
        main_history::set_issue(&self.pool, id, number).await
    }
    async fn regression(&self, id: i64) -> Result<Option<Regression>, StoreError> {
        main_history::by_id(&self.pool, id).await
    }
    async fn regressions(
        &self,
        repository_id: RepositoryId,
    ) -> Result<Vec<Regression>, StoreError> {
        main_history::of_repository(&self.pool, repository_id).await
    }

    async fn create_bisection(&self, new: &NewBisection) -> Result<(Bisection, bool), StoreError> {
        bisections::create(&self.pool, new).await
    }
    async fn bisection(&self, id: i64) -> Result<Option<Bisection>, StoreError> {
        bisections::by_id(&self.pool, id).await
    }
    async fn bisections(&self, repository_id: RepositoryId) -> Result<Vec<Bisection>, StoreError> {
        bisections::of_repository(&self.pool, repository_id).await
    }
    async fn running_bisections(&self) -> Result<Vec<i64>, StoreError> {
        bisections::running(&self.pool).await
    }
    async fn set_bisection_commits(
        &self,
        id: i64,
        commits: &[RangeCommit],
    ) -> Result<(), StoreError> {
        bisections::set_commits(&self.pool, id, commits).await
    }
    async fn finish_bisection(
        &self,
        id: i64,
        state: BisectionState,
        outcome: &SearchOutcome,
    ) -> Result<bool, StoreError> {
        bisections::finish(&self.pool, id, state, outcome).await
    }
    async fn bisection_probes(&self, id: i64) -> Result<Vec<BisectionProbe>, StoreError> {
        bisections::probes(&self.pool, id).await
    }
    async fn add_bisection_probe(
        &self,
        id: i64,
        seq: i64,
        older: &str,
        newer: &str,
    ) -> Result<(), StoreError> {
        bisections::add_probe(&self.pool, id, seq, older, newer).await
    }
    async fn end_bisection_probe(
        &self,
        id: i64,
        seq: i64,
        end: &ProbeEnd,
    ) -> Result<bool, StoreError> {
        bisections::end_probe(&self.pool, id, seq, end).await
    }
    async fn comparisons_of_pair(
        &self,
        repository_id: RepositoryId,
        runner_label: &str,
        base: &str,
        head: &str,
    ) -> Result<Vec<Comparison>, StoreError> {
        bisections::of_pair(&self.pool, repository_id, runner_label, base, head).await
    }
    async fn bisection_waits_on(
        &self,
        id: i64,
        comparison: ComparisonId,
    ) -> Result<(), StoreError> {
        bisections::wait_on(&self.pool, id, comparison).await
    }
}
