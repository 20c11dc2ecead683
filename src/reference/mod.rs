//! CPU references in f64. They are the specification: every GPU variant must match them within
//! the documented [tolerances](crate::reference::Tolerance). They never panic.

mod activation;
mod reduce;
mod tolerance;

pub use activation::{bias_activation, gelu_erf, gelu_tanh};
pub use reduce::{Reduction, gemv, reduce, softmax};
pub use tolerance::{Comparison, Tolerance, compare, compare_each};
