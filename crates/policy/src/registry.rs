//! From a [`PolicyConfig`] to a policy object.
//!
//! | name | selection | filter |
//! |---|---|---|
//! | `linux` | Linux walk, tail first | none |
//! | `conservative-hard` | Linux walk over levels I..S | conservative, hard zone |
//! | `conservative-soft` | Linux walk, beyond S at a doubled threshold | conservative, soft zone |
//! | `thread-aware` | Linux walk, Chiang & Su order across nodes | hard conservative when `conservative_filters` |
//! | `numalb` | NUMALB greedy cost | hard conservative when `conservative_filters` |
//! | `average-weight` | Sharma & Agrawal threshold | hard conservative when `conservative_filters` |
//! | `unrestricted` | random stealing | none |
//!
//! # Validation
//!
//! - `age_limit` must be ≥ 1 (0 would mean no task ever moves: use `origin = "strict"` or a
//!   hard zone to restrict moves instead);
//! - `numa_imbalance_pct` at most 1000;
//! - `numalb_alpha` finite and ≥ 0;
//! - `conservative_filters = true` is accepted by `thread-aware`, `numalb`,
//!   `average-weight` (and, redundantly, the conservative policies); `linux` and
//!   `unrestricted` refuse it (use `conservative-hard`), and the conservative policies
//!   refuse `false`.
//!
//! Parameters a policy does not use (e.g. `numalb_alpha` for `linux`) are ignored.

use std::sync::Arc;

use crate::average_weight::AverageWeight;
use crate::config::{PolicyConfig, PolicyError, PolicyName};
use crate::filters::{ConservativeFilter, ZoneMode, DEFAULT_AGE_LIMIT};
use crate::linux::{Balancer, LinuxParams, Selector};
use crate::numalb::{Numalb, DEFAULT_ALPHA};
use crate::policy::Policy;
use crate::rules::MoveRules;
use crate::unrestricted::Unrestricted;

/// The largest accepted `numa_imbalance_pct`.
const MAX_IMBALANCE_PCT: u32 = 1000;

fn bad(field: &'static str, value: impl ToString, expected: &str) -> PolicyError {
    PolicyError::BadValue {
        field,
        value: value.to_string(),
        expected: expected.into(),
    }
}

fn validate(cfg: &PolicyConfig) -> Result<(), PolicyError> {
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
    match (cfg.name, cfg.conservative_filters) {
        (PolicyName::Linux | PolicyName::Unrestricted, Some(true)) => Err(bad(
            "conservative_filters",
            true,
            "false or unset for this policy (use conservative-hard for Linux with the filters)",
        )),
        (PolicyName::ConservativeHard | PolicyName::ConservativeSoft, Some(false)) => Err(bad(
            "conservative_filters",
            false,
            "true or unset: the conservative policies always filter",
        )),
        _ => Ok(()),
    }
}

pub(crate) fn build(cfg: &PolicyConfig) -> Result<Arc<dyn Policy>, PolicyError> {
    validate(cfg)?;
    let params = LinuxParams {
        numa_pct: cfg
            .numa_imbalance_pct
            .unwrap_or(crate::linux::DEFAULT_NUMA_IMBALANCE_PCT),
        ..LinuxParams::default()
    };
    let filter = |zone| ConservativeFilter {
        zone,
        origin: cfg.origin,
        age_limit: cfg.age_limit.unwrap_or(DEFAULT_AGE_LIMIT),
    };
    let composed = cfg.conservative_filters == Some(true);
    let rules = |filter: Option<ConservativeFilter>| MoveRules {
        filter,
        cache_hot: true,
    };
    let name = |base: PolicyName| {
        if composed
            && !matches!(
                base,
                PolicyName::ConservativeHard | PolicyName::ConservativeSoft
            )
        {
            format!("{base}+conservative")
        } else {
            base.to_string()
        }
    };
    let optional = composed.then(|| filter(ZoneMode::Hard));
    Ok(match cfg.name {
        PolicyName::Linux => Arc::new(Balancer::new(
            name(cfg.name),
            params,
            rules(None),
            Selector::Tail,
        )),
        PolicyName::ConservativeHard => Arc::new(Balancer::new(
            name(cfg.name),
            params,
            rules(Some(filter(ZoneMode::Hard))),
            Selector::Tail,
        )),
        PolicyName::ConservativeSoft => Arc::new(Balancer::new(
            name(cfg.name),
            params,
            rules(Some(filter(ZoneMode::Soft))),
            Selector::Tail,
        )),
        PolicyName::ThreadAware => Arc::new(Balancer::new(
            name(cfg.name),
            params,
            rules(optional),
            Selector::ThreadAware,
        )),
        PolicyName::Numalb => Arc::new(Numalb::new(
            name(cfg.name),
            cfg.numalb_alpha.unwrap_or(DEFAULT_ALPHA),
            Balancer::new(name(cfg.name), params, rules(optional), Selector::Tail),
        )),
        PolicyName::AverageWeight => Arc::new(AverageWeight::new(
            name(cfg.name),
            Balancer::new(name(cfg.name), params, rules(optional), Selector::Tail),
        )),
        PolicyName::Unrestricted => Arc::new(Unrestricted::new()),
    })
}

#[cfg(test)]
mod test;
