//! Placeholder: filled by its owner.

pub(crate) fn run(_args: &[String]) -> crate::Outcome {
    Err("not written yet".into())
}
