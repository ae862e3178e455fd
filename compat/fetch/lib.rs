//! Empty: this package only fetches rayon and rayon-core (see Cargo.toml).
