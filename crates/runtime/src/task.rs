//! Tasks. Public: the options of a spawned task ([`TaskOptions`]), what a running task
//! knows of itself ([`TaskInfo`]), and the futures of async tasks — [`yield_now`] (queue the
//! task again, so that other tasks run) and [`sleep`] / [`sleep_until`] (a timed wait) —
//! with [`JoinHandle`] and [`JoinError`] (`async_task/`).
//!
//! (The types themselves live in `task_meta.rs`, part of the runtime's core: what every
//! queue holds; this file is the public namespace over them and the async tasks.)

pub use crate::async_task::{
    sleep, sleep_until, yield_now, JoinError, JoinHandle, Sleep, YieldNow,
};
pub use crate::free::spawn_async;
pub use crate::task_meta::{TaskInfo, TaskOptions};
