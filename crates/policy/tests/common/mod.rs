//! Shared by the policy crate's property tests: generated machines, the policy
//! configurations every law is checked under, and what each configuration promises.
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;

use proptest::prelude::*;
use zonal_policy::{OriginRule, PolicyConfig, PolicyName, DEFAULT_AGE_LIMIT};
use zonal_topology::{presets, Topology};

/// The paper's presets, fan-out trees, meshes and tori.
pub fn topology() -> impl Strategy<Value = Arc<Topology>> {
    let preset = prop_oneof![Just("s1"), Just("s2"), Just("s3")]
        .prop_map(|n| Arc::new(presets::preset(n).unwrap()));
    let tree = (prop::collection::vec(2usize..=3, 1..=3), 1usize..=3)
        .prop_map(|(f, c)| Arc::new(presets::hierarchical(&f, c).unwrap()));
    let mesh = (1usize..=4, 1usize..=4, any::<bool>(), 1usize..=2)
        .prop_map(|(w, h, t, c)| Arc::new(presets::mesh(w, h, t, c).unwrap()));
    prop_oneof![2 => preset, 2 => tree, 2 => mesh]
}

/// Every policy name, the filtered variants, and the origin rules and age limits of the
/// conservative ones.
pub fn configs() -> Vec<PolicyConfig> {
    let mut out: Vec<PolicyConfig> = PolicyName::all().map(PolicyConfig::new).collect();
    for name in [
        PolicyName::THREAD_AWARE,
        PolicyName::NUMALB,
        PolicyName::AVERAGE_WEIGHT,
    ] {
        let mut c = PolicyConfig::new(name);
        c.conservative_filters = Some(true);
        out.push(c);
    }
    for name in [PolicyName::CONSERVATIVE_HARD, PolicyName::CONSERVATIVE_SOFT] {
        for origin in [OriginRule::Strict, OriginRule::Off] {
            let mut c = PolicyConfig::new(name);
            c.origin = origin;
            out.push(c);
        }
        let mut c = PolicyConfig::new(name);
        c.age_limit = Some(1);
        out.push(c);
    }
    out
}

/// Whether the configuration enforces the hard zone.
pub fn is_hard(cfg: &PolicyConfig) -> bool {
    cfg.name == PolicyName::CONSERVATIVE_HARD || cfg.conservative_filters == Some(true)
}

/// Whether the configuration applies the conservative filters at all.
pub fn is_conservative(cfg: &PolicyConfig) -> bool {
    is_hard(cfg) || cfg.name == PolicyName::CONSERVATIVE_SOFT
}

/// The migrations after which the configuration ages a task.
pub fn age_limit(cfg: &PolicyConfig) -> u32 {
    cfg.age_limit.unwrap_or(DEFAULT_AGE_LIMIT)
}

/// Whether the configuration is one of the seven policies of the paper's comparison, whose
/// every rule the laws know (a policy added to the catalogue is checked by the general laws
/// only).
pub fn is_builtin(cfg: &PolicyConfig) -> bool {
    [
        PolicyName::LINUX,
        PolicyName::CONSERVATIVE_HARD,
        PolicyName::CONSERVATIVE_SOFT,
        PolicyName::THREAD_AWARE,
        PolicyName::NUMALB,
        PolicyName::AVERAGE_WEIGHT,
        PolicyName::UNRESTRICTED,
    ]
    .contains(&cfg.name)
}
