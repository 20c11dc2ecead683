//! Shared helpers of the generic test bodies.

pub mod activation;
pub mod attention;
pub mod gemv;
pub mod hardening;
pub mod histogram;
pub mod matmul;
pub mod norm;
pub mod pitched;
pub mod props;
pub mod reduce;
pub mod softmax;
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

/// The row-group variants this device can run: the automatic one (`None`), both shared
/// groups, and the plane ones when the plane width is fixed (advertised or not: lavapipe's
/// subgroups work unadvertised, so CI exercises the plane path at width 8).
pub fn row_groups<R: Runtime>(client: &ComputeClient<R>) -> Vec<Option<cubeport::RowGroup>> {
    let caps = cubeport::caps_of(client);
    let mut v = vec![
        None,
        Some(cubeport::RowGroup {
            path: cubeport::ReducePath::Shared,
            group: 32,
        }),
        Some(cubeport::RowGroup {
            path: cubeport::ReducePath::Shared,
            group: 256,
        }),
    ];
    if let Some(w) = caps.plane.fixed_width() {
        v.push(Some(cubeport::RowGroup {
            path: cubeport::ReducePath::Plane,
            group: w,
        }));
        v.push(Some(cubeport::RowGroup {
            path: cubeport::ReducePath::Plane,
            group: 256,
        }));
        if 2 * w < 256 {
            // several planes per row and several rows per cube: a 2-D cube, which WGSL
            // treats differently for subgroup builtins
            v.push(Some(cubeport::RowGroup {
                path: cubeport::ReducePath::Plane,
                group: 2 * w,
            }));
        }
    }
    v
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
