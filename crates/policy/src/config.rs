//! Choosing a policy by name and parameters (serde: TOML and JSON): the crate's leaf layer.
//!
//! Every configuration type ([`PolicyConfig`], [`PolicyName`], [`OriginRule`],
//! [`LinuxEra`]), the errors ([`PolicyError`]) and the range checks live here, and this file
//! imports nothing else of the crate. What needs the catalogue (names, parsing that checks a
//! policy accepts its fields, `build`) is written in `policies.rs`, the layer on top.

use std::fmt;
use std::str::FromStr;

/// A policy's name: a row of the catalogue (`zonal_policy::catalogue()`). Parsing checks
/// the name against the catalogue, so a `PolicyName` always builds.
///
/// ```
/// use zonal_policy::PolicyName;
/// let n: PolicyName = "numalb".parse()?;
/// assert_eq!(n, PolicyName::NUMALB);
/// assert_eq!(n.as_str(), "numalb");
/// assert!("nope".parse::<PolicyName>().is_err());
/// # Ok::<(), zonal_policy::PolicyError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PolicyName(pub(crate) u8);

/// How the origin-distance check treats tasks (docs/DESIGN.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum OriginRule {
    /// A task never moves farther from its origin than it already is (the default).
    #[default]
    NoFarther,
    /// The paper's literal text: `dist(origin, thief) ≤ dist(origin, victim)` for every task,
    /// which keeps tasks at home on their birth node.
    Strict,
    /// No origin check.
    Off,
}

impl FromStr for OriginRule {
    type Err = PolicyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "no-farther" => Ok(OriginRule::NoFarther),
            "strict" => Ok(OriginRule::Strict),
            "off" => Ok(OriginRule::Off),
            _ => Err(PolicyError::BadValue {
                field: "origin",
                value: s.to_owned(),
                expected: "one of strict, no-farther, off".into(),
            }),
        }
    }
}

/// Errors choosing or configuring a policy.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// No policy has this name.
    #[error("unknown policy {name:?}; valid policies: {valid}")]
    UnknownPolicy {
        /// The name asked for.
        name: String,
        /// The valid names.
        valid: String,
    },
    /// A parameter is out of range.
    #[error("bad value {value:?} for {field}: expected {expected}")]
    BadValue {
        /// The parameter.
        field: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// A TOML config did not parse.
    #[cfg(feature = "config")]
    #[error("malformed TOML policy config: {0}")]
    Toml(#[from] toml::de::Error),
    /// A JSON config did not parse.
    #[cfg(feature = "config")]
    #[error("malformed JSON policy config: {0}")]
    Json(#[from] serde_json::Error),
    /// A JSON config repeats a key in one object (serde_json would keep the last one
    /// silently). Checked at every nesting level before the config is read; TOML refuses
    /// repeated keys itself (`PolicyError::Toml`, feature `config`).
    #[error(
        "JSON policy config: key {key:?} appears twice in {} (line {line}, column {column})",
        object_at(.path)
    )]
    DuplicateKey {
        /// Where the object sits in the document (`a.b[2]`; empty for the top level).
        path: String,
        /// The repeated key.
        key: String,
        /// The 1-based line of its second occurrence.
        line: usize,
        /// The column just past it.
        column: usize,
    },
}

/// `the object at a.b`, or `the top-level object` for an empty path.
fn object_at(path: &str) -> String {
    if path.is_empty() {
        "the top-level object".to_owned()
    } else {
        format!("the object at {path}")
    }
}

/// A policy by name plus its parameters. Unset parameters take the documented defaults.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct PolicyConfig {
    /// Which policy.
    pub name: PolicyName,
    /// Origin rule (conservative policies).
    #[cfg_attr(feature = "serde", serde(default))]
    pub origin: OriginRule,
    /// Migrations after which a task is aged (conservative policies and composed filters;
    /// default `DEFAULT_AGE_LIMIT` = 3; must be ≥ 1).
    #[cfg_attr(feature = "serde", serde(default))]
    pub age_limit: Option<u32>,
    /// Imbalance threshold at NUMA levels (≥ II), percent (Linux `imbalance_pct − 100`;
    /// default 25 as in the paper; at most 1000). Level I always uses 17.
    #[cfg_attr(feature = "serde", serde(default))]
    pub numa_imbalance_pct: Option<u32>,
    /// NUMALB's communication weight `a` (default
    /// `DEFAULT_NUMALB_ALPHA` = 1; finite, ≥ 0).
    #[cfg_attr(feature = "serde", serde(default))]
    pub numalb_alpha: Option<f64>,
    /// Compose the conservative filters (hard zone, `origin`, `age_limit`) with another
    /// policy's selection: accepted by `thread-aware`, `numalb` and `average-weight`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub conservative_filters: Option<bool>,
    /// The kernel the Linux walk imitates (`linux`, the conservative policies,
    /// `thread-aware`, and the new-idle and fork placement of `numalb` and
    /// `average-weight`): `"modern"` (the default) or `"2.6"`, the paper's kernel
    /// ([`LinuxEra`]). Any other value is refused naming it.
    #[cfg_attr(feature = "serde", serde(default))]
    pub linux_era: LinuxEra,
    /// Linux's automatic NUMA balancing (`kernel.numa_balancing`,
    /// `NumaBalancing`): a task's pages follow it to the node it runs
    /// on, at its scans. Default off; accepted for `linux` and `thread-aware` of the modern
    /// era only (refused, naming the field, with `linux_era = "2.6"` or another policy).
    #[cfg_attr(feature = "serde", serde(default))]
    pub numa_balancing: bool,
    /// `numa_balancing_scan_delay_ms` (default 1000; 1..=3600000; only with
    /// `numa_balancing`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub numa_scan_delay_ms: Option<u32>,
    /// `numa_balancing_scan_period_min_ms` (default 1000; 1..=3600000; only with
    /// `numa_balancing`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub numa_scan_period_min_ms: Option<u32>,
}

impl PolicyConfig {
    /// A policy with default parameters.
    #[must_use]
    pub fn new(name: PolicyName) -> Self {
        Self {
            name,
            origin: OriginRule::default(),
            age_limit: None,
            numa_imbalance_pct: None,
            numalb_alpha: None,
            conservative_filters: None,
            linux_era: LinuxEra::Modern,
            numa_balancing: false,
            numa_scan_delay_ms: None,
            numa_scan_period_min_ms: None,
        }
    }
}

/// The kernel the Linux baseline imitates.
///
/// ```
/// use zonal_policy::LinuxEra;
/// assert_eq!("2.6".parse::<LinuxEra>()?, LinuxEra::V2_6);
/// assert_eq!(LinuxEra::default(), LinuxEra::Modern);
/// assert!("2.4".parse::<LinuxEra>().is_err());
/// # Ok::<(), zonal_policy::PolicyError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum LinuxEra {
    /// Linux ≥ 5.5 (docs/reference/linux-lb.md): the default.
    #[default]
    #[cfg_attr(feature = "serde", serde(rename = "modern"))]
    Modern,
    /// The 2.6-era balancer of the paper's kernel (the Linux walk's `era` module).
    #[cfg_attr(feature = "serde", serde(rename = "2.6"))]
    V2_6,
}

impl LinuxEra {
    /// Every era, in the order `--help` lists them.
    pub const ALL: [LinuxEra; 2] = [LinuxEra::Modern, LinuxEra::V2_6];

    /// The name used in configs and on command lines.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            LinuxEra::Modern => "modern",
            LinuxEra::V2_6 => "2.6",
        }
    }
}

impl fmt::Display for LinuxEra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LinuxEra {
    type Err = PolicyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| PolicyError::BadValue {
                field: "linux_era",
                value: s.to_owned(),
                expected: "one of modern, 2.6".into(),
            })
    }
}

/// The largest accepted `numa_imbalance_pct`.
pub(crate) const MAX_IMBALANCE_PCT: u32 = 1000;

/// [`PolicyError::BadValue`] for `field`.
pub(crate) fn bad(field: &'static str, value: impl ToString, expected: &str) -> PolicyError {
    PolicyError::BadValue {
        field,
        value: value.to_string(),
        expected: expected.into(),
    }
}

/// The range checks of the parameters every policy reads: `age_limit` ≥ 1,
/// `numa_imbalance_pct` at most [`MAX_IMBALANCE_PCT`], `numalb_alpha` finite and ≥ 0.
pub(crate) fn check_ranges(cfg: &PolicyConfig) -> Result<(), PolicyError> {
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
    Ok(())
}

/// The largest accepted sysctl value, ms (one hour).
pub const MAX_SYSCTL_MS: u32 = 3_600_000;

/// The range checks of the NUMA-balancing fields: the sysctls in `1..=`[`MAX_SYSCTL_MS`]
/// and set only with NUMA balancing on, which the 2.6 era refuses (whether the policy
/// accepts NUMA balancing is the catalogue's check, `NumaBalancing::applies_to`).
pub(crate) fn check_numa_balancing(cfg: &PolicyConfig) -> Result<(), PolicyError> {
    for (field, v) in [
        ("numa_scan_delay_ms", cfg.numa_scan_delay_ms),
        ("numa_scan_period_min_ms", cfg.numa_scan_period_min_ms),
    ] {
        if let Some(v) = v {
            if !(1..=MAX_SYSCTL_MS).contains(&v) {
                return Err(bad(field, v, "milliseconds in 1..=3600000"));
            }
            if !cfg.numa_balancing {
                return Err(bad(field, v, "unset unless numa_balancing = true"));
            }
        }
    }
    if cfg.numa_balancing && cfg.linux_era == LinuxEra::V2_6 {
        return Err(bad(
            "numa_balancing",
            true,
            "false with linux_era \"2.6\" (automatic NUMA balancing arrived in Linux 3.8)",
        ));
    }
    Ok(())
}
