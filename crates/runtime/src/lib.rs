//! zonal-runtime (under construction).
