//! Filters that compose with any selection rule.
//!
//! A *selection* rule decides which task a pass would like to move and where (Linux's
//! busiest group → busiest CPU → tail of its queue, thread-aware ordering, NUMALB's greedy
//! cost, average-weight shedding). A *filter* decides whether a proposed move is allowed at
//! all. Keeping the two apart is what lets `conservative_filters = true` put the
//! conservative rules in front of thread-aware, NUMALB or average-weight selection without
//! copying them into each: every selection rule asks [`ConservativeFilter::check_move`]
//! (through the shared [`MoveRules`](crate::rules::MoveRules)) before it commits to a
//! candidate, and asks [`ConservativeFilter::victim`] before it examines a victim CPU.

mod conservative;

pub(crate) use conservative::{soft_source_loaded, soft_victim_loaded};
pub use conservative::{
    ConservativeFilter, MechanismFilters, ZoneMode, NEVER_AGED, SOFT_VICTIM_PCT,
};
