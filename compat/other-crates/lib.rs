//! Fetch-only: never built.
