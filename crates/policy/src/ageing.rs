//! The ageing rule, defined once: a task that has migrated `limit` times is *aged* and never
//! moves again.
//!
//! Every policy answers `StealSide::ageing` (the layer above this one); the conservative
//! filter refuses aged tasks with [`Refusal::Aged`](crate::Refusal::Aged) through
//! [`Ageing::is_aged`], the runtime keeps aged tasks where no thief sees them by asking the
//! same question, and the simulator moves an aged process's pages with it by asking it too.
//!
//! # The default limit
//!
//! [`DEFAULT_AGE_LIMIT`] is 3. The paper gives no number. Three moves let a task be pulled
//! by an idle CPU, corrected once by a periodic pass, and corrected once more; a fourth move
//! of the same task is, in the paper's terms, most likely a futile migration (ping-pong
//! between passes). 2 is the next candidate; the simulator sweeps it.

use crate::view::TaskMeta;

/// The default age limit (see the module docs for why).
pub const DEFAULT_AGE_LIMIT: u32 = 3;

/// Whether and when a policy ages tasks.
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::{Ageing, TaskMeta, TaskId};
/// use zonal::topology::{CpuId, NodeId};
/// let rule = Ageing::After(3);
/// let mut t = TaskMeta::new(TaskId(1), NodeId(0), CpuId(0));
/// t.migrations = 2;
/// assert!(!rule.is_aged(&t));
/// t.migrations = 3;
/// assert!(rule.is_aged(&t));
/// assert!(!Ageing::Never.is_aged(&t));
/// assert_eq!(rule.limit(), Some(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Ageing {
    /// Tasks never age (Linux, NUMALB, plain work stealing…).
    #[default]
    Never,
    /// A task is aged once it has migrated this many times (≥ 1).
    After(u32),
}

impl Ageing {
    /// The migration count at which a task ages, if the policy ages tasks.
    #[inline]
    #[must_use]
    pub const fn limit(self) -> Option<u32> {
        match self {
            Ageing::Never => None,
            Ageing::After(n) => Some(n),
        }
    }

    /// Whether a task that has migrated `migrations` times is aged.
    #[inline]
    #[must_use]
    pub const fn is_aged_after(self, migrations: u32) -> bool {
        match self {
            Ageing::Never => false,
            Ageing::After(n) => migrations >= n,
        }
    }

    /// Whether `task` is aged: it has migrated at least the limit's number of times.
    #[inline]
    #[must_use]
    pub const fn is_aged(self, task: &TaskMeta) -> bool {
        self.is_aged_after(task.migrations)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn never_ages_and_after_counts_from_the_limit() {
        for m in [0, 1, 1000, u32::MAX] {
            assert!(!Ageing::Never.is_aged_after(m));
        }
        assert!(!Ageing::After(1).is_aged_after(0));
        assert!(Ageing::After(1).is_aged_after(1));
        assert!(Ageing::After(DEFAULT_AGE_LIMIT).is_aged_after(u32::MAX));
        assert_eq!(Ageing::Never.limit(), None);
    }
}
