//! Choosing a policy by name and parameters (serde: TOML and JSON).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::policy::Policy;

/// The policies, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyName {
    /// Linux's CFS balancer over sched domains (the baseline).
    Linux,
    /// Conservative, hard zone: nothing beyond level S.
    ConservativeHard,
    /// Conservative, soft zone: beyond S only from victims above 150% of the thief's load.
    ConservativeSoft,
    /// Chiang & Su's thread-aware selection for inter-node moves.
    ThreadAware,
    /// Pilla et al.'s Charm++ NUMALB cost function.
    Numalb,
    /// Sharma & Agrawal's average-weight balancing.
    AverageWeight,
    /// Plain random work stealing over every CPU, as rayon does.
    Unrestricted,
}

impl PolicyName {
    /// Every policy.
    pub const ALL: [PolicyName; 7] = [
        PolicyName::Linux,
        PolicyName::ConservativeHard,
        PolicyName::ConservativeSoft,
        PolicyName::ThreadAware,
        PolicyName::Numalb,
        PolicyName::AverageWeight,
        PolicyName::Unrestricted,
    ];

    /// The name as written in configs and CLIs.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            PolicyName::Linux => "linux",
            PolicyName::ConservativeHard => "conservative-hard",
            PolicyName::ConservativeSoft => "conservative-soft",
            PolicyName::ThreadAware => "thread-aware",
            PolicyName::Numalb => "numalb",
            PolicyName::AverageWeight => "average-weight",
            PolicyName::Unrestricted => "unrestricted",
        }
    }

    /// The valid names, comma-separated (for error messages).
    #[must_use]
    pub fn valid_names() -> String {
        Self::ALL
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for PolicyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PolicyName {
    type Err = PolicyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|n| n.as_str() == s)
            .ok_or_else(|| PolicyError::UnknownPolicy {
                name: s.to_owned(),
                valid: Self::valid_names(),
            })
    }
}

/// How the origin-distance check treats tasks (DESIGN.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
    #[error("malformed TOML policy config: {0}")]
    Toml(#[from] toml::de::Error),
    /// A JSON config did not parse.
    #[error("malformed JSON policy config: {0}")]
    Json(#[from] serde_json::Error),
}

/// A policy by name plus its parameters. Unset parameters take the documented defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// Which policy.
    pub name: PolicyName,
    /// Origin rule (conservative policies).
    #[serde(default)]
    pub origin: OriginRule,
    /// Migrations after which a task is aged (conservative policies and composed filters;
    /// default [`DEFAULT_AGE_LIMIT`](crate::DEFAULT_AGE_LIMIT) = 3; must be ≥ 1).
    #[serde(default)]
    pub age_limit: Option<u32>,
    /// Imbalance threshold at NUMA levels (≥ II), percent (Linux `imbalance_pct − 100`;
    /// default 25 as in the paper; at most 1000). Level I always uses 17.
    #[serde(default)]
    pub numa_imbalance_pct: Option<u32>,
    /// NUMALB's communication weight `a` (default
    /// [`DEFAULT_NUMALB_ALPHA`](crate::DEFAULT_NUMALB_ALPHA) = 1; finite, ≥ 0).
    #[serde(default)]
    pub numalb_alpha: Option<f64>,
    /// Compose the conservative filters (hard zone, `origin`, `age_limit`) with another
    /// policy's selection: accepted by `thread-aware`, `numalb` and `average-weight`.
    #[serde(default)]
    pub conservative_filters: Option<bool>,
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
        }
    }

    /// Parses a name (`"conservative-hard"`) into a default config.
    ///
    /// # Errors
    /// [`PolicyError::UnknownPolicy`] listing the valid names.
    pub fn named(name: &str) -> Result<Self, PolicyError> {
        Ok(Self::new(name.parse()?))
    }

    /// Parses a TOML config.
    ///
    /// # Errors
    /// [`PolicyError::Toml`].
    pub fn from_toml_str(text: &str) -> Result<Self, PolicyError> {
        Ok(toml::from_str(text)?)
    }

    /// Parses a JSON config.
    ///
    /// # Errors
    /// [`PolicyError::Json`].
    pub fn from_json_str(text: &str) -> Result<Self, PolicyError> {
        Ok(serde_json::from_str(text)?)
    }

    /// Builds the policy.
    ///
    /// # Errors
    /// [`PolicyError::BadValue`] for out-of-range parameters.
    pub fn build(&self) -> Result<Arc<dyn Policy>, PolicyError> {
        crate::registry::build(self)
    }
}
