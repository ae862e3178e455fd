//! The policy catalogue: every policy Zonal knows, one row each.
//!
//! The catalogue is the one list of policies. [`PolicyConfig::build`], the runtime's
//! `ThreadPoolBuilder::policy_name`, every command line's `--policy` list and help, the
//! simulator's grids and the docs read it ([`catalogue`], [`PolicyName::all`]).
//!
//! | name | sides | selection | conservative filter |
//! |---|---|---|---|
//! | `linux` | steal + balance | Linux walk, tail first | never |
//! | `conservative-hard` | steal + balance | Linux walk over levels I..S | always, hard zone |
//! | `conservative-soft` | steal + balance | Linux walk, beyond S at a doubled threshold | always, soft zone |
//! | `thread-aware` | steal + balance | Linux walk, Chiang & Su order across nodes | optional (hard) |
//! | `numalb` | steal + balance | NUMALB greedy cost | optional (hard) |
//! | `average-weight` | steal + balance | Sharma & Agrawal threshold | optional (hard) |
//! | `unrestricted` | steal + balance | random stealing | never |
//!
//! # Adding a policy
//!
//! Write it in its own file under `src/policies/` — a type implementing
//! [`Policy`](crate::Policy), [`StealSide`](crate::StealSide) and, if it balances,
//! [`BalanceSide`](crate::BalanceSide), plus a `build(&PolicyConfig)` constructor — then add
//! its `mod` line and its row to [`CATALOGUE`] below. Nothing else changes: the name parses,
//! builds, shows in every `--policy` list, and the property tests pick it up
//! (ARCHITECTURE.md walks through an example).
//!
//! # Validation
//!
//! - `age_limit` must be ≥ 1 (0 would mean no task ever moves: use `origin = "strict"` or a
//!   hard zone to restrict moves instead);
//! - `numa_imbalance_pct` at most 1000;
//! - `numalb_alpha` finite and ≥ 0;
//! - `conservative_filters` as the row's [`Filters`] allows: `Optional` policies accept
//!   both, `Never` ones refuse `true` (use `conservative-hard`), `Always` ones refuse
//!   `false`.
//!
//! Parameters a policy does not use (e.g. `numalb_alpha` for `linux`) are ignored.

pub(crate) mod average_weight;
pub(crate) mod linux;
pub(crate) mod no_policy;
pub(crate) mod numalb;
pub(crate) mod thread_aware;
pub(crate) mod unrestricted;

use std::sync::Arc;

use crate::config::{PolicyConfig, PolicyError, PolicyName};
use crate::filters::ZoneMode;
use crate::policy::{Policy, Sides};

/// Builds a policy from a validated config.
pub type Constructor = fn(&PolicyConfig) -> Arc<dyn Policy>;

/// Whether a policy accepts `conservative_filters`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum Filters {
    /// The policy is conservative: it always filters (`false` is refused).
    Always,
    /// `conservative_filters = true` puts the hard conservative filter in front of it.
    Optional,
    /// The policy never filters (`true` is refused).
    Never,
}

/// One row of the catalogue.
#[derive(Clone, Copy, Debug)]
pub struct PolicyEntry {
    /// The name, as written in configs and on command lines.
    pub name: &'static str,
    /// One line for `--help` and the docs.
    pub summary: &'static str,
    /// The sides it has.
    pub sides: Sides,
    /// Whether it takes the conservative filters.
    pub filters: Filters,
    /// Its constructor (called with a validated config).
    pub build: Constructor,
}

/// Every policy, in the order `--policy all` runs them.
pub const CATALOGUE: &[PolicyEntry] = &[
    PolicyEntry {
        name: "linux",
        summary: "Linux's CFS balancer over sched domains (the baseline)",
        sides: Sides::BOTH,
        filters: Filters::Never,
        build: linux::build,
    },
    PolicyEntry {
        name: "conservative-hard",
        summary: "conservative, hard zone: nothing beyond level S, no task farther from origin, aged tasks stay",
        sides: Sides::BOTH,
        filters: Filters::Always,
        build: |cfg| linux::build_conservative(cfg, ZoneMode::Hard),
    },
    PolicyEntry {
        name: "conservative-soft",
        summary: "conservative, soft zone: beyond S only from victims above 150% of the thief's load",
        sides: Sides::BOTH,
        filters: Filters::Always,
        build: |cfg| linux::build_conservative(cfg, ZoneMode::Soft),
    },
    PolicyEntry {
        name: "thread-aware",
        summary: "Chiang & Su: inter-node moves from the least node-concentrated thread group",
        sides: Sides::BOTH,
        filters: Filters::Optional,
        build: thread_aware::build,
    },
    PolicyEntry {
        name: "numalb",
        summary: "Pilla et al.'s Charm++ NUMALB: greedy list scheduling by NUMA cost",
        sides: Sides::BOTH,
        filters: Filters::Optional,
        build: numalb::build,
    },
    PolicyEntry {
        name: "average-weight",
        summary: "Sharma & Agrawal: CPUs take tasks up to the average weight per CPU",
        sides: Sides::BOTH,
        filters: Filters::Optional,
        build: average_weight::build,
    },
    PolicyEntry {
        name: "unrestricted",
        summary: "plain random work stealing over every CPU, as rayon does",
        sides: Sides::BOTH,
        filters: Filters::Never,
        build: unrestricted::build,
    },
];

impl PolicyName {
    /// `linux`.
    pub const LINUX: PolicyName = PolicyName::from_catalogue(0);
    /// `conservative-hard`.
    pub const CONSERVATIVE_HARD: PolicyName = PolicyName::from_catalogue(1);
    /// `conservative-soft`.
    pub const CONSERVATIVE_SOFT: PolicyName = PolicyName::from_catalogue(2);
    /// `thread-aware`.
    pub const THREAD_AWARE: PolicyName = PolicyName::from_catalogue(3);
    /// `numalb`.
    pub const NUMALB: PolicyName = PolicyName::from_catalogue(4);
    /// `average-weight`.
    pub const AVERAGE_WEIGHT: PolicyName = PolicyName::from_catalogue(5);
    /// `unrestricted`.
    pub const UNRESTRICTED: PolicyName = PolicyName::from_catalogue(6);
}

/// The catalogue.
///
/// ```
/// let names: Vec<&str> = zonal_policy::catalogue().iter().map(|e| e.name).collect();
/// assert!(names.contains(&"conservative-hard"));
/// ```
#[must_use]
pub fn catalogue() -> &'static [PolicyEntry] {
    CATALOGUE
}

/// The largest accepted `numa_imbalance_pct`.
const MAX_IMBALANCE_PCT: u32 = 1000;

fn bad(field: &'static str, value: impl ToString, expected: &str) -> PolicyError {
    PolicyError::BadValue {
        field,
        value: value.to_string(),
        expected: expected.into(),
    }
}

pub(crate) fn validate(cfg: &PolicyConfig) -> Result<(), PolicyError> {
    crate::numa_balancing::validate(cfg)?;
    if cfg.age_limit == Some(0) {
        return Err(bad("age_limit", 0, "an integer ≥ 1"));
    }
    if let Some(p) = cfg.numa_imbalance_pct {
        if p > MAX_IMBALANCE_PCT {
            return Err(bad("numa_imbalance_pct", p, "a percentage in 0..=1000"));
        }
    }
    if let Some(a) = cfg.numalb_alpha {
        if !a.is_finite() || a < 0.0 {
            return Err(bad("numalb_alpha", a, "a finite number ≥ 0"));
        }
    }
    match (cfg.name.entry().filters, cfg.conservative_filters) {
        (Filters::Never, Some(true)) => Err(bad(
            "conservative_filters",
            true,
            "false or unset for this policy (use conservative-hard for Linux with the filters)",
        )),
        (Filters::Always, Some(false)) => Err(bad(
            "conservative_filters",
            false,
            "true or unset: the conservative policies always filter",
        )),
        _ => Ok(()),
    }
}

pub(crate) fn build(cfg: &PolicyConfig) -> Result<Arc<dyn Policy>, PolicyError> {
    validate(cfg)?;
    Ok((cfg.name.entry().build)(cfg))
}

#[cfg(test)]
mod test;
