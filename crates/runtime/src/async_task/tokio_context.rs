//! The tokio runtime a task's polls enter when its pool was given none (feature `tokio`),
//! and the hint a task's `JoinError` carries when tokio found no runtime at all.
//!
//! # Protocol
//!
//! - **Captured per task, at the spawn**: with the feature `tokio`, a task spawned on a pool
//!   built without `ThreadPoolBuilder::tokio_handle` keeps the handle of the tokio runtime
//!   the spawning thread is in (`tokio::runtime::Handle::try_current`), if any: a task
//!   spawned inside `#[tokio::main]` keeps that runtime's handle; a task spawned by
//!   another task inherits the runtime its parent's poll entered. Per task, not per pool:
//!   the global pool outlives the runtimes of `#[tokio::test]`s, one runtime per test.
//! - **Entered around each poll**: the poll (and the completion that drops the future) run
//!   inside `Handle::enter`, so that tokio's resources (`tokio::time`, `tokio::net`,
//!   `tokio::spawn`) find that runtime. The guard is dropped on the worker that took it,
//!   before the worker runs anything else (tokio requires guards dropped in order).
//! - **A pool with a handle** keeps it for every task: its workers entered it for their
//!   whole life, and no task's capture overrides it.
//! - **No runtime at all**: tokio panics ("there is no reactor running ..."); the task
//!   completes with a `JoinError` whose payload (a `String`) is [`NO_RUNTIME`] followed by
//!   tokio's own message, so that the error names the way out.

use std::any::Any;

use crate::registry::Registry;

/// The start of the panic message of a task that used a tokio resource with no tokio
/// runtime in its context.
#[cfg(feature = "tokio")]
pub(crate) const NO_RUNTIME: &str =
    "no tokio runtime: call spawn_async inside one or give ThreadPoolBuilder::tokio_handle";
/// The start of the panic message of a task that used a tokio resource with no tokio
/// runtime in its context (this build has no feature `tokio`: neither way out exists).
#[cfg(not(feature = "tokio"))]
pub(crate) const NO_RUNTIME: &str = "no tokio runtime: call spawn_async inside one or give \
     ThreadPoolBuilder::tokio_handle (both need zonal's `tokio` feature)";

/// What tokio's panic says when a resource finds no runtime in the thread's context.
const TOKIO_NO_CONTEXT: &str = "there is no reactor running";

/// The tokio runtime a task's polls enter (see the module docs); nothing without the
/// feature `tokio`.
#[derive(Default)]
pub(crate) struct TaskRuntime {
    #[cfg(feature = "tokio")]
    handle: Option<tokio::runtime::Handle>,
}

impl TaskRuntime {
    /// The runtime of the spawning thread, unless `registry`'s pool has its own.
    pub(crate) fn capture(registry: &Registry) -> Self {
        #[cfg(feature = "tokio")]
        {
            let handle = if registry.workers_in_tokio {
                None
            } else {
                tokio::runtime::Handle::try_current().ok()
            };
            Self { handle }
        }
        #[cfg(not(feature = "tokio"))]
        {
            let _ = registry;
            Self {}
        }
    }

    /// Enters the captured runtime until the returned guard drops.
    #[cfg(feature = "tokio")]
    pub(crate) fn enter(&self) -> Option<tokio::runtime::EnterGuard<'_>> {
        self.handle.as_ref().map(tokio::runtime::Handle::enter)
    }

    /// Enters the captured runtime until the returned guard drops (no runtime without the
    /// feature `tokio`).
    #[cfg(not(feature = "tokio"))]
    pub(crate) fn enter(&self) -> std::marker::PhantomData<&'_ ()> {
        std::marker::PhantomData
    }
}

/// `payload`, or, if it is tokio's "no reactor running" panic, a `String` naming the ways
/// out ([`NO_RUNTIME`]) followed by tokio's message.
pub(crate) fn explain(payload: Box<dyn Any + Send + 'static>) -> Box<dyn Any + Send + 'static> {
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&'static str>().copied());
    match msg {
        Some(m) if m.contains(TOKIO_NO_CONTEXT) => Box::new(format!("{NO_RUNTIME} (tokio: {m})")),
        _ => payload,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: &(dyn Any + Send)) -> Option<&str> {
        p.downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&'static str>().copied())
    }

    #[test]
    fn tokios_no_context_panic_names_the_ways_out() {
        let tokio_msg =
            "there is no reactor running, must be called from the context of a Tokio 1.x runtime";
        for p in [
            Box::new(tokio_msg) as Box<dyn Any + Send>,
            Box::new(tokio_msg.to_string()),
        ] {
            let out = explain(p);
            let m = text(&*out).expect("a string payload");
            assert!(m.starts_with(NO_RUNTIME), "{m}");
            assert!(m.contains("ThreadPoolBuilder::tokio_handle"), "{m}");
            assert!(m.ends_with(&format!("(tokio: {tokio_msg})")), "{m}");
        }
    }

    #[test]
    fn other_panics_are_kept_as_they_are() {
        let out = explain(Box::new("boom"));
        assert_eq!(text(&*out), Some("boom"));
        let out = explain(Box::new(7_u32));
        assert_eq!(out.downcast_ref::<u32>(), Some(&7));
    }
}
