//! Shared helpers of the generic test bodies.

pub mod activation;
pub mod hardening;
pub mod histogram;
pub mod matmul;
pub mod pitched;
pub mod props;
pub mod reduce;
pub mod transpose;

use cubeport::cubecl::prelude::*;
use cubeport::testing::skip;

/// The backend's client, or a printed skip (a failure under `CUBEPORT_STRICT=1`).
pub fn client_or_skip<R: Runtime>(
    test: &str,
    backend: &str,
    make: fn() -> Result<ComputeClient<R>, cubeport::Error>,
) -> Option<ComputeClient<R>> {
    match make() {
        Ok(c) => Some(c),
        Err(e) => {
            // libtest names each test's thread after the test's full path (rstest case included).
            let current = std::thread::current();
            skip(current.name().unwrap_or(test), backend, &e.to_string());
            None
        }
    }
}

/// Runs `$body` with `E` bound to the host type of `$dtype`.
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $E:ident => $body:expr) => {
        match $dtype {
            cubeport::DType::F32 => {
                type $E = f32;
                $body
            }
            cubeport::DType::F16 => {
                type $E = half::f16;
                $body
            }
            cubeport::DType::BF16 => {
                type $E = half::bf16;
                $body
            }
            other => panic!("no host type for {other:?}"),
        }
    };
}
