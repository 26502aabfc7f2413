//! benchgate-server: the axum app (webhooks, agent API, dashboard, JSON API, metrics), the scheduler, the reaper, the outbox worker and report rendering.
