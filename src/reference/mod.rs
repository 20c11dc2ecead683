//! CPU references in f64, one file per family. They are the specification: every GPU variant
//! must match them within the documented [tolerances](crate::reference::Tolerance). They never
//! panic.

mod activation;
mod attention;
mod gemv;
mod histogram;
mod matmul;
mod norm;
mod reduce;
mod softmax;
mod tolerance;
mod transpose;

pub use activation::{bias_activation, gelu_erf, gelu_tanh};
pub use attention::{AttentionShape, attention, attention_magnitudes};
pub use gemv::gemv;
pub use histogram::{bin_of_range, histogram_index, histogram_range};
pub use matmul::matmul;
pub use norm::{layer_norm, norm_magnitudes, rms_norm};
pub use reduce::{Reduction, reduce};
pub use softmax::{log_softmax, softmax};
pub use tolerance::{Comparison, Tolerance, compare, compare_each};
pub use transpose::transpose;
