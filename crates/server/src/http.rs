//! Middleware every route shares: request tracing, body limit, timeout, compression.

use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// Wraps the application in the middleware every route shares.
pub fn layered(app: Router, body_limit: usize, timeout: Duration) -> Router {
    app.layer(CompressionLayer::new())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .layer(RequestBodyLimitLayer::new(body_limit))
        // The path only: a query string may carry the dashboard token.
        .layer(
            TraceLayer::new_for_http().make_span_with(|req: &axum::http::Request<_>| {
                tracing::debug_span!("request", method = %req.method(), path = %req.uri().path())
            }),
        )
        .layer(SetSensitiveRequestHeadersLayer::new([
            header::AUTHORIZATION,
            header::COOKIE,
        ]))
        .layer(CatchPanicLayer::new())
}
