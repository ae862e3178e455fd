//! Placeholder until the bench lands.
fn main() {}
