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
//! [`BalanceSide`](crate::BalanceSide), plus a `build(&PolicyConfig)` constructor and, next
//! to it, `pub(crate) const ACCEPTS: Fields` naming every config field the constructor reads
//! ([`Fields::EMPTY`] for none) — then add its `mod` line and its row (`accepts: ACCEPTS`)
//! to [`CATALOGUE`] below. The paper example's grids set `linux_era` for every policy they
//! run: a policy that refuses it is refused there under `--linux-era 2.6` and
//! `--reproduction`.
//!
//! A policy built on the Linux walk instead implements the walk's `Selection` (its order
//! and refusals, as `thread-aware`) or `WholeMachine` (a periodic pass of its own, as
//! `numalb` and `average-weight`) and builds `linux::Balancer` with it, and takes the walk's
//! fields (`linux::WALK_ACCEPTS`, and `linux::FILTER_ACCEPTS` when it composes the
//! filter); it imports no other policy file.
//!
//! # Layers
//!
//! `config.rs` (every configuration type, the errors and the range checks) imports nothing
//! of the crate; the Linux walk (`linux/`) imports none of the policies; each policy is a
//! leaf over the walk or the shared rules; this file, the catalogue, is on top: the names
//! ([`PolicyName`]'s parsing and constants), config parsing with every check, and `build`.
//! `tests/layers.rs` fails on any import circle between the crate's files. Nothing else changes: the name parses,
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
//!   `false`;
//! - NUMA balancing (`numa_balancing` and its sysctls) only for the policies it applies to
//!   ([`NumaBalancing::applies_to`]), never with `linux_era = "2.6"`;
//! - every field the config sets ([`PolicyConfig::fields_set`]) among the row's
//!   [`accepts`](PolicyEntry::accepts): a parameter a policy does not take (e.g.
//!   `numalb_alpha` for `linux`) is refused ([`PolicyError::NotAccepted`], naming the field,
//!   its value, the policy and the fields it takes), never ignored;
//! - `origin`, `age_limit` and `placement` for an `Optional` policy only with
//!   `conservative_filters = true` (the composed filter is what reads them).
//!
//! The messages above are the more precise ones and come first: `conservative_filters = true`
//! for `linux` names the policy that filters, `numa_balancing` names the baselines it
//! applies to.
//!
//! # Which fields each policy takes
//!
//! Each policy file declares its `ACCEPTS` next to its `build`, from what the constructor
//! reads:
//!
//! | name | accepts |
//! |---|---|
//! | `linux` | `numa_imbalance_pct`, `linux_era`, `imbalance_rule`, `numa_balancing`, `numa_scan_delay_ms`, `numa_scan_period_min_ms`, and the ablation's switches `zone_periodic`, `origin_check`, `ageing`, `placement_rule`, `newidle_zone`, `fork_zone`, `wake_zone` |
//! | `conservative-hard`, `conservative-soft` | `origin`, `age_limit`, `numa_imbalance_pct`, `conservative_filters`, `linux_era`, `imbalance_rule`, `placement` |
//! | `thread-aware` | `origin`, `age_limit`, `numa_imbalance_pct`, `conservative_filters`, `linux_era`, `imbalance_rule`, `placement`, and NUMA balancing's three |
//! | `numalb` | `origin`, `age_limit`, `numa_imbalance_pct`, `numalb_alpha`, `conservative_filters`, `linux_era`, `imbalance_rule`, `placement` |
//! | `average-weight` | `origin`, `age_limit`, `numa_imbalance_pct`, `conservative_filters`, `linux_era`, `imbalance_rule`, `placement` |
//! | `unrestricted` | `linux_era` (a label only) |
//!
//! `linux_era`: every policy built on the Linux walk uses it — `numalb` and
//! `average-weight` replace only the periodic pass, and their new-idle balancing and fork
//! placement are the walk's, of the era asked for. `unrestricted` reads it nowhere (random
//! stealing, placement on the parent, wake-up on the waker): it accepts the era as a label
//! only, because the paper's grids run every policy of the catalogue under each era (the
//! era names the variant of the whole grid and shows in every run's report); its runs are
//! the same under both eras. This is the one field a policy accepts without reading it.
//!
//! The ablation's switches ([`Mechanism`](crate::Mechanism), each a `bool`, default off)
//! are `linux`'s only: each puts one mechanism of the conservative policies on the baseline
//! (`linux::build`), so every other policy refuses them ([`PolicyError::NotAccepted`]).
//!
//! `placement` (`"zone"` or `"paper"`) is the filter's: it says whether the filter also
//! restricts fork placement and new-idle balancing, which the walk runs under the filter
//! for every policy that composes it (`linux::Balancer::from_config`). Under `"paper"` both
//! are exactly `linux`'s of the same era; the periodic pass and the steal side keep the
//! filter. So it is accepted wherever the filter is: always by the conservative policies,
//! by the `Optional` ones only with `conservative_filters = true`.

pub(crate) mod average_weight;
pub(crate) mod linux;
pub(crate) mod no_policy;
pub(crate) mod numalb;
pub(crate) mod thread_aware;
pub(crate) mod unrestricted;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::config::{self, ConfigField, Fields, PolicyConfig, PolicyError, PolicyName};
use crate::filters::ZoneMode;
use crate::numa_balancing::{self, NumaBalancing};
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
    /// The config fields it takes (declared next to its constructor, from what the
    /// constructor reads); a config that sets another is refused
    /// ([`PolicyError::NotAccepted`]).
    pub accepts: Fields,
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
        accepts: linux::ACCEPTS,
        build: linux::build,
    },
    PolicyEntry {
        name: "conservative-hard",
        summary: "conservative, hard zone: nothing beyond level S, no task farther from origin, aged tasks stay",
        sides: Sides::BOTH,
        filters: Filters::Always,
        accepts: linux::CONSERVATIVE_ACCEPTS,
        build: |cfg| linux::build_conservative(cfg, ZoneMode::Hard),
    },
    PolicyEntry {
        name: "conservative-soft",
        summary: "conservative, soft zone: beyond S only from victims above 150% of the thief's load",
        sides: Sides::BOTH,
        filters: Filters::Always,
        accepts: linux::CONSERVATIVE_ACCEPTS,
        build: |cfg| linux::build_conservative(cfg, ZoneMode::Soft),
    },
    PolicyEntry {
        name: "thread-aware",
        summary: "Chiang & Su: inter-node moves from the least node-concentrated thread group",
        sides: Sides::BOTH,
        filters: Filters::Optional,
        accepts: thread_aware::ACCEPTS,
        build: thread_aware::build,
    },
    PolicyEntry {
        name: "numalb",
        summary: "Pilla et al.'s Charm++ NUMALB: greedy list scheduling by NUMA cost",
        sides: Sides::BOTH,
        filters: Filters::Optional,
        accepts: numalb::ACCEPTS,
        build: numalb::build,
    },
    PolicyEntry {
        name: "average-weight",
        summary: "Sharma & Agrawal: CPUs take tasks up to the average weight per CPU",
        sides: Sides::BOTH,
        filters: Filters::Optional,
        accepts: average_weight::ACCEPTS,
        build: average_weight::build,
    },
    PolicyEntry {
        name: "unrestricted",
        summary: "plain random work stealing over every CPU, as rayon does",
        sides: Sides::BOTH,
        filters: Filters::Never,
        accepts: unrestricted::ACCEPTS,
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
/// # use zonal_policy::doc_facade as zonal;
/// let names: Vec<&str> = zonal::policy::catalogue().iter().map(|e| e.name).collect();
/// assert!(names.contains(&"conservative-hard"));
/// ```
#[must_use]
pub fn catalogue() -> &'static [PolicyEntry] {
    CATALOGUE
}

/// The whole check of a config: NUMA balancing's fields (ranges, era, and whether the
/// policy accepts it), the shared ranges ([`config::check_ranges`]),
/// `conservative_filters` as the policy's row allows, every field set among the row's
/// `accepts`, and the composed filter's fields only with the filter.
pub(crate) fn validate(cfg: &PolicyConfig) -> Result<(), PolicyError> {
    validate_numa_balancing(cfg)?;
    config::check_ranges(cfg)?;
    let entry = cfg.name.entry();
    match (entry.filters, cfg.conservative_filters) {
        (Filters::Never, Some(true)) => {
            return Err(config::bad(
                "conservative_filters",
                true,
                "false or unset for this policy (use conservative-hard for Linux with the filters)",
            ))
        }
        (Filters::Always, Some(false)) => {
            return Err(config::bad(
                "conservative_filters",
                false,
                "true or unset: the conservative policies always filter",
            ))
        }
        _ => {}
    }
    cfg.check_accepted(entry.accepts)?;
    if entry.filters == Filters::Optional && cfg.conservative_filters != Some(true) {
        // The composed filter is the only reader of its origin rule and age limit.
        if let Some(field) = [
            ConfigField::Origin,
            ConfigField::AgeLimit,
            ConfigField::Placement,
        ]
        .into_iter()
        .find(|&f| cfg.fields_set().contains(f))
        {
            return Err(config::bad(
                field.as_str(),
                cfg.value_of(field),
                &format!(
                    "unset unless conservative_filters = true (policy {} reads it only \
                     through the composed conservative filter)",
                    cfg.name
                ),
            ));
        }
    }
    Ok(())
}

/// NUMA balancing's fields: their ranges and era ([`config::check_numa_balancing`]), then
/// whether the policy accepts it ([`NumaBalancing::applies_to`]).
fn validate_numa_balancing(cfg: &PolicyConfig) -> Result<(), PolicyError> {
    config::check_numa_balancing(cfg)?;
    if cfg.numa_balancing && !NumaBalancing::applies_to(cfg.name) {
        return Err(config::bad(
            "numa_balancing",
            "true",
            &format!(
                "false for policy {} (NUMA balancing applies to the Linux baselines linux and \
                 thread-aware)",
                cfg.name
            ),
        ));
    }
    Ok(())
}

pub(crate) fn build(cfg: &PolicyConfig) -> Result<Arc<dyn Policy>, PolicyError> {
    validate(cfg)?;
    Ok((cfg.name.entry().build)(cfg))
}

impl PolicyName {
    /// The name of the catalogue's `index`-th row (for the catalogue's named constants).
    pub(crate) const fn from_catalogue(index: u8) -> Self {
        assert!((index as usize) < CATALOGUE.len());
        Self(index)
    }

    /// Every policy, in catalogue order.
    pub fn all() -> impl ExactSizeIterator<Item = PolicyName> + Clone {
        (0..CATALOGUE.len()).map(|i| PolicyName(i as u8))
    }

    /// The policy's catalogue row.
    #[must_use]
    pub fn entry(self) -> &'static PolicyEntry {
        &CATALOGUE[usize::from(self.0)]
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

impl NumaBalancing {
    /// The parameters a policy config asks for: `None` when NUMA balancing is off.
    ///
    /// # Errors
    /// [`PolicyError::BadValue`] naming the field when NUMA balancing is on for the 2.6 era
    /// or a policy it does not apply to, or a sysctl is out of range (see the module docs).
    pub fn from_config(cfg: &PolicyConfig) -> Result<Option<Self>, PolicyError> {
        validate_numa_balancing(cfg)?;
        Ok(cfg.numa_balancing.then(|| Self {
            scan_delay_ms: cfg
                .numa_scan_delay_ms
                .unwrap_or(numa_balancing::SCAN_DELAY_MS),
            scan_period_min_ms: cfg
                .numa_scan_period_min_ms
                .unwrap_or(numa_balancing::SCAN_PERIOD_MIN_MS),
            ..Self::default()
        }))
    }

    /// Whether NUMA balancing applies to a policy: its catalogue row accepts
    /// `numa_balancing` (the modern Linux baselines `linux` and `thread-aware`; module docs).
    #[must_use]
    pub fn applies_to(name: PolicyName) -> bool {
        name.entry().accepts.contains(ConfigField::NumaBalancing)
    }
}

impl PolicyConfig {
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
        validate(&cfg)?;
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
    /// # use zonal_policy::doc_facade as zonal;
    /// use zonal::policy::{PolicyConfig, PolicyError};
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
        validate(&cfg)?;
        Ok(cfg)
    }

    /// Builds the policy (its [catalogue](crate::catalogue) row's constructor).
    ///
    /// # Errors
    /// [`PolicyError::BadValue`] for out-of-range parameters.
    pub fn build(&self) -> Result<Arc<dyn Policy>, PolicyError> {
        build(self)
    }

    /// The built policy's name: the catalogue name, `+conservative` when the filters are
    /// composed with a policy that is not conservative itself.
    pub(crate) fn display_name(&self) -> String {
        match (self.name.entry().filters, self.conservative_filters) {
            (Filters::Optional, Some(true)) => {
                format!("{}+conservative", self.name)
            }
            _ => self.name.to_string(),
        }
    }
}

#[cfg(test)]
mod test;
