//! CPU references in f64. They are the specification: every GPU variant must match them within
//! the documented [tolerances](crate::reference::Tolerance). They never panic.

mod activation;
mod histogram;
mod reduce;
mod tolerance;

pub use activation::{bias_activation, gelu_erf, gelu_tanh};
pub use histogram::{bin_of_range, histogram_index, histogram_range};
pub use reduce::{Reduction, gemv, matmul, reduce, softmax};

/// `output[b, c, r] = input[b, r, c]` for `batch` row-major `rows × cols` matrices (empty on
/// a length mismatch).
pub fn transpose(input: &[f64], batch: usize, rows: usize, cols: usize) -> Vec<f64> {
    if input.len() != batch * rows * cols {
        return Vec::new();
    }
    let mut out = vec![0.0; input.len()];
    for b in 0..batch {
        for r in 0..rows {
            for c in 0..cols {
                out[b * rows * cols + c * rows + r] = input[b * rows * cols + r * cols + c];
            }
        }
    }
    out
}
pub use tolerance::{Comparison, Tolerance, compare, compare_each};
