use crate::{BackendError, BackendKind, DType};

/// Every failure a cubeport op can report. Three kinds stay distinct: invalid input
/// ([`Error::Shape`]: a caller bug), unsupported on this device or for this input
/// ([`Error::UnsupportedDType`], [`Error::Unsupported`]: the caller can fall back), and runtime
/// failure ([`Error::Launch`], [`Error::Backend`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument's shape, strides, dtype or buffer size is invalid for the op.
    #[error("{op}: invalid input: {source}")]
    Shape {
        /// The public op that rejected the input.
        op: &'static str,
        /// What is wrong.
        #[source]
        source: ShapeError,
    },
    /// The backend cannot run this dtype (f16 without `SHADER_F16`, bf16 on WGSL, …).
    #[error("{op}: dtype {dtype} is not supported on {backend} ({runtime})")]
    UnsupportedDType {
        /// The op.
        op: &'static str,
        /// The dtype asked for.
        dtype: DType,
        /// The backend kind.
        backend: BackendKind,
        /// cubecl's runtime name (`wgpu<wgsl>`, `cuda`, …).
        runtime: &'static str,
    },
    /// The device cannot run what was asked (a forced variant it lacks or that does not fit
    /// this input, a size beyond its limits). Recoverable: pick another variant or backend. A
    /// forced variant is never silently replaced by another.
    #[error("{op} is not supported on {backend}: {reason}")]
    Unsupported {
        /// The op.
        op: &'static str,
        /// The backend kind.
        backend: BackendKind,
        /// Why.
        reason: String,
    },
    /// Backend not compiled in, no device, or probing failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The runtime rejected or failed the launch (compilation error, resource limits, out of
    /// memory). Outputs of the failed op are unspecified and were not returned as data.
    #[error("{op}: kernel launch failed: {message}")]
    Launch {
        /// The op.
        op: &'static str,
        /// cubecl's error, rendered (cubecl's `ServerError` carries a backtrace).
        message: String,
    },
    /// A host ↔ device copy or a pinned host allocation failed in the driver.
    #[error("transfer failed: {message}")]
    Transfer {
        /// The driver's error, rendered.
        message: String,
    },
    /// A buffer larger than the device allows in one allocation.
    #[error(
        "a buffer of {bytes} bytes exceeds the device's single-allocation limit of {limit} bytes"
    )]
    Allocation {
        /// Bytes asked for.
        bytes: u64,
        /// The device's largest allocation.
        limit: u64,
    },
    /// A device buffer could not be read back.
    #[error("reading a device buffer failed: {message}")]
    Read {
        /// cubecl's error, rendered.
        message: String,
    },
}

impl Error {
    pub(crate) fn shape(op: &'static str) -> impl FnOnce(ShapeError) -> Error {
        move |source| Error::Shape { op, source }
    }

    pub(crate) fn launch(op: &'static str, e: impl std::fmt::Debug) -> Error {
        Error::Launch {
            op,
            message: first_lines(&format!("{e:?}")),
        }
    }
}

/// The head of a long runtime error plus every line that names an error (compilers print
/// warnings first; the line that matters may come after them).
fn first_lines(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let mut out: Vec<&str> = lines.iter().take(6).copied().collect();
    for (i, line) in lines.iter().enumerate().skip(6) {
        let lower = line.to_ascii_lowercase();
        if lower.contains("error") && !lower.contains("warning") && out.len() < 40 {
            out.push(line);
            // The offending source line and caret usually follow.
            out.extend(lines.iter().skip(i + 1).take(2));
        }
    }
    out.join("\n")
}

/// What is wrong with an argument. `name` is the argument's name in the op's signature.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShapeError {
    /// A tensor with no elements where the op needs at least one.
    #[error("`{name}` is empty (shape {shape:?})")]
    Empty {
        /// Argument name.
        name: &'static str,
        /// Its shape.
        shape: Vec<usize>,
    },
    /// `strides` does not have one entry per dimension.
    #[error("`{name}` has {strides} strides for {rank} dimensions")]
    StridesRank {
        /// Argument name.
        name: &'static str,
        /// Number of dimensions.
        rank: usize,
        /// Number of strides.
        strides: usize,
    },
    /// The op needs a dense row-major tensor.
    #[error("`{name}` must be contiguous row-major, got shape {shape:?} strides {strides:?}")]
    NotContiguous {
        /// Argument name.
        name: &'static str,
        /// Its shape.
        shape: Vec<usize>,
        /// Its strides.
        strides: Vec<usize>,
    },
    /// Two tensors that must have the same shape do not.
    #[error("`{name}` has shape {got:?}, expected {expected:?}")]
    ShapeMismatch {
        /// Argument name.
        name: &'static str,
        /// Shape required.
        expected: Vec<usize>,
        /// Shape given.
        got: Vec<usize>,
    },
    /// Two tensors that must share a dtype do not.
    #[error("`{name}` has dtype {got}, expected {expected}")]
    DTypeMismatch {
        /// Argument name.
        name: &'static str,
        /// Dtype required.
        expected: DType,
        /// Dtype given.
        got: DType,
    },
    /// A bias that is neither the input's shape nor one row of it.
    #[error("bias shape {bias:?} fits neither the input {input:?} nor one row of it")]
    BiasShape {
        /// Bias shape.
        bias: Vec<usize>,
        /// Input shape.
        input: Vec<usize>,
    },
    /// The device buffer is smaller than shape × dtype says.
    #[error("`{name}` needs {needed} bytes but its buffer holds {got}")]
    BufferTooSmall {
        /// Argument name.
        name: &'static str,
        /// Bytes the layout addresses.
        needed: u64,
        /// Bytes in the handle.
        got: u64,
    },
    /// More elements than 32-bit indexing addresses.
    #[error("`{name}` has {elems} elements; at most {max} are supported")]
    TooLarge {
        /// Argument name.
        name: &'static str,
        /// Elements given.
        elems: usize,
        /// Largest supported.
        max: usize,
    },
    /// Host data whose length does not match the shape.
    #[error("`{name}` has {got} values for shape {shape:?}")]
    DataLength {
        /// Argument name.
        name: &'static str,
        /// Values given.
        got: usize,
        /// Shape asked for.
        shape: Vec<usize>,
    },
    /// An axis index not below the rank.
    #[error("axis {axis} is out of range for rank {rank}")]
    AxisOutOfRange {
        /// Axis asked for.
        axis: usize,
        /// Rank of the tensor.
        rank: usize,
    },
    /// The op works along the last axis only.
    #[error("axis {axis} is not the innermost axis of a rank-{rank} tensor")]
    AxisNotInnermost {
        /// Axis asked for.
        axis: usize,
        /// Rank of the tensor.
        rank: usize,
    },
    /// A dtype of the wrong kind for the argument (an integer where a float is needed, …).
    #[error("`{name}` has dtype {got}, expected {expected}")]
    DTypeKind {
        /// Argument name.
        name: &'static str,
        /// What the op accepts (`"u32 or i32"`, `"a float"`, …).
        expected: &'static str,
        /// Dtype given.
        got: DType,
    },
    /// A histogram with no bins.
    #[error("a histogram needs at least one bin")]
    NoBins,
    /// A histogram range that is not finite or not increasing.
    #[error("histogram range [{lo}, {hi}] must be finite with lo < hi")]
    BadRange {
        /// Lower bound, rendered (may be NaN).
        lo: String,
        /// Upper bound, rendered.
        hi: String,
    },
    /// A scalar parameter outside its domain (a negative or non-finite `eps`, say).
    #[error("`{name}` = {value} is invalid: {expected}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Its value, rendered.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A tensor of the wrong rank.
    #[error("`{name}` must have rank {expected}, got shape {shape:?}")]
    Rank {
        /// Argument name.
        name: &'static str,
        /// Rank required.
        expected: usize,
        /// Its shape.
        shape: Vec<usize>,
    },
}
