//! What the loom model tests share (`sleep/loom.rs`, `async_task/loom.rs`,
//! `policy_switch.rs`): the model runner with a default preemption bound, and a queue that
//! is a counter of pushed items.

use loom::sync::atomic::{AtomicUsize, Ordering};

/// Explores `f` with at most `bound` preemptions per execution, unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise.
pub(crate) fn model(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        b.preemption_bound = Some(bound);
    }
    b.check(f);
}

/// Takes one item from a queue modelled as a counter, if there is one.
pub(crate) fn take(queue: &AtomicUsize) -> bool {
    let mut n = queue.load(Ordering::Relaxed);
    while n > 0 {
        match queue.compare_exchange(n, n - 1, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(m) => n = m,
        }
    }
    false
}
