//! Placeholder: filled by its owner.

pub(crate) fn run(_args: &[String]) -> crate::Outcome {
    Err("not written yet".into())
}

/// `cpuset`: placeholder.
pub(crate) fn run_cpuset(_args: &[String]) -> crate::Outcome {
    Err("not written yet".into())
}
