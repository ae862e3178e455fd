//! The Linux walk's parameter: how a policy built on the walk selects what moves.
//!
//! The walk ([`Balancer`](super::Balancer)) is one engine; what the policies built on it
//! change is a [`Selection`]:
//!
//! - which of the busiest CPU's candidates a detach tries first, and which it refuses
//!   ([`Selection::order`] and its [`Guard`]): Linux takes the tail first ([`Tail`]);
//!   `thread-aware` orders inter-node candidates by group share;
//! - whether the periodic pass is Linux's walk at all ([`Selection::periodic`]): `numalb` and
//!   `average-weight` bring a pass of their own and keep the walk's steal side, new-idle
//!   balancing, fork and wake-up placement.
//!
//! Each policy is a leaf implementing the trait; the engine imports none of them.

use std::fmt;

use zonal_topology::{CpuId, Level};

use crate::decision::{BalanceOutcome, Refusal};
use crate::policy::CpuPass;
use crate::rules::MoveRules;
use crate::view::{MachineView, TaskMeta};

/// How the Linux walk selects tasks (module docs).
pub(crate) trait Selection: Clone + fmt::Debug + Send + Sync + 'static {
    /// What one detach consults before and after each move.
    type Guard: Guard + Default;

    /// Orders the candidates of a detach from `src` to `dst` at `level` (`order` holds
    /// indexes into `tasks`, `src`'s task list, tail first) and returns the detach's guard.
    /// The default keeps Linux's tail-first order and a guard that refuses nothing.
    fn order(
        &self,
        view: &dyn MachineView,
        src: CpuId,
        dst: CpuId,
        level: Level,
        tasks: &[TaskMeta],
        order: &mut [usize],
    ) -> Self::Guard {
        let _ = (view, src, dst, level, tasks, order);
        Self::Guard::default()
    }

    /// The periodic pass, when the selection brings its own: `Ok` with its outcome, or the
    /// pass handed back (`Err`) for Linux's walk (the default). `rules` are the walk's move
    /// rules, conservative filter included.
    fn periodic<'a>(
        &self,
        rules: &MoveRules,
        pass: CpuPass<'a>,
    ) -> Result<BalanceOutcome, CpuPass<'a>> {
        let _ = rules;
        Err(pass)
    }
}

/// The per-detach state of a [`Selection`].
pub(crate) trait Guard {
    /// Why `t`, which the move rules allow, may not move (`None`: it may).
    fn refuse(&self, t: &TaskMeta) -> Option<Refusal>;

    /// `t` moved.
    fn note_move(&mut self, t: &TaskMeta);
}

impl Guard for () {
    #[inline]
    fn refuse(&self, _t: &TaskMeta) -> Option<Refusal> {
        None
    }

    #[inline]
    fn note_move(&mut self, _t: &TaskMeta) {}
}

/// Linux's selection: the tail first, nothing refused beyond the move rules, Linux's
/// periodic walk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tail;

impl Selection for Tail {
    type Guard = ();
}
