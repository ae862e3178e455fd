//! The Linux walk's parameter: how a policy built on the walk selects what moves.
//!
//! The walk ([`Balancer`](super::Balancer)) is one engine; what the policies built on it
//! change is a [`Selection`]:
//!
//! - which of the busiest CPU's candidates a detach tries first, and which it refuses
//!   ([`Selection::order`] and its [`Guard`]): Linux takes the tail first ([`Tail`]);
//!   `thread-aware` orders inter-node candidates by group share;
//! - whether the periodic pass is Linux's walk at all ([`Selection::whole_machine`]):
//!   `numalb` and `average-weight` bring a whole-machine pass of their own
//!   ([`WholeMachine`], wrapped in [`Centralised`]) and keep the walk's steal side, new-idle
//!   balancing, fork and wake-up placement.
//!
//! Each policy is a leaf implementing one of these traits; the engine imports none of them.

use std::fmt;

use zonal_topology::{CpuId, Level};

use crate::decision::{Attempt, AttemptOutcome, BalanceOutcome, MoveContext, MoveKind, Refusal};
use crate::policy::CpuPass;
use crate::rules::MoveRules;
use crate::view::{MachineView, TaskMeta};

/// The candidates of one detach: `tasks`, the task list of the busiest CPU `src`, for moves
/// to `dst` at `level`.
#[derive(Clone, Copy)]
pub(crate) struct Candidates<'a> {
    pub(crate) view: &'a dyn MachineView,
    pub(crate) src: CpuId,
    pub(crate) dst: CpuId,
    pub(crate) level: Level,
    pub(crate) tasks: &'a [TaskMeta],
}

/// How the Linux walk selects tasks (module docs).
pub(crate) trait Selection: Clone + fmt::Debug + Send + Sync + 'static {
    /// What one detach consults before and after each move.
    type Guard: Guard + Default;

    /// Orders the candidates (`order` holds indexes into `c.tasks`, tail first) and returns
    /// the detach's guard. The default keeps Linux's tail-first order and a guard that
    /// refuses nothing.
    fn order(&self, c: &Candidates<'_>, order: &mut [usize]) -> Self::Guard {
        let _ = (c, order);
        Self::Guard::default()
    }

    /// The selection's own periodic pass, if it brings one (`None`, the default: Linux's
    /// walk).
    fn whole_machine(&self) -> Option<&dyn WholeMachine> {
        None
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

/// A centralised periodic pass over the whole machine, run at the top level's interval in
/// place of Linux's walk ([`whole_machine_pass`]).
pub(crate) trait WholeMachine: Send + Sync {
    /// Whether `cpu` runs the pass (every CPU by default); on the others the periodic pass
    /// returns nothing and marks every level never due.
    fn runs_on(&self, cpu: CpuId) -> bool {
        let _ = cpu;
        true
    }

    /// The pass: appends its migrations and refusals to `out`, returns the attempt's
    /// outcome and how many tasks it moved.
    fn pass(&self, p: &MachinePass<'_>, out: &mut BalanceOutcome) -> (AttemptOutcome, u32);
}

/// What a [`WholeMachine`] pass reads: the walk's move rules (conservative filter
/// included), the machine, the balancing CPU, and the move context (periodic, now, the top
/// level's failure count).
pub(crate) struct MachinePass<'a> {
    pub(crate) rules: &'a MoveRules,
    pub(crate) view: &'a dyn MachineView,
    pub(crate) cpu: CpuId,
    pub(crate) ctx: MoveContext,
}

/// The [`Selection`] of a [`WholeMachine`] pass: Linux's tail-first order for new-idle
/// balancing, the pass for the periodic one.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Centralised<W>(pub(crate) W);

impl<W: WholeMachine + Clone + fmt::Debug + 'static> Selection for Centralised<W> {
    type Guard = ();

    fn whole_machine(&self) -> Option<&dyn WholeMachine> {
        Some(&self.0)
    }
}

/// A periodic pass of a [`WholeMachine`]: on the CPUs it runs on, when the top level is
/// due, the pass booked as one whole-machine attempt by the level's back-off.
pub(crate) fn whole_machine_pass(
    w: &dyn WholeMachine,
    rules: &MoveRules,
    pass: CpuPass<'_>,
) -> BalanceOutcome {
    let mut out = BalanceOutcome::default();
    let (view, cpu, now) = (pass.view, pass.cpu(), pass.view.now_us());
    if !w.runs_on(cpu) {
        pass.state.never_due();
        return out;
    }
    let Some(st) = pass.state.top_level_due(now) else {
        return out;
    };
    let p = MachinePass {
        rules,
        view,
        cpu,
        ctx: MoveContext {
            kind: MoveKind::Periodic,
            now_us: now,
            nr_balance_failed: st.nr_balance_failed,
        },
    };
    let (outcome, moved) = w.pass(&p, &mut out);
    st.record(outcome, now);
    out.attempts
        .push(Attempt::whole_machine(view.topology(), cpu, outcome, moved));
    out
}
