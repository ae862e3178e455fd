//! From a [`PolicyConfig`] to a policy object.

use std::sync::Arc;

use crate::config::{PolicyConfig, PolicyError};
use crate::policy::Policy;

pub(crate) fn build(cfg: &PolicyConfig) -> Result<Arc<dyn Policy>, PolicyError> {
    Err(PolicyError::BadValue {
        field: "name",
        value: cfg.name.to_string(),
        expected: "an implemented policy".into(),
    })
}
