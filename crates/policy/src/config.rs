//! Choosing a policy by name and parameters (serde: TOML and JSON).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::filters::{ConservativeFilter, ZoneMode};
use crate::policies::linux::LinuxEra;
use crate::policies::PolicyEntry;
use crate::policy::Policy;

/// A policy's name: a row of the [catalogue](crate::catalogue). Parsing checks the name
/// against the catalogue, so a `PolicyName` always builds.
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
pub struct PolicyName(u8);

impl PolicyName {
    /// The name of the catalogue's `index`-th row (for the catalogue's named constants).
    pub(crate) const fn from_catalogue(index: u8) -> Self {
        assert!((index as usize) < crate::policies::CATALOGUE.len());
        Self(index)
    }

    /// Every policy, in catalogue order.
    pub fn all() -> impl ExactSizeIterator<Item = PolicyName> + Clone {
        (0..crate::policies::CATALOGUE.len()).map(|i| PolicyName(i as u8))
    }

    /// The policy's catalogue row.
    #[must_use]
    pub fn entry(self) -> &'static PolicyEntry {
        &crate::policies::CATALOGUE[usize::from(self.0)]
    }

    /// The name as written in configs and CLIs.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.entry().name
    }

    /// The valid names, comma-separated (for error messages).
    #[must_use]
    pub fn valid_names() -> String {
        Self::all()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// One line per policy — `name  summary (sides)` — for `--help` texts.
    #[must_use]
    pub fn help_lines() -> String {
        let width = Self::all().map(|n| n.as_str().len()).max().unwrap_or(0);
        Self::all()
            .map(|n| {
                let e = n.entry();
                format!("{:width$}  {} ({})", e.name, e.summary, e.sides)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl fmt::Debug for PolicyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PolicyName({:?})", self.as_str())
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
        Self::all()
            .find(|n| n.as_str() == s)
            .ok_or_else(|| PolicyError::UnknownPolicy {
                name: s.to_owned(),
                valid: Self::valid_names(),
            })
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for PolicyName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for PolicyName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

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
    /// default [`DEFAULT_AGE_LIMIT`](crate::DEFAULT_AGE_LIMIT) = 3; must be ≥ 1).
    #[cfg_attr(feature = "serde", serde(default))]
    pub age_limit: Option<u32>,
    /// Imbalance threshold at NUMA levels (≥ II), percent (Linux `imbalance_pct − 100`;
    /// default 25 as in the paper; at most 1000). Level I always uses 17.
    #[cfg_attr(feature = "serde", serde(default))]
    pub numa_imbalance_pct: Option<u32>,
    /// NUMALB's communication weight `a` (default
    /// [`DEFAULT_NUMALB_ALPHA`](crate::DEFAULT_NUMALB_ALPHA) = 1; finite, ≥ 0).
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
    /// [`NumaBalancing`](crate::NumaBalancing)): a task's pages follow it to the node it runs
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

    /// Parses a name (`"conservative-hard"`) into a default config.
    ///
    /// # Errors
    /// [`PolicyError::UnknownPolicy`] listing the valid names.
    pub fn named(name: &str) -> Result<Self, PolicyError> {
        Ok(Self::new(name.parse()?))
    }

    /// Parses a TOML config (feature `config`).
    ///
    /// # Errors
    /// [`PolicyError::Toml`] (a key given twice included: TOML forbids it, and the parser
    /// refuses it naming the key), or [`PolicyError::BadValue`] for a parameter out of range.
    #[cfg(feature = "config")]
    #[cfg_attr(docsrs, doc(cfg(feature = "config")))]
    pub fn from_toml_str(text: &str) -> Result<Self, PolicyError> {
        let cfg: Self = toml::from_str(text)?;
        crate::policies::validate(&cfg)?;
        Ok(cfg)
    }

    /// Parses a JSON config (feature `config`).
    ///
    /// # Errors
    /// [`PolicyError::Json`], [`PolicyError::DuplicateKey`] for a key repeated in one
    /// object (at any level), or [`PolicyError::BadValue`] for a document that is not an
    /// object or a parameter out of range.
    ///
    /// ```
    /// use zonal_policy::{PolicyConfig, PolicyError};
    /// let err = PolicyConfig::from_json_str(r#"{"name": "linux", "age_limit": 2, "age_limit": 3}"#)
    ///     .unwrap_err();
    /// assert!(matches!(&err, PolicyError::DuplicateKey { key, .. } if key == "age_limit"));
    /// assert!(err.to_string().contains("\"age_limit\" appears twice"));
    /// ```
    #[cfg(feature = "config")]
    #[cfg_attr(docsrs, doc(cfg(feature = "config")))]
    pub fn from_json_str(text: &str) -> Result<Self, PolicyError> {
        // A key repeated in any object is refused before anything is read (`zonal_topology::json_keys`).
        zonal_topology::json_keys::check(text).map_err(|e| match e {
            zonal_topology::json_keys::KeyError::Json(e) => PolicyError::Json(e),
            zonal_topology::json_keys::KeyError::Duplicate(d) => PolicyError::DuplicateKey {
                path: d.path,
                key: d.key,
                line: d.at.line(),
                column: d.at.column(),
            },
        })?;
        // serde would read a struct from an array too (fields by position): a config is an
        // object, so anything else is refused by what it is.
        let value: serde_json::Value = serde_json::from_str(text)?;
        if !value.is_object() {
            let found = match value {
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::Bool(_) => "a boolean",
                _ => "null",
            };
            return Err(PolicyError::BadValue {
                field: "(top level)",
                value: found.into(),
                expected: "a JSON object such as {\"name\": \"linux\"}".into(),
            });
        }
        let cfg: Self = serde_json::from_value(value)?;
        crate::policies::validate(&cfg)?;
        Ok(cfg)
    }

    /// Builds the policy (its [catalogue](crate::catalogue) row's constructor).
    ///
    /// # Errors
    /// [`PolicyError::BadValue`] for out-of-range parameters.
    pub fn build(&self) -> Result<Arc<dyn Policy>, PolicyError> {
        crate::policies::build(self)
    }

    /// The conservative filter with this config's origin rule and age limit.
    pub(crate) fn filter(&self, zone: ZoneMode) -> ConservativeFilter {
        ConservativeFilter {
            zone,
            origin: self.origin,
            age_limit: self.age_limit.unwrap_or(crate::DEFAULT_AGE_LIMIT),
        }
    }

    /// The hard conservative filter when `conservative_filters = true`.
    pub(crate) fn composed_filter(&self) -> Option<ConservativeFilter> {
        (self.conservative_filters == Some(true)).then(|| self.filter(ZoneMode::Hard))
    }

    /// The built policy's name: the catalogue name, `+conservative` when the filters are
    /// composed with a policy that is not conservative itself.
    pub(crate) fn display_name(&self) -> String {
        match (self.name.entry().filters, self.conservative_filters) {
            (crate::policies::Filters::Optional, Some(true)) => {
                format!("{}+conservative", self.name)
            }
            _ => self.name.to_string(),
        }
    }
}
